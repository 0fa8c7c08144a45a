"""The ``[server]`` settings of ``config.toml``; ``memgrove serve``'s options override them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.base.setting_field import setting
from memgrove.tree.settings import load_table


@dataclass(frozen=True)
class ServerSettings:
    """The ``[server]`` table (docs/settings.md)."""

    host: str = setting("127.0.0.1", "Address to bind; anything but loopback requires the token (no --no-auth).",
                        section="server")
    port: int = setting(7437, "Port to listen on.", section="server")
    # above max_input_bytes: JSON escaping makes text longer
    max_body_bytes: int = setting(16 * 1024 * 1024, "Largest request body accepted, in bytes (16 MiB; 413 above).",
                                  section="server")
    request_timeout: float = setting(120.0, "Seconds before a request answers 504; a write is then cancelled before "
                                            "its commit point (one past it completes and is answered).",
                                     section="server")
    allowed_origins: str = setting("", "Browser origins allowed besides the server's own, comma-separated (others "
                                       "get 403).", section="server")
    allowed_hosts: str = setting("", "Host names accepted besides loopback names and the bind host, comma-separated "
                                     "(DNS rebinding protection).", section="server")
    projects: str = setting("", "Other project folders served too, comma-separated, each with its own token "
                                "(relative ones: to this project's folder; --project adds more).", section="server")
    max_open_projects: int = setting(8, "Memories kept open at once; opening one more closes the least recently "
                                        "used one nothing is using.", section="server")
    # slow or idle clients: a connection holds a descriptor, and the process has about a thousand
    header_timeout: float = setting(10.0, "Seconds a connection has to send a request's headers, from connecting or "
                                          "the last answer (408 and closed).", section="server")
    body_timeout: float = setting(60.0, "Seconds a request has to send its body once the route reads it (408 and "
                                        "closed).", section="server")
    keep_alive_timeout: float = setting(5.0, "Seconds an idle kept-alive connection stays open.", section="server")
    max_connections: int = setting(256, "Open connections at most; past it a new one cuts one without a token, else "
                                        "is answered 503.", section="server")
    # connections without a valid token yet (connections.py): past these, those that stalled are cut
    max_unauthenticated: int = setting(64, "Connections without a valid token waiting for their headers; past it, "
                                           "stalled ones are cut.", section="server")
    max_unauthenticated_per_peer: int = setting(16, "Connections without a valid token from one address (an "
                                                    "IPv6 /64) waiting for their headers; past it, stalled ones "
                                                    "are cut.", section="server")
    dream_when_idle: bool = setting(False, "Run memgrove dream when the tree's idle gates open (dream_idle_hours, "
                                           "dream_min_curations in [tree]; tree/hygiene/dream_state.py).",
                                    section="hygiene")
    dream_check_s: float = setting(300.0, "Seconds between two looks at the idle gates (with dream_when_idle).",
                                   section="hygiene")


def load_server_settings(home: Path | None, **overrides) -> ServerSettings:
    s = load_table(home, "server", ServerSettings, overrides)
    assert isinstance(s, ServerSettings)
    if not 0 < s.port < 65536:
        raise MemgroveError(f"port must be between 1 and 65535, not {s.port}")
    if s.max_body_bytes <= 0 or s.request_timeout <= 0:
        raise MemgroveError("max_body_bytes and request_timeout must be positive")
    if min(s.header_timeout, s.body_timeout, s.keep_alive_timeout) <= 0:
        raise MemgroveError("header_timeout, body_timeout and keep_alive_timeout must be positive")
    if s.dream_check_s <= 0:
        raise MemgroveError(f"dream_check_s must be positive, not {s.dream_check_s}")
    if min(s.max_connections, s.max_open_projects, s.max_unauthenticated, s.max_unauthenticated_per_peer) < 1:
        raise MemgroveError("max_connections, max_open_projects, max_unauthenticated and "
                            "max_unauthenticated_per_peer must be at least 1")
    return s


def split_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]

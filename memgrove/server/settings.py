"""The ``[server]`` settings of ``config.toml``; ``memgrove serve``'s options override them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.settings import load_table


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 7437
    max_body_bytes: int = 16 * 1024 * 1024   # above max_input_bytes: JSON escaping makes text longer
    request_timeout: float = 120.0           # seconds before a REST request answers 504
    allowed_origins: str = ""                # comma-separated browser origins allowed besides the server's own
    allowed_hosts: str = ""                  # comma-separated Host names accepted besides loopback and the bind host
    projects: str = ""                       # comma-separated other project folders served (relative: to this one)
    max_open_projects: int = 8               # memories kept open at once; the least recently used idle one closes
    # slow or idle clients: a connection holds a descriptor, and the process has about a thousand
    header_timeout: float = 10.0             # seconds to send a request's headers (from connecting, or the last answer)
    body_timeout: float = 60.0               # seconds to send a request's body, once the route reads it
    keep_alive_timeout: float = 5.0          # seconds an idle kept-alive connection stays open
    max_connections: int = 256               # open connections; past it a new one cuts one without a token, else 503
    # connections without a valid token yet (connections.py): past these, those that stalled are cut
    max_unauthenticated: int = 64            # waiting for their headers, in all
    max_unauthenticated_per_peer: int = 16   # ... from one address (an IPv6 /64)
    dream_when_idle: bool = False            # run `memgrove dream` when the tree's idle gates open (tree/hygiene/dream_state.py)
    dream_check_s: float = 300.0             # seconds between two looks at those gates


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

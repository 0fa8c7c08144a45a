"""The ``[server]`` settings of ``config.toml``; ``memgrove serve``'s options override them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memgrove.tree.errors import MemgroveError
from memgrove.tree.settings import load_table


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 7437
    max_body_bytes: int = 16 * 1024 * 1024   # above max_input_bytes: JSON escaping makes text longer
    request_timeout: float = 120.0           # seconds before a REST request answers 504
    allowed_origins: str = ""                # comma-separated browser origins allowed besides the server's own
    allowed_hosts: str = ""                  # comma-separated Host names accepted besides loopback and the bind host


def load_server_settings(home: Path | None, **overrides) -> ServerSettings:
    s = load_table(home, "server", ServerSettings, overrides)
    assert isinstance(s, ServerSettings)
    if not 0 < s.port < 65536:
        raise MemgroveError(f"port must be between 1 and 65535, not {s.port}")
    if s.max_body_bytes <= 0 or s.request_timeout <= 0:
        raise MemgroveError("max_body_bytes and request_timeout must be positive")
    return s


def split_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]

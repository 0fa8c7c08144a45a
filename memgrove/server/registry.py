"""Where a running server is: ``.memgrove/server.json`` and its token file.

Clients (the CLI, ``memgrove mcp``) call ``find_server(home)`` before opening the tree
themselves, so this module imports the standard library only: no Whoosh, no LangChain,
no FastAPI. A registration whose process is gone, or whose port does not answer
``/health`` as that process, is stale: ``find_server`` ignores it and the next
``memgrove serve`` replaces it. HTTP, the token generator and the pid check are imported
where used: a project with no registration (the usual case) costs a stat and nothing more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


REGISTRATION = "server.json"
TOKEN_FILE = "server.token"
OWNER_TOKEN_FILE = "server.owner-token"   # the owner's, for adding projects; never handed to clients
TOKEN_ENV = "MEMGROVE_TOKEN"
PROBE_TIMEOUT = 0.5    # seconds a client waits for /health before it works in-process


def registration_path(home: str | os.PathLike) -> Path:
    return Path(home) / REGISTRATION


def token_path(home: str | os.PathLike, name: str = TOKEN_FILE) -> Path:
    return Path(home) / name


def new_token(home: str | os.PathLike, name: str = TOKEN_FILE) -> str:
    """A fresh random token, written to the token file (0600); each server start makes a new one."""
    import secrets

    from memgrove.tree.base.fsio import atomic_write

    token = secrets.token_urlsafe(32)
    atomic_write(token_path(home, name), token + "\n")  # a temp file made 0600, renamed
    return token


def read_token(path: str | os.PathLike) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def client_token(home: str | os.PathLike, info: dict[str, Any] | None = None) -> str | None:
    """The token a client sends: the token file the registration names (each served project has its
    own), else ``MEMGROVE_TOKEN`` (the server's own project, started with it), else ``server.token``."""
    path = (info or {}).get("token_file")
    token = read_token(path) if path else None
    return token or os.environ.get(TOKEN_ENV) or read_token(token_path(home))


def register(home: str | os.PathLike, info: dict[str, Any]) -> Path:
    from memgrove.tree.base.fsio import atomic_write

    path = registration_path(home)
    atomic_write(path, json.dumps(info, indent=2) + "\n")
    return path


def unregister(home: str | os.PathLike, pid: int) -> None:
    """Remove the registration if it is still this process's (a newer server may have replaced it)."""
    info = read_registration(home)
    if info is not None and info.get("pid") == pid:
        try:
            registration_path(home).unlink()
        except FileNotFoundError:
            pass


def read_registration(home: str | os.PathLike) -> dict[str, Any] | None:
    try:
        info = json.loads(registration_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not isinstance(info.get("pid"), int) or not isinstance(info.get("port"), int):
        return None
    return info


def probe(host: str, port: int, timeout: float = PROBE_TIMEOUT) -> dict[str, Any] | None:
    """``GET /health`` of a server; its JSON, or None when nothing (or something else) answers."""
    import http.client

    conn = http.client.HTTPConnection(_connect_host(host), port, timeout=timeout)
    try:
        conn.request("GET", "/health", headers={"Host": f"127.0.0.1:{port}"})
        resp = conn.getresponse()
        if resp.status != 200:
            return None
        data = json.loads(resp.read(65536))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def _connect_host(host: str) -> str:
    # a server bound to every interface answers on loopback too
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


def is_live(info: dict[str, Any], timeout: float = PROBE_TIMEOUT) -> bool:
    """The registered process is alive and its port answers /health as that process."""
    from memgrove.tree.writes.writer_lock import pid_alive

    if not pid_alive(info["pid"]):
        return False
    health = probe(str(info.get("host", "127.0.0.1")), info["port"], timeout)
    return health is not None and health.get("pid") == info["pid"]


def find_server(home: str | os.PathLike, timeout: float = PROBE_TIMEOUT) -> dict[str, Any] | None:
    """The live server registered in ``home`` (a ``.memgrove`` folder), or None.

    The dict is the registration (``pid``, ``host``, ``port``, ``started``, ``token_file``,
    ``auth``, ``project``; ``served_by`` when this project is not the server's own) plus ``url``
    and ``token`` (None when the server runs with ``--no-auth``).
    """
    info = read_registration(home)
    if info is None or not is_live(info, timeout):
        return None
    info = dict(info)
    info["url"] = f"http://{_url_host(_connect_host(str(info.get('host', '127.0.0.1'))))}:{info['port']}"
    info["token"] = client_token(home, info) if info.get("auth", True) else None
    return info


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

"""``memgrove serve``: check the bind, make the tokens, register, run uvicorn, clean up.

The server serves its own project and those named with ``--project`` (or ``[server]
projects``), each with a token of its own in its ``.memgrove/server.token`` (the server's own
may take ``MEMGROVE_TOKEN`` instead) and a registration in its ``.memgrove/server.json``, so
the CLI in any of them finds the server and the right token. ``memgrove serve --add DIR``
adds one to the running server through its owner route (``owner.py``).

SIGTERM and SIGINT stop the server gracefully: uvicorn stops accepting, lets requests in
flight finish, the app waits for every started write (``Projects.drain``), the
registrations are removed and the process exits 0. uvicorn re-raises the signal once it is
done, which would turn that clean stop into a death by signal; our handlers swallow it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from memgrove.tree.base.errors import MemgroveError

from . import registry
from .guard import is_loopback
from .settings import ServerSettings, load_server_settings, split_list


class ServeRefused(MemgroveError):
    code = "serve_refused"


def resolve_token(home: Path, no_auth: bool, host: str) -> tuple[str | None, Path | None]:
    """(token, token file): ``MEMGROVE_TOKEN``, else a fresh one in ``.memgrove/server.token``."""
    env = os.environ.get(registry.TOKEN_ENV) or None
    if no_auth:
        if not is_loopback(host):
            raise ServeRefused(f"--no-auth is allowed on a loopback host only, not {host!r}")
        return None, None
    if env:
        return env, None
    return registry.new_token(home), registry.token_path(home)


def serve(project: str | os.PathLike | None, *, host: str | None = None, port: int | None = None,
          no_auth: bool = False, log_level: str = "info", projects: Sequence[str] = (),
          replica_of: str | None = None, promote: bool = False) -> int:
    import uvicorn

    from memgrove.memory import Memory

    from .app import create_app
    from .connections import bounded_protocol
    from .served import Served, ServedProjects

    replica = _replica(project, replica_of, promote, no_auth)
    with Memory.open(project, embed_ahead=False) as mem:   # the project must exist; its settings and recovery first
        home = mem.home
        mem.tree.recover()
        if replica is not None:
            replica.catch_up(mem.tree)     # the first clone or catch-up, before it answers
    settings: ServerSettings = load_server_settings(home, host=host, port=port)
    live = registry.read_registration(home)
    if live is not None and live.get("pid") != os.getpid() and registry.is_live(live):
        raise ServeRefused(f"a server (pid {live['pid']}) already serves this project at "
                           f"{live.get('host')}:{live['port']}")
    token, token_file = resolve_token(home, no_auth, settings.host)
    served = ServedProjects(Served(home.parent.resolve(), token, token_file),
                            owner_token=registry.new_token(home, registry.OWNER_TOKEN_FILE))
    try:
        for folder in [*(str(home.parent / Path(p).expanduser()) for p in split_list(settings.projects)), *projects]:
            try:
                served.add_folder(folder)
            except MemgroveError as exc:
                raise ServeRefused(f"cannot serve {folder}: {exc}") from None
        app = create_app(served, settings, replica=replica)
    except BaseException:
        _forget(served, home)
        raise
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=log_level,
                            lifespan="on", timeout_graceful_shutdown=None, access_log=False,
                            proxy_headers=False, server_header=False,
                            timeout_keep_alive=settings.keep_alive_timeout,
                            http=bounded_protocol(
                                header_timeout=settings.header_timeout, max_connections=settings.max_connections,
                                max_unauthenticated=settings.max_unauthenticated,
                                max_unauthenticated_per_peer=settings.max_unauthenticated_per_peer,
                                # checked again per request by the guard; here it only says which pool
                                authenticates=lambda header: not served.auth or served.for_token(header) is not None))
    server = uvicorn.Server(config)
    # uvicorn re-raises SIGTERM/SIGINT after its graceful stop: let it find these instead
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)

    original_startup = server.startup
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def announce(one: Served) -> None:
        info = {"pid": os.getpid(), "host": settings.host, "port": settings.port, "started": started,
                "auth": token is not None, "token_file": str(one.token_file) if one.token_file else None,
                "project": str(one.folder)}
        if one is not served.default:
            info["served_by"] = str(served.default.folder)
        registry.register(one.home, info)

    async def startup(sockets: Any = None) -> None:
        await original_startup(sockets=sockets)
        if server.started:
            # registered only once the port answers: a client never finds a server that is not there
            served.start_announcing(announce)

    server.startup = startup  # type: ignore[method-assign]
    original_exit = server.handle_exit

    def handle_exit(sig: int, frame: Any) -> None:
        app.stopping.set()       # requests held open (a replica's wait for a push) answer now
        original_exit(sig, frame)

    server.handle_exit = handle_exit  # type: ignore[method-assign]
    try:
        server.run()
    finally:
        _forget(served, home)
    if not server.started:
        print(f"memgrove serve: could not start on {settings.host}:{settings.port} (see above)", file=sys.stderr)
        return 1
    return 0


def _replica(project: str | os.PathLike | None, replica_of: str | None, promote: bool, no_auth: bool) -> Any:
    """The read replica this start serves (``--replica-of``, or a folder that is one), or None; with
    ``promote``, the replica in ``project`` becomes a primary first (replica.py)."""
    from memgrove.tree.base.home import HOME_NAME

    from .replica import Replica, promote as promote_replica

    if promote:
        if replica_of:
            raise ServeRefused("--promote and --replica-of exclude each other")
        promote_replica(project)
        return None
    base = Path(project or ".").expanduser().absolute()
    if replica_of is None and not (base / HOME_NAME / "replica.json").exists():
        return None
    token = os.environ.get(registry.TOKEN_ENV) or None
    if token is None and not no_auth:
        raise ServeRefused(f"a replica needs its primary's token in {registry.TOKEN_ENV}: clients send that one "
                           "token to the primary and to every replica")
    return Replica.prepare(project, replica_of, token)


def _forget(served: Any, home: Path) -> None:
    """Registrations and tokens of this start: useless once it is gone."""
    for one in served:
        registry.unregister(one.home, os.getpid())
        if one.token_file is not None:
            one.token_file.unlink(missing_ok=True)
    registry.token_path(home, registry.OWNER_TOKEN_FILE).unlink(missing_ok=True)


def add_to_running(project: str | os.PathLike | None, folders: Sequence[str]) -> list[dict[str, Any]]:
    """``memgrove serve --add``: ask the server running for ``project`` to serve ``folders`` too,
    with its owner token (only its owner can read that file)."""
    import http.client

    from memgrove.tree.base.home import locate_home

    home = locate_home(project)
    info = registry.find_server(home)
    if info is None:
        raise ServeRefused(f"no server runs for {home.parent}: start one with `memgrove serve`")
    owner = registry.read_token(registry.token_path(home, registry.OWNER_TOKEN_FILE))
    if owner is None:
        raise ServeRefused(f"cannot read the owner token {registry.token_path(home, registry.OWNER_TOKEN_FILE)}")
    added = []
    for folder in folders:
        body = json.dumps({"project": os.path.abspath(os.path.expanduser(folder))})
        conn = http.client.HTTPConnection(registry._connect_host(str(info["host"])), info["port"], timeout=60)
        try:
            conn.request("POST", "/owner/projects", body=body,
                         headers={"Authorization": f"Bearer {owner}", "Content-Type": "application/json",
                                  "Host": f"127.0.0.1:{info['port']}"})
            resp = conn.getresponse()
            data = json.loads(resp.read() or b"{}")
        except (OSError, ValueError, http.client.HTTPException) as exc:
            raise ServeRefused(f"the server at {info['url']} did not answer: {exc}") from None
        finally:
            conn.close()
        if resp.status != 200:
            message = ((data or {}).get("error") or {}).get("message") if isinstance(data, dict) else None
            raise ServeRefused(f"cannot serve {folder}: {message or resp.status}")
        added.append(data)
    return added

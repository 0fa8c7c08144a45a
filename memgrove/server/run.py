"""``memgrove serve``: check the bind, make the token, register, run uvicorn, clean up.

SIGTERM and SIGINT stop the server gracefully: uvicorn stops accepting, lets requests in
flight finish, the app waits for every started write (``Projects.drain``), the
registration is removed and the process exits 0. uvicorn re-raises the signal once it is
done, which would turn that clean stop into a death by signal; our handlers swallow it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from memgrove.tree.errors import MemgroveError

from . import registry
from .guard import is_loopback
from .settings import ServerSettings, load_server_settings


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
          no_auth: bool = False, log_level: str = "info") -> int:
    import uvicorn

    from memgrove.memory import Memory

    from .app import create_app

    with Memory.open(project) as mem:      # the project must exist; its settings and recovery first
        home = mem.home
        mem.tree.recover()
    settings: ServerSettings = load_server_settings(home, host=host, port=port)
    live = registry.read_registration(home)
    if live is not None and live.get("pid") != os.getpid() and registry.is_live(live):
        raise ServeRefused(f"a server (pid {live['pid']}) already serves this project at "
                           f"{live.get('host')}:{live['port']}")
    token, token_file = resolve_token(home, no_auth, settings.host)
    app = create_app(home.parent, settings, token=token)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=log_level,
                            lifespan="on", timeout_graceful_shutdown=None, access_log=False,
                            proxy_headers=False, server_header=False)
    server = uvicorn.Server(config)
    # uvicorn re-raises SIGTERM/SIGINT after its graceful stop: let it find these instead
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)

    registered = False
    original_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        nonlocal registered
        await original_startup(sockets=sockets)
        if server.started:
            # registered only once the port answers: a client never finds a server that is not there
            registry.register(home, {"pid": os.getpid(), "host": settings.host, "port": settings.port,
                                     "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                     "auth": token is not None,
                                     "token_file": str(token_file) if token_file else None,
                                     "project": str(home.parent)})
            registered = True

    server.startup = startup  # type: ignore[method-assign]
    try:
        server.run()
    finally:
        if registered:
            registry.unregister(home, os.getpid())
        if token_file is not None:           # this start's token: useless once it is gone
            token_file.unlink(missing_ok=True)
    if not server.started:
        print(f"memgrove serve: could not start on {settings.host}:{settings.port} (see above)", file=sys.stderr)
        return 1
    return 0


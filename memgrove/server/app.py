"""The app factory: REST routes, LangServe routes and (when present) MCP, behind the guard.

``create_app`` is what ``memgrove serve`` runs. ``langgraph_app`` is the same routes for
``langgraph.json``'s ``"http": {"app": "memgrove.server.app:langgraph_app"}``: ``langgraph dev``
(or the LangGraph Agent Server) then serves them beside its own API on one port.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import Any

from fastapi import FastAPI

from memgrove.tree.base.home import locate_home

from . import errors
from .guard import Guard, GuardPolicy
from .projects import Projects
from .served import Served, ServedProjects, caller_of
from .settings import ServerSettings, split_list



def _mount_mcp(app: FastAPI, projects: Projects, timeout: float) -> bool:
    """Serve memgrove's MCP tools over streamable HTTP at ``/mcp`` when ``memgrove.mcp`` is installed;
    a call's write is cancelled before its commit point after ``timeout`` s (request_timeout)."""
    try:
        from memgrove.mcp import create_server  # type: ignore[import-not-found]
        from memgrove.mcp.inflight import InFlight
    except ImportError:
        return False

    def memory_for(project: str | None, request: Any) -> Any:
        # a tool's project, checked against the token of the HTTP request that carried the call
        return projects.lease(projects.served.choose(project, caller_of(getattr(request, "scope", None))))

    mcp = create_server(memory_for, inflight=InFlight(timeout, limit="request_timeout"))
    # its routes join ours (``/mcp`` exactly, no redirect to ``/mcp/``), behind the same guard
    app.router.routes.extend(mcp.streamable_http_app().routes)
    app.state.mcp = mcp
    return True


def build_routes(app: FastAPI, projects: Projects) -> None:
    from .langserve_routes import langserve_router
    from .owner import owner_router
    from .replica_routes import router as replication_router
    from .routes import health_router, router
    from .store_routes import store_router
    from .tree_routes import tree_router

    app.state.projects = projects
    errors.install(app)
    app.include_router(health_router)
    app.include_router(router)
    app.include_router(store_router)
    app.include_router(replication_router)
    app.include_router(tree_router)
    app.include_router(owner_router)
    app.include_router(langserve_router(projects))
    from memgrove.ui.mount import include as include_page

    include_page(app)        # the web page at /ui/ (its own sign-in: the guard lets it through)


def create_app(project: str | os.PathLike | ServedProjects, settings: ServerSettings, *, token: str | None = None,
               model: Any = None, mcp: bool = True, replica: Any = None) -> Any:
    """The server's ASGI app for ``project``: FastAPI wrapped in the guard.

    ``project`` is the served list (``served.py``) or one project folder, then served alone with
    ``token`` (None: no authentication; the caller allows that on loopback only). ``replica``
    (``replica.Replica``): a read replica, which follows its primary and forwards writes to it.
    """
    served = project if isinstance(project, ServedProjects) else ServedProjects(
        Served(locate_home(project).parent.resolve(), token))
    projects = Projects(served, timeout=settings.request_timeout, model=model, max_open=settings.max_open_projects)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async with contextlib.AsyncExitStack() as stack:
            mcp_server = getattr(app.state, "mcp", None)
            if mcp_server is not None:       # streamable HTTP needs its session manager running
                await stack.enter_async_context(mcp_server.session_manager.run())
            idle = None
            if settings.dream_when_idle:
                from .idle import dream_when_idle

                idle = asyncio.ensure_future(dream_when_idle(projects, settings.dream_check_s))
            # the server's own project is opened now: its replication pulls before any request
            await projects.amemory_for()
            if replica is not None:
                replica.start(projects.memory_for)
            try:
                yield
            finally:
                if replica is not None:
                    await asyncio.to_thread(replica.stop)   # waits for a follow under way
                if idle is not None:
                    idle.cancel()
                await projects.drain()       # every write that started is finished before exit
                await projects.aclose()

    app = FastAPI(title="memgrove", version=_version(), lifespan=lifespan,
                  description="Agent-native memory: the Context Tree over REST, LangServe and MCP.")
    build_routes(app, projects)
    app.state.stopping = threading.Event()      # set by `memgrove serve` on SIGTERM/SIGINT (held waits end)
    if mcp:
        _mount_mcp(app, projects, settings.request_timeout)
    inner: Any = app
    if replica is not None:
        from .replica import ForwardWrites

        app.state.replica = replica
        inner = ForwardWrites(app, replica)
    guard = Guard(inner, _policy(served, settings, bind_host=settings.host, port=settings.port))
    guard.stopping = app.state.stopping       # type: ignore[attr-defined]
    return guard


def _policy(served: ServedProjects, settings: ServerSettings, *, bind_host: str, port: int | None) -> GuardPolicy:
    return GuardPolicy(served=served, bind_host=bind_host, port=port, max_body_bytes=settings.max_body_bytes,
                       body_timeout=settings.body_timeout, allowed_hosts=split_list(settings.allowed_hosts),
                       allowed_origins=split_list(settings.allowed_origins))


def _version() -> str:
    from memgrove import __version__

    return __version__


def _langgraph_app() -> FastAPI:
    """The routes for ``langgraph dev``: the project of ``memgrove.sample.studio_home`` (``MEMGROVE_HOME``).

    The LangGraph server runs its own app and lifespan; ours joins it as plain routes, with
    the guard's checks as middleware (its token is ``MEMGROVE_TOKEN``, when set). With
    ``MEMGROVE_URL`` set the memory is that server's, routes and all: none are added here, and no
    memory is opened or created on this machine.
    """
    if os.environ.get("MEMGROVE_URL", "").strip():
        return FastAPI(title="memgrove")
    from .settings import load_server_settings

    from memgrove.sample import studio_home

    served = ServedProjects(Served(studio_home().resolve(), os.environ.get("MEMGROVE_TOKEN") or None))
    settings = load_server_settings(served.default.home)
    projects = Projects(served, timeout=settings.request_timeout, max_open=settings.max_open_projects)
    app = FastAPI(title="memgrove")
    build_routes(app, projects)
    app.add_middleware(Guard, policy=_policy(served, settings, bind_host="127.0.0.1", port=None))
    return app


def __getattr__(name: str) -> Any:
    # built on first access, so importing this module for create_app opens no memory
    if name == "langgraph_app":
        app = _langgraph_app()
        globals()["langgraph_app"] = app
        return app
    raise AttributeError(name)

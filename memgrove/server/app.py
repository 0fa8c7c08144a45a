"""The app factory: REST routes, LangServe routes and (when present) MCP, behind the guard.

``create_app`` is what ``memgrove serve`` runs. ``langgraph_app`` is the same routes for
``langgraph.json``'s ``"http": {"app": "memgrove.server.app:langgraph_app"}``: ``langgraph dev``
(or the LangGraph Agent Server) then serves them beside its own API on one port.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

from fastapi import FastAPI

from . import errors
from .guard import Guard, GuardPolicy
from .projects import Projects
from .settings import ServerSettings, split_list



def _mount_mcp(app: FastAPI, memory_for: Callable[[str | None], Any], timeout: float) -> bool:
    """Serve memgrove's MCP tools over streamable HTTP at ``/mcp`` when ``memgrove.mcp`` is installed;
    a call's write is cancelled before its commit point after ``timeout`` s (request_timeout)."""
    try:
        from memgrove.mcp import create_server  # type: ignore[import-not-found]
        from memgrove.mcp.inflight import InFlight
    except ImportError:
        return False
    mcp = create_server(memory_for, inflight=InFlight(timeout, limit="request_timeout"))
    # its routes join ours (``/mcp`` exactly, no redirect to ``/mcp/``), behind the same guard
    app.router.routes.extend(mcp.streamable_http_app().routes)
    app.state.mcp = mcp
    return True


def build_routes(app: FastAPI, projects: Projects) -> None:
    from .langserve_routes import langserve_router
    from .routes import health_router, router

    app.state.projects = projects
    errors.install(app)
    app.include_router(health_router)
    app.include_router(router)
    app.include_router(langserve_router(projects))


def create_app(project: str | os.PathLike, settings: ServerSettings, *, token: str | None,
               model: Any = None, mcp: bool = True) -> Any:
    """The server's ASGI app for the project folder ``project``: FastAPI wrapped in the guard.

    ``token`` None means no authentication (the caller allows that on loopback only).
    """
    projects = Projects(project, timeout=settings.request_timeout, model=model)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async with contextlib.AsyncExitStack() as stack:
            mcp_server = getattr(app.state, "mcp", None)
            if mcp_server is not None:       # streamable HTTP needs its session manager running
                await stack.enter_async_context(mcp_server.session_manager.run())
            try:
                yield
            finally:
                await projects.drain()       # every write that started is finished before exit
                await projects.aclose()

    app = FastAPI(title="memgrove", version=_version(), lifespan=lifespan,
                  description="Agent-native memory: the Context Tree over REST, LangServe and MCP.")
    build_routes(app, projects)
    if mcp:
        _mount_mcp(app, projects.memory_for, settings.request_timeout)
    policy = GuardPolicy(token=token, bind_host=settings.host, port=settings.port,
                         max_body_bytes=settings.max_body_bytes, allowed_hosts=split_list(settings.allowed_hosts),
                         allowed_origins=split_list(settings.allowed_origins))
    return Guard(app, policy)


def _version() -> str:
    from memgrove import __version__

    return __version__


def _langgraph_app() -> FastAPI:
    """The routes for ``langgraph dev``: the project of ``memgrove.sample.studio_home`` (``MEMGROVE_HOME``).

    The LangGraph server runs its own app and lifespan; ours joins it as plain routes, with
    the guard's checks as middleware (its token is ``MEMGROVE_TOKEN``, when set).
    """
    from .settings import load_server_settings

    from memgrove.sample import studio_home

    projects = Projects(str(studio_home()))
    settings = load_server_settings(projects.memory_for(None).home)
    projects.timeout = settings.request_timeout
    app = FastAPI(title="memgrove")
    build_routes(app, projects)
    policy = GuardPolicy(token=os.environ.get("MEMGROVE_TOKEN") or None, bind_host="127.0.0.1", port=None,
                         max_body_bytes=settings.max_body_bytes, allowed_hosts=split_list(settings.allowed_hosts),
                         allowed_origins=split_list(settings.allowed_origins))
    app.add_middleware(Guard, policy=policy)
    return app


def __getattr__(name: str) -> Any:
    # built on first access, so importing this module for create_app opens no memory
    if name == "langgraph_app":
        app = _langgraph_app()
        globals()["langgraph_app"] = app
        return app
    raise AttributeError(name)

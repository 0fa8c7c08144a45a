"""Adds the page's routes to the server's app (``memgrove/server/app.py``'s ``build_routes``)."""

from __future__ import annotations

from typing import Any


def include(app: Any) -> None:
    from . import auth, failures, routes_changes, routes_pages
    from .sessions import Sessions

    app.state.ui_sessions = Sessions()          # the signed-in browsers, before any request (routes run in threads)
    app.state.page_error = failures.response      # the server's error handlers answer /ui/ with a page
    app.include_router(auth.router)
    app.include_router(routes_pages.router)
    app.include_router(routes_changes.router)

"""Templates to responses: the Jinja2 environment (autoescape on for every template, undefined
names an error) and the headers every page carries.

The Content-Security-Policy is the second wall behind escaping: scripts only from this server's
``/ui/static/`` (no inline script, no eval), no frames, forms only to this origin, no images or
styles from elsewhere. Even a payload that got past the escaping would not run.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.responses import HTMLResponse

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def entry_url(path: str) -> str:
    return "/ui/entry/" + quote(path, safe="/")


def short_time(at: str | None) -> str:
    """'2026-12-07T17:09:51Z' → '2026-12-07 17:09' (what a person scans for)."""
    if not at:
        return ""
    return str(at).replace("T", " ")[:16]


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=PackageLoader("memgrove.ui", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["short_time"] = short_time
    return env


class Page:
    """What every page knows: the session's projects, the one shown, the CSRF token, notices."""

    def __init__(self, *, project: Any, projects: list[Any], csrf: str, notices: list[tuple[str, str]],
                 default: Any, auth: bool, started: float | None = None, session: Any = None):
        from memgrove import __version__

        self.project = project
        self.projects = projects
        self.csrf = csrf
        self.notices = notices
        self._default = default
        self.version = __version__
        self.auth = auth
        self.started = time.perf_counter() if started is None else started   # for Server-Timing
        self.session = session     # sessions.Session: its CSRF token, its notices (None: signed out)

    @classmethod
    def signed_out(cls, *, csrf: str = "", notices: list[tuple[str, str]] | None = None, auth: bool = True) -> "Page":
        """A page for a browser not signed in (the sign-in page, an error): no project, no session."""
        return cls(project=None, projects=[], csrf=csrf, notices=notices or [], default=None, auth=auth)

    @property
    def project_param(self) -> str:
        """The ``project`` query parameter the page's links carry ("" for the first project)."""
        if self.project is None or self.project is self._default:
            return ""
        return str(self.project.folder)

    def entry_link(self, path: str) -> str:
        """The page's address of the entry at ``path`` in the project shown."""
        return self.url(entry_url(path))

    def url(self, path: str, **params: Any) -> str:
        """``path`` with ``params`` (None dropped) and, unless it is the server's own, the project."""
        if self.project_param:
            params = {"project": self.project_param, **params}
        query = urlencode({k: v for k, v in params.items() if v is not None and v != ""})
        return path + ("?" + query if query else "")


def page(template: str, ui: Page, status: int = 200, **context: Any) -> HTMLResponse:
    """``template`` rendered for ``ui``; its Server-Timing header says how long the request took
    from the moment it was signed in to here (the view's reads and the rendering)."""
    html = environment().get_template(template).render(ui=ui, **context)
    return respond(html, status, ui.started)


def respond(html: str, status: int = 200, started: float | None = None) -> HTMLResponse:
    headers = dict(HEADERS)
    if started is not None:
        headers["server-timing"] = f"view;dur={(time.perf_counter() - started) * 1000:.1f}"
    return HTMLResponse(html, status_code=status, headers=headers)

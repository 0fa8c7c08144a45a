"""Sign-in, sign-out and what every page route depends on: the session from its cookie, the
project it shows, the CSRF check of every change.

The sign-in page takes a served project's token (the one in its ``.memgrove/server.token``),
checks it as the guard checks a bearer token, and answers with a session cookie: HttpOnly
(no script reads it), SameSite=Strict (no other site's page sends it), ``Path=/ui``, named for
the port (two servers on one host keep their own), Secure over https. A server without
tokens (``--no-auth``, loopback only) signs every browser in to its own project.

A change is a POST carrying the session's CSRF token (a form field or ``X-CSRF-Token``) from
this origin: the guard has already refused a foreign ``Origin``; a ``Sec-Fetch-Site`` other
than same-origin is refused here too. The sign-in form is protected the same way by a token
of its own in a short-lived cookie (double submit).
"""

from __future__ import annotations

import hmac
import secrets
import time
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Form, Request
from starlette.responses import RedirectResponse, Response

from memgrove.server.errors import Forbidden, Unauthorized
from memgrove.server.served import OWNER, Served
from memgrove.tree.base.errors import MemgroveError

from .render import HEADERS, Page, page
from .sessions import Session, Sessions

LOGIN_TOKEN_MAX = 512
NO_CSRF = "this change lacks the page's CSRF token: reload the page and try again"


class SignInNeeded(MemgroveError):
    code = "sign_in_needed"


def sessions(request: Request) -> Sessions:
    return request.app.state.ui_sessions      # made once, with the app (mount.py)


def cookie_name(request: Request, kind: str = "session") -> str:
    return f"memgrove_ui_{kind}_{request.url.port or ('443' if request.url.scheme == 'https' else '80')}"


def _set_cookie(response: Response, request: Request, kind: str, value: str, max_age: int | None = None) -> None:
    response.set_cookie(cookie_name(request, kind), value, max_age=max_age, path="/ui", httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


def served_projects(request: Request) -> Any:
    return request.app.state.projects.served


def session_of(request: Request) -> Session | None:
    return sessions(request).get(request.cookies.get(cookie_name(request)))


def ui_page(request: Request, project: str | None = None) -> Page:
    """The dependency of every page: signed in, and the project it shows (``?project=``, one the
    session signed in to; default: the first)."""
    started = time.perf_counter()
    s = session_of(request)
    if s is None or not s.projects:
        raise SignInNeeded("sign in with the project's token")
    chosen = s.projects[0]
    if project:
        named = served_projects(request).named(project)
        if named is None or all(p is not named for p in s.projects):
            raise Forbidden(f"this browser is not signed in to the project {project[:200]!r}: sign in with its token")
        chosen = named
    ui = Page(project=chosen, projects=list(s.projects), csrf=s.csrf, notices=s.take_notices(),
              default=s.projects[0], auth=served_projects(request).auth, started=started, session=s)
    return ui


def check_change(request: Request, ui: Page, given: str | None) -> None:
    """Refuse a change that does not carry this session's CSRF token or comes from another site."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise Forbidden(f"a change from {site!r} refused: changes come from this page only")
    given = given or request.headers.get("x-csrf-token")
    if ui.session is None or not ui.session.csrf_ok(given):
        raise Forbidden(NO_CSRF)


def after_change(request: Request, ui: Page, kind: str, text: str, to: str) -> Response:
    """Post/redirect/get: the notice kept for the next page, a 303 to ``to`` (this server's path only)."""
    if ui.session is not None:
        ui.session.notice(kind, text)
    return RedirectResponse(local_path(to) or ui.url("/ui/"), status_code=303, headers=dict(HEADERS))


def local_path(to: str | None) -> str | None:
    """``to`` when it is a path of this page (``/ui/...``), else None: no open redirect."""
    if not to or len(to) > 2000:
        return None
    parts = urlsplit(to)
    if parts.scheme or parts.netloc or not parts.path.startswith("/ui/") or "\\" in to or "//" in parts.path:
        return None
    return to


router = APIRouter(prefix="/ui", include_in_schema=False)


def _signed_in(request: Request, project: Any, next: str | None) -> Response:
    """A fresh session (no fixation) keeping the projects signed in to before, plus ``project``."""
    old = session_of(request)
    s = sessions(request).new()
    if old is not None:
        for p in old.projects:
            s.add_project(p)
        sessions(request).drop(old.id)
    s.add_project(project)
    response = RedirectResponse(local_path(next) or "/ui/", status_code=303, headers=dict(HEADERS))
    _set_cookie(response, request, "session", s.id)
    response.delete_cookie(cookie_name(request, "login"), path="/ui", httponly=True, samesite="strict")
    return response


@router.get("/login")
async def login_form(request: Request, next: str | None = None, error: str | None = None,
                     code: str | None = None) -> Response:
    if not served_projects(request).auth:          # no tokens (loopback only): signed in at once
        return _signed_in(request, served_projects(request).default, next)
    if code:                                       # `memgrove ui`'s link
        project = sessions(request).use_code(code)
        if project is not None:
            return _signed_in(request, project, next)
        error = "that sign-in link was used already or is over two minutes old: run `memgrove ui` again"
    token = secrets.token_urlsafe(24)
    ui = Page.signed_out(csrf=token, notices=[("error", error)] if error else [], auth=served_projects(request).auth)
    response = page("login.html", ui, status=401 if error else 200, next=local_path(next) or "",
                    token_file=_token_file(request))
    _set_cookie(response, request, "login", token, max_age=3600)
    return response


@router.post("/login")
async def login(request: Request, token: str = Form("", max_length=LOGIN_TOKEN_MAX),
                csrf: str = Form("", max_length=200), next: str = Form("", max_length=2000)) -> Response:
    expected = request.cookies.get(cookie_name(request, "login")) or ""
    if not expected or not hmac.compare_digest(csrf.encode(), expected.encode()):
        raise Forbidden("the sign-in form expired or came from another page: open /ui/login again")
    served = served_projects(request)
    who = served.for_token("Bearer " + token.strip()) if token.strip() else None
    if served.auth and not isinstance(who, Served):
        why = ("the owner token adds projects; sign in with a project's token" if who == OWNER
               else "that is not the token of a project this server serves")
        return RedirectResponse("/ui/login?" + "error=" + quote(why) + ("&next=" + quote(next) if next else ""),
                                status_code=303, headers=dict(HEADERS))
    return _signed_in(request, who if isinstance(who, Served) else served.default, next)


@router.post("/login/code")
async def login_code(request: Request) -> dict[str, Any]:
    """A one-time sign-in code for the project whose bearer token the request carries (what
    ``memgrove ui`` opens the browser with: ``/ui/login?code=...``)."""
    served = served_projects(request)
    who = served.for_token(request.headers.get("authorization"))
    if served.auth and not isinstance(who, Served):
        raise Unauthorized("send the project's bearer token to get a sign-in link")
    return {"code": sessions(request).new_code(who if isinstance(who, Served) else served.default)}


@router.post("/logout")
async def logout(request: Request, csrf: str = Form("", max_length=200)) -> Response:
    s = session_of(request)
    if s is not None:
        if not s.csrf_ok(csrf):
            raise Forbidden(NO_CSRF)
        sessions(request).drop(s.id)
    response = RedirectResponse("/ui/login", status_code=303, headers=dict(HEADERS))
    response.delete_cookie(cookie_name(request), path="/ui", httponly=True, samesite="strict")
    return response


def _token_file(request: Request) -> str:
    default = served_projects(request).default
    return str(default.token_file) if getattr(default, "token_file", None) else ""



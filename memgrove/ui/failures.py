"""What a page shows when something fails: the sign-in page for a browser not signed in (a 303
to it, or a 401 for the script's fetches), else an error page with the same message the API
gives, escaped, and the API's status."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memgrove.server.errors import status_of

from .auth import SignInNeeded
from .render import HEADERS, Page, page, respond

def response(request: Request, exc: BaseException, message: str) -> Response:
    if isinstance(exc, SignInNeeded):
        if request.headers.get("x-requested-with") == "memgrove-ui" or request.method != "GET":
            return respond("sign in first", 401)
        back = request.url.path + (("?" + request.url.query) if request.url.query else "")
        return RedirectResponse("/ui/login?next=" + quote(back, safe=""), status_code=303, headers=dict(HEADERS))
    status = status_of(exc) if not hasattr(exc, "status_code") else int(getattr(exc, "status_code"))
    return page("error.html", Page.signed_out(), status=status, status_code=status, message=message)

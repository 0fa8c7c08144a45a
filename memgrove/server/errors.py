"""Every failure as ``{"error": {"code", "message"}}`` (``error_body``) with a fitting HTTP status.

The server's own refusals are ``MemgroveError`` subclasses too, so one function renders
them all and clients branch on ``code``, never on the message. A ``MemgroveError``'s body also
names its class (``"type"``), so ``Memory.connect`` raises the very subclass raised here.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from memgrove.tree.base.errors import (
    BatchRejected,
    Cancelled,
    DreamRunning,
    EntryNotFound,
    InvalidEntry,
    InvalidInput,
    InvalidPath,
    JournalError,
    LockTimeout,
    MemgroveError,
    NotWritable,
    OperationConflict,
    OperationNotFound,
    PrimaryUnreachable,
    QuestionTooLong,
    ReadOnlyReplica,
    TreeNotFound,
    TreeOutside,
    error_body,
)

log = logging.getLogger("memgrove.server")


class Unauthorized(MemgroveError):
    code = "unauthorized"


class Forbidden(MemgroveError):
    code = "forbidden"


class TooLarge(MemgroveError):
    code = "too_large"


class RequestTimeout(MemgroveError):
    code = "timeout"


class BodyTimeout(MemgroveError):
    """A client took longer than ``body_timeout`` to send its request body."""

    code = "client_timeout"


class AlreadyServed(MemgroveError):
    """A project added to a server is already served by another live server."""

    code = "already_served"


class NotFound(MemgroveError):
    code = "not_found"


class BadRequest(MemgroveError):
    code = "invalid_request"


# most specific first: a subclass is matched before its base
STATUS: list[tuple[type[BaseException], int]] = [
    (Unauthorized, 401),
    (Forbidden, 403),
    (TooLarge, 413),
    (RequestTimeout, 504),
    (BodyTimeout, 408),
    (Cancelled, 504),
    (NotFound, 404),
    (TreeNotFound, 404),
    (TreeOutside, 403),
    (EntryNotFound, 404),
    (OperationNotFound, 404),
    (InvalidPath, 400),
    (QuestionTooLong, 413),
    (InvalidInput, 400),
    (BatchRejected, 400),
    (InvalidEntry, 422),
    (OperationConflict, 409),
    (DreamRunning, 409),
    (AlreadyServed, 409),
    (JournalError, 409),
    (LockTimeout, 503),
    (PrimaryUnreachable, 503),
    (ReadOnlyReplica, 409),
    (NotWritable, 507),
    (BadRequest, 400),
    (MemgroveError, 400),
]


def status_of(exc: BaseException) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_response(exc: BaseException) -> JSONResponse:
    status = status_of(exc)
    headers: dict[str, str] = {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if status == 503:
        headers["Retry-After"] = "1"
    message = str(exc) if status != 500 else f"internal error ({type(exc).__name__}); see the server's log"
    body = error_body(exc, message)
    if isinstance(exc, MemgroveError):
        # the class too: a client raises the same subclass (EntryNotFound shares InvalidPath's code)
        body["error"]["type"] = type(exc).__name__
        if isinstance(exc, Cancelled) and exc.reason:
            body["error"]["reason"] = exc.reason
    return JSONResponse(body, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Exception handlers turning every failure into the error shape."""

    async def memgrove_error(request: Request, exc: Exception) -> Response:
        if _page(request):
            return _page_error(request, exc, str(exc))
        return error_response(exc)

    async def invalid_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        if _page(request):
            return _page_error(request, BadRequest(""), _validation_message(exc.errors()))
        return error_response(BadRequest(_validation_message(exc.errors())))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if _page(request):
            return _page_error(request, exc, str(exc.detail) if exc.status_code != 404 else
                               f"no page {request.url.path[:200]}")
        codes = {404: NotFound, 401: Unauthorized, 403: Forbidden, 413: TooLarge}
        cls = codes.get(exc.status_code)
        if cls is not None:
            return error_response(cls(str(exc.detail) if exc.status_code != 404 else
                                      f"no route {request.method} {request.url.path}"))
        code = {405: "method_not_allowed", 422: "invalid_request"}.get(exc.status_code, "http_error")
        return JSONResponse({"error": {"code": code, "message": str(exc.detail)}}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error in %s %s", request.method, request.url.path, exc_info=exc)
        if _page(request):
            return _page_error(request, exc, f"internal error ({type(exc).__name__}); see the server's log")
        return error_response(exc)

    app.add_exception_handler(MemgroveError, memgrove_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, internal)


def _page(request: Request) -> bool:
    """A request of the web page (``/ui/``, when the app has one: ``app.state.page_error``, set by
    ``memgrove.ui.mount``): its errors are pages, not JSON."""
    path = request.url.path
    return (path == "/ui" or path.startswith("/ui/")) and getattr(request.app.state, "page_error", None) is not None


def _page_error(request: Request, exc: BaseException, message: str) -> Response:
    return request.app.state.page_error(request, exc, message)


def _validation_message(errors: Any) -> str:
    parts = []
    for e in list(errors)[:5]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{where or 'body'}: {e.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)

"""The wire of ``Memory.connect`` (``remote.py``): requests to one ``memgrove serve`` for one project,
and its error answers turned back into the library's exceptions.

    wire = Wire("http://127.0.0.1:7437", token)
    wire.send("GET", "/api/search", {"q": "jwt"}, retry=True)     # the JSON, or the exception

Every call ends within ``timeout`` seconds, counted from its start -- connecting, sending and
every byte of the reply (``deadline.py``) -- or raises ``ServerTimeout``; a reply longer
than ``max_reply`` bytes, or not JSON, is ``BadReply`` (``shaped`` says the same of JSON of
another shape than the caller reads).

Errors: ``{"error": {"code", "message", "type"}}`` becomes the ``MemgroveError`` subclass of
``tree/base/errors.py`` that defines ``code`` -- or the subclass ``type`` names, when it keeps its
base's code (``EntryNotFound``) -- with the same message (``error_of``); a code only a server has
is a ``ServerError`` carrying it. Standard library and ``tree/base/errors.py`` only::

    MemgroveError
    ├── ServerError          a refusal only a server makes (its ``code``: unauthorized, timeout...)
    │   └── BadReply         the reply is not a memgrove reply: not JSON, another shape, too large
    └── ServerUnreachable    the server refused the connection, or stopped answering
        └── ServerTimeout    the call's ``timeout`` ran out before its reply was complete
"""

from __future__ import annotations

import json
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlencode, urlsplit

from memgrove.remote.deadline import Late, TooLarge, connection, read_body
from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import BatchRejected, Cancelled, InvalidInput, MemgroveError

TIMEOUT = 600.0          # seconds a whole call may take (the server bounds its work itself: request_timeout)
TIMEOUT_ENV = "MEMGROVE_TIMEOUT"
MAX_REPLY = 64 * 2**20   # bytes; the largest answers (a whole history, a tree's listing) are far smaller


class ServerError(MemgroveError):
    """An error only a server raises (``unauthorized``, ``forbidden``, ``timeout``, ``too_large``,
    ``internal``...): its ``code`` and message as the server answered them."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class BadReply(ServerError):
    """The server's reply is not one memgrove sends: not JSON, JSON of another shape than the call
    reads, or longer than the client's ``max_reply``. Nothing of it is used."""

    def __init__(self, message: str):
        super().__init__("bad_reply", message)


class ServerUnreachable(MemgroveError):
    """The server refused the connection, or stopped answering after a request was sent."""

    code = "server_unreachable"


class ServerTimeout(ServerUnreachable):
    """The call's ``timeout`` ran out before the server's whole reply had come (a silent or slow
    server, or one dripping its answer)."""

    code = "server_timeout"


class _Refused(Exception):
    """Nothing was sent: the server was gone before the connection opened."""


class _NoAnswer(Exception):
    """The connection broke after the request went out (an ``http.client.HTTPException``)."""


def default_timeout() -> float:
    """``MEMGROVE_TIMEOUT`` (seconds a call may take), else ``TIMEOUT``."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise InvalidInput(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds above 0")
    return value


def shown_url(url: str) -> str:
    """``url`` as messages show it: credentials it may hold replaced by ``***``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]).geturl()


@contextmanager
def shaped(url: str, path: str) -> Iterator[None]:
    """Reading a reply: JSON of another shape than expected (a missing field, a list for an
    object...) is ``BadReply``, not a ``KeyError`` from deep inside the client."""
    try:
        yield
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, MemgroveError):
            raise
        raise BadReply(f"memgrove serve at {shown_url(url)} answered {path} with JSON of another shape than a "
                       f"memgrove server sends ({type(exc).__name__}: {str(exc)[:200]})") from None


def as_dict(url: str, path: str, data: Any) -> dict[str, Any]:
    """The reply, which must be a JSON object."""
    if not isinstance(data, dict):
        raise BadReply(f"memgrove serve at {shown_url(url)} answered {path} with JSON {type(data).__name__}, "
                       "not the object a memgrove server sends")
    return data


# -- errors: the server's JSON back into the library's exceptions --------------------------------

def error_classes() -> dict[str, type[MemgroveError]]:
    """``code`` -> the class that defines it, for every ``MemgroveError`` subclass of ``tree/base/errors.py``
    (a subclass that keeps its base's code, such as ``EntryNotFound``, is named by the body's ``type``)."""
    from memgrove.tree.base import errors

    table: dict[str, type[MemgroveError]] = {}
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, MemgroveError) and "code" in vars(cls):
            table.setdefault(cls.code, cls)
    return table


def _subclass(base: type[MemgroveError], name: Any) -> type[MemgroveError]:
    from memgrove.tree.base import errors

    cls = getattr(errors, name, None) if isinstance(name, str) else None
    return cls if isinstance(cls, type) and issubclass(cls, base) else base


def error_of(payload: Any, status: int, url: str) -> MemgroveError:
    """The exception a server's error answer stands for: the in-process class, or a ``ServerError``."""
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return ServerError("server_error", f"memgrove serve at {url} answered {status}")
    code, message = str(err.get("code") or "server_error"), err["message"]
    base = error_classes().get(code)
    if base is None:
        return ServerError(code, message)
    cls = _subclass(base, err.get("type"))
    if issubclass(cls, BatchRejected):
        exc: MemgroveError = cls([str(e) for e in err.get("errors") or [message]])
    else:
        exc = cls.__new__(cls)
        Exception.__init__(exc, message)
        if issubclass(cls, Cancelled):
            exc.reason = str(err.get("reason") or "")
    return exc


# -- the connection ------------------------------------------------------------------------------

class Wire:
    """Requests to one server for one project: auth, the project, JSON in and out, errors raised.

    ``timeout``: seconds a whole call may take; ``max_reply``: the most bytes of a reply it reads.
    ``errors``: what turns an error answer into an exception (default ``error_of``)."""

    def __init__(self, url: str, token: str | None = None, *, project: str | None = None,
                 timeout: float = TIMEOUT, headers: dict[str, str] | None = None, max_reply: int = MAX_REPLY,
                 errors: Callable[[Any, int, str], MemgroveError] | None = None):
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise InvalidInput(f"not a memgrove server URL: {shown_url(url)!r} (give http://host:port)")
        if "@" in parts.netloc:
            raise InvalidInput(f"give the server's URL without user:password@ ({shown_url(url)}): a memgrove "
                               "server takes the project's bearer token (token=, or MEMGROVE_TOKEN)")
        if not 0 < timeout < float("inf"):
            raise InvalidInput(f"timeout must be a number of seconds above 0, not {timeout!r}")
        self.url = url.rstrip("/")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout = float(timeout)
        self.max_reply = max_reply
        self.errors = errors or error_of
        self.headers = {"Accept": "application/json", **(headers or {})}
        self.token = token
        self.token_given = bool(token)
        self._tried_local = False
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        # a token names its project; without tokens a project other than the server's own is named
        # (as a parameter: a path may hold characters a header cannot)
        self.named: dict[str, str] = {"project": str(project)} if project else {}
        self._kept = threading.local()
        self._open: set[Any] = set()         # every kept connection, of every thread, for close()
        self._lock = forksafe.lock()
        forksafe.in_child(self._forked)

    def _forked(self) -> None:
        # a forked child's requests on the parent's kept connections would interleave with the
        # parent's on one stream: it opens its own (dropping these closes only the child's copies
        # of their sockets; nothing is sent on them)
        self._kept = threading.local()
        self._open = set()

    def _connection(self) -> Any:
        return connection(self.https, self.host, self.port)

    def send(self, method: str, path: str, params: dict[str, Any] | None = None, body: Any = None, *,
             retry: bool = False, raw: bytes | None = None) -> Any:
        """The JSON the server answered, within ``timeout`` seconds of this call's start;
        ``retry``: a read, sent on a kept-alive connection and again on a fresh one if that one had
        gone stale. ``raw``: a body already encoded as JSON (instead of ``body``)."""
        deadline = time.monotonic() + self.timeout
        params = {**(params or {}), **self.named}
        target = self.prefix + path + ("?" + urlencode(params) if params else "")
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8"))
        try:
            try:
                return self._exchange(method, target, data, retry, deadline)
            except ServerError as exc:
                # refused before anything was done: once more with the local server's own token
                if exc.code == "unauthorized" and self._local_token(deadline):
                    return self._exchange(method, target, data, retry, deadline)
                raise
        except Late:
            raise ServerTimeout(f"memgrove serve at {shown_url(self.url)} did not answer {path} within "
                                f"{self.timeout:g} s") from None
        except TooLarge as exc:
            size = f" of {exc.args[0]:,} bytes" if exc.args and exc.args[0] is not None else ""
            raise BadReply(f"memgrove serve at {shown_url(self.url)} answered {path} with a reply{size} past the "
                           f"client's limit of {self.max_reply:,} bytes: refused, nothing more was read") from None

    def _exchange(self, method: str, target: str, data: bytes | None, retry: bool, deadline: float) -> Any:
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        if retry:
            conn = getattr(self._kept, "conn", None)
            if conn is not None:
                if conn.sock is None:            # closed by close(): opened again below, kept again
                    with self._lock:
                        self._open.add(conn)
                try:
                    return self._answer(conn, method, target, data, headers, deadline)
                except (_Refused, _NoAnswer, OSError):
                    conn.close()
            self._kept.conn = conn = self._connection()
            with self._lock:
                self._open.add(conn)
            return self._answer(conn, method, target, data, headers, deadline)
        conn = self._connection()
        try:
            return self._answer(conn, method, target, data, headers, deadline)
        finally:
            conn.close()

    def _answer(self, conn: Any, method: str, target: str, data: bytes | None, headers: dict[str, str],
                deadline: float) -> Any:
        import http.client

        conn.deadline = deadline
        resp = None
        try:
            if conn.sock is None:
                try:
                    conn.connect()
                except OSError as exc:      # refused, no route, no such host: nothing was sent
                    raise _Refused(str(exc)) from exc
            conn.request(method, target, body=data, headers=headers)
            resp = conn.getresponse()
            raw = read_body(resp, self.max_reply)
            status = resp.status
        except http.client.HTTPException as exc:
            conn.close()
            raise _NoAnswer(str(exc)) from exc
        except (Late, TooLarge):
            if resp is not None:
                resp.close()
            conn.close()           # half a reply is left on it: never reused
            raise
        if resp.will_close:
            conn.close()
        try:
            payload = json.loads(raw) if raw else None
        except (ValueError, RecursionError) as exc:    # RecursionError: nested deeper than the parser goes
            what = "JSON nested too deep to read" if isinstance(exc, RecursionError) else "something not JSON"
            raise BadReply(f"memgrove serve at {shown_url(self.url)} answered {target.partition('?')[0]} "
                           f"({status}) with {what}") from None
        if status >= 400:
            raise self.errors(payload, status, shown_url(self.url))
        return payload

    def _local_token(self, deadline: float | None = None) -> bool:
        """No token was given and the server runs on this machine: its project's ``server.token``."""
        if self.token_given or self._tried_local:
            return False
        self._tried_local = True
        deadline = deadline if deadline is not None else time.monotonic() + self.timeout
        try:
            health = self._exchange("GET", self.prefix + "/health", None, False, deadline)
            project = self.named.get("project") or health.get("project")
            token = (Path(project) / ".memgrove" / "server.token").read_text(encoding="utf-8").strip()
        except (MemgroveError, _Refused, _NoAnswer, Late, TooLarge, OSError, AttributeError, TypeError):
            return False
        if not token:
            return False
        self.token = token
        self.headers["Authorization"] = f"Bearer {token}"
        return True

    def close(self) -> None:
        """Close the kept connections (a thread's next read opens a new one)."""
        with self._lock:
            kept, self._open = self._open, set()
        for conn in kept:
            conn.close()

    def __del__(self) -> None:
        for conn in getattr(self, "_open", ()):
            conn.close()

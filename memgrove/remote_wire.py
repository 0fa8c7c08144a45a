"""The wire of ``Memory.connect`` (``remote.py``): requests to one ``memgrove serve`` for one project,
and its error answers turned back into the library's exceptions.

    wire = Wire("http://127.0.0.1:7437", token)
    wire.send("GET", "/api/search", {"q": "jwt"}, retry=True)     # the JSON, or the exception

Errors: ``{"error": {"code", "message", "type"}}`` becomes the ``MemgroveError`` subclass of
``tree/errors.py`` that defines ``code`` -- or the subclass ``type`` names, when it keeps its
base's code (``EntryNotFound``) -- with the same message (``error_of``); a code only a server has
is a ``ServerError`` carrying it. Standard library and ``tree/errors.py`` only.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from memgrove.tree import forksafe
from memgrove.tree.errors import BatchRejected, Cancelled, InvalidInput, MemgroveError

TIMEOUT = 600.0          # seconds; the server bounds every request itself (request_timeout)


class ServerError(MemgroveError):
    """An error only a server raises (``unauthorized``, ``forbidden``, ``timeout``, ``too_large``,
    ``internal``...): its ``code`` and message as the server answered them."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class ServerUnreachable(MemgroveError):
    """The server refused the connection, or stopped answering after a request was sent."""

    code = "server_unreachable"


class _Refused(Exception):
    """Nothing was sent: the server was gone before the connection opened."""


class _NoAnswer(Exception):
    """The connection broke after the request went out (an ``http.client.HTTPException``)."""


# -- errors: the server's JSON back into the library's exceptions --------------------------------

def error_classes() -> dict[str, type[MemgroveError]]:
    """``code`` -> the class that defines it, for every ``MemgroveError`` subclass of ``tree/errors.py``
    (a subclass that keeps its base's code, such as ``EntryNotFound``, is named by the body's ``type``)."""
    from memgrove.tree import errors

    table: dict[str, type[MemgroveError]] = {}
    for cls in vars(errors).values():
        if isinstance(cls, type) and issubclass(cls, MemgroveError) and "code" in vars(cls):
            table.setdefault(cls.code, cls)
    return table


def _subclass(base: type[MemgroveError], name: Any) -> type[MemgroveError]:
    from memgrove.tree import errors

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
    """Requests to one server for one project: auth, the project, JSON in and out, errors raised."""

    def __init__(self, url: str, token: str | None = None, *, project: str | None = None,
                 timeout: float = TIMEOUT, headers: dict[str, str] | None = None):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInput(f"not a memgrove server URL: {url!r} (give http://host:port)")
        self.url = url.rstrip("/")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
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
        import http.client  # here, not at the top: opening in-process (no server) needs no HTTP

        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout)

    def send(self, method: str, path: str, params: dict[str, Any] | None = None, body: Any = None, *,
             retry: bool = False) -> Any:
        """The JSON the server answered; ``retry``: a read, sent on a kept-alive connection and
        again on a fresh one if that one had gone stale."""
        params = {**(params or {}), **self.named}
        target = self.prefix + path + ("?" + urlencode(params) if params else "")
        data = None if body is None else json.dumps(body).encode("utf-8")
        try:
            return self._exchange(method, target, data, retry)
        except ServerError as exc:
            # refused before anything was done: once more with the local server's own token
            if exc.code == "unauthorized" and self._local_token():
                return self._exchange(method, target, data, retry)
            raise

    def _exchange(self, method: str, target: str, data: bytes | None, retry: bool) -> Any:
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
                    return self._answer(conn, method, target, data, headers)
                except (_Refused, _NoAnswer, OSError):
                    conn.close()
            self._kept.conn = conn = self._connection()
            with self._lock:
                self._open.add(conn)
            return self._answer(conn, method, target, data, headers)
        conn = self._connection()
        try:
            return self._answer(conn, method, target, data, headers)
        finally:
            conn.close()

    def _answer(self, conn: Any, method: str, target: str, data: bytes | None, headers: dict[str, str]) -> Any:
        import http.client

        try:
            if conn.sock is None:
                try:
                    conn.connect()
                except OSError as exc:      # refused, no route, no such host: nothing was sent
                    raise _Refused(str(exc)) from exc
            conn.request(method, target, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            status = resp.status
        except http.client.HTTPException as exc:
            conn.close()
            raise _NoAnswer(str(exc)) from exc
        if resp.will_close:
            conn.close()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            raise ServerError("server_error", f"memgrove serve at {self.url} answered {status} "
                                              "with something not JSON") from None
        if status >= 400:
            raise error_of(payload, status, self.url)
        return payload

    def _local_token(self) -> bool:
        """No token was given and the server runs on this machine: its project's ``server.token``."""
        if self.token_given or self._tried_local:
            return False
        self._tried_local = True
        try:
            health = self.send("GET", "/health")
            project = self.named.get("project") or health.get("project")
            token = (Path(project) / ".memgrove" / "server.token").read_text(encoding="utf-8").strip()
        except (MemgroveError, _Refused, _NoAnswer, OSError, AttributeError, TypeError):
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

"""HTTP connections with a deadline for headers and a limit on how many are open.

uvicorn closes a kept-alive connection idle for ``timeout_keep_alive``, but it has no
deadline for a request's headers: a connection that sends half a request line (or nothing
at all, or the rest of a body nobody reads) stays open forever, and ``limit_concurrency``
only answers 503 once headers are complete. A few hundred such connections from any local
process exhaust the server's descriptors without a token. This protocol (uvicorn's
httptools one, passed as ``uvicorn.Config(http=...)``) arms a timer whenever it waits for a
request's headers (on connecting, and after each answer) and disarms it when they are
complete; one that fires answers 408 (or, if nothing of a request came, just closes).
Beyond ``max_connections`` open connections, a new one is answered 503 and closed at once.
The body has its own deadline, in the guard (``guard.py``), where the app reads it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def _response(status: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


TOO_SLOW = _response("408 Request Timeout", "request headers not received in time (setting header_timeout)\n")
TOO_MANY = _response("503 Service Unavailable", "too many open connections (setting max_connections)\n")


class BoundedHttpProtocol(HttpToolsProtocol):
    header_timeout = 10.0
    max_connections = 256

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._begun = False                     # some of a request arrived since the timer was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections:
            self.transport = transport          # what connection_lost closes
            transport.write(TOO_MANY)
            transport.close()
            return
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._begun = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # idle again unless a pipelined request started: its headers were complete already
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._begun = False
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self._begun:
            self.transport.write(TOO_SLOW)
        self.transport.close()


def bounded_protocol(*, header_timeout: float, max_connections: int) -> type[BoundedHttpProtocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` with these bounds."""
    return type("BoundedHttpProtocol", (BoundedHttpProtocol,),
                {"header_timeout": header_timeout, "max_connections": max_connections})

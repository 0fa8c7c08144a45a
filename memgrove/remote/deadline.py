"""One deadline for a whole call of the remote client, and a bound on the size of its reply
(used by ``wire.Wire``).

``http.client`` gives each socket operation its own timeout: a server that answers a byte a
second never lets it fire, and a call could last for ever. ``connection(https, host, port)`` is an
``http.client`` connection whose socket gives every connect, send and receive only the time left
until ``conn.deadline`` (a ``time.monotonic()`` value the caller sets for each call) and raises
``Late`` once none is left, however the server drips its answer. ``read_body`` reads a reply of
at most ``max_bytes``: a ``Content-Length`` past it is refused before a byte of the body is read;
a chunked or unbounded body is counted as it comes and refused once it passes the limit.

``Late`` and ``TooLarge`` are not ``OSError``: a caller that retries a broken connection on a
fresh one must not retry a call whose time is up or whose reply was refused.
Standard library only.
"""

from __future__ import annotations

import http.client
import socket
import time

from memgrove.remote.deadline_socket import DeadlineSocket, Late, TooLarge  # noqa: F401 - Late, TooLarge: names of this module

READ_PIECE = 65536


class _Deadline:
    deadline = float("inf")

    def connect(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Late()
        self.timeout = left     # type: ignore[attr-defined]   # what http.client connects (and TLS shakes hands) within
        try:
            super().connect()   # type: ignore[misc]
        except socket.timeout:
            raise Late() from None
        self.sock = DeadlineSocket(self.sock, self)   # type: ignore[has-type]


class _HTTP(_Deadline, http.client.HTTPConnection):
    pass


class _HTTPS(_Deadline, http.client.HTTPSConnection):
    pass


def connection(https: bool, host: str, port: int) -> http.client.HTTPConnection:
    """A connection to ``host:port`` whose calls end by ``conn.deadline`` (set it before each call)."""
    return (_HTTPS if https else _HTTP)(host, port)


def read_body(resp: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """The whole body of ``resp``, of at most ``max_bytes`` (else ``TooLarge``, nothing more read)."""
    if resp.length is not None and resp.length > max_bytes:      # http.client's Content-Length
        raise TooLarge(resp.length)
    out = bytearray()
    while True:
        piece = resp.read(READ_PIECE)
        if not piece:
            return bytes(out)
        out += piece
        if len(out) > max_bytes:
            raise TooLarge(None)

"""One deadline for a whole call of the remote client, and a bound on the size of its reply
(used by ``remote_wire.Wire``).

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
import io
import socket
import time
from typing import Any

READ_PIECE = 65536


class Late(Exception):
    """The call's deadline passed before the reply was complete."""


class TooLarge(Exception):
    """The reply is longer than the caller allows (``args[0]``: its announced length, or None)."""


class _DeadlineSocket:
    """A connected socket whose every send and receive ends by the connection's deadline."""

    def __init__(self, sock: socket.socket, conn: Any):
        self._sock = sock
        self._conn = conn
        self._files = 0            # files open on it: as a socket's, its close waits for theirs
        self._closed = False

    def _time_left(self) -> None:
        left = self._conn.deadline - time.monotonic()
        if left <= 0:
            raise Late()
        self._sock.settimeout(left)

    def recv_into(self, *args: Any) -> int:     # as given: ssl's defaults differ from socket's
        self._time_left()
        try:
            return self._sock.recv_into(*args)
        except socket.timeout:
            raise Late() from None

    def sendall(self, *args: Any) -> None:
        self._time_left()
        try:            # sendall's timeout bounds the whole send (Python >= 3.5)
            self._sock.sendall(*args)
        except socket.timeout:
            raise Late() from None

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        # http.client reads the reply through this file: its reads must come back to recv_into above
        self._files += 1
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:      # the file's close
        self._files = max(0, self._files - 1)
        if self._closed and not self._files:
            self._sock.close()

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        # http.client closes the connection of a "Connection: close" reply before reading its body
        # (through the file): the socket itself closes with the last file, as a plain socket does
        self._closed = True
        if not self._files:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:   # anything else http.client or ssl may ask of a socket
        return getattr(self._sock, name)


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
        self.sock = _DeadlineSocket(self.sock, self)   # type: ignore[has-type]


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

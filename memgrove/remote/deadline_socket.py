"""A socket whose every send and receive ends by a deadline: one bound for a whole exchange, however
slowly the peer answers (a socket's own timeout bounds each receive alone, and a byte a second
never trips it). Used by ``deadline.py`` (under ``http.client``) and by ``memgrove/cli/fastpath.py``,
which reads its answer itself: ``socket``, ``io`` and ``time`` only.

    holder.deadline = time.monotonic() + 5
    reader = deadline_reader(sock, holder)     # reads raise Late once the deadline has passed
"""

from __future__ import annotations

import io
import socket
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Late(Exception):
    """The call's deadline passed before the reply was complete."""


class TooLarge(Exception):
    """The reply is longer than the caller allows (``args[0]``: its announced length, or None)."""


class DeadlineSocket:
    """A connected socket whose every send and receive ends by ``holder.deadline`` (a
    ``time.monotonic()`` value its owner sets per exchange)."""

    def __init__(self, sock: socket.socket, holder: Any):
        self._sock = sock
        self._conn = holder
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




def deadline_reader(sock: socket.socket, holder: Any) -> io.BufferedReader:
    """A buffered reader of ``sock`` whose reads end by ``holder.deadline`` (``Late``)."""
    return DeadlineSocket(sock, holder).makefile("rb")

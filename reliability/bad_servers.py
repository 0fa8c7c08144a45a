"""Servers on 127.0.0.1 that answer HTTP badly, each in its own threads: what the remote client
(``Memory.connect``, the store over HTTP, the CLI with ``MEMGROVE_URL``) must survive.

    with BadServer("slow") as srv:          # srv.url: http://127.0.0.1:<port>
        Memory.connect(srv.url, "t", timeout=3).search("x")   # ServerTimeout within ~3 s

Kinds: ``silent`` (accepts, reads the request, never answers), ``slow`` (a whole valid answer,
one byte a second), ``huge`` (``Content-Length`` of 1 GB, then bytes as fast as they are taken),
``endless`` (chunked, ``[`` for ever), ``deep`` (valid JSON nested 200,000 deep, 400 KB),
``not_json``, ``list`` (a JSON list where an object is read), ``missing`` (an object without
the fields a reply has), ``wrong`` (the fields, of the wrong types). ``health``: what ``GET /health``
answers instead, well (the CLI's fast path asks it first, and goes on only if it matches). Used by
tests/test_remote_deadline.py and the ``remote_client`` section.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

KINDS = ("silent", "slow", "huge", "endless", "deep", "not_json", "list", "missing", "wrong")
GB = 2**30
BODIES = {
    "slow": b'{"hits": []}',
    "deep": b"[" * 200_000 + b"]" * 200_000,
    "not_json": b"<html><body>502 Bad Gateway</body></html>",
    "list": b'[{"path": "a.md"}, {"path": "b.md"}]',
    "missing": b'{"unexpected": true}',
    "wrong": (b'{"hits": "none", "operations": 7, "results": {"a": 1}, "fingerprint": 3, "documents": "many",'
              b' "entries": null, "items": "x", "text": 1, "links": 2, "backlinks": 3, "tree": [], "query": []}'),
}


def _answer(body: bytes, status: str = "200 OK") -> bytes:
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode() + body


class BadServer:
    def __init__(self, kind: str, health: dict[str, Any] | None = None):
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
        self.kind = kind
        self.health = health
        self.requests = 0
        self.sent = 0                      # bytes sent to clients, in all
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name=f"bad-server-{kind}", daemon=True)
        self._thread.start()

    def __enter__(self) -> "BadServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)    # wakes the accept (a close alone does not)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            line = self._read_request(conn)
            if line is None:
                return
            self.requests += 1
            if self.health is not None and line.split()[1:2] == [b"/health"]:
                import json

                self._send(conn, _answer(json.dumps(self.health).encode()))
                return
            getattr(self, "_" + self.kind, self._plain)(conn)
        except OSError:
            pass              # the client gave up: what it should do
        finally:
            conn.close()

    def _read_request(self, conn: socket.socket) -> bytes | None:
        """The request line, once the whole request is read (None: the client left first)."""
        data = b""
        while b"\r\n\r\n" not in data:
            piece = conn.recv(65536)
            if not piece:
                return None
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip() or 0)
        while len(body) < length:
            piece = conn.recv(65536)
            if not piece:
                return None
            body += piece
        return head.split(b"\r\n", 1)[0]

    def _send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        self.sent += len(data)

    # -- the kinds ---------------------------------------------------------------------------
    def _silent(self, conn: socket.socket) -> None:
        self._stop.wait()

    def _slow(self, conn: socket.socket) -> None:
        for byte in _answer(BODIES["slow"]):
            if self._stop.wait(1.0):
                return
            self._send(conn, bytes([byte]))

    def _huge(self, conn: socket.socket) -> None:
        self._send(conn, (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {GB}\r\n\r\n").encode())
        piece = b"[" * 65536
        for _ in range(GB // len(piece)):
            if self._stop.is_set():
                return
            self._send(conn, piece)

    def _endless(self, conn: socket.socket) -> None:
        self._send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n" % 65536 + b"[" * 65536 + b"\r\n"
        while not self._stop.is_set():
            self._send(conn, chunk)

    def _plain(self, conn: socket.socket) -> None:
        self._send(conn, _answer(BODIES[self.kind]))
        time.sleep(0.05)      # let the client read before the close

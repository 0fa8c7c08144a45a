"""Slow and idle clients are cut off, and the server keeps answering.

A real ``memgrove serve`` with short deadlines (``header_timeout`` 3 s, ``body_timeout`` 2 s,
``keep_alive_timeout`` 1 s, ``max_connections`` 400). Three hundred connections that never
finish their headers are all closed (408) while ``/health`` answers beside them, and the
server's descriptors come back; a body sent a byte at a time gets 408; a kept-alive connection
that starts a second request and stops is closed; a connection beyond the limit cuts the oldest
one without a token at once. Each wait is bounded at 30 s, 10x+ the deadline, so a server without these
deadlines fails instead of hanging.
"""

from __future__ import annotations

import os
import resource
import selectors
import socket
import time
from pathlib import Path

import httpx
import pytest
from helpers.memgrove_server import Server, start_server, stop_server

from memgrove import Memory

WAIT = 30.0                 # seconds: far above every deadline the server is given here
HALF_SENT = 300


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048 <= hard:             # this process holds the clients' side of every connection
        resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    project = tmp_path_factory.mktemp("slow") / "p"
    with Memory.open(project, create=True) as m:
        m.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "Pool", "content": "Twenty connections.",
                   "reason": "seed"}])
    (project / ".memgrove" / "config.toml").write_text(
        "[server]\nheader_timeout = 3.0\nbody_timeout = 2.0\nkeep_alive_timeout = 1.0\nmax_connections = 400\n"
        # every connection here is one address's, held until its deadline (the bounds on connections
        # without a token, which cut them sooner, are test_server_unauth_flood.py's)
        "max_unauthenticated = 400\nmax_unauthenticated_per_peer = 400\n",
        encoding="utf-8")
    server = start_server(project)
    try:
        yield server
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert stop_server(server) == 0, server.log_text()


def connect(srv: Server, data: bytes = b"") -> socket.socket:
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    if data:
        s.sendall(data)
    return s


def answers_of(socks: list[socket.socket], within: float = WAIT) -> dict[socket.socket, bytes]:
    """Wait until the server closes each socket; what it sent on each (missing: still open at the end)."""
    sent = {s: b"" for s in socks}
    got: dict[socket.socket, bytes] = {}
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    deadline = time.monotonic() + within
    while len(got) < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            assert isinstance(s, socket.socket)
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if chunk:
                sent[s] += chunk
            else:
                got[s] = sent[s]
                sel.unregister(s)
    sel.close()
    return got


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def health(srv: Server) -> int:
    return httpx.get(f"{srv.url}/health", timeout=10, trust_env=False).status_code


def request_head(srv: Server, method: str = "GET", path: str = "/api/tree") -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
            f"Authorization: Bearer {srv.token}\r\n").encode()


def test_half_sent_requests_are_cut_off_while_health_answers(srv: Server):
    assert health(srv) == 200
    before = open_fds(srv.process.pid)
    socks = [connect(srv, request_head(srv)[: 20 + i % 40]) for i in range(HALF_SENT)]
    try:
        assert health(srv) == 200          # beside three hundred stuck connections
        assert open_fds(srv.process.pid) >= before + HALF_SENT - 5     # held (give or take the probes')
        got = answers_of(socks)
        assert len(got) == HALF_SENT, f"{HALF_SENT - len(got)} connections still open after {WAIT:g} s"
        assert all(b" 408 " in answer.split(b"\r\n")[0] for answer in got.values())
        assert health(srv) == 200
        assert open_fds(srv.process.pid) <= before + 5      # the descriptors came back
    finally:
        for s in socks:
            s.close()


def test_silent_connections_are_closed(srv: Server):
    socks = [connect(srv) for _ in range(50)]
    try:
        got = answers_of(socks)
        assert len(got) == 50 and set(got.values()) == {b""}       # closed, no answer to a request never begun
    finally:
        for s in socks:
            s.close()


def test_a_body_sent_a_byte_at_a_time_gets_408(srv: Server):
    head = request_head(srv, "POST", "/api/curate") + b"Content-Type: application/json\r\nContent-Length: 400\r\n\r\n"
    s = connect(srv, head + b'{"operations": [')
    try:
        started = time.monotonic()
        answer = b""
        s.settimeout(0.5)
        while time.monotonic() - started < WAIT:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                try:
                    s.sendall(b" ")              # a byte every half second: never done
                except OSError:
                    break
                continue
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert b'"client_timeout"' in answer and b"body_timeout" in answer
    finally:
        s.close()
    assert health(srv) == 200


def test_a_kept_alive_connection_that_stalls_on_its_next_request_is_closed(srv: Server):
    s = connect(srv, request_head(srv, "GET", "/health") + b"\r\n")
    try:
        s.settimeout(10)
        first = s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first
        s.sendall(request_head(srv)[:30])        # the next request starts, and stops
        [answer] = answers_of([s]).values()
        assert b" 408 " in answer.split(b"\r\n")[0], answer
    finally:
        s.close()


def test_connections_beyond_the_limit_cut_stalled_ones_without_a_token(srv: Server):
    socks = [connect(srv, request_head(srv)[:30]) for _ in range(400)]
    extra: list[socket.socket] = []
    try:
        time.sleep(0.5)
        extra = [connect(srv) for _ in range(20)]       # each makes room: one stalled connection is cut
        got = answers_of(socks + extra)
        assert len(got) == 420
        firsts = [got[s].split(b"\r\n")[0] for s in socks]
        cut = [s for s, a in zip(socks, firsts) if b" 503 " in a]
        assert 18 <= len(cut) <= 22, firsts      # one each, give or take a probe's slot
        assert b"max_unauthenticated" in got[cut[0]]
        assert all(b" 503 " in a or b" 408 " in a for a in firsts)
        assert set(got[s] for s in extra) == {b""}       # accepted, then silent until the deadline
        assert health(srv) == 200
    finally:
        for s in socks + extra:
            s.close()

"""Connections without a token never keep a token holder out (connections.py).

A real ``memgrove serve`` with small bounds (``max_connections`` 40, ``max_unauthenticated`` 12,
``max_unauthenticated_per_peer`` 6). A flooder holds three times ``max_connections`` half-sent
sockets and reopens each one the server cuts: every authenticated request beside it succeeds (before,
the flood held every slot and token holders were answered 503). Half-sent sockets of one address
are held to its bound while another address's are left alone; and once every connection is
authenticated, a new one is answered 503 at once. Clients bind 127.0.0.2 and 127.0.0.3 to be other
peers (Linux routes all of 127/8 to loopback).
"""

from __future__ import annotations

import http.client
import selectors
import socket
import threading
import time

import pytest
from helpers.memgrove_server import Server, start_server, stop_server

from memgrove import Memory
from memgrove.server.connections import LINGER

pytestmark = pytest.mark.slow

MAX_CONNECTIONS, MAX_UNAUTH, PER_PEER = 40, 12, 6
HALF = b"GET /api/tree HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("flood") / "p"
    with Memory.open(project, create=True) as m:
        m.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "Pool", "content": "Twenty connections.",
                   "reason": "seed"}])
    (project / ".memgrove" / "config.toml").write_text(
        f"[server]\nmax_connections = {MAX_CONNECTIONS}\nmax_unauthenticated = {MAX_UNAUTH}\n"
        f"max_unauthenticated_per_peer = {PER_PEER}\nheader_timeout = 20.0\nkeep_alive_timeout = 30.0\n",
        encoding="utf-8")
    server = start_server(project)
    try:
        yield server
    finally:
        assert stop_server(server) == 0, server.log_text()


def half_sent(srv: Server, source: str, data: bytes = HALF) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(data)
    return s


def still_open(socks: list[socket.socket]) -> int:
    """How many of ``socks`` the server has not closed (nothing sent back, no end of file)."""
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK) == b"":
                continue
        except BlockingIOError:
            n += 1
            continue
        except OSError:
            continue
    return n


class Flood(threading.Thread):
    """``n`` half-sent sockets from ``source``, each reopened as soon as the server cuts it."""

    def __init__(self, srv: Server, source: str, n: int):
        super().__init__(daemon=True)
        self.srv, self.source, self.n = srv, source, n
        self.stop = threading.Event()
        self.opened = 0

    def run(self) -> None:
        with selectors.DefaultSelector() as sel:
            while not self.stop.is_set():
                while len(sel.get_map()) < self.n and not self.stop.is_set():
                    try:
                        s = half_sent(self.srv, self.source)
                    except OSError:
                        time.sleep(0.01)
                        continue
                    s.setblocking(False)
                    sel.register(s, selectors.EVENT_READ)
                    self.opened += 1
                for key, _ in sel.select(0.1):
                    s = key.fileobj
                    assert isinstance(s, socket.socket)
                    try:
                        if s.recv(4096):
                            continue
                    except BlockingIOError:
                        continue
                    except OSError:
                        pass
                    sel.unregister(s)
                    s.close()
            for key in list(sel.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]


def authenticated(srv: Server, path: str = "/api/tree") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {srv.token}"})
        r = conn.getresponse()
        r.read()
        return r.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        conn.close()


@pytest.mark.parametrize("source", ["127.0.0.1", "127.0.0.2"], ids=["same address", "another address"])
def test_token_holders_get_in_beside_a_flood_of_half_sent_sockets(srv: Server, source: str):
    flood = Flood(srv, source, 3 * MAX_CONNECTIONS)
    flood.start()
    statuses: list[int] = []
    try:
        time.sleep(1.0)          # the flood holds what it can, and churns

        def client() -> None:
            for _ in range(8):
                statuses.append(authenticated(srv))

        workers = [threading.Thread(target=client) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(120)
    finally:
        flood.stop.set()
        flood.join(30)
    assert flood.opened > 3 * MAX_CONNECTIONS, flood.opened        # the server cut and it reopened
    assert statuses.count(200) == len(statuses) == 32, statuses


def test_one_address_is_held_to_its_bound_and_another_is_left_alone(srv: Server):
    others = [half_sent(srv, "127.0.0.3") for _ in range(PER_PEER - 1)]
    time.sleep(0.3)
    flooder: list[socket.socket] = []
    try:
        for _ in range(5 * PER_PEER):       # each has begun its request before the next comes
            flooder.append(half_sent(srv, "127.0.0.2"))
            time.sleep(0.02)
        time.sleep(LINGER + 0.5)            # a cut connection is closed LINGER s later
        assert still_open(flooder) <= PER_PEER, still_open(flooder)
        assert still_open(others) == len(others)
        assert authenticated(srv) == 200
    finally:
        for s in others + flooder:
            s.close()


def test_when_every_connection_holds_a_token_a_new_one_is_answered_503(srv: Server):
    time.sleep(0.5)                     # the previous tests' sockets are gone
    kept: list[http.client.HTTPConnection] = []
    try:
        for _ in range(MAX_CONNECTIONS):
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            conn.request("GET", "/health", headers={"Authorization": f"Bearer {srv.token}"})
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                break
            kept.append(conn)               # kept alive: proven, idle
        assert len(kept) >= MAX_CONNECTIONS - 1     # one slot may be the server's own probe's
        s = half_sent(srv, "127.0.0.1", b"")
        s.settimeout(10)
        answer = s.recv(4096)
        s.close()
        assert answer.startswith(b"HTTP/1.1 503 ") and b"max_connections" in answer, answer
    finally:
        for conn in kept:
            conn.close()
    time.sleep(0.3)
    assert authenticated(srv) == 200

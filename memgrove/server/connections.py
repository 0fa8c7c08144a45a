"""HTTP connections with a deadline for headers, a limit on how many are open, and a smaller one
for connections without a token.

uvicorn closes a kept-alive connection idle for ``timeout_keep_alive``, but it has no
deadline for a request's headers: a connection that sends half a request line (or nothing
at all, or the rest of a body nobody reads) stays open forever, and ``limit_concurrency``
only answers 503 once headers are complete. This protocol (uvicorn's httptools one, passed as
``uvicorn.Config(http=...)``) arms a timer whenever it waits for a request's headers (on
connecting, and after each answer) and disarms it when they are complete; one that fires
answers 408 (or, if nothing of a request came, just closes). The body has its own deadline,
in the guard (``guard.py``), where the app reads it.

The header deadline alone let a client without a token lock out every token holder: 250
half-sent sockets, reopened as each was cut, held every slot of ``max_connections`` and made
97% of the requests of 32 authenticated clients answer 503. So a connection counts as
*unproven* until a request's headers carry a valid token (``authenticates``; without
authentication, any complete request head); then it is proven for its life. The unproven ones
that wait for headers (the ``Waiting`` pool) are held to ``max_unauthenticated`` in all and
``max_unauthenticated_per_peer`` from one address: a new connection past either bound makes
room by cutting an unproven one that has had its chance (it began a request head and stalled,
or said nothing for ``GRACE`` seconds), from the address holding the most first. A connection
past ``max_connections`` cuts an unproven one if any waits (the least deserving first), and is
answered 503 only when every open connection is proven or busy with a request: a connection
without a token never keeps a token holder out. A client that means it sends its request's
head within milliseconds of connecting, and its first request proves it.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any, Callable

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

GRACE = 1.0     # seconds a silent new connection is safe from being cut to make room
# A connection cut to make room is closed this much later, counted nowhere meanwhile: a flooder that
# reopens each socket the moment it closes would otherwise make every new connection cut another at
# once, a chain of thousands per second (measured: 2,500/s from 100 sockets, reads' p50 0.4 -> 2.6 s)
LINGER = 2.0


def _response(status: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


TOO_SLOW = _response("408 Request Timeout", "request headers not received in time (setting header_timeout)\n")
TOO_MANY = _response("503 Service Unavailable", "too many open connections (setting max_connections)\n")
CUT = _response("503 Service Unavailable", "too many connections without a valid token, and this one had not sent "
                "its request's headers (settings max_unauthenticated, max_unauthenticated_per_peer)\n")


def peer_of(transport: asyncio.BaseTransport) -> str:
    """The address a connection comes from; an IPv6 peer is its /64 (one host holds a whole /64)."""
    name = transport.get_extra_info("peername")
    host = name[0] if isinstance(name, (tuple, list)) and name else ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return str(host)          # a UNIX socket: one peer
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Waiting:
    """The unproven connections waiting for a request's headers, by peer, each peer's oldest first."""

    def __init__(self) -> None:
        self.by_peer: dict[str, dict[BoundedHttpProtocol, None]] = {}
        self.count = 0

    def add(self, conn: BoundedHttpProtocol) -> None:
        group = self.by_peer.setdefault(conn.peer, {})
        if conn not in group:
            group[conn] = None
            self.count += 1

    def discard(self, conn: BoundedHttpProtocol) -> None:
        group = self.by_peer.get(conn.peer)
        if group is not None and conn in group:
            del group[conn]
            self.count -= 1
            if not group:
                del self.by_peer[conn.peer]

    def of(self, peer: str) -> int:
        return len(self.by_peer.get(peer, ()))

    def victim(self, now: float, *, peer: str | None = None, anyone: bool = False) -> BoundedHttpProtocol | None:
        """The connection to cut for room: of ``peer`` (else of the peer holding the most), the
        oldest that began a head and stalled or has been silent for ``GRACE``; with ``anyone``,
        failing those, the oldest of all (a new connection past ``max_connections``)."""
        groups = ([self.by_peer.get(peer, {})] if peer is not None
                  else sorted(self.by_peer.values(), key=len, reverse=True))
        for group in groups:
            for conn in group:
                if conn.begun or now - conn.armed_at >= GRACE:
                    return conn
        if anyone and groups and groups[0]:
            return next(iter(groups[0]))
        return None


class BoundedHttpProtocol(HttpToolsProtocol):
    header_timeout = 10.0
    max_connections = 256
    max_unauthenticated = 64
    max_unauthenticated_per_peer = 16
    waiting = Waiting()                 # bounded_protocol gives each server its own, and lingering
    lingering: dict[BoundedHttpProtocol, asyncio.TimerHandle] = {}     # cut, closed soon: by age

    @staticmethod
    def authenticates(authorization: str | None) -> bool:
        """Whether a request's ``Authorization`` header proves its connection (bounded_protocol's)."""
        return True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self.begun = False                  # some of a request arrived since the timer was armed
        self.armed_at = 0.0
        self.peer = ""
        self.proven = False                 # a request of this connection carried a valid token

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections:
            victim = self.waiting.victim(self.loop.time(), anyone=True)
            if victim is None:
                self.transport = transport          # what connection_lost closes
                transport.write(TOO_MANY)
                transport.close()
                return
            victim.cut()
        super().connection_made(transport)
        self.peer = peer_of(transport)
        self._arm()
        self._make_room()

    def _make_room(self) -> None:
        """Hold the unproven connections to their bounds, cutting those that had their chance."""
        w, now = self.waiting, self.loop.time()
        while w.of(self.peer) > self.max_unauthenticated_per_peer:
            victim = w.victim(now, peer=self.peer)
            if victim is None:
                break
            victim.cut()
        while w.count > self.max_unauthenticated:
            victim = w.victim(now)
            if victim is None:
                break
            victim.cut()

    def cut(self) -> None:
        """Free this unproven connection's slot at once, and close it ``LINGER`` s later (unread
        meanwhile); at most ``max_connections`` linger: past that the oldest closes at once."""
        self._disarm()
        self.connections.discard(self)      # connection_lost, later, discards it again
        if self.transport.is_closing():
            return
        self.transport.pause_reading()
        lingering = self.lingering
        while len(lingering) >= self.max_connections:
            oldest = next(iter(lingering))
            lingering.pop(oldest).cancel()
            oldest._close_cut()
        lingering[self] = self.loop.call_later(LINGER, self._close_cut)

    def _close_cut(self) -> None:
        self.lingering.pop(self, None)
        if not self.transport.is_closing():
            if self.begun:
                self.transport.write(CUT)
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        timer = self.lingering.pop(self, None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self.begun = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        if not self.proven:
            given = next((v for k, v in self.headers if k == b"authorization"), None)
            self.proven = self.authenticates(given.decode("latin-1") if given is not None else None)
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # idle again unless a pipelined request started: its headers were complete already
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self.begun = False
        self.armed_at = self.loop.time()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)
        if not self.proven:
            self.waiting.add(self)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self.waiting.discard(self)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        self.waiting.discard(self)
        if self.transport.is_closing():
            return
        if self.begun:
            self.transport.write(TOO_SLOW)
        self.transport.close()


def bounded_protocol(*, header_timeout: float, max_connections: int, max_unauthenticated: int = 64,
                     max_unauthenticated_per_peer: int = 16,
                     authenticates: Callable[[str | None], bool] | None = None) -> type[BoundedHttpProtocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` with these bounds; ``authenticates``
    tells whether an ``Authorization`` header holds a valid token (None: every complete head proves)."""
    attrs: dict[str, Any] = {"header_timeout": header_timeout, "max_connections": max_connections,
                             "max_unauthenticated": max_unauthenticated,
                             "max_unauthenticated_per_peer": max_unauthenticated_per_peer, "waiting": Waiting(),
                             "lingering": {}}
    if authenticates is not None:
        attrs["authenticates"] = staticmethod(authenticates)
    return type("BoundedHttpProtocol", (BoundedHttpProtocol,), attrs)

"""Slow and idle clients against ``memgrove serve``: connections that never finish their headers,
that say nothing, that trickle a body a byte every few seconds, and more of them than the server
takes. Any local process can open them without a token.

Every such connection must be cut off (a 408, or closed) within its deadline plus a margin, each
connection past ``max_connections`` must be accepted and cut one of the stalled ones without a
token (503), ``/health`` must keep answering while the server has room, and afterwards the
server's descriptors must be back where they started. The bounds on connections without a token
(``max_unauthenticated``) are set to ``max_connections`` here, so the deadlines are what cuts them;
those bounds have their own section (unauth_flood). The deadlines are the ``[server]`` settings, shortened here so the section runs in
about a minute; the defaults (10 s, 60 s, 5 s, 256) are the same code with larger numbers.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

from . import serving
from .common import SectionResult, pct

SECTION = "slow_clients"
KEEP_ALIVE = 3.0
MARGIN = 4.0            # seconds past a deadline before a connection still open is a failure
FD_SLACK = 5


def _open(port: int, first: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    if first:
        s.sendall(first)
    return s


def _closed_within(sockets: list[socket.socket], seconds: float) -> tuple[int, list[int]]:
    """How many of ``sockets`` the server closed within ``seconds`` (all read at once until EOF or
    a reset), and the HTTP status each got (0: none)."""
    import selectors

    deadline = time.monotonic() + seconds
    got = {s: b"" for s in sockets}
    open_ = set(sockets)
    with selectors.DefaultSelector() as sel:
        for s in sockets:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        while open_ and (left := deadline - time.monotonic()) > 0:
            for key, _ in sel.select(left):
                s = key.fileobj
                try:
                    chunk = s.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:       # reset: closed
                    chunk = b""
                if chunk:
                    got[s] += chunk
                else:
                    open_.discard(s)
                    sel.unregister(s)
    statuses = [int(got[s].split(b" ", 2)[1]) if got[s].startswith(b"HTTP/1.1 ") else 0 for s in sockets]
    return len(sockets) - len(open_), statuses


def run_section(work: Path, *, half_sent: int, silent: int, trickling: int, extra: int,
                header_timeout: float = 4.0, body_timeout: float = 8.0) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["kind", "connections", "cut off in time", "answers", "deadline s"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    project = base / "proj"
    Memory.open(project, create=True).close()
    limit = half_sent + silent + trickling + 20      # room for the section's own /health probes and then some
    (project / ".memgrove" / "config.toml").write_text(
        f"[server]\nheader_timeout = {header_timeout}\nbody_timeout = {body_timeout}\n"
        f"keep_alive_timeout = {KEEP_ALIVE}\nmax_connections = {limit}\n"
        f"max_unauthenticated = {limit}\nmax_unauthenticated_per_peer = {limit}\n")
    repro = "python -m reliability --sections slow_clients"
    try:
        srv = serving.start(project, base / "serve.log")
    except RuntimeError as exc:
        res.fail("start", str(exc), repro)
        return res
    health: list[float] = []
    health_bad: list[str] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            r = srv.call("GET", "/health", timeout=5, token="-")
            (health.append if r.status == 200 else lambda _: health_bad.append(f"{r.status or r.error}"))(
                time.monotonic() - t0)
            time.sleep(0.5)

    sockets: dict[str, list[socket.socket]] = {}
    try:
        fds_before = serving.count_fds(srv.process.pid)["all"]
        prober = threading.Thread(target=probe)
        prober.start()
        port = srv.port
        token = srv.token.encode()
        sockets["half-sent headers"] = [_open(port, b"GET /api/tree HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                                        for _ in range(half_sent)]
        sockets["silent"] = [_open(port, b"") for _ in range(silent)]
        sockets["trickled body"] = [
            _open(port, b"POST /api/curate HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode() +
                  b"\r\nAuthorization: Bearer " + token + b"\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{") for _ in range(trickling)]
        time.sleep(0.5)
        during = serving.count_fds(srv.process.pid)["all"]
        stop.set()                    # /health is held to 200 while the server has room: until now
        prober.join(30)
        # the room left, then past it: each of those cuts a half-sent one (503), and none is refused
        room = limit - half_sent - silent - trickling
        over = [_open(port, b"") for _ in range(room + extra)]
        _closed, over_status = _closed_within(over, 1.5)
        refused = over_status.count(503)
        if refused:
            res.fail("over the limit", f"{refused} of {extra} connections past max_connections refused while "
                     "stalled connections without a token held slots", repro)
        for s in over:
            s.close()
        stop.clear()

        def trickle() -> None:
            for _ in range(int(body_timeout + MARGIN)):
                for s in sockets["trickled body"]:
                    try:
                        s.sendall(b" ")
                    except OSError:
                        pass
                if stop.wait(1.0):
                    return

        trickler = threading.Thread(target=trickle)
        trickler.start()
        for kind, deadline in (("half-sent headers", header_timeout), ("silent", header_timeout),
                               ("trickled body", body_timeout)):
            socks = sockets[kind]
            closed, statuses = _closed_within(socks, deadline + MARGIN)
            res.rows.append([kind, len(socks), closed, _tally(statuses), deadline])
            if kind == "half-sent headers":
                cut = statuses.count(503)
                res.rows.append(["past max_connections", extra, f"{cut} half-sent cut", _tally(over_status), "at once"])
                if cut < extra - 1:
                    res.fail("over the limit", f"{extra} connections past max_connections cut {cut} half-sent ones",
                             repro)
            if closed < len(socks):
                res.fail("slow client kept", f"{kind}: {len(socks) - closed} of {len(socks)} still open "
                         f"{deadline + MARGIN:g} s after connecting (deadline {deadline:g} s)", repro)
        stop.set()
        trickler.join(30)
        time.sleep(1.0)
        fds_after = serving.count_fds(srv.process.pid)["all"]
        if fds_after > fds_before + FD_SLACK:
            res.fail("descriptors kept", f"{fds_before} before, {fds_after} after", repro)
        for b in health_bad[:3]:
            res.fail("/health", f"answered {b} while slow clients were connected", repro)
        if srv.call("GET", "/health", timeout=5, token="-").status != 200:
            res.fail("/health after", "no answer once the slow clients were cut off", repro)
        res.summary.update(fds_before=fds_before, fds_during=during, fds_after=fds_after,
                           health_p50_ms=round(pct(health, 50) * 1000), health_max_ms=round(max(health, default=0) * 1000))
    finally:
        stop.set()
        for socks in sockets.values():
            for s in socks:
                s.close()
        srv.stop()
    res.notes.append(f"Deadlines: headers {header_timeout:g} s, body {body_timeout:g} s, keep-alive {KEEP_ALIVE:g} s, "
                     f"max_connections {limit}; a connection still open {MARGIN:g} s past its deadline fails. "
                     "/health is asked every 0.5 s throughout; the server's descriptors are read from /proc.")
    return res


def _tally(statuses: list[int]) -> str:
    counts: dict[int, int] = {}
    for s in statuses:
        counts[s] = counts.get(s, 0) + 1
    return ", ".join(f"{n}x {'no answer' if s == 0 else s}" for s, n in sorted(counts.items()))

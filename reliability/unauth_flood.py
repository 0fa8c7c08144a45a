"""A flood of half-sent connections without a token beside authenticated clients of ``memgrove serve``.

Any local process (or, off loopback, anyone who can reach the port) can open connections without
a token. Before issue 41, 250 half-sent sockets reopened as each was cut held every slot of
``max_connections`` and 16,087 of 16,506 reads and 1,748 of 1,800 writes of 32 authenticated
clients were answered 503. Here a child process keeps ``flood`` half-sent sockets open from
127.0.0.1 (the clients' own address: the per-peer bound cannot tell them apart) and reopens each
one the server cuts, while ``clients`` threads ask reads (search, tree) and writes (one curate in
ten), each on a fresh connection, for ``seconds``; the server runs with its default bounds. It
fails when more than ``max_failed`` of the authenticated requests fail, or when any acknowledged
write is missing afterwards. A short phase without the flood first gives the latency it costs.
"""

from __future__ import annotations

import json
import selectors
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from . import serving
from .common import SectionResult, child_args, pct, spawn_child

SECTION = "unauth_flood"
HALF = b"GET /api/tree HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
WORDS = ["pool", "connections", "retry", "token", "deploy", "index", "cache", "replica", "backup", "queue"]


# -- the flood (a child process: its churn must not take the clients' GIL) ---------------------

def _flood(port: int, n: int, seconds: float, out: str) -> None:
    stop = time.monotonic() + seconds
    opened = answered = 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sel = selectors.DefaultSelector()
    try:
        while time.monotonic() < stop:
            while len(sel.get_map()) < n:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    s.settimeout(5)
                    s.connect(("127.0.0.1", port))
                    s.sendall(HALF)
                except OSError:
                    s.close()
                    time.sleep(0.01)
                    break
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ)
                opened += 1
            for key, _ in sel.select(0.05):
                s = key.fileobj
                try:
                    if s.recv(4096):           # type: ignore[union-attr]
                        answered += 1
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                sel.unregister(s)
                s.close()                      # type: ignore[union-attr]
    finally:
        Path(out).write_text(json.dumps({"opened": opened, "answered": answered, "open_at_end": len(sel.get_map())}))


# -- the clients ------------------------------------------------------------------------------

class Clients:
    def __init__(self, srv: serving.Served, n: int):
        self.srv, self.n = srv, n
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {"read": [], "write": []}
        self.failed: dict[str, dict[str, int]] = {"read": {}, "write": {}}
        self.acked: list[str] = []
        self.seq = 0

    def run(self, seconds: float, phase: str) -> None:
        stop = time.monotonic() + seconds
        threads = [threading.Thread(target=self._client, args=(i, stop, phase)) for i in range(self.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 120)

    def _client(self, i: int, stop: float, phase: str) -> None:
        k = 0
        while time.monotonic() < stop:
            k += 1
            kind = "write" if (k + i) % 10 == 1 else "read"     # one in ten, spread over the clients
            t0 = time.monotonic()
            if kind == "write":
                with self.lock:
                    self.seq += 1
                    path = f"flood/{phase}/c{i}_{self.seq}.md"
                r = self.srv.call("POST", "/api/curate", {"operations": [
                    {"op": "ADD", "path": path, "content": f"written beside the flood, {WORDS[k % 10]}",
                     "reason": "unauth_flood"}]}, timeout=60)
            elif k % 2:
                r = self.srv.call("GET", f"/api/search?q={WORDS[k % 10]}+{WORDS[(k + i) % 10]}", timeout=60)
            else:
                r = self.srv.call("GET", "/api/tree", timeout=60)
            secs = time.monotonic() - t0
            with self.lock:
                self.times[kind].append(secs)
                if r.status == 200:
                    if kind == "write":       # the path as the server wrote it
                        self.acked.append(r.body["results"][0]["path"])
                else:
                    why = str(r.status or r.error.split(":")[0])
                    self.failed[kind][why] = self.failed[kind].get(why, 0) + 1

    def row(self, phase: str, kind: str) -> list[Any]:
        times, failed = self.times[kind], self.failed[kind]
        bad = sum(failed.values())
        return [phase, kind, len(times), len(times) - bad, ", ".join(f"{n}x {s}" for s, n in sorted(failed.items())),
                round(pct(times, 50) * 1000), round(max(times, default=0) * 1000)]

    def reset(self) -> None:
        self.times = {"read": [], "write": []}
        self.failed = {"read": {}, "write": {}}


def run_section(work: Path, *, flood: int, clients: int, seconds: float, baseline: float,
                max_failed: float = 0.01) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["phase", "kind", "requests", "ok", "failed", "p50 ms", "max ms"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    project = base / "proj"
    with Memory.open(project, create=True) as m:
        m.curate([{"op": "ADD", "path": f"seed/notes/{w}.md", "content": f"notes about the {w}", "reason": "seed"}
                  for w in WORDS])
    repro = "python -m reliability --sections unauth_flood"
    try:
        srv = serving.start(project, base / "serve.log")
    except RuntimeError as exc:
        res.fail("start", str(exc), repro)
        return res
    load = Clients(srv, clients)
    stats: dict[str, Any] = {}
    child = None
    try:
        # the encoder loaded and the seed entries' vectors made: not measured here
        srv.call("GET", "/api/search?q=pool", timeout=120)
        if baseline > 0:
            load.run(baseline, "alone")
            res.rows += [load.row("without the flood", "read"), load.row("without the flood", "write")]
            load.reset()
        out = base / "flood.json"
        child = spawn_child(SECTION, "flood", {"port": srv.port, "n": flood, "seconds": seconds + 2,
                                               "out": str(out)}, base, "flood")
        time.sleep(1.0)                 # the flood holds what it can before the clients come
        load.run(seconds, "flood")
        child.wait(60)
        stats = json.loads(out.read_text()) if out.exists() else {}
        res.rows += [load.row(f"beside {flood} half-sent", "read"), load.row(f"beside {flood} half-sent", "write")]
        total = sum(len(t) for t in load.times.values())
        bad = sum(sum(f.values()) for f in load.failed.values())
        if total == 0 or bad > max_failed * total:
            res.fail("token holders refused", f"{bad} of {total} authenticated requests failed beside the flood "
                     f"({load.failed}); allowed {max_failed:.0%}", repro, item=5)
        if stats.get("opened", 0) <= flood:
            res.fail("flood not cut", f"the server cut none of the {flood} half-sent sockets ({stats})", repro, item=5)
        if srv.call("GET", "/health", timeout=10, token="-").status != 200:
            res.fail("/health after", "no answer after the flood", repro)
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait(30)
        code = srv.stop()
        if code != 0:
            res.fail("graceful stop", f"exit status {code}: {srv.log_tail(300)}", repro)
    with Memory.open(project) as m:
        missing = [p for p in load.acked if not (m.tree.root / p).exists()]
    if missing:
        res.fail("acknowledged write lost", f"{len(missing)} of {len(load.acked)} missing, e.g. {missing[:3]}", repro)
    res.summary.update(flood=flood, clients=clients, seconds=seconds, acked_writes=len(load.acked),
                       flood_sockets_opened=stats.get("opened"), flood_answers=stats.get("answered"))
    res.notes.append(f"`memgrove serve` with its default bounds (max_connections 256, max_unauthenticated 64, "
                     f"max_unauthenticated_per_peer 16, header_timeout 10 s). A child process holds {flood} half-sent "
                     f"sockets from 127.0.0.1 and reopens each one cut ({stats.get('opened')} opened in all); {clients} "
                     f"threads ask reads and writes (one in ten) with the token on fresh connections for {seconds:g} s. "
                     f"Fails past {max_failed:.0%} failed requests or any acknowledged write missing.")
    return res


if __name__ == "__main__":
    mode, args = child_args()
    if mode == "flood":
        _flood(args["port"], args["n"], args["seconds"], args["out"])

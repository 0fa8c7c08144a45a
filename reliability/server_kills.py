"""``memgrove serve`` killed with SIGKILL while several clients write and read through it.

Each round starts the server on the same project, lets ``clients`` threads curate (one ADD of a
new entry per request, each its own path) and one thread search, and kills the server after a
seeded delay. A write answered 200 is acknowledged: after every round, each acknowledged entry
must be on disk and its operation journaled exactly once; every file must parse; the next start
must recover whatever batch the kill cut off. A write whose answer never came may or may not have
been applied (counted, not a failure). A read answered with anything but 200 while the server
was alive is a failure; no answer at all is the kill.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from .common import SectionResult, duplicates, journal_ids, torn_files
from . import serving

SECTION = "server_kills"


def _writer(srv: serving.Served, k: int, rnd: int, stop: threading.Event, acked: list, sent: list,
            bad: list) -> None:
    i = 0
    while not stop.is_set():
        path = f"served/c{k}/r{rnd}_{i}.md"
        r = srv.call("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": path, "title": f"Served note {k} {rnd} {i}",
             "content": f"served marker c{k}r{rnd}n{i}", "reason": "server kill round"}]}, timeout=30)
        if not r.error.startswith("ConnectionRefusedError"):    # refused: nothing was sent (the server is gone)
            sent.append(path)
        if r.status == 200:
            acked.append((path, r.body["results"][0].get("id")))
        elif r.status != 0 and not stop.is_set():
            bad.append(f"curate {path}: {r.status} {str(r.body)[:160]}")
        i += 1


def _reader(srv: serving.Served, stop: threading.Event, bad: list, reads: list) -> None:
    while not stop.is_set():
        r = srv.call("GET", "/api/search?q=served+marker&limit=5", timeout=30)
        if r.status == 200:
            reads.append(1)
        elif r.status != 0 and not stop.is_set():
            bad.append(f"search: {r.status} {str(r.body)[:160]}")


def run_section(work: Path, *, seed: int, rounds: int, clients: int) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["round", "ran s", "acked writes", "in flight: applied / dropped",
                                          "reads answered", "pending.json at kill", "missing", "dup ids",
                                          "torn files"])
    rng = random.Random(seed)
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    project = base / "proj"
    Memory.open(project, create=True).close()
    log = base / "serve.log"
    all_acked: list[tuple[str, Any]] = []
    totals = {"acked": 0, "applied": 0, "dropped": 0, "reads": 0}
    repro = "python -m reliability --sections server_kills"
    for rnd in range(rounds):
        try:
            srv = serving.start(project, log)
        except RuntimeError as exc:
            res.fail("restart after SIGKILL", str(exc), repro)
            break
        stop = threading.Event()
        acked: list = []
        sent: list = []
        bad: list = []
        reads: list = []
        threads = [threading.Thread(target=_writer, args=(srv, k, rnd, stop, acked, sent, bad)) for k in range(clients)]
        threads.append(threading.Thread(target=_reader, args=(srv, stop, bad, reads)))
        for t in threads:
            t.start()
        ran = rng.uniform(1.0, 4.0)
        time.sleep(ran)
        srv.kill()               # SIGKILL: no shutdown, no cleanup
        pending = (srv.home / "journal" / "pending.json").exists()
        stop.set()
        for t in threads:
            t.join(60)
        for b in bad[:5]:
            res.fail("error while serving", b, repro)
        all_acked += acked
        # what was sent and never answered: whole or absent after the next open's recovery
        with Memory.open(project) as mem:
            acked_paths = {p for p, _ in acked}
            unanswered = [p for p in sent if p not in acked_paths]
            applied = sum(1 for p in unanswered if mem.tree.exists(p))
            missing = [p for p, _ in all_acked if not mem.tree.exists(p)]
        ids = journal_ids(project / ".memgrove")
        dups = duplicates(ids)
        missing_ids = [i for _, i in all_acked if i and i not in set(ids)]
        torn = torn_files(project / ".memgrove")
        for what, items in (("acknowledged write missing", missing), ("acknowledged op not journaled", missing_ids),
                            ("journal id twice", dups), ("torn file", torn)):
            for x in items[:5]:
                res.fail(what, f"round {rnd}: {x}", repro)
        totals["acked"] += len(acked)
        totals["applied"] += applied
        totals["dropped"] += len(unanswered) - applied
        totals["reads"] += len(reads)
        res.rows.append([rnd, f"{ran:.1f}", len(acked), f"{applied} / {len(unanswered) - applied}", len(reads),
                         "yes" if pending else "no", len(missing), len(dups), len(torn)])
    with Memory.open(project) as mem:
        report = mem.doctor()
        if not report.ok:
            res.fail("doctor after the last kill", "; ".join(report.problems)[:300], repro)
    res.summary.update(rounds=rounds, clients=clients, **totals)
    res.notes.append(f"{clients} writer threads (one ADD per request, a new path each) and one reader thread per "
                     "round against a real `memgrove serve`, killed with SIGKILL after a seeded 1-4 s; restarted "
                     "on the same project for the next round. Every check runs after every round, over all "
                     "writes acknowledged so far.")
    return res

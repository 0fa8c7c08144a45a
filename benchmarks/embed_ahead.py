#!/usr/bin/env python
"""What ranking by meaning costs once vectors are computed ahead (tree/meaning/embedder.py), side by side in one run.

    .venv/bin/python benchmarks/embed_ahead.py       # 300 entries, 30 rounds, 2 x 2,000 writes: 20 minutes at load 11

1. **Writes beside the embedder**: two processes, each holding a ``Memory`` on its own new tree with
   the product's settings (durable writes), one with meaning on (0.5, its background embedder running)
   and one with it off, curate the same ``--writes`` entries one write at a time, in blocks of
   ``--block`` taken in turn (the order alternating); the process whose turn it is not is stopped
   (SIGSTOP), so the machine's other load falls on both alike and the embedder works only beside its
   own arm's writes, on what those writes left it: a sustained stream, not a burst after an idle spell.
   Medians and p95 of each write's latency, each arm's total, their ratios, and what the embedder had
   still to do at the end.
2. **Vectors ready**: a write into a tree whose embedder is idle, then vectors.db polled every
   millisecond until the entry's vector is there: the median time from the write's return (a write of
   a few entries waits ``SETTLE_S`` in the embedder's queue, tree/meaning/embedder.py).
3. **The first search of a fresh server**: a new process opens the memory as ``memgrove serve`` does
   (``embed_ahead``, the model preloaded in the background), or without it (the model loaded by the
   first search, as before), waits ``--start-s`` (the server's start before its first request), then
   times one search. Every vector is stored: only the model's load differs. Alternating, medians.
4. **Warm searches**: the same questions (an entry's title each, each asked once per arm) on the on
   arm's tree, by a memory with meaning and one without (every vector stored); p50s and their ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.machine import loadavg, machine_info, machine_line  # noqa: E402
from harness.report import RESULTS, table, write  # noqa: E402
from harness.stats import pct  # noqa: E402
from harness.synthetic import Corpus  # noqa: E402

FIRST_SEARCH = """
import sys, time
from memgrove import Memory
m = Memory.open(sys.argv[1], embed_ahead=sys.argv[2] == "1", semantic_weight=0.5)
time.sleep(float(sys.argv[3]))
t = time.perf_counter()
m.search(sys.argv[4])
print(time.perf_counter() - t)
m.close()
"""


def ms(xs: list[float]) -> float:
    return round(pct(xs, 50) * 1000, 1)


def vector_ready(mem, path: str, timeout: float = 60.0) -> float:
    """Seconds until ``path``'s vector is in vectors.db (polled; its text read once)."""
    from memgrove.tree.meaning.vectors import key_of

    t0 = time.perf_counter()
    text = next(iter(mem.tree._meaning_texts([path]).values()))
    key = key_of(mem.tree.meaning_encoder().name, text)
    while not mem.tree.vectors.get_many([key]):
        if time.perf_counter() - t0 > timeout:
            raise SystemExit(f"no vector for {path} within {timeout} s")
        time.sleep(0.001)
    return time.perf_counter() - t0


WRITER = """
import json, sys, time
sys.path.insert(0, sys.argv[3])
from harness.synthetic import Corpus
from memgrove import Memory
on = sys.argv[2] == "on"
m = Memory.open(sys.argv[1], create=True, semantic_weight=0.5 if on else 0.0)
if on:
    m.tree.meaning_encoder()            # the model loaded before the first timed write
corpus = Corpus(int(sys.argv[4]))
print("ready", flush=True)
for line in sys.stdin:
    start, n = map(int, line.split())
    lat = []
    for i in range(start, start + n):
        t = time.perf_counter()
        m.curate([corpus.op(i)])
        lat.append(time.perf_counter() - t)
    print(json.dumps({"lat": lat, "vectors": m.tree.vector_state()}), flush=True)
m.close()
"""


def sustained_writes(tmp: Path, seed: int, base: int, n: int, block: int) -> dict:
    """Phase 1: the two writer processes of the docstring, in turns, the other one stopped."""
    import json
    import os
    import signal

    procs = {arm: subprocess.Popen([sys.executable, "-c", WRITER, str(tmp / f"writes-{arm}"), arm,
                                    str(Path(__file__).resolve().parent), str(seed)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for arm in ("on", "off")}
    lat: dict[str, list[float]] = {"on": [], "off": []}
    total = {"on": 0.0, "off": 0.0}
    last: dict = {}
    load = []
    try:
        for arm, proc in procs.items():
            if proc.stdout.readline().strip() != "ready":
                raise SystemExit(f"the {arm} writer did not start")
            os.kill(proc.pid, signal.SIGSTOP)
        for b, start in enumerate(range(base, base + n, block)):
            for arm in (("on", "off") if b % 2 == 0 else ("off", "on")):
                proc = procs[arm]
                os.kill(proc.pid, signal.SIGCONT)
                proc.stdin.write(f"{start} {min(block, base + n - start)}\n")
                proc.stdin.flush()
                got = json.loads(proc.stdout.readline())
                os.kill(proc.pid, signal.SIGSTOP)
                lat[arm] += got["lat"]
                total[arm] += sum(got["lat"])
                if arm == "on":
                    last = got["vectors"]
            load.append(loadavg()[0])
    finally:
        for proc in procs.values():
            os.kill(proc.pid, signal.SIGCONT)
            proc.stdin.close()
            proc.wait(120)
    return {"write_p50_ms": {k: ms(v) for k, v in lat.items()},
            "write_p95_ms": {k: round(pct(v, 95) * 1000, 1) for k, v in lat.items()},
            "write_ratio_p50": round(pct(lat["on"], 50) / pct(lat["off"], 50), 3),
            "write_total_s": {k: round(v, 1) for k, v in total.items()},
            "write_ratio_total": round(total["on"] / total["off"], 3), "writes": len(lat["on"]), "block": block,
            "load_during": [min(load), round(pct(load, 50), 2), max(load)], "vectors_at_the_end": last}


def vectors_ready(on, corpus: Corpus, base: int, rounds: int) -> dict:
    """Phase 2: one write at a time, the embedder idle before it; how soon its vector is stored."""
    ready: list[float] = []
    for i in range(base, base + rounds):
        until_idle(on)
        op = corpus.op(i)
        on.curate([op])
        ready.append(vector_ready(on, op["path"]))
    return {"vector_ready_p50_ms": ms(ready), "vector_ready_p95_ms": round(pct(ready, 95) * 1000, 1)}


def until_idle(mem, timeout: float = 600.0) -> None:
    t0 = time.perf_counter()
    while not mem.tree.embedder.idle():
        if time.perf_counter() - t0 > timeout:
            raise SystemExit("the embedder did not catch up")
        time.sleep(0.005)


def first_searches(home: Path, questions: list[str], rounds: int, start_s: float) -> dict:
    got: dict[str, list[float]] = {"preloaded": [], "loaded_by_the_search": []}
    for r in range(rounds):
        for arm in (("preloaded", "loaded_by_the_search") if r % 2 == 0 else ("loaded_by_the_search", "preloaded")):
            out = subprocess.run([sys.executable, "-c", FIRST_SEARCH, str(home), "1" if arm == "preloaded" else "0",
                                  str(start_s), questions[r % len(questions)]], capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(out.stderr[-2000:])
            got[arm].append(float(out.stdout.split()[-1]))
    return {"first_search_p50_ms": {k: ms(v) for k, v in got.items()}, "start_s": start_s}


def warm_searches(on, off, questions: list[str]) -> dict:
    """Each question once per arm, new to both: a search by meaning encodes its question every time."""
    t: dict[str, list[float]] = {"on": [], "off": []}
    for mem in (on, off):
        mem.search("warm up the searcher")
    for r, q in enumerate(questions):
        for arm, mem in ((("on", on), ("off", off)) if r % 2 == 0 else (("off", off), ("on", on))):
            s = time.perf_counter()
            mem.search(q)
            t[arm].append(time.perf_counter() - s)
    return {"search_p50_ms": {k: ms(v) for k, v in t.items()},
            "search_ratio_p50": round(pct(t["on"], 50) / pct(t["off"], 50), 3), "searches": len(t["on"])}


def main(argv: list[str] | None = None) -> dict:
    from memgrove import Memory

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--writes", type=int, default=2000, help="writes of each arm beside the embedder")
    ap.add_argument("--block", type=int, default=100, help="writes of one arm's turn")
    ap.add_argument("--start-s", type=float, default=2.0, help="a fresh server's start before its first search")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS / "embed_ahead")
    a = ap.parse_args(argv)
    machine = machine_info(a.seed)
    corpus = Corpus(a.seed)
    questions = [f"what do we know about {corpus.op(i)['title'].lower()}?" for i in range(a.entries)]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {arm: Path(tmp) / arm for arm in ("on", "off")}
        for arm, tree in trees.items():
            with Memory.open(tree, create=True, durable=False, semantic_weight=0.0, embed_ahead=False) as m:
                m.curate([corpus.op(i) for i in range(a.entries)])
        with Memory.open(trees["on"], semantic_weight=0.5, embed_ahead=False) as m:
            m.embed()                   # the first search and the warm ones pay the model, not the vectors
        on = Memory.open(trees["on"], durable=False, semantic_weight=0.5)
        off = Memory.open(trees["off"], durable=False, semantic_weight=0.0)
        try:
            until_idle(on)
            report = {"args": {k: v for k, v in vars(a).items() if k != "out"},
                      **sustained_writes(Path(tmp), a.seed, a.entries, a.writes, a.block),
                      **vectors_ready(on, corpus, a.entries + a.writes, a.rounds)}
            until_idle(on)
            with Memory.open(trees["on"], semantic_weight=0.0) as plain:     # the same tree, without meaning
                report.update(warm_searches(on, plain, questions[:3 * a.rounds]))
        finally:
            on.close()
            off.close()
        report.update(first_searches(trees["on"], questions, max(5, a.rounds // 3), a.start_s))
    machine["loadavg_end"] = loadavg()
    report["machine"] = machine
    w, f, s = report["write_p50_ms"], report["first_search_p50_ms"], report["search_p50_ms"]
    w95, tot, v = report["write_p95_ms"], report["write_total_s"], report["vectors_at_the_end"]
    left = (v.get("backlog") or {})
    md = ["# Vectors computed ahead", "", machine_line(machine), "",
          f"{a.entries} entries (seeded synthetic corpus), meaning 0.5 vs off; medians of one run.", ""]
    md += table(["measure", "meaning on", "meaning off", "on / off"], [
        [f"write p50 (ms), {report['writes']} each, in turns of {a.block}", w["on"], w["off"],
         f"{report['write_ratio_p50']:.2f}×"],
        ["write p95 (ms)", w95["on"], w95["off"], f"{w95['on'] / w95['off']:.2f}×"],
        [f"{report['writes']} writes in all (s)", tot["on"], tot["off"], f"{report['write_ratio_total']:.2f}×"],
        ["warm search p50 (ms)", s["on"], s["off"], f"{report['search_ratio_p50']:.2f}×"]])
    md += ["", f"Writes: two processes on their own trees (durable writes, the product's settings), the one "
           f"whose turn it is not stopped; load average during them {report['load_during'][0]}–"
           f"{report['load_during'][2]} (median {report['load_during'][1]}). At the end the embedder had "
           f"{left.get('queued', 0)} entries queued and {max(left.get('unchecked', 0), 0)} to catch up with "
           f"({v.get('entries')} indexed).", ""]
    md += table(["first search of a fresh server", "p50 (ms)"], [
        ["model preloaded at opening", f["preloaded"]], ["model loaded by the search", f["loaded_by_the_search"]]])
    md += ["", f"A write's vector is in vectors.db {report['vector_ready_p50_ms']} ms after the write returned (p50; "
           f"p95 {report['vector_ready_p95_ms']} ms), the embedder idle before it; a write of a few entries "
           "waits 0.5 s in its queue, so that a search right after the write computes them itself."]
    write(a.out, report, "\n".join(md))
    return report


if __name__ == "__main__":
    main()

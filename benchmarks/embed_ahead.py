#!/usr/bin/env python
"""What ranking by meaning costs once vectors are computed ahead (tree/embedder.py), side by side in one run.

    .venv/bin/python benchmarks/embed_ahead.py                 # 300 entries, 30 rounds: about 3 minutes

1. **Writes**: a long-lived ``Memory`` with meaning on (0.5, its background embedder running) and one
   with meaning off, each on its own tree; a round curates ``--burst`` entries one write at a time into
   each (the order alternating), so the on arm writes while its embedder works on the writes before.
   Medians of each write's latency, and their ratio.
2. **Vectors ready**: a write into the on arm while its embedder is idle, then vectors.db polled every
   millisecond until the entry's vector is there: the median time from the write's return.
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
    from memgrove.tree.vectors import key_of

    t0 = time.perf_counter()
    text = next(iter(mem.tree._meaning_texts([path]).values()))
    key = key_of(mem.tree.meaning_encoder().name, text)
    while not mem.tree.vectors.get_many([key]):
        if time.perf_counter() - t0 > timeout:
            raise SystemExit(f"no vector for {path} within {timeout} s")
        time.sleep(0.001)
    return time.perf_counter() - t0


def writes(on, off, corpus: Corpus, base: int, rounds: int, burst: int) -> dict:
    lat: dict[str, list[float]] = {"on": [], "off": []}
    ready: list[float] = []
    i = base
    for r in range(rounds):
        for arm in (("on", "off") if r % 2 == 0 else ("off", "on")):
            mem = on if arm == "on" else off
            for _ in range(burst):
                t = time.perf_counter()
                mem.curate([corpus.op(i)])
                lat[arm].append(time.perf_counter() - t)
                i += 1
        until_idle(on)
        op = corpus.op(i)
        i += 1
        on.curate([op])                 # the embedder idle: how soon this write's vector is there
        ready.append(vector_ready(on, op["path"]))
    return {"write_p50_ms": {k: ms(v) for k, v in lat.items()},
            "write_p95_ms": {k: round(pct(v, 95) * 1000, 1) for k, v in lat.items()},
            "write_ratio_p50": round(pct(lat["on"], 50) / pct(lat["off"], 50), 3),
            "vector_ready_p50_ms": ms(ready), "vector_ready_p95_ms": round(pct(ready, 95) * 1000, 1),
            "writes": len(lat["on"])}


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
    ap.add_argument("--burst", type=int, default=3, help="writes in a row per arm and round")
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
                      **writes(on, off, corpus, a.entries, a.rounds, a.burst)}
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
    md = ["# Vectors computed ahead", "", machine_line(machine), "",
          f"{a.entries} entries (seeded synthetic corpus), meaning 0.5 vs off; medians of one run.", ""]
    md += table(["measure", "meaning on", "meaning off", "on / off"], [
        [f"write p50 (ms), {a.burst} in a row ({report['writes']} each)", w["on"], w["off"],
         f"{report['write_ratio_p50']:.2f}×"],
        ["warm search p50 (ms)", s["on"], s["off"], f"{report['search_ratio_p50']:.2f}×"]])
    md += ["", *table(["first search of a fresh server", "p50 (ms)"], [
        ["model preloaded at opening", f["preloaded"]], ["model loaded by the search", f["loaded_by_the_search"]]]),
        "", f"A write's vector is in vectors.db {report['vector_ready_p50_ms']} ms after the write returned (p50; "
        f"p95 {report['vector_ready_p95_ms']} ms), the embedder idle before it."]
    write(a.out, report, "\n".join(md))
    return report


if __name__ == "__main__":
    main()

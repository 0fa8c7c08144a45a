#!/usr/bin/env python
"""What a warm search pays to see hand edits, with and without a file watcher (issue 30, item 6).

    python benchmarks/freshness.py                                  # 25,000 entries, both engines
    python benchmarks/freshness.py --size 2000 --searches 40 --out /tmp/f   # a smoke run
    python benchmarks/freshness.py --keep; python benchmarks/freshness.py --tree <kept_at>   # build once

Builds one seeded synthetic tree (``harness/synthetic.py``'s ``Corpus``: 20 domains x 25 topics, so
about 50 entries a folder), then, per engine, opens it four ways in one process and sends the same
seeded searches (the corpus's vocabulary queries) through each, interleaved search by search:

- ``watcher``: the default settings in a long-lived process (``watch_after=0`` here, so at once):
  watchdog's events tell whether anything changed;
- ``full scan``: ``watch=False, scan_interval=0``: the stats of every file before every search,
  which is what every search without a watcher paid before issue 30;
- ``fallback``: ``watch=False`` and the default ``scan_interval``: the mtime of every folder before
  every search, and the files of the share of the folders that the time since the previous search
  is of ``scan_interval`` (so the pace of the searches sets that share: here each round of four
  searches takes as long as the full scan's);
- ``engine``: ``mem.tree.engine.search`` alone, the floor.

Every mode must return the same hits for every search. Also timed alone: the scan of every file
and the stat of every folder. Medians, p90, p99 and means in ms. Results:
``benchmarks/results/freshness.{json,md}`` (``--out`` to choose).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from harness.machine import machine_info  # noqa: E402
from harness.report import RESULTS, log, publish, table  # noqa: E402
from harness.resources import scratch_dir  # noqa: E402
from harness.stats import pct, timed  # noqa: E402
from harness.synthetic import Corpus, build_tree  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)

MODES = ("watcher", "full scan", "fallback", "engine")


def stats_ms(xs: list[float]) -> dict[str, float]:
    ms = [x * 1000 for x in xs]
    return {"n": len(ms), "p50": round(pct(ms, 50), 2), "p90": round(pct(ms, 90), 2),
            "p99": round(pct(ms, 99), 2), "mean": round(statistics.fmean(ms), 2)}


def run_engine(tmp: Path, engine: str, cfg: dict[str, Any]) -> dict[str, Any]:
    from memgrove import Memory
    from memgrove.tree.index.catalog import scan
    from memgrove.tree.index.folder_check import FolderCheck

    t0 = time.perf_counter()
    with Memory.open(tmp, durable=False, engine=engine, watch=False) as m:
        m.count()   # the tree was built on tantivy: another engine indexes it here, once
    index_s = time.perf_counter() - t0
    mems = {"watcher": Memory.open(tmp, durable=False, engine=engine, watch_after=0),
            "full scan": Memory.open(tmp, durable=False, engine=engine, watch=False, scan_interval=0),
            "fallback": Memory.open(tmp, durable=False, engine=engine, watch=False, watch_after=0)}
    corpus = Corpus(cfg["seed"])
    rng = random.Random(f"memgrove-freshness-{cfg['seed']}")
    queries = [corpus.query(rng) for _ in range(cfg["warmup"] + cfg["searches"])]
    times: dict[str, list[float]] = {k: [] for k in MODES}
    try:
        for i, q in enumerate(queries):
            hits = {}
            for name, mem in mems.items():
                t = time.perf_counter()
                hits[name] = [h.path for h in mem.search(q)]
                if i >= cfg["warmup"]:
                    times[name].append(time.perf_counter() - t)
            t = time.perf_counter()
            mems["watcher"].tree.engine.search(q, boosts=mems["watcher"].tree.settings.boosts(), limit=40)
            if i >= cfg["warmup"]:
                times["engine"].append(time.perf_counter() - t)
            assert hits["watcher"] == hits["full scan"] == hits["fallback"], (q, hits)
        watching = mems["watcher"].tree._watcher is not None   # private: informational
        root = mems["watcher"].tree.root
        folders: dict[str, int] = {}
        files = scan(root, folders)
        unchanged = FolderCheck(str(root), folders, 0.0).unchanged   # one check, asked 200 times
        checks = {"files": len(files), "folders": len(folders),
                  "scan every file": stats_ms([timed(lambda: scan(root))[1] for _ in range(cfg["scan_repeats"])]),
                  "stat every folder": stats_ms([timed(unchanged)[1] for _ in range(200)])}
    finally:
        for mem in mems.values():
            mem.close()
    return {"engine": engine, "index_s": round(index_s, 1), "watcher_active": watching,
            "search_ms": {k: stats_ms(v) for k, v in times.items()}, "checks_ms": checks}


def render(report: dict[str, Any]) -> str:
    c, m = report["config"], report["machine"]
    lines = [f"# Freshness checks: a warm search at {c['size']:,} entries, with and without a watcher",
             "",
             f"`python benchmarks/freshness.py {' '.join(report['argv'])}`; {m['date']}, commit {m['commit']}, "
             f"{m['cores']} cores shared (load average {', '.join(map(str, m['loadavg']))} at the end), seed {c['seed']}, "
             f"{c['searches']} searches per mode after {c['warmup']} warm-up ones, interleaved search by search. "
             "Every mode returned the same hits for every search.",
             "",
             "- *watcher*: default settings, long-lived (watchdog's events say whether anything changed);",
             "- *full scan*: `watch=False, scan_interval=0`: every file's stats before every search (what every "
             "search without a watcher paid before issue 30);",
             f"- *fallback*: `watch=False`, default `scan_interval` ({c['scan_interval']:g} s): every folder's mtime "
             "before every search, and the files of the share of the folders that the time since the previous "
             "search is of `scan_interval` (here a round of four searches lasts as long as the full scan's);",
             "- *engine*: the engine's search alone.",
             ""]
    for r in report["runs"]:
        s, k = r["search_ms"], r["checks_ms"]
        lines += [f"## {r['engine']} (watcher running: {'yes' if r['watcher_active'] else 'NO'})", "",
                  *table(["mode", "p50 ms", "p90 ms", "p99 ms", "mean ms"],
                         [[mode, *(s[mode][k] for k in ("p50", "p90", "p99", "mean"))] for mode in MODES], "lrrrr")]
        lines += ["", f"The checks alone ({k['files']:,} files in {k['folders']:,} folders): scan of every file "
                  f"p50 {k['scan every file']['p50']} ms; stat of every folder p50 {k['stat every folder']['p50']} ms.",
                  ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=25_000)
    ap.add_argument("--engines", nargs="+", default=["tantivy", "whoosh"], choices=["tantivy", "whoosh"])
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--scan-repeats", type=int, default=20)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS / "freshness.json")
    ap.add_argument("--keep", action="store_true", help="keep the built tree (its folder is in the report)")
    ap.add_argument("--tree", type=Path, help="measure a tree --keep kept instead of building one")
    a = ap.parse_args(argv)
    from memgrove.tree.settings import TreeSettings

    cfg = {"size": a.size, "searches": a.searches, "warmup": a.warmup, "scan_repeats": a.scan_repeats,
           "batch": a.batch, "seed": a.seed, "keep": a.keep, "scan_interval": TreeSettings().scan_interval}
    report: dict[str, Any] = {"config": cfg, "argv": list(argv if argv is not None else sys.argv[1:]), "runs": []}
    with contextlib.ExitStack() as stack:
        if a.tree:   # a tree an earlier run built (--keep), of the same size and seed
            tmp = a.tree
        else:
            tmp = stack.enter_context(scratch_dir(f"memgrove-freshness-{a.size}-", cfg, report))
            log(f"building {a.size} entries")
            report["build_s"] = round(build_tree(tmp, a.size, Corpus(a.seed), a.batch, engine="tantivy"), 1)
        for engine in a.engines:
            log(f"{engine}: {a.searches} searches x {len(MODES)} modes")
            report["runs"].append(run_engine(tmp, engine, cfg))
    report["machine"] = machine_info(a.seed)
    return publish(report, render(report), a.out.with_suffix(""))


if __name__ == "__main__":
    main()

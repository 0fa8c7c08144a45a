#!/usr/bin/env python
"""Cold in-process ``memgrove query``: two checkouts side by side on one tree, same run.

    python benchmarks/cold_query.py --tree /tmp/t25 --python OLD/.venv/bin/python --python .venv/bin/python

Each round runs ``python -m memgrove.cli --root TREE --no-server query Q --json`` once per
interpreter (a checkout's venv: a baseline commit and the change), alternating which goes
first. Every question is new to the tree's cache (an entry's title, "what do we know about
T?"), so each run searches (tier 2, reported). The tree must be one both checkouts read
without rebuilding (the same index format). Build one with ``benchmarks/scale.py``'s corpus:
``--build N`` creates it at ``--tree`` first. Prints p50/p95 per interpreter and their ratio,
with the load average, and writes ``--out`` JSON when given.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.stats import pct  # noqa: E402
from harness.synthetic import Corpus  # noqa: E402


def build(tree: Path, n: int, seed: int) -> None:
    from memgrove import Memory

    corpus = Corpus(seed)
    with Memory.open(tree, create=True, durable=False) as mem:
        for start in range(0, n, 500):
            mem.curate([corpus.op(i) for i in range(start, min(n, start + 500))])


def titles(tree: Path) -> list[str]:
    db = sqlite3.connect(tree / ".memgrove" / "index" / "catalog.db")
    try:
        return [r[0] for r in db.execute("select title from files where kind = 'entry' and title != ''")]
    finally:
        db.close()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--python", action="append", required=True, help="an interpreter (give two: baseline, change)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--build", type=int, default=0, help="first build a tree of this many entries at --tree")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.build:
        build(a.tree, a.build, a.seed)
    pool = titles(a.tree)
    rng = random.Random(a.seed)
    times: dict[str, list[float]] = {p: [] for p in a.python}
    tiers: dict[str, dict[str, int]] = {p: {} for p in a.python}
    load = [os.getloadavg()]
    for r in range(a.rounds):
        for p in (a.python if r % 2 == 0 else a.python[::-1]):
            q = f"what do we know about {rng.choice(pool)}?"
            t0 = time.perf_counter()
            out = subprocess.run([p, "-m", "memgrove.cli", "--root", str(a.tree), "--no-server", "query", q, "--json"],
                                 capture_output=True, text=True, cwd=tempfile.gettempdir())
            el = time.perf_counter() - t0
            if out.returncode != 0:
                raise SystemExit(f"{p} failed: {out.stderr.strip()[-400:]}")
            tier = str(json.loads(out.stdout)["tier"])
            tiers[p][tier] = tiers[p].get(tier, 0) + 1
            times[p].append(el)
    load.append(os.getloadavg())
    report = {"tree": str(a.tree), "entries": len(pool), "rounds": a.rounds, "loadavg": load,
              "python": {p: {"p50_ms": round(pct(times[p], 50) * 1000, 1), "p95_ms": round(pct(times[p], 95) * 1000, 1),
                             "tiers": tiers[p]} for p in a.python}}
    if len(a.python) == 2:
        base, new = (report["python"][p]["p50_ms"] for p in a.python)
        report["ratio_p50"] = round(new / base, 3)
    print(json.dumps(report, indent=2))
    if a.out:
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()

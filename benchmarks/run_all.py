#!/usr/bin/env python
"""Every benchmark, in its quick form (``make bench``) or in full (``make bench-full``).

    python benchmarks/run_all.py --quick            # quick forms, into benchmarks/runs/quick/ (ignored)
    python benchmarks/run_all.py --full             # the current reports in benchmarks/results/: hours
    python benchmarks/run_all.py --quick locomo     # some of them

The quick forms check that every benchmark still runs and give numbers to compare side by side; they never
overwrite a current report. The full forms rewrite ``benchmarks/results/``, then ``figures.py`` redraws the
figures from those reports. A benchmark whose data is missing (LoCoMo, BEAM, LongMemEval) is skipped with a
line saying which variable names it. Adding a benchmark is a line here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK = HERE / "runs" / "quick"
TINY_LME = HERE.parent / "tests" / "data" / "longmemeval_tiny.json"
Q = str(QUICK)

# BEAM 500K (38k messages, ~16 min with meaning off) was last run with meaning off: its full form pins that,
# so it reproduces the current report (results/beam_500k.md; meaning's effect on its test chats: heldout.md)
BEAM_500K = ["beam.py", "--tier", "500K", "--tree", "semantic_weight=0", "--name", "beam_500k"]

# name: (data it needs, quick arguments, full runs: a list of argument lists); ">FILE" last: stdout to FILE
BENCHMARKS: dict[str, tuple[str | None, list[str], list[list[str]]]] = {
    "locomo": ("locomo", ["locomo.py", "--conversations", "2", "--out", Q], [["locomo.py", "--no-questions"]]),
    "beam": ("beam", ["beam.py", "--chats", "3", "--out", Q], [["beam.py"], BEAM_500K]),
    "answer_first": ("locomo", ["answer_first.py", "--conversations", "2", "--out", f"{Q}/answer_first"],
                     [["answer_first.py"]]),
    "answer_first_beam": ("beam", ["answer_first_beam.py", "--chats", "2", "--out", f"{Q}/answer_first_beam"],
                          [["answer_first_beam.py"]]),
    "answer_cost": (None, ["answer_cost.py", "--entries", "2000", "--questions", "20", "--out", f"{Q}/answer_cost"],
                    [["answer_cost.py"]]),
    "doc_answers": (None, ["doc_answers.py", "--split", "dev", "--json"], [["doc_answers.py", "--results"]]),
    "fuzzy_cache": (None, ["fuzzy_cache.py", "--out", f"{Q}/fuzzy_cache.md"], [["fuzzy_cache.py"]]),
    "longmemeval": ("longmemeval", ["longmemeval.py", str(TINY_LME), "--no-cache", "--out", Q],
                    [["longmemeval.py", "$LONGMEMEVAL_PATH"]]),
    "scale": (None, ["scale.py", "--quick", "--out", f"{Q}/scale"], [["scale.py"]]),
    "scale_curve": (None, ["scale.py", "--curve", "--sizes", "500", "2500", "--out", f"{Q}/scale_curve"],
                    [["scale.py", "--curve"]] + [["scale.py", "--curve", "--sizes", "1000", "5000", "25000", "--engine", e,
                                                   "--out", f"benchmarks/results/scale_curve_{e}"]
                                                  for e in ("whoosh", "tantivy")]),
    "tiers": (None, ["tiers.py", "--quick", "--out", f"{Q}/tiers"], [["tiers.py"]]),
    "curate_cost": ("locomo", ["curate_cost.py", "--conversations", "2", "--out", Q], [["curate_cost.py"]]),
    "store": (None, ["store.py", "--quick", "--out", f"{Q}/store"], [["store.py"]]),
    "serve_load": (None, ["serve_load.py", "--sizes", "1000", "--duration", "3", "--cold-runs", "3",
                          "--out", f"{Q}/serve_load"], [["serve_load.py"]]),
    "freshness": (None, ["freshness.py", "--size", "2000", "--searches", "40", "--out", f"{Q}/freshness.json"],
                  [["freshness.py"]]),
    "dream": (None, ["dream.py", "--sizes", "1000", "--out", f"{Q}/dream"],
              [["dream.py", "--sizes", "2000", "10000", "--locomo", "3"]]),
    "hygiene": (None, ["hygiene.py", "--sizes", "300", "--locomo", "0", "--out", f"{Q}/hygiene.json"],
                [["hygiene.py"]]),
    "lock_fairness": (None, ["lock_fairness.py", "--seconds", "3", "--no-write"], [["lock_fairness.py"]]),
    "wal_size": (None, ["wal_size.py", "--entries", "200", "--out", f"{Q}/wal_size"], [["wal_size.py"]]),
    "ui_views": (None, ["ui_views.py", "--entries", "2000", "--big", "500", "--reps", "3", "--out", f"{Q}/ui_views"],
                 [["ui_views.py", "--full"]]),
}
DATA_VARS = {"locomo": "LOCOMO_PATH", "beam": "BEAM_PATH", "longmemeval": "LONGMEMEVAL_PATH"}


def data_missing(kind: str | None, full: bool) -> str | None:
    if kind is None:
        return None
    if kind == "longmemeval":
        return None if not full or os.environ.get("LONGMEMEVAL_PATH") else "set LONGMEMEVAL_PATH"
    from harness.datasets import beam, locomo
    where = (locomo if kind == "locomo" else beam).default_data()
    return None if where.exists() else f"no data at {where} (set {DATA_VARS[kind]})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--full", action="store_true")
    ap.add_argument("names", nargs="*", choices=[[], *BENCHMARKS], help="some benchmarks (default: all)")
    a = ap.parse_args(argv)
    QUICK.mkdir(parents=True, exist_ok=True)
    failed, rows = [], []
    for name in a.names or list(BENCHMARKS):
        kind, quick, full = BENCHMARKS[name]
        why = data_missing(kind, a.full)
        if why:
            print(f"-- {name}: skipped ({why})", file=sys.stderr, flush=True)
            continue
        for args in full if a.full else [quick]:
            args = [os.path.expandvars(x) for x in args]
            to = HERE.parent / args.pop()[1:] if args[-1].startswith(">") else None
            cmd = [sys.executable, str(HERE / args[0]), *args[1:]]
            print(f"-- {name}: {' '.join(args)}", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            with open(to, "w") if to else open(os.devnull, "w") as out:
                rc = subprocess.run(cmd, cwd=HERE.parent, stdout=out).returncode
            rows.append(f"{name:14} {time.perf_counter() - t0:7.1f} s  {'ok' if rc == 0 else f'FAILED ({rc})'}")
            if rc:
                failed.append(name)
    if a.full:
        subprocess.run([sys.executable, str(HERE / "figures.py")], cwd=HERE.parent, check=False)
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

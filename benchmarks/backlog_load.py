#!/usr/bin/env python
"""32 clients searching a served project while its background embedder has a 3,000-entry backlog,
side by side with the same load on a copy whose every entry has a vector (issue 43: read p50 within
2x). The run is reliability/embed_backlog.py's section (two ``memgrove serve``, in turns, the other
stopped), with more turns; this script adds the medians, the ratio and how fast the backlog drained
while the clients searched, and can sample the backlog server's threads with py-spy (``--spy``).

    .venv/bin/python benchmarks/backlog_load.py                       # 4 turns of 20 s: ~4 minutes
    .venv/bin/python benchmarks/backlog_load.py --turns 2 --seconds 12 --spy /work/main/.venv/bin/py-spy
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from harness.machine import loadavg, machine_info, machine_line  # noqa: E402
from harness.report import RESULTS, log, table, write  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=3000)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "backlog_load"))
    args = ap.parse_args()
    from reliability import embed_backlog

    t0 = time.time()
    report = {"machine": machine_info(args.seed), "command": "python benchmarks/backlog_load.py " + " ".join(sys.argv[1:]),
              "config": vars(args)}
    work = Path(tempfile.mkdtemp(prefix="memgrove-backlog-"))
    try:
        res = embed_backlog.run_section(work, entries=args.entries, clients=args.clients, seconds=args.seconds,
                                        turns=args.turns, seed=args.seed)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.update(rows=res.rows, summary=res.summary, failures=[f.__dict__ if hasattr(f, "__dict__") else str(f)
                                                                 for f in getattr(res, "failures", [])],
                  notes=res.notes)
    report["machine"]["loadavg_end"] = loadavg()
    report["wall_s"] = round(time.time() - t0, 1)
    backlog = [r for r in res.rows if r[1] == "backlog"]
    drained = [f"{a[-1]} → {b[-1]}" for a, b in zip(backlog, backlog[1:])]
    s = res.summary
    md = "\n".join(["# Searches while the embedder has a backlog, served", "", machine_line(report["machine"]), "",
                    f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s", "",
                    *table(res.columns, res.rows), "",
                    f"Read p50: backlog {s.get('p50_s', {}).get('backlog')} s, every vector ready "
                    f"{s.get('p50_s', {}).get('ready')} s: **{s.get('p50_ratio')}×** (target ≤ 2×); max "
                    f"{s.get('max_s')}. Vectors pending at each backlog turn's start: {', '.join(drained) or '—'}.",
                    "", *res.notes, ""])
    print(md)
    log(f"failures: {report['failures']}")
    write(Path(args.out), report, md)


if __name__ == "__main__":
    main()

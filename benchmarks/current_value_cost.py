#!/usr/bin/env python
"""What the current-value rule (graphs/current/) adds to the answer step of a warm query.

    python benchmarks/current_value_cost.py --size 25000 --tree /tmp/current25k   # builds once, then reuses
    python benchmarks/current_value_cost.py --size 2000                           # quicker

A memory of ``--size`` seeded synthetic entries (harness/synthetic.py, as benchmarks/scale.py
builds them) plus the six conversations of the changed-facts set (benchmarks/data/changed_facts/),
ranking by meaning off (its cost is the search's, not the answer step's). For each of the set's 90
questions, the search runs once (``QueryPipeline.retrieve``), then the answer step
(``tiers.evidence_answer``: the chosen entries read, the sentence picked) is timed with the rule
and without it (``current.statements.plan`` replaced by one that changes nothing; the further look's
reads skipped too), interleaved, ``--repeats`` times each after one warm-up: the medians per
question, and their differences (median, p90, max). Raw rows go to benchmarks/runs/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from harness.report import log  # noqa: E402
from harness.synthetic import Corpus, build_tree  # noqa: E402

DATA = HERE / "data" / "changed_facts"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=25_000)
    ap.add_argument("--tree", type=Path, default=None, help="where the memory is built (kept, reused)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)

    from memgrove import Memory
    from memgrove.graphs import tiers
    from memgrove.graphs.current import statements as answer_current
    from memgrove.graphs.pipeline import QueryPipeline

    folder = args.tree or Path(tempfile.mkdtemp(prefix="memgrove-current-cost-"))
    convs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((DATA / "conversations").glob("*.json"))]
    if not (folder / ".memgrove").exists():
        log(f"building {args.size} entries in {folder}")
        build_tree(folder, args.size, Corpus(0), 500, semantic_weight=0)
        with Memory.open(folder, durable=False, semantic_weight=0) as mem:
            for conv in convs:
                mem.ingest(conversation=conv)
    questions = [json.loads(line) for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line]

    real_plan, real_look = answer_current.plan, tiers.further_look

    def no_plan(question, bodies, times, said=(), labels=(), weight=None, optional=0, *rest, **kw):
        n = len(bodies)
        return answer_current.Plan(list(range(n - optional)), list(bodies), [labels[i] if i < len(labels) else ""
                                                                            for i in range(n)])

    rows = []
    with Memory.open(folder, durable=False, semantic_weight=0) as mem:
        entries = mem.tree.catalog.count() if hasattr(mem.tree.catalog, "count") else None
        pipe = QueryPipeline(mem.tree)
        s = pipe.settings
        for q in questions:
            hits, route = pipe.retrieve(q["question"])
            if route == "direct":
                hits = sorted(hits, key=tiers.confidence, reverse=True)
            ms = {"on": [], "off": []}
            for rep in range(args.repeats + 1):
                for mode in ("off", "on"):
                    answer_current.plan = real_plan if mode == "on" else no_plan
                    tiers.further_look = real_look if mode == "on" else (lambda *a: ([], [], []))
                    t = time.perf_counter()
                    tiers.evidence_answer(mem.tree, q["question"], hits, s, "")
                    if rep:
                        ms[mode].append((time.perf_counter() - t) * 1000)
            answer_current.plan, tiers.further_look = real_plan, real_look
            rows.append({"qid": q["qid"], "on": statistics.median(ms["on"]), "off": statistics.median(ms["off"])})
        pipe.close()
    added = sorted(r["on"] - r["off"] for r in rows)
    out = {"size": args.size, "entries": entries, "questions": len(rows), "repeats": args.repeats,
           "answer_step_ms_median": {"off": round(statistics.median(r["off"] for r in rows), 2),
                                     "on": round(statistics.median(r["on"] for r in rows), 2)},
           "added_ms": {"median": round(statistics.median(added), 2), "p90": round(added[int(0.9 * len(added))], 2),
                        "max": round(added[-1], 2)}}
    runs = HERE / "runs"
    runs.mkdir(exist_ok=True)
    (runs / f"current_value_cost_{args.size}.json").write_text(json.dumps({**out, "rows": rows}, indent=1))
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()

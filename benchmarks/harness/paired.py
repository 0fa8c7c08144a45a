#!/usr/bin/env python
"""Paired per-question differences of memgrove between two runs of one benchmark (LoCoMo or BEAM).

    python benchmarks/harness/paired.py benchmarks/results/beam_before.json benchmarks/results/beam.json
    python benchmarks/harness/paired.py old_locomo.json new_locomo.json --skip 5   # LoCoMo: categories 1-4

Both runs must hold their per-question records (run without ``--no-questions``) over the same
questions. For each recall metric: the mean of new − old over the questions with evidence, and how
many questions gained, lost or tied; for BEAM also per question type. Markdown on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

KEYS = ("R@5", "R@10", "R@100w", "R@200w", "R@500w", "R@1000w")


def _records(report: dict[str, Any], system: str, skip: tuple[str, ...] = ()) -> dict[tuple, dict[str, Any]]:
    """``{(conversation, question index): (group, metrics)}`` of the questions with evidence."""
    qs = report.get("questions")
    if not qs:
        raise SystemExit("a run without per-question records (it was run with --no-questions)")
    out = {}
    for q in qs:
        m = q.get(system) or {}
        if "R@5" not in m:          # no evidence (BEAM's abstention; LoCoMo's adversarial)
            continue
        group = str(q.get("qtype") or q.get("category"))
        if group not in skip:
            out[(q.get("chat") or q.get("conv"), q["index"])] = (group, m)
    return out


def paired(old: dict[str, Any], new: dict[str, Any], system: str = "memgrove",
           skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Per group (question type or category) and over all: old and new means, new − old, wins/losses/ties."""
    a, b = _records(old, system, skip), _records(new, system, skip)
    if a.keys() != b.keys():
        raise SystemExit(f"the runs hold different questions ({len(a)} and {len(b)} with evidence)")
    groups: dict[str, list[tuple]] = defaultdict(list)
    for key in a:
        groups["overall"].append(key)
        groups[a[key][0]].append(key)
    out: dict[str, Any] = {}
    for g, keys in groups.items():
        row: dict[str, Any] = {"n": len(keys)}
        for k in KEYS:
            d = [b[q][1][k] - a[q][1][k] for q in keys if k in a[q][1] and k in b[q][1]]
            if d:
                row[k] = {"old": sum(a[q][1][k] for q in keys) / len(keys), "new": sum(b[q][1][k] for q in keys) / len(keys),
                          "mean_diff": sum(d) / len(d), "wins": sum(v > 0 for v in d),
                          "losses": sum(v < 0 for v in d), "ties": sum(v == 0 for v in d)}
        out[g] = row
    return out


def markdown(result: dict[str, Any]) -> str:
    L = ["| group | n | " + " | ".join(f"{k} old → new (wins/losses)" for k in KEYS) + " |",
         "|---|---|" + "---|" * len(KEYS)]
    for g in ["overall"] + sorted(k for k in result if k != "overall"):
        row = result[g]
        L.append(f"| {g} | {row['n']} | " + " | ".join(
            f"{row[k]['old'] * 100:.1f} → {row[k]['new'] * 100:.1f} ({row[k]['wins']}/{row[k]['losses']})"
            if k in row else "—" for k in KEYS) + " |")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--system", default="memgrove")
    ap.add_argument("--skip", action="append", default=[], help="a question type or category to leave out")
    a = ap.parse_args(argv)
    result = paired(json.loads(a.old.read_text(encoding="utf-8")), json.loads(a.new.read_text(encoding="utf-8")),
                    a.system, tuple(a.skip))
    sys.stdout.write(markdown(result) + "\n")
    return result


if __name__ == "__main__":
    main()

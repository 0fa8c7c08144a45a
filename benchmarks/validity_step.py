#!/usr/bin/env python
"""LoCoMo recall with the validity ranking step (tree/validity.py) and without it, in one run.

    python benchmarks/validity_step.py --conversations 2

No LoCoMo entry is superseded, so the step must change nothing: the two rows must be equal.
"Without" replaces ``with_validity`` by the identity; everything else is ``benchmarks/locomo.py``
at its defaults (its own arguments pass through).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo  # noqa: E402

from memgrove.tree import validity  # noqa: E402

METRICS = ("R@5", "R@10", "R@100w", "R@200w", "R@500w", "R@1000w")


def main(argv: list[str]) -> int:
    args = [*argv, "--no-write", "--no-questions"]
    real, seen = validity.with_validity, {"searches": 0, "with_closed": 0}

    def counting(question, order, closed, closed_by):
        seen["searches"] += 1
        seen["with_closed"] += bool(closed)
        return real(question, order, closed, closed_by)

    validity.with_validity = counting
    rows = {"with the step": locomo.main(args)}
    validity.with_validity = lambda question, order, closed, closed_by: order
    rows["without"] = locomo.main(args)
    validity.with_validity = real
    pooled = {name: r["systems"]["memgrove"]["1-4"] for name, r in rows.items()}
    print(f"\nsearches ranked: {seen['searches']}, with a superseded entry among the candidates: {seen['with_closed']}")
    print("| run | " + " | ".join(METRICS) + " |\n|---|" + "---|" * len(METRICS))
    for name, overall in pooled.items():
        print(f"| {name} | " + " | ".join(f"{100 * overall[m]:.1f}" for m in METRICS) + " |")
    same = all(r["systems"]["memgrove"] == rows["without"]["systems"]["memgrove"] for r in rows.values())
    print("identical" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

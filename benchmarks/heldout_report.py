#!/usr/bin/env python
"""The ablation table of benchmarks/results/heldout.md from ablation runs (benchmarks/ablation.py) of the test halves.

    python benchmarks/heldout_report.py --beam benchmarks/runs/ablation_beam_100k_test.json \\
        --locomo benchmarks/runs/ablation_locomo_test.json \\
        --decisions benchmarks/data/heldout_decisions.json --out /tmp/heldout

Prints the table and writes it to ``<out>.table.md``, its rows to ``<out>.ablation.json``.

Per arm (one step switched to its neutral value): the change on each test half at R@10, R@200w and
R@500w (points) with the questions gained and lost, beside the decision recorded in DECISIONS.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KEYS = ("R@10", "R@200w", "R@500w")

# step -> the decision and its reason; filled from the numbers of the test halves (see heldout.md)
DECISIONS: dict[str, str] = {}


def arm_cells(run: dict[str, Any], arm: str) -> str:
    p = run["summary"]["paired"].get(arm, {}).get("overall")
    if p is None:
        return "—"
    return " / ".join(f"{p[k]['diff'] * 100:+.1f} (+{p[k]['gained']}/−{p[k]['lost']})" for k in KEYS)


def means(run: dict[str, Any], system: str, group: str = "overall") -> dict[str, float]:
    return run["summary"]["means"][system][group]


def best_flat(run: dict[str, Any], key: str, group: str = "overall") -> float:
    """The best flat BM25 at ``key``: at k items the message baselines (a session item holds a whole
    session: BEAM's 3-5 sessions are all in its top 10); at budgets every baseline."""
    refs = [r for r in run["references"] if not (key.startswith("R@") and not key.endswith("w") and "sessions" in r)]
    return max(means(run, r, group)[key] for r in refs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--beam", type=Path, required=True)
    ap.add_argument("--locomo", type=Path, required=True)
    ap.add_argument("--decisions", type=Path, default=None, help="JSON {arm: decision}")
    ap.add_argument("--out", type=Path, default=HERE / "runs" / "heldout")
    a = ap.parse_args(argv)
    beam, locomo = (json.loads(p.read_text(encoding="utf-8")) for p in (a.beam, a.locomo))
    decisions = {**DECISIONS, **(json.loads(a.decisions.read_text(encoding="utf-8")) if a.decisions else {})}
    arms = [x for x in beam["arms"]]
    L = ["| step (arm: switched to its neutral value alone) | BEAM 100K test: ΔR@10 / ΔR@200w / ΔR@500w "
         "(gained/lost) | LoCoMo test: ΔR@10 / ΔR@200w / ΔR@500w (gained/lost) | decision |",
         "|---|---|---|---|"]
    rows = []
    for arm in arms[1:]:
        name = arm["name"]
        L.append(f"| {arm['step']} (`{name}`) | {arm_cells(beam, name)} | {arm_cells(locomo, name)} | "
                 f"{decisions.get(name, '')} |")
        rows.append({"arm": name, "step": arm["step"],
                     "beam_100k_test": beam["summary"]["paired"].get(name, {}).get("overall"),
                     "locomo_test": locomo["summary"]["paired"].get(name, {}).get("overall"),
                     "decision": decisions.get(name, "")})
    ref = arms[0]["name"]
    L += ["", f"Reference (`{ref}`): BEAM 100K test " + " / ".join(
        f"{k} {means(beam, ref)[k] * 100:.1f}" for k in KEYS) + " (best flat BM25 " + " / ".join(
        f"{best_flat(beam, k) * 100:.1f}" for k in KEYS) + "); LoCoMo test " + " / ".join(
        f"{k} {means(locomo, ref)[k] * 100:.1f}" for k in KEYS) + "."]
    sys.stdout.write("\n".join(L) + "\n")
    a.out.with_suffix(".table.md").write_text("\n".join(L) + "\n", encoding="utf-8")
    a.out.with_suffix(".ablation.json").write_text(json.dumps({"beam": str(a.beam), "locomo": str(a.locomo),
                                                               "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

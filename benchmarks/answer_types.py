#!/usr/bin/env python
"""The answer picker on questions of every kind, with distractors: before and after, same run.

    python benchmarks/answer_types.py [--split dev|test|all] [--json]

``benchmarks/data/answer_types.json`` holds questions by the kind of value they ask for
(a duration, a time, a version, a number, a frequency, a person, a place, a name, a
breed), each with the entries a search would choose, best first: distractors that share
the question's words and do not answer, and the sentence that does. A hit = the shown
answer holds the case's ``answer`` (case-insensitive). Both pickers get the same input:
terms from memgrove's analyzer, idf over all the cases' entries (as an index would weigh
them); "before" is ``graphs/answer_pick.py`` at ``answer_first.BASELINE_REV``, "after" is
the current ``answer_pick.answer_text``. Dev and test halves alternate in the file's order
(the first case dev, the second test, ...; ``split_of``): decide on dev, report test. The
"first sentence" rates count the answer's first sentence only (``answer_first.first_sentence``
where that exists: what the user reads first); "no answer" counts answers that say no entry
states what was asked.
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


def split_of(index: int) -> str:
    """The half of the case at ``index`` in the file: even dev, odd test."""
    return "dev" if index % 2 == 0 else "test"


def in_split(cases: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [c for i, c in enumerate(cases) if split == "all" or split_of(i) == split]


def first_sentence(text: str) -> str:
    """What the user reads first (``answer_first.first_sentence`` when it is there)."""
    cut = getattr(answer_first, "first_sentence", None)
    return cut(text) if cut else text


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


def run(cases: list[dict[str, Any]], split: str = "all") -> dict[str, Any]:
    base = answer_first.baseline_picker()
    idf = idf_of(cases)          # over every case, whichever half is asked: the same weights
    cases = in_split(cases, split)
    hits: dict[str, dict[str, list[bool]]] = {r: defaultdict(list) for r in ("before", "after", "after_first")}
    unanswered = 0
    words: dict[str, list[int]] = {r: [] for r in ("before", "after")}
    misses = []
    for case in cases:
        shown = answers(case, idf, base)
        shown["after_first"] = first_sentence(shown["after"])
        unanswered += shown["after"].startswith(answer_pick_not_stated())
        for r, text in shown.items():
            ok = case["answer"].lower() in text.lower()
            hits[r]["all"].append(ok)
            hits[r][case["kind"]].append(ok)
            if r in words:
                words[r].append(len(text.split()))
        if case["answer"].lower() not in shown["after"].lower():
            misses.append({"q": case["q"], "answer": case["answer"], "shown": shown["after"]})
    kinds = ["all"] + sorted({c["kind"] for c in cases})
    return {
        "questions": len(cases), "split": split, "baseline": answer_first.BASELINE_REV, "no_answer": unanswered,
        "rates": {r: {k: round(100.0 * sum(v[k]) / len(v[k]), 1) for k in kinds} for r, v in hits.items()},
        "counts": {k: len(hits["after"][k]) for k in kinds},
        "mean_words": {r: round(sum(w) / len(w), 1) for r, w in words.items()},
        "misses_after": misses,
    }


def answer_pick_not_stated() -> str:
    from memgrove.graphs import answer_pick

    return getattr(answer_pick, "NOT_STATED", "\0")


def render(rep: dict[str, Any]) -> str:
    kinds = list(rep["counts"])
    lines = [f"{rep['questions']} questions with distractors (benchmarks/data/answer_types.json, "
             f"{rep.get('split', 'all')}); {rep.get('no_answer', 0)} answered 'no entry states'", ""]
    lines += table(["picker", *kinds, "mean words"],
                   [[name, *(f"{rep['rates'][r][k]:.0f}%" for k in kinds), rep["mean_words"].get(r, "—")]
                    for r, name in (("before", f"before ({rep['baseline']})"), ("after", "after"),
                                    ("after_first", "after, first sentence"))]
                   + [["questions", *(rep["counts"][k] for k in kinds), ""]])
    for m in rep["misses_after"]:
        lines.append(f"- missed: {m['q']} (want {m['answer']!r}) -> {m['shown']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="all",
                    help="the half of the cases (even ones dev, odd ones test; default all)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    rep = run(load(), args.split)
    print(json.dumps(rep, indent=2) if args.json else render(rep))
    return rep


if __name__ == "__main__":
    main()

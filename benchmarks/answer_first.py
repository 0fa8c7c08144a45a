#!/usr/bin/env python
"""Answers first on LoCoMo: is the gold answer in the first sentence an answer shows?

    python benchmarks/answer_first.py                    # all 10 conversations
    python benchmarks/answer_first.py --conversations 2  # quicker

For every question of categories 1–4 with a gold answer, the conversation is
curated as in ``benchmarks/locomo.py`` (verbatim curator, one entry per message)
and the question is searched as ``Memory.query`` does (``tree.search`` with the
product's default ``prefetch_limit``, ordered by confidence when it routes to
tier 2). Out of the same chosen entries, these answers are compared, same run:

- **old rule**: the top entry's title and first sentence (its summary), what led
  every answer without a model before (``tiers.first_sentence_rule``);
- **picker before issue 33**: ``graphs/answer_pick.py`` at ``BASELINE_REV``, read
  from git, shown as ``tiers.pick_answer`` showed it then;
- **new rule**: the answer as shown (``tiers.pick_answer``): the sentence the
  extractive pick chooses (holding what the question asks for, read with the
  messages around a chosen one), with the next one when it is short and, for a
  message, who said it and when (for "when", what its relative times name);
- **the picked sentence alone**: the same pick without the next sentence and the
  speaker and day (nearer the old rule's length).

A hit = the normalised gold answer occurs on word boundaries in the shown text
(``harness.metrics.answer_in_text``: lower-cased, punctuation removed;
category 3 uses the text before ';'). Beside it (``rates_any_day_format``): a gold
answer that is one day also counts when the text writes that day in the other
order ("1 May 2023" for "May 1, 2023"; ``answer_or_its_day_in_text``). Reported overall and per category, with
the answers' mean length in words (a longer text contains more by chance), and
"reachable": the share of questions whose gold answer is anywhere in the chosen
entries' texts (the ceiling of any pick).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

from harness.datasets import locomo  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.report import log, table  # noqa: E402

RULES = ("old", "main", "new", "sentence", "reachable")
# the picker before issue 33 (answer types, the message before, relative times): read from git, same run
BASELINE_REV = "4edd657"


def baseline_picker(rev: str = BASELINE_REV) -> Any:
    """``graphs/answer_pick.py`` as it was at ``rev`` (standard library only), loaded as a module."""
    import subprocess
    import types

    src = subprocess.run(["git", "show", f"{rev}:graphs/answer_pick.py"], cwd=HERE.parent, check=True,
                         capture_output=True, text=True).stdout
    mod = types.ModuleType("answer_pick_baseline")
    sys.modules[mod.__name__] = mod   # dataclasses looks its module up
    exec(compile(src, f"{rev}:graphs/answer_pick.py", "exec"), mod.__dict__)
    return mod


def baseline_answer(base: Any, mem: Any, question: str, bodies: list[str], contexts: list[str], said: list[str]) -> str:
    """The answer as the baseline picker showed it (``tiers.pick_answer`` at ``BASELINE_REV``)."""
    from memgrove.graphs import tiers

    terms = mem.tree.engine.terms(question)
    clipped = [b[: tiers.PICK_CHARS] for b in bodies]
    found = base.pick(terms, mem.tree.engine.idf(terms) if terms else {}, clipped, mem.tree.engine.terms, contexts)
    if found is None:
        return ""
    text = base.shown(found, base.candidates(clipped))
    who = said[found.rank] if found.rank < len(said) else ""
    return f"{text} ({who})" if who and who not in text else text


def answers_for(mem: Any, question: str, base: Any = None) -> dict[str, str]:
    """The old and new leading text, and all chosen entries' text, for one question."""
    from memgrove.graphs import answer_pick, tiers
    from memgrove.graphs.pipeline import QueryPipeline

    pipe = getattr(mem, "_bench_pipe", None)
    if pipe is None:
        pipe = mem._bench_pipe = QueryPipeline(mem.tree)
    s = pipe.settings
    hits, route = pipe.retrieve(question)
    if not hits or route == "out_of_domain":
        return {r: "" for r in RULES}
    if route == "direct":
        hits = sorted(hits, key=tiers.confidence, reverse=True)
    evidence, bodies = tiers.evidence_of(mem.tree, hits, s)
    old = tiers.first_sentence_rule(tiers.chosen_hits(hits, s)[0])
    said = tiers.said_of(hits, evidence)
    contexts = tiers.contexts_of(evidence)
    before, after = tiers.messages_around(mem.tree, evidence, said)
    new = tiers.pick_answer(mem.tree, question, bodies, contexts, said, before=before, after=after) or old
    main = (baseline_answer(base, mem, question, bodies, contexts, said) if base else "") or old
    # the picked sentence alone: no next sentence, no speaker and day (what the pick itself finds)
    terms = mem.tree.engine.terms(question)
    found = answer_pick.pick(terms, mem.tree.engine.idf(terms) if terms else {},
                             [b[: tiers.PICK_CHARS] for b in bodies], mem.tree.engine.terms, contexts,
                             question=question, said=said)
    return {"old": old, "main": main, "new": new, "sentence": found.text if found else old, "reachable": "\n".join(f"{e['title']}\n{b}" for e, b in zip(evidence, bodies))}


def run(samples: list[dict[str, Any]]) -> dict[str, Any]:
    from memgrove import Memory

    hits: dict[str, dict[Any, list[bool]]] = {r: defaultdict(list) for r in RULES}
    words: dict[str, list[int]] = {r: [] for r in ("old", "main", "new", "sentence")}
    same_day: dict[str, list[bool]] = {r: [] for r in RULES}     # a day in another format counts too
    base = baseline_picker()
    started = time.perf_counter()
    for sample in samples:
        turns = locomo.turns_of(sample)
        qs = [q for q in locomo.questions_of(sample, turns) if q.category in (1, 2, 3, 4) and q.answer]
        work = Path(tempfile.mkdtemp(prefix="memgrove-answer-first-"))
        mem = Memory.open(work, create=True, durable=False)
        try:
            mem.ingest(conversation=locomo.to_conversation(sample))
            for q in qs:
                shown = answers_for(mem, q.question, base)
                for r in RULES:
                    ok = rm.answer_in_text(q.answer, shown[r])
                    hits[r]["all"].append(ok)
                    hits[r][q.category].append(ok)
                    same_day[r].append(rm.answer_or_its_day_in_text(q.answer, shown[r]))
                for r in words:
                    words[r].append(rm.word_count(shown[r]))
        finally:
            pipe = getattr(mem, "_bench_pipe", None)
            if pipe is not None:
                pipe.close()
            mem.close()
            shutil.rmtree(work, ignore_errors=True)
        log(f"{sample['sample_id']}: {len(qs)} questions")

    def rate(xs: list[bool]) -> float:
        return round(100.0 * sum(xs) / len(xs), 1) if xs else 0.0

    groups = ["all", 1, 2, 3, 4]
    return {
        "conversations": len(samples),
        "questions": len(hits["old"]["all"]),
        "seconds": round(time.perf_counter() - started, 1),
        "rates": {r: {str(g): rate(hits[r][g]) for g in groups} for r in RULES},
        "rates_any_day_format": {r: rate(same_day[r]) for r in RULES},
        "counts": {str(g): len(hits["old"][g]) for g in groups},
        "mean_words": {r: round(sum(w) / len(w), 1) if w else 0.0 for r, w in words.items()},
    }


def render(rep: dict[str, Any]) -> str:
    names = {"old": "old rule: top entry's title and first sentence",
             "main": f"picker before issue 33 ({BASELINE_REV}), as shown",
             "new": "new rule: the answer as shown",
             "sentence": "new rule, the picked sentence alone",
             "reachable": "gold anywhere in the chosen entries"}
    groups = ("all", "1", "2", "3", "4")
    lines = [f"LoCoMo, {rep['conversations']} conversation(s), {rep['questions']} questions (categories 1–4), "
             f"{rep['seconds']} s", ""]
    lines += table(["gold answer in …", "all", "cat 1", "cat 2", "cat 3", "cat 4", "mean words"],
                   [[names[r], *(f"{rep['rates'][r][g]:.1f}%" for g in groups), rep["mean_words"].get(r, "—")]
                    for r in RULES] + [["questions", *(rep["counts"][g] for g in groups), ""]])
    if "rates_any_day_format" in rep:
        lines += ["", "A day in the gold written in the other order also counts (\"1 May 2023\" for \"May 1, 2023\"), all: "
                  + ", ".join(f"{names[r].split(':')[0]} {rep['rates_any_day_format'][r]:.1f}%" for r in RULES)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="locomo10.json (default: as benchmarks/locomo.py)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    samples = locomo.load_samples(args.data or locomo.default_data())[: args.conversations]
    rep = run(samples)
    print(json.dumps(rep, indent=2) if args.json else render(rep))
    return rep


if __name__ == "__main__":
    main()

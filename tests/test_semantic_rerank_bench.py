"""benchmarks/semantic_rerank.py: the fusions, the harness on a tiny conversation with a stand-in
encoder (tests/test_semantic_ranking.py tests the real one)."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from helpers.benchmarks import load_benchmark, load_harness, tiny_locomo_conversation

pytest.importorskip("bm25s", reason="the LoCoMo harness needs bm25s (the bench extra)")

sem = load_benchmark("semantic_rerank")
locomo = load_benchmark("locomo")
rm = load_harness("metrics")


class WordVectors:
    """A stand-in encoder: hashed word counts, unit length (texts sharing words point alike)."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, zlib.crc32(w.encode()) % 256] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_fused_weighs_the_cosine_against_the_share_of_the_top_score():
    scores, cos = [2.0, 1.8, 1.0], [0.1, 0.2, 0.9]
    assert sem.fused(scores, cos, 0.5) == [0, 1, 2]           # 1.05, 1.0, 0.95
    assert sem.fused(scores, cos, 1.0) == [2, 0, 1]           # 1.1, 1.1, 1.4: the tie keeps memgrove's order
    assert sem.fused([], [], 1.0) == []


def test_rrf_sums_reciprocal_ranks():
    assert sem.rrf([0, 1, 2], [2, 0, 1]) == [0, 2, 1]
    orders = sem.orders_of([3.0, 2.0, 1.0, 0.5], [0.0, 0.3, 0.9, 0.1])
    assert orders["memgrove"] == [0, 1, 2, 3] and orders["cos-only"] == [2, 1, 3, 0]
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders.values())
    assert set(orders) == {"memgrove", "cos-only", "rrf", *(f"score+{lam:g}cos" for lam in sem.LAMBDAS)}


def test_the_harness_scores_memgroves_own_order_and_the_re_sorted_ones():
    sample = {"sample_id": "tiny", "conversation": tiny_locomo_conversation(), "qa": []}
    conv = locomo.to_conversation(sample)
    asked = [sem.Asked(0, "What is the name of the greyhound Ana adopted?", "4", ["D1:1"], True),
             sem.Asked(1, "Which piece will Ben play at the recital?", "1", ["D2:3"], True),
             sem.Asked(2, "Something with no evidence", "5", [], False)]
    body = sem.run(iter([("tiny", conv, asked)]), WordVectors())
    recs = body["records"]
    assert [r["pooled"] for r in recs] == [True, True, False] and body["encoded_texts"] > 0
    # the memgrove arm is memgrove's own ranking, scored by the benchmarks' code
    mg = locomo.memgrove_system(conv, prefetch_limit=locomo.DEFAULT_PREFETCH)
    try:
        for q, rec in zip(asked[:2], recs):
            own = rm.score_items(mg(q.text).items[:sem.TOP], q.evidence, None, sem.KS, sem.BUDGETS)
            assert rec["arms"]["memgrove"] == {**{k: own[k] for k in sem.KEYS}, "top1_changed": False}
    finally:
        mg.close()
    s = sem.summary(recs)
    assert s["n"] == 2 and set(s["by_group"]) == {"1", "4"}
    assert s["overall"]["memgrove"]["R@10"] == 100.0          # two short sessions: everything is in the top 10
    assert s["top1_changed"]["memgrove"] == 0.0
    first = {r["index"]: r["arms"]["cos-only"]["top1_changed"] for r in recs}
    assert s["top1_changed"]["cos-only"] == round(100 * sum(first.values()) / 3, 1)
    machine = {"date": "d", "seed": 0, "cores": 2, "cpu": "c", "ram_gb": 1, "python": "3", "whoosh": "w",
               "memgrove": "t", "commit": "abc", "loadavg": [0]}
    md = sem.render({"title": "tiny", "command": "x", "machine": machine, "versions": {}, "wall_s": 1,
                     "encoded_texts": body["encoded_texts"], "encode_seconds": 0.1, "summary": s})
    assert "| score+0.5cos |" in md and "R@200w by group" in md and "first item changes: cos-only" in md

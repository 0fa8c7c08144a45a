"""benchmarks/longmemeval.py on tests/data/longmemeval_tiny.json (LongMemEval's format, 4 questions)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from helpers.benchmarks import load_benchmark, load_harness

TINY = Path(__file__).resolve().parent / "data" / "longmemeval_tiny.json"

pytest.importorskip("bm25s", reason="the LongMemEval benchmark's baselines need bm25s (the bench extra)")


rm = load_harness("metrics")
lme = load_benchmark("longmemeval")


def _questions() -> dict[str, dict]:
    return {q["question_id"]: q for q in json.loads(TINY.read_text(encoding="utf-8"))}


SSU, MS, SSA, ABS = "e47becba", "gpt4_d84a3211", "7161e7e2", "6a1eabeb_abs"


# -- the data and the official corpora --------------------------------------------------

def test_tiny_file_is_in_the_official_format():
    qs = lme.load_questions(TINY)
    assert len(qs) == 4 and {q["question_type"] for q in qs} == {
        "single-session-user", "multi-session", "single-session-assistant", "knowledge-update"}
    for q in qs:
        assert set(lme.REQUIRED) <= set(q)
        for sess in q["haystack_sessions"]:
            assert 4 <= len(sess) <= 6 and all(t["role"] in ("user", "assistant") for t in sess)
    chosen, abstention = lme.select(qs, None, None)
    assert [q["question_id"] for q in chosen] == [SSU, MS, SSA] and abstention == 1
    assert lme.select(qs, ["multi-session"], None) == ([qs[1]], 0)
    assert lme.select(qs, None, 1)[0] == [qs[0]]


def test_official_corpus_ids_and_gold():
    qs = _questions()
    hay = lme.haystack_of(qs[SSU])
    assert hay.session_docs == ["sharegpt_yywfCnM_0", "answer_280352e9", "ultrachat_447893"]
    # user turns only, 1-based over all turns; "answer" -> "noans" for turns of an answer session without has_answer
    assert hay.turn_docs == ["sharegpt_yywfCnM_0_1", "sharegpt_yywfCnM_0_3", "answer_280352e9_1", "noans_280352e9_3",
                             "noans_280352e9_5", "ultrachat_447893_1", "ultrachat_447893_3"]
    assert hay.turn_doc_keys[2] == "s1t0"
    assert hay.gold == {"session": ["answer_280352e9"], "turn": ["answer_280352e9_1"]}
    assert hay.scored and hay.evidence == ["s1t0"] and hay.evidence_source == "has_answer"

    ms = lme.haystack_of(qs[MS])
    assert ms.gold == {"session": ["answer_d84a3211_1", "answer_d84a3211_2"],
                       "turn": ["answer_d84a3211_1_1", "answer_d84a3211_2_1"]}

    # single-session-assistant: the evidence is an assistant turn, so the answer session becomes "noans" and the
    # question has no official gold (the official averages skip it); the budget metric still has its evidence
    ssa = lme.haystack_of(qs[SSA])
    assert ssa.session_docs[1] == "noans_4be1b6b4_1" and ssa.gold == {"session": [], "turn": []}
    assert not ssa.scored and ssa.evidence == ["s1t1"] and ssa.by_key["s1t1"].role == "assistant"
    assert lme.gold_check([qs[SSU], qs[MS], qs[SSA]]) == {"mismatches": 0, "examples": []}


def test_evidence_falls_back_to_answer_sessions():
    q = copy.deepcopy(_questions()[SSU])
    for sess in q["haystack_sessions"]:
        for t in sess:
            t.pop("has_answer", None)
    hay = lme.haystack_of(q)
    assert hay.evidence_source == "answer_sessions" and hay.evidence == [f"s1t{i}" for i in range(6)]
    assert not hay.scored and hay.session_docs[1] == "noans_280352e9"
    q["answer_session_ids"] = ["not_in_the_haystack"]
    hay = lme.haystack_of(q)
    assert hay.evidence_source == "none" and hay.evidence == []


def test_conversation_format():
    q = copy.deepcopy(_questions()[MS])
    q["haystack_sessions"][1][5]["content"] = "   "        # an empty turn: the curator refuses it
    conv, skipped = lme.to_conversation(lme.haystack_of(q))
    assert conv["id"] == MS and skipped == 1 and len(conv["messages"]) == 17
    assert conv["messages"][0] == {"id": "s0t0", "speaker": "user", "session": "answer_d84a3211_1",
                                   "time": "2023/06/01 (Thu) 17:30", "text": q["haystack_sessions"][0][0]["content"]}
    assert len({m["id"] for m in conv["messages"]}) == 17
    assert lme.parse_turn_key("s12t3") == (12, 3) and lme.parse_turn_key("D1:3") is None


# -- the metrics, by hand --------------------------------------------------------------

def _item(*segs: tuple[str, int]) -> rm.Item:
    return rm.Item(tuple(rm.Segment(i, w, "x " * w) for i, w in segs))


def test_metrics_hand_computed():
    """multi-session question, 2 evidence sessions (0 and 2), evidence user turns s0t0 and s2t0."""
    hay = lme.haystack_of(_questions()[MS])
    # entries (one message each): an assistant turn of distractor session 3, then the two evidence turns
    items = [_item(("s3t1", 600)), _item(("s0t0", 300)), _item(("s2t0", 500)), _item(("nonsense", 1))]
    assert lme.ranking(items, hay, "session") == [3, 0, 2]
    assert lme.ranking(items, hay, "turn") == [hay.doc_of_key["s0t0"], hay.doc_of_key["s2t0"]]   # no assistant turn
    s = lme.score(hay, items, lme.LEVELS)
    ses, turn = s["session"], s["turn"]
    assert ses["returned"] == 3 and turn["returned"] == 2
    # session level: relevances by rank [0, 1, 1]; ideal [1, 1, 0, 0]; the official dcg does not discount rank 2
    assert (ses["recall_any@1"], ses["recall_all@1"], ses["ndcg_any@1"]) == (0.0, 0.0, 0.0)
    assert (ses["recall_any@3"], ses["recall_all@3"]) == (1.0, 1.0)
    assert ses["ndcg_any@3"] == pytest.approx((0 + 1 / math.log2(2) + 1 / math.log2(3)) / (1 + 1))
    assert ses["ndcg_any@10"] == ses["ndcg_any@3"]
    # turn level: relevances [1, 1] -> perfect from k = 2 on; recall_all needs both
    assert (turn["recall_any@1"], turn["recall_all@1"], turn["ndcg_any@1"]) == (1.0, 0.0, 1.0)
    assert (turn["recall_all@3"], turn["ndcg_any@3"]) == (1.0, 1.0)
    # budgets: 600 + 300 fit 1,000 words, s2t0 (500) does not -> 1 of 2; at 2,000 both
    assert (s["R@1000w"], s["R@2000w"], s["R@4000w"]) == (0.5, 1.0, 1.0)
    assert s["lost"] == {"s0t0": "in_budget", "s2t0": "in_budget"}
    assert lme.score(hay, items[:1], lme.LEVELS)["lost"] == {"s0t0": "not_retrieved", "s2t0": "not_retrieved"}
    # nothing retrieved: everything 0, NDCG included
    empty = lme.score(hay, [], lme.LEVELS)
    assert all(empty["session"][m] == 0.0 for m in lme.METRICS) and empty["R@4000w"] == 0.0


def test_unscored_question_has_only_budget_recall():
    hay = lme.haystack_of(_questions()[SSA])
    s = lme.score(hay, [_item(("s1t1", 40))], lme.LEVELS)
    assert "session" not in s and "turn" not in s and s["R@1000w"] == 1.0


# -- baselines --------------------------------------------------------------------------

def test_bm25_baselines():
    hay = lme.haystack_of(_questions()[SSU])
    turns = lme.bm25_turns(hay)
    r = turns("What degree did I graduate with?")
    assert r.items[0].key == "answer_280352e9_1" and r.items[0].ids == ["s1t0"]
    assert r.items[0].text.startswith("user: I'm updating my resume")
    assert all(hay.by_key[it.ids[0]].role == "user" and len(it.segments) == 1 for it in r.items)
    sessions = lme.bm25_sessions(hay)
    r = sessions("What degree did I graduate with?")
    assert r.items[0].key == "answer_280352e9" and r.items[0].ids == [f"s1t{i}" for i in range(6)]  # all turns
    # indexed by user turns only (the official session corpus): an assistant-only word finds nothing
    assert sessions("parmesan").items == [] and turns("parmesan").items == []
    s = lme.score(hay, lme.bm25_turns(hay)("What degree did I graduate with?").items, lme.LEVELS)
    assert s["session"]["recall_any@1"] == 1.0 and s["turn"]["ndcg_any@1"] == 1.0


# -- end to end, cache -------------------------------------------------------------------

def _check_unit(d: dict, where: str) -> None:
    for k, v in d.items():
        if isinstance(v, dict):
            _check_unit(v, f"{where}.{k}")
        elif k.startswith(("recall_", "ndcg_", "R@")) or k == "filled_4000w":
            assert v is None or 0.0 <= v <= 1.0, f"{where}.{k} = {v}"


def test_end_to_end_and_cache(tmp_path, monkeypatch):
    from memgrove import Memory

    calls = []
    ingest = Memory.ingest
    monkeypatch.setattr(Memory, "ingest", lambda self, *a, **kw: calls.append(1) or ingest(self, *a, **kw))
    out, cache = tmp_path / "out", tmp_path / "cache"
    args = [str(TINY), "--out", str(out), "--cache", str(cache)]

    first = lme.main(args)
    saved = json.loads((out / "longmemeval_tiny.json").read_text())
    md = (out / "longmemeval_tiny.md").read_text()
    assert md.startswith("# memgrove LongMemEval retrieval benchmark")
    # the tiny haystacks hold far less than 4,000 words: no system can fill that budget, and the report says so
    assert "Budget filled at 4,000 words" in md and "memgrove 0.0%" in md
    assert saved["systems"]["memgrove"]["budget"]["overall"]["filled_4000w"] == 0.0
    assert len(calls) == 3 and first["memgrove"]["cache"]["curated"] == 3 and first["memgrove"]["cache"]["hits"] == 0
    assert len(list(cache.iterdir())) == 3
    assert not any((p / "memory" / ".memgrove" / "journal").exists() for p in cache.iterdir())
    # abstention left out everywhere; the assistant-evidence question only in the budget metric
    assert saved["config"]["abstention_excluded"] == 1
    assert [q["question_id"] for q in saved["questions"]] == [SSU, MS, SSA]
    assert saved["data"]["scored"] == 2
    assert saved["data"]["not_scored_no_user_evidence"] == {"single-session-assistant": 1}
    for s in lme.SYSTEMS:
        _check_unit(saved["systems"][s], s)
        for level in ("session", "turn"):
            if level in saved["systems"][s]:
                assert saved["systems"][s][level]["overall"]["n"] == 2
        assert saved["systems"][s]["budget"]["overall"]["n"] == 3
    assert "turn" not in saved["systems"]["bm25-sessions"]
    # the lexically obvious question: first hit is the evidence, for memgrove and the baselines
    ssu = saved["questions"][0]
    for s in ("memgrove", "bm25-turns"):
        assert ssu[s]["session"]["recall_any@1"] == 1.0 and ssu[s]["turn"]["recall_any@1"] == 1.0, s
        assert ssu[s]["R@1000w"] == 1.0
    assert ssu["bm25-sessions"]["session"]["recall_any@1"] == 1.0
    # bm25-turns returns user turns only: the assistant's answer is out of its reach
    ssa = saved["questions"][2]
    assert ssa["bm25-turns"]["R@4000w"] == 0.0 and "session" not in ssa["memgrove"]
    assert saved["systems"]["bm25-turns"]["budget"]["single-session-assistant"]["R@4000w"] == 0.0
    ratio = saved["ratios"]["session"]["bm25-sessions"]["overall"]["recall_any@1"]
    assert ratio == pytest.approx(saved["systems"]["memgrove"]["session"]["overall"]["recall_any@1"]
                                  / saved["systems"]["bm25-sessions"]["session"]["overall"]["recall_any@1"])

    # second run: every memory comes from the cache, nothing is curated, same scores
    calls.clear()
    second = lme.main(args + ["--no-write"])
    assert calls == [] and second["memgrove"]["cache"]["curated"] == 0 and second["memgrove"]["cache"]["hits"] == 3
    assert all(q["cached"] for q in second["questions"])
    for a, b in zip(first["questions"], second["questions"]):
        for s in lme.SYSTEMS:
            assert a[s] == b[s], (a["question_id"], s)
    # --no-cache curates again (and refreshes the cache)
    third = lme.main(args + ["--no-write", "--no-cache", "--types", "single-session-user"])
    assert len(calls) == 1 and third["memgrove"]["cache"]["curated"] == 1 and len(list(cache.iterdir())) == 3


def test_tiny_results_never_land_in_the_results_folder(capsys):
    before = sorted(p.name for p in lme.RESULTS.iterdir()) if lme.RESULTS.exists() else []
    with pytest.raises(SystemExit) as exc:
        lme.main([str(TINY)])
    assert "test fixture" in str(exc.value.code)
    assert (sorted(p.name for p in lme.RESULTS.iterdir()) if lme.RESULTS.exists() else []) == before


def test_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question_id": "x"}]))
    with pytest.raises(SystemExit, match="not LongMemEval's format"):
        lme.load_questions(bad)
    with pytest.raises(SystemExit, match="unknown"):
        lme.main([str(TINY), "--out", str(tmp_path), "--types", "multi-hop"])


def test_output_stem():
    stem = lme.output_stem
    assert stem(Path("longmemeval_s.json"), lme.DEFAULT_VARIANT, lme.DEFAULT_PREFETCH, None, None, 470) == "longmemeval"
    assert stem(Path("longmemeval_s_cleaned.json"), lme.DEFAULT_VARIANT, lme.DEFAULT_PREFETCH, None, 470, 470) == "longmemeval"
    assert stem(Path("longmemeval_oracle.json"), "verbatim-w3", 20, ["multi-session", "knowledge-update"], 10,
                470) == "longmemeval_oracle_verbatim-w3_p20_ms-ku_n10"

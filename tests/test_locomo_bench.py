"""benchmarks/locomo.py and benchmarks/harness/metrics.py on a tiny LoCoMo-format sample."""

from __future__ import annotations

import json

import pytest
from helpers.benchmarks import load_benchmark, load_harness, tiny_locomo_conversation

pytest.importorskip("bm25s", reason="the LoCoMo benchmark's baselines need bm25s (the bench extra)")


rm = load_harness("metrics")
locomo = load_benchmark("locomo")


def _sample() -> dict:
    conv = tiny_locomo_conversation()
    qa = [
        {"question": "What is the name of the greyhound Ana adopted?", "answer": "Pepper", "evidence": ["D1:1"],
         "category": 4},
        {"question": "Which instrument does Ben learn and where is his recital?", "answer": "cello; community hall",
         "evidence": ["D1:4", "D2:1"], "category": 1},
        {"question": "How old is Pepper?", "answer": "four", "evidence": ["D:1:3"], "category": 2},
        {"question": "Would Ana's mother like art?", "answer": "Likely yes; she got a watercolour",
         "evidence": ["D2:04", "D"], "category": 3},
        {"question": "What did Ben paint for his father?", "adversarial_answer": "a lake", "evidence": ["D2:4"],
         "category": 5},
        {"question": "What is Ana's favourite colour?", "answer": "blue", "evidence": ["D"], "category": 4},
    ]
    return {"sample_id": "conv-t1", "conversation": conv, "qa": qa}


# -- data -----------------------------------------------------------------------

def test_evidence_normalization():
    valid = {"D1:3", "D1:5", "D2:1", "D2:2", "D11:26"}
    ev = locomo.normalize_evidence(["D:1:3", "D1:05", "D2:1; D2:2", "D", "D9:9", "D2:1", "D:11:26"], valid)
    assert ev["ids"] == ["D1:3", "D1:5", "D2:1", "D2:2", "D11:26"]
    assert ev["malformed"] == ["D"]
    assert ev["unknown"] == ["D9:9"]
    assert locomo.parse_evidence_id("D30:05") == "D30:5"
    assert locomo.parse_evidence_id("D8:6;") is None


def test_conversation_format_and_questions():
    sample = _sample()
    conv = locomo.to_conversation(sample)
    assert conv["id"] == "conv-t1" and len(conv["messages"]) == 10
    m = conv["messages"][8]
    assert m == {"id": "D2:4", "speaker": "Ana", "session": "session_2", "time": "10:00 am on 20 May, 2023",
                 "text": "I painted a watercolour of the lake for my mother's birthday. "
                         "[shares a photo: a photo of a watercolour painting of a lake]"}
    qs = locomo.questions_of(sample, locomo.turns_of(sample))
    assert [q.evidence for q in qs] == [["D1:1"], ["D1:4", "D2:1"], ["D1:3"], ["D2:4"], ["D2:4"], []]
    assert qs[3].answer == "Likely yes" and qs[3].dropped["malformed"] == ["D"]
    assert qs[4].answer is None  # category 5: the adversarial answer is a trap, not looked for


# -- the metric --------------------------------------------------------------------

def _items():
    seg = rm.Segment
    return [rm.Item((seg("a1", 5, "one two three four five"), seg("a2", 5, "six seven eight nine ten"))),
            rm.Item((seg("b1", 20, "x " * 20),)),
            rm.Item((seg("c1", 2, "pepper dog"),))]


def test_budget_rule_hand_computed():
    items, gold = _items(), {"a2", "b1", "c1"}
    cut = rm.within_budget(items, 12)          # a1+a2 = 10 words; b1 (20) does not fit: stop, c1 never reached
    assert cut.ids == {"a1", "a2"} and cut.words == 10 and not cut.exhausted
    assert rm.recall(gold, cut.ids) == pytest.approx(1 / 3)
    assert rm.recall(gold, rm.within_budget(items, 4).ids) == 0.0     # a1 (5 words) does not fit 4
    assert rm.recall(gold, rm.within_budget(items, 30).ids) == pytest.approx(2 / 3)   # exactly 30: b1 fits
    full = rm.within_budget(items, 32)
    assert rm.recall(gold, full.ids) == 1.0 and full.exhausted
    assert rm.answer_in_text("Pepper!", full.text) and not rm.answer_in_text("pep", full.text)
    assert rm.ids_at_k(items, 1) == {"a1", "a2"} and rm.ids_at_k(items, 2) == {"a1", "a2", "b1"}
    assert [s.words for s in rm.even_segments(["x", "y"], "a b c d e")] == [3, 2]


def test_answer_normalization():
    assert rm.normalize_text("Caroline’s  Self-Care, LGBTQ+!") == "carolines selfcare lgbtq"
    assert rm.answer_in_text("7 May 2023", "we met on 7 May, 2023.")
    assert not rm.answer_in_text("May 2", "on 7 May 2023")


def test_longmemeval_metrics():
    ra, rall, nd = rm.evaluate_retrieval([2, 0, 1], ["a", "c"], ["a", "b", "c"], k=2)
    assert (ra, rall) == (1.0, 1.0) and nd == pytest.approx(1.0)
    # the official dcg divides rank i (1-based, i >= 2) by log2(i): ranks 1 and 2 are not discounted
    assert rm.evaluate_retrieval([1, 0, 2], ["a"], ["a", "b", "c"], k=2)[2] == pytest.approx(1.0)
    ra, rall, nd = rm.evaluate_retrieval([1, 2, 0], ["a", "b"], ["a", "b", "c"], k=3)
    assert (ra, rall) == (1.0, 1.0) and nd == pytest.approx((1 + 1 / 1.5849625) / 2, rel=1e-6)
    assert rm.evaluate_retrieval([1], ["a"], ["a", "b"], k=1) == (0.0, 0.0, 0.0)


def test_entry_segments_split_per_message():
    body = ("# Ana: Hi Ben!\n\n## Raw Concept\n\n**Timestamp:** t\n**Author:** Ana, Ben\n\n## Narrative\n\n"
            "**Ana** (t): Hi Ben! I adopted Pepper.\n\n**Ben** (t): Congratulations!\n\n**Ana** (t): She is four.\n")
    segs, how = locomo.entry_segments(locomo.entry_body("---\ntitle: x\n---\n" + body), ["D1:1", "D1:2", "D1:3"])
    assert how == "split" and [s.id for s in segs] == ["D1:1", "D1:2", "D1:3"]
    assert sum(s.words for s in segs) == rm.word_count(body)
    assert segs[1].text == "**Ben** (t): Congratulations!" and segs[0].text.startswith("# Ana")
    segs, how = locomo.entry_segments("no narrative here at all", ["D1:1", "D1:2"])
    assert how == "even" and [s.words for s in segs] == [3, 2]


# -- baselines ---------------------------------------------------------------------

def test_bm25_baselines():
    turns = locomo.turns_of(_sample())
    r = locomo.bm25_turns(turns)("greyhound adopted")
    assert r.items[0].ids == ["D1:1"] and r.items[0].text.startswith("Ana: Hi Ben!")
    assert all(len(it.segments) == 1 for it in r.items)
    s = locomo.bm25_sessions(turns)("cello recital community hall")
    assert [it.key for it in s.items][0] == "session_2"
    assert s.items[0].ids == [f"D2:{i}" for i in range(1, 6)]
    assert locomo.bm25_turns(turns)("zzz qqq").items == []


# -- end to end --------------------------------------------------------------------

def _check_unit(row: dict, where: str) -> None:
    """Every rate of a row (recall, answer in context, budget filled) is in [0, 1]."""
    rates = [k for k in row if k.startswith(("R@", "AIC@")) or k == "filled_1000w"]
    assert rates, where
    for k in rates:
        v = row[k]
        assert v is None or isinstance(v, bool) or 0.0 <= v <= 1.0, f"{where}.{k} = {v}"


def test_end_to_end(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    data = tmp_path / "locomo_tiny.json"
    data.write_text(json.dumps([_sample()]), encoding="utf-8")
    out = tmp_path / "out"
    report = locomo.main(["--data", str(data), "--out", str(out)])
    saved = json.loads((out / "locomo.json").read_text())
    assert (out / "locomo.md").read_text().startswith("# memgrove LoCoMo retrieval benchmark")
    assert saved["systems"].keys() == {"memgrove", "bm25-turns", "bm25-sessions"}
    for name, s in saved["systems"].items():
        for group, row in s.items():
            _check_unit(row, f"{name}.{group}")
    for q in saved["questions"]:
        for s in ("memgrove", "bm25-turns", "bm25-sessions"):
            _check_unit(q[s], f"question {q['index']} {s}")
    first = next(q for q in saved["questions"] if q["index"] == 0)   # "the greyhound Ana adopted": D1:1
    for s in ("memgrove", "bm25-turns"):
        assert first[s]["R@5"] == 1.0 and first[s]["R@1000w"] == 1.0 and first[s]["AIC@1000w"] is True
    mg = report["systems"]["memgrove"]
    assert mg["1-4"]["questions"] == 5 and mg["1-4"]["with_evidence"] == 4   # cat 5 not pooled; "D"-only excluded
    assert mg["5"]["with_evidence"] == 1 and mg["5"]["with_answer"] == 0
    assert report["data"]["excluded_no_evidence"] == {"4": 1}
    assert len(report["data"]["evidence_dropped"]["malformed"]) == 2
    assert report["memgrove"]["entries_total"] == 10 and report["memgrove"]["segmenting"].get("even", 0) == 0
    assert sum(report["memgrove"]["tiers"].values()) == 6
    # "How old is Pepper?" -> "She is four, ..." shares no word with it, but answers "How old is Pepper?"
    reach = report["lexical_reach"]
    assert reach["2"] == {"questions": 1, "own_words": 0.0, "with_reply_keywords": 1.0}
    assert reach["4"]["own_words"] == 1.0                         # "adopted a greyhound"
    assert reach["1-4"]["questions"] == 4 and 0 < reach["1-4"]["own_words"] < reach["1-4"]["with_reply_keywords"]
    assert "Lexical reach" in (out / "locomo.md").read_text()
    # the entries tier 3 would send a model, as reader views: fewer tokens than the whole files
    ctx = report["memgrove"]["llm_context_tokens"]
    assert ctx["direct_max_entries"] == 5 and 0 < ctx["sent"]["n"] == ctx["files"]["n"] <= 6
    assert 0 < ctx["sent"]["p50"] < ctx["files"]["p50"]
    assert "LLM context:" in (out / "locomo.md").read_text()
    assert "llm" not in report and "accuracy" not in (out / "locomo.md").read_text().lower().replace(
        "no answer accuracy is reported", "")


def test_window_variant_segments(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    sample = _sample()
    report = locomo.run([sample], variant=locomo.VARIANTS["verbatim-w3"], prefetch_limit=20, keep_questions=True)
    assert report["memgrove"]["entries_total"] == 4      # 5 + 5 messages in windows of 3 per session
    assert report["memgrove"]["segmenting"].get("even", 0) == 0
    first = next(q for q in report["questions"] if q["index"] == 0)
    assert first["memgrove"]["R@5"] == 1.0


def test_llm_needs_a_model(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    data = tmp_path / "locomo_tiny.json"
    data.write_text(json.dumps([_sample()]), encoding="utf-8")
    for flags in (["--llm"], ["--llm", "--verbatim"], ["--llm-curator"]):
        with pytest.raises(SystemExit) as exc:
            locomo.main(["--data", str(data), "--out", str(tmp_path / "o"), *flags])
        assert "MEMGROVE_MODEL" in str(exc.value.code)
    with pytest.raises(SystemExit) as exc:            # the verbatim curator is already the default
        locomo.main(["--data", str(data), "--out", str(tmp_path / "o"), "--verbatim"])
    assert "--verbatim goes with --llm" in str(exc.value.code)
    assert not (tmp_path / "o").exists()


def test_judge_prompt_and_labels():
    p = locomo.judge_prompt()
    assert p.startswith("Your task is to label an answer") and "<!--" not in p
    filled = p.format(question="Q?", gold_answer="G", generated_answer="A")
    assert "Question: Q?" in filled and "Gold answer: G" in filled and "Generated answer: A" in filled
    assert locomo.parse_label('Same topic. {"label": "CORRECT"}') == "CORRECT"
    assert locomo.parse_label("It differs. WRONG") == "WRONG"
    assert locomo.parse_label("no idea") is None


def test_llm_answers_with_a_scripted_model(monkeypatch):
    """The --llm path (answer, then judge) with a scripted chat model: accuracy is counted per category 1-4."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    # per question: an answer, then the judge's verdict; 5 questions of categories 1-4 have a gold answer
    replies = ["Pepper", 'Same dog. {"label": "CORRECT"}', "cello", "WRONG", "four", "CORRECT", "yes", "unsure",
               "blue", "It is not. WRONG"]
    model = FakeListChatModel(responses=replies)
    report = locomo.run([_sample()], variant=locomo.VARIANTS["verbatim-w1"], prefetch_limit=20, model=model,
                        llm_systems=["memgrove"], llm_budget=200)
    llm = report["llm"]["by_system"]["memgrove"]
    assert llm["by_category"]["1-4"] == {"n": 5, "accuracy": pytest.approx(2 / 5)}
    assert llm["by_category"]["4"]["n"] == 2 and llm["unparsed_labels"] == 1
    text = locomo.dump_json(report)
    assert json.loads(text)["llm_answers"][0]["answer"] == "Pepper"


def test_tree_overrides_name_their_own_result_files():
    """``--tree engine=tantivy`` must not overwrite the default run's locomo.json."""
    assert locomo.output_stem("verbatim-w1", 10, 10, False, False) == "locomo"
    assert locomo.output_stem("verbatim-w1", 10, 10, False, False,
                              tree=["engine=tantivy"]) == "locomo_engine-tantivy"
    assert locomo.output_stem("verbatim-w1", 2, 10, False, False,
                              tree=["engine=whoosh", "link_weight=0"]) == "locomo_engine-whoosh_link_weight-0_c2"


def test_tree_overrides_take_words_and_json():
    v = locomo.with_tree_overrides(locomo.VARIANTS[locomo.DEFAULT_VARIANT],
                                   ["engine=tantivy", "link_weight=0", "watch=false", "profile=\"benchmark\""])
    assert {k: v.tree[k] for k in ("engine", "link_weight", "watch", "profile")} == {
        "engine": "tantivy", "link_weight": 0, "watch": False, "profile": "benchmark"}


def test_a_day_in_another_order_is_the_same_answer():
    assert rm.day_of("May 1, 2023") == (2023, 5, 1) and rm.day_of("7 Jun 2023") == (2023, 6, 7)
    assert rm.day_of("May 2023") is None and rm.day_of("the week before 1 May 2023") is None
    assert rm.answer_or_its_day_in_text("May 1, 2023", "(Caroline, 1 May 2023; yesterday = 30 April 2023)")
    assert not rm.answer_or_its_day_in_text("May 1, 2023", "on 11 May 2023")
    assert not rm.answer_or_its_day_in_text("May 1, 2023", "on 1 May 2024")
    assert rm.answer_or_its_day_in_text("Pepper", "my dog Pepper")     # not a day: the plain rule

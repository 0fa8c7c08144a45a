"""benchmarks/beam.py on a tiny synthetic slice in BEAM's layout (two chats, user and assistant)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.benchmarks import load_benchmark, load_harness

pytest.importorskip("bm25s", reason="the BEAM benchmark's baselines need bm25s (the bench extra)")

rm = load_harness("metrics")
beam = load_benchmark("beam")

# a long reply that repeats the question's generic words, as assistants do
REPLY = ("Congratulations on the greyhound you adopted! What name did you give her? I would give an adopted "
         "greyhound a short name. What a newly adopted greyhound needs: " + "a calm routine, short walks, patience. " * 6)


def _chat() -> list[dict]:
    s1 = [[{"role": "user", "id": 0, "time_anchor": "March-15-2024", "index": "1,1",
            "content": "I adopted a greyhound from the shelter and named her Pepper. ->-> 1,1"},
           {"role": "assistant", "id": 1, "content": REPLY}],
          [{"role": "user", "id": 2, "index": "1,2", "content": "My cello recital is at the community hall. ->-> 1,2"},
           {"role": "assistant", "id": 3, "content": "Good luck with the recital! ->->  1,2"}]]
    s2 = [[{"role": "user", "id": 4, "index": "2,1", "content": "The recital moved to the old chapel. ->-> 2,1)"},
           {"role": "assistant", "id": 5, "content": "Noted: the recital is now at the old chapel."}]]
    return [{"batch_number": 1, "time_anchor": None, "turns": s1}, {"batch_number": 2, "time_anchor": None, "turns": s2}]


def _questions() -> dict:
    return {
        "abstention": [{"question": "What breed is my cat?", "ideal_response": "Not mentioned."}],
        "information_extraction": [{"question": "What name did I give the greyhound I adopted?",
                                    "answer": "Pepper", "source_chat_ids": [0]}],
        "knowledge_update": [{"question": "Where is my cello recital?", "answer": "the old chapel",
                              "source_chat_ids": {"original_info": [2], "updated_info": [4]}}],
        "event_ordering": [{"question": "In what order did I mention the greyhound and the recital?",
                            "answer": "greyhound, then recital", "source_chat_ids": [0, 2, 99]}],
        "summarization": [{"question": "Summarize our chats.", "ideal_summary": "...", "source_chat_ids": []}],
    }


def _write(root: Path, n: int, chat: list[dict], truncated: list[dict] | None = None) -> None:
    d = root / "100K" / str(n)
    (d / "probing_questions").mkdir(parents=True)
    (d / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    if truncated is not None:
        (d / "chat_trunecated.json").write_text(json.dumps(truncated), encoding="utf-8")
    (d / "probing_questions" / "probing_questions.json").write_text(json.dumps(_questions()), encoding="utf-8")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "beam"
    _write(root, 1, _chat())
    longer = _chat()
    longer.append({"batch_number": 3, "time_anchor": None, "turns": [[
        {"role": "user", "id": 6, "content": "Past the truncation point."},
        {"role": "assistant", "id": 7, "content": "So it is."}]]})
    _write(root, 2, longer, truncated=_chat())
    return root


# -- data -----------------------------------------------------------------------

def test_messages_markers_times_and_roles(data):
    chat = beam.load_chat(data / "100K" / "1", "100K")
    texts = {m.id: m.text for m in chat.messages}
    assert texts["0"] == "I adopted a greyhound from the shelter and named her Pepper."
    assert texts["3"] == "Good luck with the recital!"                 # the assistant's copy of the marker
    assert texts["4"] == "The recital moved to the old chapel."        # "->-> 2,1)": the stray parenthesis too
    assert [m.time for m in chat.messages[:4]] == ["March 15, 2024"] * 4   # the session's anchor, on every message
    assert chat.messages[4].time is None and chat.messages[4].session == "session_2"
    conv = beam.to_conversation(chat.id, chat.messages)
    assert conv["id"] == "beam-100k-1"
    assert conv["messages"][1] == {"id": "1", "speaker": "assistant", "role": "assistant", "text": REPLY.strip(),
                                   "session": "session_1", "time": "March 15, 2024"}
    assert "time" not in conv["messages"][4]


def test_evidence_and_chat_file(data):
    assert beam.evidence_ids([3, 1, 3]) == ["3", "1"]
    assert beam.evidence_ids({"original_info": [86], "updated_info": [114, 86]}) == ["86", "114"]
    assert beam.evidence_ids([[5], [6, None]]) == ["5", "6"] and beam.evidence_ids(None) == []
    chat = beam.load_chat(data / "100K" / "1", "100K")
    qs = {q.qtype: q for q in chat.questions}
    assert qs["knowledge_update"].evidence == ["2", "4"]
    assert qs["event_ordering"].evidence == ["0", "2"] and qs["event_ordering"].dropped == ["99"]
    assert qs["abstention"].evidence == [] and qs["summarization"].evidence == []
    # BEAM's own truncated file wins where it exists, unless --full-chats
    assert beam.load_chat(data / "100K" / "2", "100K").path.name == "chat_trunecated.json"
    assert len(beam.load_chat(data / "100K" / "2", "100K", full=True).messages) == 8
    assert beam.readable_anchor("March-15-2024") == "March 15, 2024"


# -- scoring by role ----------------------------------------------------------------

def test_session_recall_and_conflations():
    seg = rm.Segment
    items = [rm.Item((seg("a", 3, "the current transport museum"),)), rm.Item((seg("u", 2, "two"),))]
    sessions = {"a": "session_1", "u": "session_2", "v": "session_3"}
    q = beam.Question("c", 0, "multi_session_reasoning", "How many publications do my kids currently read?",
                      ["u", "v"], [])
    out = beam.score(q, items, {"a": "assistant", "u": "user", "v": "user"}, sessions, beam.Conflation())
    assert out["S@5"] == 0.5 and out["S@5-all"] == 0.0 and out["R@5"] == 0.5
    # "currently" meets "current" only through the stemmer; "kids" meets "children" through the word-form
    # table; "publications" no longer meets "public" (the analyzer's stem exceptions)
    conf = beam.Conflation()
    assert conf.pairs(conf.forms(q.question), "Current public transport and the Children's Museum") == [
        "currently → current", "kids → children's"]
    assert conf.pairs(conf.forms(q.question), "She read two publications; the kid read one") == []
    assert out["conflated_top5"][0] == {"evidence": False, "pairs": ["currently → current"]}
    assert beam.inflection("days", "day") and beam.inflection("running", "run") and beam.inflection("used", "use")
    assert beam.inflection("libraries", "library") and not beam.inflection("currently", "current")


def test_parts_of_one_message_count_once():
    locomo = load_benchmark("locomo")
    # two part entries of message 7 (each names the message in its sources) and one of message 8
    parts = [locomo.entry_segments("# assistant (part 1 of 2)\n\nfirst half of the reply", ["7"])[0],
             locomo.entry_segments("# assistant (part 2 of 2)\n\nsecond half", ["7"])[0],
             locomo.entry_segments("# user\n\nthanks", ["8"])[0]]
    items = [rm.Item(segs, key=f"p{i}") for i, segs in enumerate(parts)]
    out = rm.score_items(items, ["7", "8"], None, (2, 3), (12, 100))
    assert out["R@2"] == 0.5 and out["R@3"] == 1.0          # message 7 once, though two items hold it
    assert out["R@12w"] == 0.5 and out["R@100w"] == 1.0    # part 1 (11 words) fits, part 2 does not


def test_score_by_role_hand_computed():
    seg = rm.Segment
    items = [rm.Item((seg("a", 150, "x " * 150),)), rm.Item((seg("u", 10, "y " * 10),)),
             rm.Item((seg("v", 30, "z " * 30),))]
    roles = {"a": "assistant", "u": "user", "v": "user"}
    q = beam.Question("c", 0, "information_extraction", "?", ["u"], [])
    out = beam.score(q, items, roles)
    # 100 words: the 150-word reply ranked first does not fit, so the budget buys nothing
    assert out["words@100w"] == 0 and out["blocked_by@100w"] == "assistant" and out["R@100w"] == 0.0
    assert out["words@200w"] == 190 and out["assistant_words@200w"] == 150 and out["blocked_by@200w"] is None
    assert out["found@200w"] == {"user": [1, 1], "assistant": [0, 0]} and out["R@200w"] == 1.0
    assert out["wrong_top5"] == {"assistant": 1, "user": 1} and out["top1_role"] == "assistant"
    assert out["top1_evidence"] is False
    cut = rm.within_budget(items, 170)
    assert [s.id for s in cut.segments] == ["a", "u"] and cut.words == 160


def test_baselines_by_role(data):
    msgs = beam.load_chat(data / "100K" / "1", "100K").messages
    turns = beam.bm25_turns(msgs)("What name did I give the greyhound I adopted?")
    assert turns.items[0].ids == ["1"]           # flat BM25: the long reply that repeats the words wins
    assert turns.items[0].text.startswith("Assistant: Congratulations")
    users = beam.bm25_turns(msgs, ("user",))("What name did I give the greyhound I adopted?")
    assert users.items[0].ids == ["0"] and all(it.ids[0] in {"0", "2", "4"} for it in users.items)
    sessions = beam.bm25_sessions(msgs)("recital chapel")
    assert sessions.items[0].key == "session_2" and sessions.items[0].ids == ["4", "5"]


# -- end to end --------------------------------------------------------------------

def _rates(row: dict, where: str) -> None:
    keys = [k for k in row if k.startswith(("R@", "S@", "assistant_share@", "used@", "empty@", "blocked_by_assistant@"))]
    assert keys, where
    for k in keys:
        assert row[k] is None or 0.0 <= row[k] <= 1.0, f"{where}.{k} = {row[k]}"


def test_end_to_end(data, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    out = tmp_path / "out"
    report = beam.main(["--data", str(data), "--chats", "1", "--out", str(out)])
    saved = json.loads((out / "beam_c1.json").read_text())
    md = (out / "beam_c1.md").read_text()
    assert md.startswith("# memgrove BEAM retrieval benchmark") and "assistant share @200w" in md
    assert saved["systems"].keys() == set(beam.SYSTEMS)
    for name, s in saved["systems"].items():
        for group, row in s.items():
            _rates(row, f"{name}.{group}")
    mg = report["systems"]["memgrove"]
    # abstention left out; summarization's empty evidence is not scored; 3 questions pooled
    assert mg["overall"]["questions"] == 4 and mg["overall"]["with_evidence"] == 3
    assert mg["abstention"]["with_evidence"] == 0 and report["data"]["without_evidence"] == {
        "abstention": 1, "summarization": 1}
    assert len(report["data"]["evidence_dropped"]) == 1 and report["data"]["evidence_roles"] == {"user": 5}
    first = next(q for q in saved["questions"] if q["qtype"] == "information_extraction")
    assert first["memgrove"]["R@5"] == 1.0 and first["bm25-user-turns"]["R@1000w"] == 1.0
    # the user-only baseline never spends a word on the assistant; the others can
    assert report["systems"]["bm25-user-turns"]["overall"]["assistant_share@1000w"] == 0.0
    assert report["systems"]["bm25-turns"]["overall"]["assistant_share@1000w"] > 0.0
    assert report["by_role"]["bm25-turns"]["wrong_top1_roles"].get("assistant", 0) >= 1
    assert set(report["paired"]) == set(beam.BASELINES)
    assert "paired_simulated" not in report and "A role prior, simulated" not in md   # retired (HISTORY.md)
    assert report["paired"]["bm25-turns"]["R@10"]["n"] == 3
    assert mg["overall"]["S@5-all"] is not None and mg["abstention"]["S@5"] is None
    assert set(report["by_role"]["memgrove"]["conflated_top5"]) == {"evidence", "wrong"}
    assert report["memgrove"]["entries_total"] == 6 and report["latency_ms"]["memgrove"]["n"] == 5


def test_the_report_says_which_meaning_ran_and_can_be_named(data, tmp_path):
    """run_all.py's full BEAM 500K pins meaning off and keeps the report's name (beam_500k), and the report says
    the meaning setting; a report from before config.meaning says nothing of it."""
    run_all = load_benchmark("run_all")
    assert run_all.BEAM_500K[1:] == ["--tier", "500K", "--tree", "semantic_weight=0", "--name", "beam_500k"]
    beam.main(["--data", str(data), "--chats", "1", "--tree", "semantic_weight=0", "--name", "beam_500k",
               "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "beam_500k.json").read_text())
    assert saved["config"]["meaning"] == {"semantic_weight": 0, "default": False}
    assert "ranking by meaning off (`semantic_weight` 0, set for this run)" in (tmp_path / "beam_500k.md").read_text()
    report = load_harness("report")
    on = report.meaning_phrase({"meaning": {"semantic_weight": 0.5, "default": True}})
    assert on == ", ranking by meaning on (`semantic_weight` 0.5, the default where the embedding model is installed)"
    assert report.meaning_phrase({}) == ""
    assert report.meaning({"link_weight": 0})["default"] is True


def test_bad_arguments(data, tmp_path):
    with pytest.raises(SystemExit, match="--chats must be at least 1"):
        beam.main(["--data", str(data), "--chats", "0", "--no-write"])
    with pytest.raises(SystemExit, match="tier '1M' not found"):
        beam.main(["--data", str(data), "--tier", "1M", "--no-write"])


def test_paired_runs_of_two_reports():
    pr = load_harness("paired")

    def report(r10: list[float]) -> dict:
        return {"questions": [{"chat": "c", "index": i, "qtype": t, "memgrove": {"R@5": v, "R@10": v}}
                              for i, (t, v) in enumerate(zip(("a", "a", "b"), r10))]
                + [{"chat": "c", "index": 9, "qtype": "abstention", "memgrove": {}}]}

    out = pr.paired(report([0.0, 1.0, 0.5]), report([1.0, 1.0, 0.0]))
    assert out["overall"]["n"] == 3 and out["overall"]["R@10"]["wins"] == 1 and out["overall"]["R@10"]["losses"] == 1
    assert out["overall"]["R@10"]["mean_diff"] == pytest.approx(0.5 / 3) and out["a"]["R@10"]["new"] == 1.0
    assert pr.paired(report([0.0, 1.0, 0.5]), report([1.0, 1.0, 0.0]), skip=("b",))["overall"]["n"] == 2
    assert "| overall | 3 |" in pr.markdown(out)


def test_compare_arms_match_separate_runs(data, tmp_path, monkeypatch):
    """Each arm of one --compare run scores as a run of its own: the cache is cleared and the signals
    the previous arm's answers recorded are forgotten before the next."""
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    out = tmp_path / "out"
    arms = ["", "gap_ratio=0.99,link_weight=0", "proximity_weight=0.6"]
    report = beam.main(["--data", str(data), "--out", str(out)] + [x for a in arms for x in ("--compare", a)])
    saved = json.loads((out / "beam_compare.json").read_text())
    md = (out / "beam_compare.md").read_text()
    assert list(saved["arms"]) == ["as is", "gap_ratio=0.99,link_weight=0", "proximity_weight=0.6"]
    assert saved["arms"]["gap_ratio=0.99,link_weight=0"] == {"gap_ratio": 0.99, "link_weight": 0}
    assert set(report["paired"]) == {"gap_ratio=0.99,link_weight=0", "proximity_weight=0.6"}
    assert "| as is |" in md and "Paired against `as is`" in md and "| bm25-user-turns |" in md
    assert report["latency_ms"]["as is"]["n"] == 10     # 5 questions in each of the 2 chats
    separate = {"as is": [], "gap_ratio=0.99,link_weight=0": ["--tree", "gap_ratio=0.99", "--tree", "link_weight=0"]}
    for arm, tree in separate.items():
        alone = beam.main(["--data", str(data), "--no-write"] + tree)
        for group, row in alone["systems"]["memgrove"].items():
            for k in beam.RECALL_KEYS:
                assert report["systems"][arm][group][k] == row[k], (arm, group, k)
    assert report["systems"]["bm25-user-turns"]["overall"] == alone["systems"]["bm25-user-turns"]["overall"]
    q = saved["questions"][0]
    assert set(q) >= {"as is", "proximity_weight=0.6", "bm25-user-turns", "bm25-turns"}


def test_compare_can_embed_every_entry_before_the_arms(data, tmp_path, monkeypatch):
    """--embed computes every entry's vector after curating (the real model), so the arm that ranks by
    meaning searches a warm tree; the warm-up's time is reported, and the arms score as without it."""
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    arms = ["--compare", "", "--compare", "semantic_weight=0.5"]
    warm = beam.main(["--data", str(data), "--out", str(tmp_path)] + arms + ["--embed"])
    md = (tmp_path / "beam_compare_embed.md").read_text()
    assert warm["embedded"]["entries"] > 0 and "Every entry's vector computed after curating" in md
    cold = beam.main(["--data", str(data), "--no-write"] + arms)
    assert "embedded" not in cold
    assert warm["systems"]["semantic_weight=0.5"] == cold["systems"]["semantic_weight=0.5"]


def test_compare_refuses_what_it_cannot_vary(data):
    with pytest.raises(SystemExit, match="part_words is read when a chat is curated"):
        beam.main(["--data", str(data), "--no-write", "--compare", "", "--compare", "part_words=40"])
    with pytest.raises(SystemExit, match="unknown \\[tree\\] setting no_such_weight"):
        beam.main(["--data", str(data), "--no-write", "--compare", "no_such_weight=1"])
    with pytest.raises(SystemExit, match="proximity_weight=3: proximity_weight must be between 0 and 2"):
        beam.main(["--data", str(data), "--no-write", "--compare", "", "--compare", "proximity_weight=3"])
    with pytest.raises(SystemExit, match="the same arm twice"):
        beam.main(["--data", str(data), "--no-write", "--compare", "", "--compare", ""])


@pytest.mark.parametrize("mode", ["run", "compare"])
def test_compare_leaves_no_signals_for_the_next_arm(data, monkeypatch, mode):
    """The answers of a run raise their entries' importance (which reorders near-ties of later
    questions); --compare forgets it after each arm, so every arm starts from the same memory."""
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    left: dict[str, int] = {}
    retrievers = load_harness("retrievers")
    close = retrievers.MemgroveRetriever.close

    def spy(self):
        left[self.conv_id] = sum(s.access_count for s in self.mem.tree.signals.get_many(list(self.bodies)).values())
        close(self)

    monkeypatch.setattr(retrievers.MemgroveRetriever, "close", spy)
    arms = ["--compare", "", "--compare", "gap_ratio=0.5"] if mode == "compare" else []
    args = ["--data", str(data), "--no-write"] + arms
    beam.main(args)
    assert left and (all(v == 0 for v in left.values()) if mode == "compare" else all(v > 0 for v in left.values()))

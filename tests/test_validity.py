"""Temporal validity: SUPERSEDE closes a fact a newer entry replaced; search ranks and labels it."""

from __future__ import annotations

import json
from datetime import date

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.entries import validity
from memgrove.tree.base.errors import BatchRejected

CURRENT_Q = "Which port does the staging database listen on?"
PAST_Q = "Which port did the staging database use before April?"
CHATS = [("chat_jan", "2026-01-10T10:00:00Z", "The staging database listens on port 5432."),
         ("chat_mar", "2026-03-02T10:00:00Z", "We moved it: the staging database now listens on port 6543."),
         ("chat_apr", "2026-04-05T10:00:00Z", "Heads up, the staging database listens on port 7000 from today.")]


def _chat(conv: str, at: str, text: str) -> dict:
    return {"id": conv, "messages": [
        {"id": "m1", "speaker": "Ana", "text": "Quick infra update for everyone.", "time": at},
        {"id": "m2", "speaker": "Ana", "text": text, "time": at}]}


def _port_entries(mem: Memory) -> list[str]:
    """The three messages stating the port, oldest first (the verbatim curator's entries)."""
    paths = mem.tree.entry_paths()
    return [next(p for p in paths if f"/{conv}/" in p and p.endswith("m2.md")) for conv, _, _ in CHATS]


def _ok(mem: Memory) -> None:
    report = mem.doctor()
    assert report.ok and not report.warnings, (report.problems, report.warnings)


@pytest.fixture
def chats(mem: Memory) -> list[str]:
    for conv in CHATS:
        mem.ingest(conversation=_chat(*conv))
    return _port_entries(mem)


def _supersede_all(mem: Memory, old: list[str]) -> None:
    mem.curate([{"op": "SUPERSEDE", "path": old[0], "by": old[1], "reason": "the port changed in March"},
                {"op": "SUPERSEDE", "path": old[1], "by": old[2], "reason": "the port changed in April"}])


def test_after_three_chats_the_current_port_ranks_first_and_the_old_ones_stay_findable(mem, chats):
    _supersede_all(mem, chats)
    hits = mem.search(CURRENT_Q)
    assert hits[0].path == chats[2] and "7000" in hits[0].excerpt and not hits[0].label
    closed = {h.path: h for h in hits if h.path in chats[:2]}
    assert set(closed) == set(chats[:2])
    assert all(hits.index(h) > 0 for h in closed.values())
    assert closed[chats[0]].label.startswith("(until 2 March 2026; since then: ")
    assert closed[chats[1]].label.startswith("(until 5 April 2026; since then: ")
    assert closed[chats[1]].excerpt.startswith(closed[chats[1]].label)
    assert closed[chats[1]].to_dict()["superseded_by"] == chats[2]
    # a question about the past puts the value that held then above the one that replaced it
    past = [h.path for h in mem.search(PAST_Q)]
    assert past[0] == chats[1] and chats[0] in past[:4]
    assert mem.search("What was the staging database port previously?")[0].path == chats[1]
    assert mem.search("Which port did the staging database use in February 2026?")[0].path == chats[0]
    for q in ("What was the staging database port previously?", "Which port did staging use until March?",
              "What was the staging database port in February 2026?"):
        assert validity.keeps_rank(q, date(2026, 3, 2)), q
    answer = mem.query(CURRENT_Q)
    assert "7000" in answer.answer and "5432" not in answer.answer
    _ok(mem)


def test_the_answer_cache_serves_no_stale_answer_after_a_supersede_or_an_archive(mem):
    port = {"op": "ADD", "path": "ops/staging/db_port.md", "title": "Staging database port",
            "content": "The staging database listens on port 5432.", "reason": "said"}
    mem.curate([port])
    first = mem.query(CURRENT_Q)
    assert first.tier == 2 and "5432" in first.answer and mem.query(CURRENT_Q).cached
    mem.curate([{"op": "ADD", "path": "ops/staging/db_port_march.md", "title": "Staging database port since March",
                 "content": "The staging database listens on port 6543.", "reason": "it moved"},
                {"op": "SUPERSEDE", "path": "ops/staging/db_port.md", "by": "ops/staging/db_port_march.md",
                 "reason": "it moved"}])
    after = mem.query(CURRENT_Q)
    assert not after.cached and "6543" in after.answer and "5432" not in after.answer
    mem.curate([{"op": "DELETE", "path": "ops/staging/db_port_march.md", "reason": "called off"}])
    assert "5432" in mem.query(CURRENT_Q).answer and mem.query(CURRENT_Q).cached
    mem.curate([{"op": "ARCHIVE", "path": "ops/staging/db_port.md", "reason": "no staging any more"}])
    gone = mem.query(CURRENT_Q)
    assert not gone.cached and "5432" not in gone.answer


def test_a_closed_entry_is_labelled_when_quoted_by_the_cli(mem, chats, monkeypatch):
    _supersede_all(mem, chats)
    monkeypatch.setenv("MEMGROVE_HOME", str(mem.home))
    out = CliRunner().invoke(cli, ["search", "staging database port 5432", "--no-server"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "(until 2 March 2026; since then: " in " ".join(out.output.split())


def test_supersede_writes_the_keys_in_frontmatter_and_undo_restores_both_files_exactly(mem, chats, snapshot):
    before = snapshot()
    res = mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "moved",
                       "since": "2026-03-01"}])[0]
    assert res.status == "superseded" and res.id
    old, new = mem.read(chats[0]), mem.read(chats[1])
    assert old.extra["supersededBy"] == chats[1] and old.extra["validUntil"] == "2026-03-01"
    assert new.extra["supersedes"] == [chats[0]]
    assert old.body == mem.read(chats[0]).body and not validity.is_current(old) and validity.is_current(new)
    again = mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "moved", "since": "2026-03-01"}])
    assert again[0].status == "unchanged"
    mem.undo(res.id)
    after = snapshot()
    assert {k: v for k, v in after.items() if k != "<journal>"} == {k: v for k, v in before.items() if k != "<journal>"}
    _ok(mem)


def test_valid_until_defaults_to_the_day_the_newer_entry_is_about(mem, chats):
    mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[2], "reason": "changed"}])
    assert mem.read(chats[0]).extra["validUntil"] == "2026-04-05"


@pytest.mark.parametrize("op, expected", [
    ({"by": "nowhere/at_all/x.md"}, "the newer entry nowhere/at_all/x.md ('by') does not exist"),
    ({"path": "nowhere/at_all/x.md"}, "SUPERSEDE: nowhere/at_all/x.md does not exist"),
    ({"by": "@0"}, "an entry cannot replace itself"),
    ({"since": "last week"}, "'since' must be an ISO date"),
    ({"content": "new text"}, "SUPERSEDE changes no entry's text"),
    ({"by": None}, "SUPERSEDE needs 'by'"),
])
def test_supersede_refuses_with_a_message_saying_what_to_fix(mem, chats, op, expected):
    d = {"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "changed", **op}
    d = {k: (chats[0] if v == "@0" else v) for k, v in d.items() if v is not None}
    with pytest.raises(BatchRejected) as exc:
        mem.curate([d])
    assert expected in str(exc.value)


def test_an_entry_superseded_by_one_is_not_superseded_by_another_nor_in_a_loop(mem, chats, snapshot):
    mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "changed"}])
    before = snapshot()
    with pytest.raises(BatchRejected, match=f"already superseded by {chats[1]}"):
        mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[2], "reason": "changed"}])
    with pytest.raises(BatchRejected, match="is itself superseded by"):
        mem.curate([{"op": "SUPERSEDE", "path": chats[1], "by": chats[0], "reason": "changed"}])
    # all or nothing: a valid op beside an invalid one writes nothing
    with pytest.raises(BatchRejected):
        mem.curate([{"op": "SUPERSEDE", "path": chats[1], "by": chats[2], "reason": "changed"},
                    {"op": "ARCHIVE", "path": "no/such/entry.md", "reason": "x"}])
    assert snapshot() == before


def test_a_new_fact_and_the_supersede_of_the_old_one_go_in_one_batch(mem):
    mem.curate([{"op": "ADD", "path": "ops/staging/db_port.md", "title": "Staging database port",
                 "content": "The staging database listens on port 5432.", "reason": "said"}])
    res = mem.curate([
        {"op": "UPSERT", "path": "ops/staging/db_port_6543.md", "title": "Staging database port (March)",
         "content": "The staging database listens on port 6543.", "reason": "it moved"},
        {"op": "SUPERSEDE", "path": "ops/staging/db_port.md", "by": "ops/staging/db_port_6543.md",
         "since": "2026-03-02", "reason": "it moved"}])
    assert [r.status for r in res] == ["added", "superseded"]
    hit = next(h for h in mem.search("staging database port 5432") if h.path == "ops/staging/db_port.md")
    assert hit.label == "(until 2 March 2026; since then: Staging database port (March))"


def test_merge_and_delete_keep_the_validity_keys_true(mem, chats):
    _supersede_all(mem, chats)
    # folding the oldest fact into its replacement: the replacement stays current and forgets it
    mem.curate([{"op": "MERGE", "path": chats[0], "merge_into": chats[1], "reason": "dedupe"}])
    mid = mem.read(chats[1])
    assert mid.extra["supersededBy"] == chats[2] and "supersedes" not in mid.extra
    # deleting the newest fact: the one it closed is current again, and says so
    mem.curate([{"op": "DELETE", "path": chats[2], "reason": "that move was called off"}])
    assert validity.is_current(mem.read(chats[1])) and "validUntil" not in mem.read(chats[1]).extra
    _ok(mem)


def test_merging_a_newer_entry_away_points_what_it_closed_at_the_merged_one(mem, chats):
    mem.curate([{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "changed"}])
    mem.curate([{"op": "MERGE", "path": chats[1], "merge_into": chats[2], "reason": "the same update"}])
    assert mem.read(chats[0]).extra["supersededBy"] == chats[2]
    assert mem.read(chats[2]).extra["supersedes"] == [chats[0]]
    assert validity.is_current(mem.read(chats[2]))
    _ok(mem)


def test_the_ranking_step_brings_the_replacement_a_search_did_not_find():
    closed = {"a/b/old.md": ("a/b/new.md", date(2026, 3, 2))}
    order = [("a/b/old.md", 0.9), ("a/b/other.md", 0.5)]
    by = lambda paths: {p: closed[p][0] for p in paths if p in closed}  # noqa: E731
    assert validity.with_validity("what is the port?", order, closed, by) == [
        ("a/b/new.md", 0.9), ("a/b/old.md", 0.9), ("a/b/other.md", 0.5)]
    assert validity.with_validity("what was the port before?", order, closed, by) == order
    assert validity.with_validity("what was the port on 1 March 2026?", order, closed, by) == order
    loop = lambda paths: {p: "a/b/old.md" for p in paths}  # noqa: E731 - a hand edit made a loop
    assert validity.with_validity("what is the port?", order, closed, loop) == order


def test_for_a_question_about_the_past_the_value_that_held_then_goes_above_its_replacement():
    # v1 -> v2 -> v3 (current); v1 held until 2 March, v2 until 5 April
    closed = {"a/b/v1.md": ("a/b/v2.md", date(2026, 3, 2)), "a/b/v2.md": ("a/b/v3.md", date(2026, 4, 5))}
    by = lambda paths: {p: closed[p][0] for p in paths if p in closed}  # noqa: E731
    order = [("a/b/v3.md", 0.9), ("a/b/other.md", 0.6), ("a/b/v2.md", 0.5), ("a/b/v1.md", 0.4)]
    paths = lambda q: [p for p, _ in validity.with_validity(q, order, closed, by)]  # noqa: E731
    # no date: the last value before the current one
    assert paths("what was the port previously?") == ["a/b/v2.md", "a/b/v3.md", "a/b/other.md", "a/b/v1.md"]
    # a date: the value that held on it
    assert paths("what was the port on 1 March 2026?")[:2] == ["a/b/v1.md", "a/b/v3.md"]
    assert paths("what was the port on 20 March 2026?")[:2] == ["a/b/v2.md", "a/b/v3.md"]
    # a question about now keeps the current value first, the closed ones below it
    assert paths("what is the port?")[0] == "a/b/v3.md"


@pytest.mark.parametrize("question, past", [
    ("Which port did staging use before March?", True), ("What was the port previously?", True),
    ("Where did Ana use to live?", True), ("What was the old address?", True),
    ("How old is Ana?", False), ("Which port does staging use?", False),
    ("Does staging still listen on 5432 any more?", False), ("Which port does the app use to connect?", False),
])
def test_questions_about_the_past(question, past):
    assert validity.asks_about_past(question) is past


def test_the_tools_offer_supersede_and_the_llm_curator_never_archives(mem, chats):
    from memgrove.graphs.curate import CURATOR_OPS
    from memgrove.tools.curate import curate_tool

    tool = curate_tool(mem)
    schema = json.dumps(tool.args_schema.model_json_schema())
    assert "SUPERSEDE" in schema and "ARCHIVE" in schema and "'by' replaces it" in schema
    out = tool.invoke({"operations": [{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "moved"}]})
    assert '"status": "superseded"' in out
    assert "SUPERSEDE" in CURATOR_OPS and "ARCHIVE" not in CURATOR_OPS and "RESTORE" not in CURATOR_OPS


def test_the_cli_applies_supersede_from_an_ops_file(mem, chats, tmp_path, monkeypatch):
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([{"op": "SUPERSEDE", "path": chats[0], "by": chats[1], "reason": "moved"}]))
    monkeypatch.setenv("MEMGROVE_HOME", str(mem.home))
    out = CliRunner().invoke(cli, ["curate", "--ops", str(ops), "--json", "--no-server"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["applied"][0]["status"] == "superseded"
    assert "SUPERSEDE" in CliRunner().invoke(cli, ["curate", "-h"]).output


def test_the_llm_curator_closes_the_old_fact_when_it_writes_the_new_one(mem):
    from helpers.scripted_model import ScriptedChatModel, tool_call

    from memgrove.graphs.llm import prompt
    from memgrove.graphs.settings import CurateSettings

    conv = {"id": "ops", "messages": [
        {"id": "D1:1", "speaker": "Ana", "time": "2026-01-10T10:00:00Z", "session": "s1",
         "text": "The staging database listens on port 5432."},
        {"id": "D2:1", "speaker": "Ana", "time": "2026-03-02T10:00:00Z", "session": "s2",
         "text": "We moved the staging database to port 6543 today."}]}
    old = {"op": "ADD", "path": "infra/staging/db_port.md", "title": "Staging database port",
           "content": "The staging database listens on port 5432.", "sources": [{"kind": "conversation", "ref": "D1:1"}],
           "reason": "infra fact"}
    new = {"op": "ADD", "path": "infra/staging/db_port_6543.md", "title": "Staging database port since March 2026",
           "content": "The staging database listens on port 6543 since 2026-03-02.",
           "sources": [{"kind": "conversation", "ref": "D2:1"}], "reason": "the port changed"}
    close = {"op": "SUPERSEDE", "path": "infra/staging/db_port.md", "by": "infra/staging/db_port_6543.md",
             "since": "2026-03-02", "reason": "the port changed"}
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[old]), tool_call("curate", operations=[new, close])])
    report = mem.learn(conversation=conv, model=model, settings=CurateSettings(chunk_chars=400, chunk_overlap_chars=50))  # a chunk per session
    assert not report.errors and [(a.op, a.status) for a in report.applied][-1] == ("SUPERSEDE", "superseded")
    assert mem.read("infra/staging/db_port.md").extra["supersededBy"] == "infra/staging/db_port_6543.md"
    assert mem.search(CURRENT_Q)[0].path == "infra/staging/db_port_6543.md"
    assert '"op": "SUPERSEDE"' in prompt("curate_v1")     # the prompt teaches it


def test_a_model_reading_a_closed_entry_is_told_it_was_superseded(mem, chats):
    from memgrove.graphs.llm import prompt
    from memgrove.tree.entries.entry import reader_text

    _supersede_all(mem, chats)
    view = reader_text(mem.read(chats[0]))
    assert f"Superseded: true until 2026-03-02, replaced by {chats[1]}" in view
    assert "Superseded" not in reader_text(mem.read(chats[2]))
    assert "Superseded" in prompt("answer_v1") and "since then" in prompt("agent_v1")


def test_an_answer_quoting_a_closed_fact_names_the_value_that_replaced_it(mem, chats):
    _supersede_all(mem, chats)
    a = mem.query("Which port did the staging database use before April?")
    assert "6543" in a.answer.split("(")[0] and "(until 5 April 2026; since then: 7000)" in a.answer

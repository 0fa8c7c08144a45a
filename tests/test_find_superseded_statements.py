"""Superseded facts found statement by statement (tree/hygiene/find_superseded.py, statement_values.py):
a long message restating one thing among several is found, proposed for review, and approving it
records the replaced statement on the older entry instead of closing what else it says."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memgrove import Memory
from memgrove.tree.hygiene.scan import scan
from memgrove.tree.hygiene.statement_values import clauses, proper_words, statement

T0 = datetime(2026, 1, 12, 9, 0, tzinfo=timezone.utc)

KICKOFF = ("Morning all, a few housekeeping notes for the new year. The staging database listens on port 5432 and "
           "the production database on 5433, so please stop hardcoding 5432 in the prod configs. The nightly "
           "backup runs at 03:00 and takes about forty minutes. Ben is the primary on-call this quarter and Priya "
           "is secondary.")


def chat(cid: str, *messages: tuple[str, str, int]) -> dict[str, Any]:
    """A conversation of (speaker, text, days after T0) messages."""
    return {"id": cid, "messages": [
        {"id": f"m{i}", "speaker": who, "text": text, "time": (T0 + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")}
        for i, (who, text, day) in enumerate(messages, 1)]}


def superseded(mem: Memory) -> list:
    return [c for c in scan(mem.tree, kinds="superseded")]


def path_of(mem: Memory, text: str) -> str:
    [p] = [p for p in mem.tree.entry_paths() if text in mem.read(p).body]
    return p


def test_a_long_message_restating_one_thing_among_several_is_found(mem: Memory) -> None:
    mem.ingest(conversation=chat("team", ("Dana", KICKOFF, 0), (
        "Ben", "Search project status: the indexer is running in shadow mode and the relevance numbers look good. "
               "The backup job kept colliding with the index rebuild, so backups run at 04:30 from tonight and the "
               "rebuild keeps its 03:00 slot. I told the DBAs.", 50)))
    [sup] = superseded(mem)
    old, new = path_of(mem, "Morning all"), path_of(mem, "Search project")
    assert sup.paths == (new, old)
    ev = sup.evidence
    assert (ev["old_value"], ev["new_value"]) == ("03:00", "04:30")
    assert "backup runs at 03:00" in ev["old_statement"] and "04:30" in ev["new_statement"]
    # the older message says more than the backup time: approving must not close it
    assert ev["whole_entry"] is False
    [op] = sup.ops
    assert op["op"] == "SUPERSEDE" and (op["path"], op["by"]) == (old, new)
    assert op["statement"].startswith("The nightly backup runs at 03:00")
    assert (op["value"], op["new_value"], op["since"]) == ("03:00", "04:30", (T0 + timedelta(days=50)).date().isoformat())


def test_approving_records_the_statement_keeps_the_entry_open_and_is_not_proposed_again(mem: Memory) -> None:
    mem.ingest(conversation=chat("team", ("Dana", KICKOFF, 0), (
        "Dana", "Small thing but it bites people: the staging database is on 6543 since the network change on "
                "Saturday. The old port is closed by the firewall, so connection errors mean your config is stale. "
                "Production did not move.", 70)))
    [sup] = superseded(mem)
    assert (sup.evidence["old_value"], sup.evidence["new_value"]) == ("5432", "6543")
    run = mem.dream(use_model=False)
    assert [r["status"] for r in run["candidates"] if r["kind"] == "superseded"] == ["queued"]
    before = mem.read(sup.paths[1])
    mem.review_approve(all=True)
    old = mem.read(sup.paths[1])
    assert not old.extra.get("supersededBy")                       # still current for what else it says
    assert old.updated_at == before.updated_at and old.body == before.body   # not news about it
    [mark] = old.extra["supersededStatements"]
    assert mark["statement"].startswith("The staging database listens on port 5432")
    assert (mark["value"], mark["newValue"], mark["by"]) == ("5432", "6543", sup.paths[0])
    assert superseded(mem) == []
    # journaled like any change: undone, the entry is as it was
    [rec] = mem.history(limit=1)
    assert rec.op == "SUPERSEDE" and rec.path == sup.paths[1]
    mem.undo(rec.id)
    assert "supersededStatements" not in mem.read(sup.paths[1]).extra


def test_a_one_statement_message_is_still_closed_whole(mem: Memory) -> None:
    mem.ingest(conversation=chat("ops", ("Ana", "The staging database listens on port 5432.", 0),
                                 ("Ben", "Heads up: the staging database now listens on port 6543.", 30)))
    [sup] = superseded(mem)
    assert sup.evidence["whole_entry"] is True and sup.ops[0]["op"] == "SUPERSEDE"


def test_each_fact_of_an_older_message_is_superseded_by_its_own_newer_message(mem: Memory) -> None:
    mem.ingest(conversation=chat("team", ("Marco", KICKOFF, 0), (
        "Dana", "Heads up, Priya takes over primary on-call from Ben today, he moves to the search project. "
                "The escalation policy in the pager tool has been edited to match.", 36), (
        "Ben", "The backup job kept colliding with the index rebuild, so backups run at 04:30 from tonight and the "
               "rebuild keeps its 03:00 slot.", 50)))
    got = {(c.evidence["old_value"], c.evidence["new_value"]) for c in superseded(mem)}
    # a speaker's name is a value where the sentence says something of them ("Ben is the primary on-call")
    assert got == {("ben", "priya"), ("03:00", "04:30")}


def test_the_same_template_for_another_subject_is_not_a_change(mem: Memory) -> None:
    mem.ingest(conversation=chat("team", ("Dana", KICKOFF, 0), (
        "Ben", "Reminder that the production database stays on 5433 whatever you see in old runbooks. I'm going "
               "through the runbooks this week. The internal API rate limit is 5,000 requests per minute.", 20), (
        "Marco", "Partner tier is unblocked. The public API rate limit is 1,000 requests per minute per key from "
                 "Monday, and the internal rate limit stays at 5,000. Docs are updated.", 40)))
    assert superseded(mem) == []


def test_a_sum_of_money_and_a_count_changed_in_long_messages(mem: Memory) -> None:
    mem.ingest(conversation=chat("home", (
        "Maya", "House hunting update. Our rent is $1,850 a month until the lease ends in August. We have 86 "
                "contributors so far according to the graph, says Tom about his project.", 0), (
        "Maya", "The lease renewal letter came: rent will be $1,975 a month from March, which is annoying. The "
                "landlord also promised to fix the balcony door.", 40)))
    [sup] = superseded(mem)
    assert (sup.evidence["old_value"], sup.evidence["new_value"]) == ("1,850", "1,975")


@pytest.mark.parametrize("sentence, expected", [
    ("The staging database listens on port 5432 and the production database on 5433, so please stop hardcoding it.",
     ["The staging database listens on port 5432", "the production database on 5433", "please stop hardcoding it."]),
    ("Small thing but it bites people: the staging database is on 6543 since Saturday.",
     ["Small thing", "it bites people", "the staging database is on 6543 since Saturday."]),
    ("Meditation streak: 26 days!", ["Meditation streak: 26 days!"]),
    ("Registrations so far: 180, which is ahead of last year.",
     ["Registrations so far: 180", "is ahead of last year."]),
    ("Quick summary: sourdough $8.25, croissants $3.75, rent $3,450.",
     ["Quick summary", "sourdough $8.25", "croissants $3.75", "rent $3,450."]),
    ("The staging cluster has 6 nodes, all on the older instance type.",
     ["The staging cluster has 6 nodes, all on the older instance type."]),
])
def test_the_clauses_of_a_sentence(sentence: str, expected: list[str]) -> None:
    assert clauses(sentence) == expected


def test_what_a_clause_states_in_a_long_message() -> None:
    proper = proper_words([KICKOFF])
    s = statement("The nightly backup runs at 03:00 and takes about forty minutes", proper)
    assert list(s.values) == [("03:00", "date")]            # a time of day, not a count
    s = statement("Deploys go out Thursdays 10:00 to 12:00 from next week", proper)
    assert list(s.values) == [("thursday 10:00", "date"), ("12:00", "date")]
    s = statement("The analytics database is called lakehouse_main", proper)
    assert list(s.values) == [("lakehouse_main", "name")]   # an identifier is a value
    s = statement("Our rent is $1,850 a month", proper)
    assert list(s.values) == [("1,850", "number:$")]
    s = statement("My highest score is 132 now, mostly thanks to picking up the 10-pin spares", proper)
    assert {"highest", "score"} <= s.core and "pick" not in s.core
    s = statement("they'll be at Lakeside Elementary instead of Westbrook", proper_words(["Westbrook", "Lakeside"]))
    assert [v for v, _ in s.was] == ["westbrook"]


def test_a_statement_supersede_is_recorded_once_and_checked(mem: Memory) -> None:
    from memgrove.tree.base.errors import BatchRejected, InvalidEntry

    mem.curate([{"op": "ADD", "path": "ops/notes/kickoff.md", "title": "Kickoff", "content": KICKOFF, "reason": "t"},
                {"op": "ADD", "path": "ops/notes/backup.md", "title": "Backup", "reason": "t",
                 "content": "Backups run at 04:30 from tonight."}])
    op = {"op": "SUPERSEDE", "path": "ops/notes/kickoff.md", "by": "ops/notes/backup.md", "reason": "t",
          "statement": "The nightly backup runs at 03:00", "value": "03:00", "new_value": "04:30", "since": "2026-03-03"}
    [done] = mem.curate([op])
    assert done.status == "superseded"
    e = mem.read("ops/notes/kickoff.md")
    assert e.extra["supersededStatements"] == [{"statement": "The nightly backup runs at 03:00", "value": "03:00",
                                                "by": "ops/notes/backup.md", "newValue": "04:30", "since": "2026-03-03"}]
    assert "supersedes" not in mem.read("ops/notes/backup.md").extra and "supersededBy" not in e.extra
    [again] = mem.curate([op])
    assert again.status == "unchanged"
    with pytest.raises((InvalidEntry, BatchRejected), match="go with 'statement'"):
        mem.curate([{k: v for k, v in op.items() if k != "statement"}])
    with pytest.raises((InvalidEntry, BatchRejected), match="belong to SUPERSEDE"):
        mem.curate([{"op": "ARCHIVE", "path": "ops/notes/kickoff.md", "reason": "t", "statement": "x"}])

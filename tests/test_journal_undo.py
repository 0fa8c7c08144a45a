"""The journal (one record per op, with before/after images), history and undo."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memgrove import JournalError, Memory, OperationConflict
from memgrove.tree.index.catalog import scan


def op(kind: str, path: str, **fields: Any) -> dict[str, Any]:
    return {"op": kind, "path": path, "reason": fields.pop("reason", "test"), **fields}


def files(mem: Memory, *, entries_only: bool = False) -> dict[str, str]:
    root = mem.home / "tree"
    out = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()}
    return {k: v for k, v in out.items() if not (entries_only and k.endswith("context.md"))}


class Clock:
    def __init__(self, ticking: bool):
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
        self.ticking = ticking

    def __call__(self) -> datetime:
        if self.ticking:
            self.now += timedelta(minutes=1)
        return self.now


def open_mem(tmp_path: Path, ticking: bool = False) -> Memory:
    return Memory.open(tmp_path / ("ticking" if ticking else "fixed"), create=True, durable=False,
                       clock=Clock(ticking))


SEED = [
    op("ADD", "auth/jwt/rotation.md", title="Refresh rotation", tags=["auth"], content="rotate quetzalx tokens",
       context={"domain": "Authentication overview.", "topic": "JWT overview."}),
    op("ADD", "auth/jwt/lifetime.md", title="Token lifetime", content="access tokens live 15 minutes",
       related=["auth/jwt/rotation.md"]),
    op("ADD", "auth/sessions/store.md", title="Session store", content="sessions live in redis",
       related=["auth/jwt/rotation.md"], context={"topic": "Sessions overview."}),
    op("ADD", "ops/deploy/runbook.md", title="Deploy runbook", content="deploy on tuesdays"),
]


@pytest.fixture
def fixed(tmp_path: Path):
    m = open_mem(tmp_path)
    m.curate(SEED)
    yield m
    m.close()


# -- records ----------------------------------------------------------------------

def test_one_record_per_op_with_images(mem) -> None:
    results = mem.curate([op("ADD", "a/b/x.md", title="X", content="x", reason="first reason"),
                          op("ADD", "a/b/y.md", title="Y", content="y", related=["a/b/x.md"]),
                          op("UPDATE", "a/b/x.md", content="x2")], actor="tester")
    recs = mem.history()
    assert [r.id for r in recs] == [r.id for r in reversed(results)]
    add_x, add_y, upd = reversed(recs)
    assert (add_x.op, add_x.path, add_x.reason, add_x.actor) == ("ADD", "a/b/x.md", "first reason", "tester")
    assert add_x.before is None
    assert add_x.after is not None and "\nx\n" in add_x.after
    assert upd.before == add_x.after
    assert upd.after == (mem.home / "tree/a/b/x.md").read_text()
    assert add_x.at.endswith("Z")
    # the journal file is one JSON object per line, one line per op
    lines = (mem.home / "journal/journal.jsonl").read_text().splitlines()
    assert len(lines) == 3
    assert [json.loads(ln)["id"] for ln in lines] == [r.id for r in results]
    assert set(json.loads(lines[0])) == {"id", "at", "op", "path", "reason", "actor", "before", "after", "also"}


def test_delete_and_merge_records_carry_all_touched_files(fixed) -> None:
    before_rot = (fixed.home / "tree/auth/jwt/rotation.md").read_text()
    [d] = fixed.curate([op("DELETE", "auth/jwt/rotation.md")])
    rec = fixed.history(1)[0]
    assert rec.id == d.id
    assert rec.before == before_rot and rec.after is None
    also = {c.path: c for c in rec.also}
    # both linkers lost their link, and the journal holds their before/after
    assert "rotation.md" in also["auth/jwt/lifetime.md"].before
    assert "rotation.md" not in also["auth/jwt/lifetime.md"].after
    assert "auth/sessions/store.md" in also
    [m] = fixed.curate([op("MERGE", "auth/jwt/lifetime.md", merge_into="auth/sessions/store.md")])
    rec = fixed.history(1)[0]
    assert (rec.op, rec.path, rec.after) == ("MERGE", "auth/jwt/lifetime.md", None)
    assert "auth/sessions/store.md" in {c.path for c in rec.also}


def test_history_newest_first_with_limit_and_path_filter(fixed) -> None:
    fixed.curate([op("UPDATE", "ops/deploy/runbook.md", content="deploy on wednesdays")])
    fixed.curate([op("UPDATE", "auth/sessions/store.md", content="sessions live in postgres")])
    recs = fixed.history(limit=None)
    assert len(recs) == 6
    assert [r.op for r in recs[:2]] == ["UPDATE", "UPDATE"]
    assert recs[0].path == "auth/sessions/store.md"
    assert recs[-1].path == "auth/jwt/rotation.md"
    assert [r.id for r in fixed.history(limit=2)] == [r.id for r in recs[:2]]
    runbook = fixed.history(path="ops/deploy/runbook.md")
    assert [r.op for r in runbook] == ["UPDATE", "ADD"]
    assert all(r.path == "ops/deploy/runbook.md" for r in runbook)
    assert {r.path for r in fixed.history(path="auth/sessions")} == {"auth/sessions/store.md"}
    assert len(fixed.history(path="auth")) == 4
    # a record that touched the entry only through a relation rewrite is found too
    fixed.curate([op("DELETE", "auth/jwt/rotation.md")])
    assert fixed.history(path="auth/sessions/store.md")[0].op == "DELETE"


# -- undo -------------------------------------------------------------------------

UNDOABLE = {
    "ADD": [op("ADD", "auth/jwt/new.md", title="New", content="brand new", related=["auth/jwt/rotation.md"])],
    "ADD_NEW_FOLDER": [op("ADD", "billing/plans/free.md", title="Free plan", content="free",
                          context={"domain": "Billing."})],
    "UPDATE": [op("UPDATE", "auth/jwt/rotation.md", title="Renamed", tags=["x"], content="rotate differently")],
    "UPDATE_REPLACE": [op("UPDATE", "auth/jwt/rotation.md", replace=True, content="only this")],
    "UPSERT": [op("UPSERT", "ops/deploy/runbook.md", content="deploy daily")],
    "MERGE": [op("MERGE", "auth/jwt/rotation.md", merge_into="ops/deploy/runbook.md")],
    "MERGE_EMPTIES_FOLDER": [op("MERGE", "auth/sessions/store.md", merge_into="auth/jwt/lifetime.md")],
    "DELETE": [op("DELETE", "auth/jwt/rotation.md")],
    "DELETE_LAST_IN_FOLDER": [op("DELETE", "auth/sessions/store.md")],
    "DELETE_SUBTREE": [op("DELETE", "auth/jwt")],
    "DELETE_DOMAIN": [op("DELETE", "auth")],
}


@pytest.mark.parametrize("case", list(UNDOABLE))
def test_undo_restores_exact_before_state(fixed, case) -> None:
    before = files(fixed)
    count = fixed.count()
    [res] = fixed.curate(UNDOABLE[case])
    assert files(fixed) != before
    undo = fixed.undo(res.id)
    assert (undo.op, undo.status) == ("UNDO", "undone")
    assert files(fixed) == before
    assert fixed.count() == count
    assert [h.path for h in fixed.search("quetzalx") if h.matched] == ["auth/jwt/rotation.md"]
    assert fixed.tree.links("auth/jwt/rotation.md")[1] == ["auth/jwt/lifetime.md", "auth/sessions/store.md"]
    assert fixed.doctor().ok
    rec = fixed.history(1)[0]
    assert (rec.op, rec.id) == ("UNDO", undo.id)
    assert res.id in rec.reason


@pytest.mark.parametrize("case", ["ADD", "UPDATE", "MERGE", "DELETE", "DELETE_SUBTREE"])
def test_undo_restores_entries_with_a_moving_clock(tmp_path, case) -> None:
    m = open_mem(tmp_path, ticking=True)
    m.curate(SEED)
    before = files(m, entries_only=True)
    [res] = m.curate(UNDOABLE[case])
    m.undo(res.id)
    assert files(m, entries_only=True) == before
    assert m.doctor().ok
    m.close()


def test_undo_of_undo_redoes(fixed) -> None:
    [res] = fixed.curate(UNDOABLE["UPDATE"])
    after_update = files(fixed)
    u = fixed.undo(res.id)
    fixed.undo(u.id)
    assert files(fixed) == after_update
    assert fixed.read("auth/jwt/rotation.md").title == "Renamed"


def test_undo_search_follows(fixed) -> None:
    [res] = fixed.curate([op("ADD", "auth/jwt/zz.md", title="Zz", content="ocelotword")])
    assert [h.path for h in fixed.search("ocelotword") if h.matched] == ["auth/jwt/zz.md"]
    fixed.undo(res.id)
    assert fixed.search("ocelotword") == []


def test_undo_refused_when_changed_by_later_op(fixed) -> None:
    [first] = fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v2")])
    fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v3")])
    before = files(fixed)
    journal = (fixed.home / "journal/journal.jsonl").read_text()
    with pytest.raises(OperationConflict, match="auth/jwt/rotation.md changed after it"):
        fixed.undo(first.id)
    assert files(fixed) == before
    assert (fixed.home / "journal/journal.jsonl").read_text() == journal
    assert fixed.read("auth/jwt/rotation.md").sections["Narrative"] == "v3"


def test_undo_refused_after_hand_edit(fixed) -> None:
    [res] = fixed.curate([op("DELETE", "auth/jwt/rotation.md")])
    # someone recreates the file by hand; undo must not clobber it
    hand = fixed.home / "tree/auth/jwt/rotation.md"
    hand.write_text("# Hand made\n\nmine\n")
    before = files(fixed)
    with pytest.raises(OperationConflict):
        fixed.undo(res.id)
    assert files(fixed) == before
    assert hand.read_text() == "# Hand made\n\nmine\n"


def test_undo_refused_when_a_linker_changed(fixed) -> None:
    [res] = fixed.curate([op("DELETE", "auth/jwt/rotation.md")])
    fixed.curate([op("UPDATE", "auth/sessions/store.md", content="changed since")])
    before = files(fixed)
    with pytest.raises(OperationConflict, match="auth/sessions/store.md"):
        fixed.undo(res.id)
    assert files(fixed) == before


def test_forced_undo(fixed) -> None:
    original = (fixed.home / "tree/auth/jwt/rotation.md").read_text()
    [first] = fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v2")])
    fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v3")])
    fixed.undo(first.id, force=True)
    assert (fixed.home / "tree/auth/jwt/rotation.md").read_text() == original


def test_unknown_op_id(mem) -> None:
    with pytest.raises(JournalError, match="no operation with id 'nope'"):
        mem.undo("nope")


def test_damaged_journal_lines_are_skipped(fixed) -> None:
    with (fixed.home / "journal/journal.jsonl").open("a") as fh:
        fh.write("{not json\n")
    assert len(fixed.history()) == 4
    assert any("unreadable line" in w for w in fixed.doctor().warnings)


def test_replaying_the_journal_rebuilds_the_tree(fixed) -> None:
    fixed.curate([op("MERGE", "auth/jwt/lifetime.md", merge_into="ops/deploy/runbook.md"),
                  op("DELETE", "auth/sessions")])
    replay: dict[str, str | None] = {}
    for rec in reversed(fixed.history(limit=None)):
        for ch in rec.changes():
            if ch.path.endswith("context.md"):
                continue  # derived; journaled only when a folder empties
            assert replay.get(ch.path) == ch.before, (rec.op, ch.path)
            replay[ch.path] = ch.after
    on_disk = {p: (fixed.home / "tree" / p).read_text() for p in scan(fixed.home / "tree")
               if not p.endswith("context.md")}
    assert {p: t for p, t in replay.items() if t is not None} == on_disk


# -- what undo says ------------------------------------------------------------------

def test_undo_after_a_hand_edit_says_so_and_names_force(fixed) -> None:
    [res] = fixed.curate([op("UPDATE", "auth/jwt/lifetime.md", content="access tokens live 10 minutes")])
    f = fixed.home / "tree/auth/jwt/lifetime.md"
    f.write_text(f.read_text() + "\nhand edit\n")
    with pytest.raises(OperationConflict) as err:
        fixed.undo(res.id)
    msg = str(err.value)
    assert "edited by hand" in msg and "--force" in msg
    assert "later operations" not in msg and "undo those" not in msg


def test_undo_after_later_operations_names_them_newest_first(fixed) -> None:
    [first] = fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v2")])
    [second] = fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v3")])
    fixed.curate([op("UPDATE", "ops/deploy/runbook.md", content="unrelated")])
    [third] = fixed.curate([op("UPDATE", "auth/jwt/rotation.md", content="v4")])
    with pytest.raises(OperationConflict) as err:
        fixed.undo(first.id)
    assert f"by {third.id}, {second.id};" in str(err.value)


def test_forced_undo_keeps_what_it_discards_in_the_journal(fixed) -> None:
    [res] = fixed.curate([op("UPDATE", "auth/jwt/lifetime.md", content="access tokens live 10 minutes")])
    f = fixed.home / "tree/auth/jwt/lifetime.md"
    hand = f.read_text() + "\nhand edit\n"
    f.write_text(hand)
    undone = fixed.undo(res.id, force=True)
    assert "discarded" in undone.message and "auth/jwt/lifetime.md" in undone.message
    assert undone.id in undone.message
    assert "hand edit" not in f.read_text()
    fixed.undo(undone.id)  # undoing the forced undo brings the hand edit back
    assert f.read_text() == hand


def test_undoing_twice_says_already_undone(fixed) -> None:
    [res] = fixed.curate([op("UPDATE", "auth/jwt/lifetime.md", content="access tokens live 10 minutes")])
    undone = fixed.undo(res.id)
    journal = (fixed.home / "journal/journal.jsonl").read_text()
    again = fixed.undo(res.id)
    assert again.status == "unchanged"
    assert again.message == f"{res.id} is already undone (by {undone.id}; undo {undone.id} to redo it)"
    assert (fixed.home / "journal/journal.jsonl").read_text() == journal


def test_undo_of_an_unchanged_result_says_there_is_nothing_to_undo(fixed) -> None:
    [res] = fixed.curate([op("UPSERT", "ops/deploy/runbook.md", title="Deploy runbook", content="deploy on tuesdays")])
    assert res.status == "unchanged" and res.id == ""
    with pytest.raises(JournalError, match="nothing to undo: an operation that changed nothing"):
        fixed.undo(res.id)

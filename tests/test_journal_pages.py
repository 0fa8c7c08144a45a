"""The journal read newest first, a page at a time (tree/writes/journal_read.py): the same records
as reading it whole and filtering, whatever the block size, the filters and the cursors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.writes.journal import Change, Journal, JournalRecord
from memgrove.tree.writes.journal_read import page, touches

KINDS = ["ADD", "UPDATE", "DELETE", "UNDO", "MERGE"]
PATHS = ["auth/jwt/rotation.md", "auth/jwt/lifetime.md", "auth/sessions/store.md", "ops/deploy/runbook.md",
         "ops/deploy/rollback.md", "auth/jwt_old/x.md"]


def journal(tmp_path: Path, n: int = 120, seed: int = 0) -> Journal:
    rng = random.Random(seed)
    j = Journal(tmp_path / "journal", durable=False)
    recs = []
    for i in range(n):
        path = rng.choice(PATHS)
        body = "x" * rng.choice((0, 3, 70, 900)) + ("\u00e9t\u00e9 \"quoted\"\n" if i % 7 == 0 else "")
        also = (Change(rng.choice(PATHS), None, body),) if i % 5 == 0 else ()
        recs.append(JournalRecord(id=f"20260101T000000-{i:010x}", at="2026-01-01T00:00:00Z", op=rng.choice(KINDS),
                                  path=path, reason=f"r{i}", actor="user", before=None, after=body, also=also))
    j.append(recs)
    return j


def expected(j: Journal, kinds: tuple[str, ...] = (), path: str | None = None) -> list[str]:
    recs = [r for r in j.records() if (not kinds or r.op in kinds) and (path is None or touches(r, path))]
    return [r.id for r in reversed(recs)]


def all_pages(j: Journal, **kw) -> tuple[list[str], int]:
    ids, before, pages = [], None, 0
    while True:
        p = page(j.file, before=before, **kw)
        ids += [r.id for r in p.records]
        pages += 1
        if p.next is None:
            return ids, pages
        assert before is None or p.next < before     # every page moves towards the start
        before = p.next


@pytest.mark.parametrize("block", [7, 64, 1000, 1 << 18])
@pytest.mark.parametrize("kinds,path", [((), None), (("UNDO",), None), (("ADD", "MERGE"), None),
                                        ((), "auth/jwt"), ((), "auth/jwt/rotation.md"), (("UPDATE",), "ops"),
                                        ((), "nowhere/at/all.md")])
def test_pages_hold_what_a_whole_read_filters(tmp_path: Path, block: int, kinds: tuple[str, ...],
                                              path: str | None) -> None:
    j = journal(tmp_path)
    want = expected(j, kinds, path)
    assert [r.id for r in page(j.file, limit=None, kinds=kinds, path=path, block=block, budget=None).records] == want
    for limit in (1, 3, 50):
        got, _ = all_pages(j, limit=limit, kinds=kinds, path=path, block=block)
        assert got == want


def test_a_folder_is_not_a_prefix_of_a_name(tmp_path: Path) -> None:
    """``auth/jwt`` holds auth/jwt/..., not auth/jwt_old/x.md."""
    j = journal(tmp_path)
    got = page(j.file, limit=None, path="auth/jwt").records
    assert got and all(touches(r, "auth/jwt") for r in got)
    assert not any(r.path.startswith("auth/jwt_old") and not touches(r, "auth/jwt") for r in got)


def test_a_budget_bounds_each_page_and_the_pages_still_cover_everything(tmp_path: Path) -> None:
    j = journal(tmp_path, n=300)
    want = expected(j, ("UNDO",))
    line_max = max(len(line) for line in j.file.read_bytes().splitlines())
    ids, before, pages = [], None, 0
    while True:
        p = page(j.file, kinds=["UNDO"], limit=1000, before=before, budget=2000, block=512)
        # one block past the budget, and a line that began in it, at most
        assert p.scanned <= 2000 + 512 + line_max
        ids += [r.id for r in p.records]
        pages += 1
        if p.next is None:
            break
        before = p.next
    assert ids == want and pages > 3


def test_damaged_lines_are_skipped_and_escaped_paths_found(tmp_path: Path) -> None:
    j = journal(tmp_path, n=10)
    path = "caf\u00e9/men\u00fc/cr\u00e8me.md"
    raw = JournalRecord("20260101T000001-ffffffffff", "2026-01-01T00:00:01Z", "UNDO", path, "r", "user", None, "x")
    escaped = JournalRecord("20260101T000002-eeeeeeeeee", "2026-01-01T00:00:02Z", "UNDO", path, "r", "user", None, "y")
    with j.file.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n" + json.dumps(raw.to_json(), ensure_ascii=False) + "\n\n{\"id\": 5}\n"
                 + json.dumps(escaped.to_json()) + "\n")      # \\u escapes, as another writer may have
    assert [r.id for r in page(j.file, kinds=["UNDO"], path="caf\u00e9/men\u00fc").records] == [escaped.id, raw.id]
    assert [r.id for r in page(j.file, limit=None).records] == [r.id for r in reversed(list(j.records()))]


def test_a_cursor_inside_a_line_skips_that_line_s_start(tmp_path: Path) -> None:
    j = journal(tmp_path, n=5)
    raw = j.file.read_bytes()
    last_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    ids = [r.id for r in reversed(list(j.records()))]
    assert [r.id for r in page(j.file, before=last_start + 10).records] == ids[1:]
    assert [r.id for r in page(j.file, before=last_start).records] == ids[1:]
    assert page(j.file, before=10 ** 12).records[0].id == ids[0]     # past the end: from the end
    assert page(j.file, before=0).records == [] and page(j.file, before=0).next is None


def test_an_unfinished_last_line_and_no_journal(tmp_path: Path) -> None:
    assert page(tmp_path / "none.jsonl") .records == []
    j = journal(tmp_path, n=3)
    with j.file.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "20260101T000009-0000000009", "at": "x", "op": "ADD", "pa')
    assert [r.id for r in page(j.file).records] == [r.id for r in reversed(list(j.records()))]


def test_history_reads_the_same_records_newest_first(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", create=True, durable=False) as mem:
        for i in range(12):
            mem.curate([{"op": "ADD", "path": f"a/b{i % 3}/e{i}.md", "title": f"E {i}", "content": "x",
                         "reason": f"r{i}"}])
        mem.curate([{"op": "UPDATE", "path": "a/b1/e1.md", "content": "y", "reason": "edit"}])
        whole = list(reversed(list(mem.tree.journal.records())))
        assert [r.id for r in mem.history(limit=None)] == [r.id for r in whole]
        assert [r.id for r in mem.history(limit=4)] == [r.id for r in whole[:4]]
        assert [r.id for r in mem.history(limit=None, path="a/b1")] == [r.id for r in whole if touches(r, "a/b1")]
        p = mem.history_page(limit=2, kinds=["UPDATE"])
        assert [r.op for r in p.records] == ["UPDATE"] and p.next is None
        first = mem.history_page(limit=3, path="a/b1")
        rest = mem.history_page(limit=50, path="a/b1", before=first.next)
        assert [r.id for r in first.records + rest.records] == [r.id for r in whole if touches(r, "a/b1")]


def test_find_from_the_end_holds_the_record_and_what_came_after(tmp_path: Path) -> None:
    from memgrove import JournalError, OperationNotFound
    from memgrove.tree.writes.journal_read import find, find_with_later

    j = journal(tmp_path, n=60)
    whole = list(j.records())
    for i in (0, 1, 30, 58, 59):
        rec, later = find_with_later(j.file, whole[i].id)
        assert rec == whole[i] and later == whole[i + 1:]
        assert find(j.file, whole[i].id) == whole[i]
    with pytest.raises(OperationNotFound):
        find(j.file, "20990101T000000-0000000000")
    with pytest.raises(JournalError):
        find_with_later(j.file, "")
    with pytest.raises(OperationNotFound):
        find(tmp_path / "none.jsonl", whole[0].id)


def test_undo_and_operation_through_the_tree(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", create=True, durable=False) as mem:
        first = mem.curate([{"op": "ADD", "path": "a/b/e.md", "title": "E", "content": "one", "reason": "r"}])[0]
        mem.curate([{"op": "ADD", "path": "a/b/f.md", "title": "F", "content": "x", "reason": "r"}])
        assert mem.tree.operation(first.id).path == "a/b/e.md"
        mem.curate([{"op": "UPDATE", "path": "a/b/e.md", "content": "two", "reason": "edit"}])
        with pytest.raises(Exception, match="changed after it"):
            mem.undo(first.id)          # a later operation changed the file: refused, as before
        last = mem.history(limit=1)[0]
        assert mem.undo(last.id).status == "undone" and "one" in mem.tree.read_text("a/b/e.md")


def test_offsets_read_one_record_and_a_wrong_one_is_looked_for(tmp_path: Path) -> None:
    from memgrove.tree.writes.journal_read import find

    j = journal(tmp_path, n=40)
    raw = j.file.read_bytes()
    p = page(j.file, limit=10, kinds=["UPDATE"])
    assert len(p.offsets) == len(p.records)
    for rec, at in zip(p.records, p.offsets):
        assert (at == 0 or raw[at - 1:at] == b"\n") and json.loads(raw[at:raw.index(b"\n", at)])["id"] == rec.id
        assert find(j.file, rec.id, at) == rec
        assert find(j.file, rec.id, at + 7) == rec           # inside a line: looked for instead
        assert find(j.file, rec.id, 0) == rec and find(j.file, rec.id, 10 ** 12) == rec and find(j.file, rec.id, -5) == rec
    other = p.offsets[1]
    assert find(j.file, p.records[0].id, other) == p.records[0]   # another record's line: looked for

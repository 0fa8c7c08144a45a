"""Bad input gets a specific message and loses nothing: the tree is unchanged."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgrove import BatchRejected, InvalidInput, Memory, MemgroveError, TreeNotFound
from memgrove.tree.entries.entry import Entry, serialize
from memgrove.tree.writes.journal import Journal, JournalRecord

SEED = [{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Refresh rotation",
         "content": "Refresh tokens rotate on every use.", "reason": "seed"}]

BOMB = """\
---
title: bomb
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
---
# Bomb

lol
"""


@pytest.fixture
def seeded(mem):
    mem.curate(SEED)
    return mem


@pytest.fixture
def small(tmp_path: Path):
    m = Memory.open(tmp_path / "small", create=True, durable=False, max_input_bytes=1000)
    m.curate(SEED)
    yield m
    m.close()


def good_file(tmp_path: Path) -> Path:
    f = tmp_path / "good.md"
    f.write_text("# Good\n\nA perfectly fine note.\n")
    return f


def assert_rejected(mem: Memory, snapshot_before: dict, exc: type[Exception], fragment: str, **ingest) -> None:
    with pytest.raises(exc) as info:
        mem.ingest(**ingest)
    assert fragment in str(info.value), str(info.value)
    root = mem.home / "tree"
    assert {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot_before


def files_of(mem: Memory) -> dict:
    root = mem.home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# -- input files ----------------------------------------------------------------------

def test_binary_file_is_skipped_and_counted(seeded, tmp_path) -> None:
    f = tmp_path / "image.png"
    f.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(200))
    results = seeded.ingest(files=[good_file(tmp_path), f])
    assert results.skipped == {"binary files": 1} and all(r.status == "added" for r in results)


def test_enormous_file(small, tmp_path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("word " * 400)   # 2,000 bytes
    assert_rejected(small, files_of(small), InvalidInput,
                    "big.txt is 2,000 bytes; the curator takes at most 1,000 bytes (setting max_input_bytes)",
                    files=[good_file(tmp_path), f])


def test_enormous_file_is_not_read_into_memory(small, tmp_path) -> None:
    f = tmp_path / "huge.log"
    with f.open("wb") as fh:
        fh.truncate(8 * 1024**3)   # sparse: 8 GiB that take no disk
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss      # KiB on Linux
    assert_rejected(small, files_of(small), InvalidInput, "huge.log is 8,589,934,592 bytes", files=[f])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 256 * 1024   # never read in


def test_enormous_text(small) -> None:
    assert_rejected(small, files_of(small), InvalidInput, "the text is larger than 1,000 bytes", text="x" * 1001)


def test_enormous_conversation_file(small, tmp_path) -> None:
    f = tmp_path / "conv.json"
    f.write_text(json.dumps({"id": "c", "messages": [{"id": "1", "speaker": "a", "text": "t" * 2000}]}))
    assert_rejected(small, files_of(small), InvalidInput, "the curator takes at most 1,000 bytes", conversation=f)


def test_non_utf8_file(seeded, tmp_path) -> None:
    f = tmp_path / "latin1.txt"
    f.write_bytes("Caf\xe9 au lait".encode("latin-1"))
    assert_rejected(seeded, files_of(seeded), InvalidInput,
                    "latin1.txt is not UTF-8 text (invalid byte 0xe9 at offset 3)", files=[good_file(tmp_path), f])


def test_missing_file_folder_and_empty_file(seeded, tmp_path) -> None:
    before = files_of(seeded)
    assert_rejected(seeded, before, InvalidInput, "cannot read", files=[tmp_path / "nope.md"])
    empty = tmp_path / "empty.md"
    empty.write_text("  \n")
    # an empty file is skipped and counted, never fatal (one among many must not refuse the rest)
    results = seeded.ingest(files=[empty])
    assert list(results) == [] and results.skipped == {"empty files": 1}
    assert files_of(seeded) == before


def test_utf8_with_bom_and_crlf_is_fine(seeded, tmp_path) -> None:
    f = tmp_path / "windows.txt"
    f.write_bytes("\ufeffLine one\r\n\r\nLine two\r\n".encode("utf-8"))
    [res] = seeded.ingest(files=[f])
    e = seeded.read(res.path)
    assert e.sections["Narrative"] == "Line one\n\nLine two"
    assert e.title == "windows: Line one Line two"


# -- conversations ---------------------------------------------------------------------

GOOD_MSG = {"id": "1", "speaker": "Ana", "text": "hello", "time": "2024-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("conv", "fragment"),
    [
        (42, "a conversation is one of: an object"),
        ([GOOD_MSG, 42], "the conversation: message 2 is not an object"),
        ({"id": ["x"], "messages": [GOOD_MSG]}, "the conversation needs an 'id'"),
        ({"id": "!!!", "messages": [GOOD_MSG]}, "needs an 'id'"),
        ({"id": "c1"}, "conversation c1: 'messages' must be a non-empty list"),
        ({"id": "c1", "messages": []}, "'messages' must be a non-empty list"),
        ({"id": "c1", "messages": "hello"}, "'messages' must be a non-empty list"),
        ({"id": "c1", "messages": [GOOD_MSG, "hi"]}, "message 2 is not an object"),
        ({"id": "c1", "messages": [GOOD_MSG, {"id": "2", "text": "x"}]}, "message 2 has no 'speaker'"),
        ({"id": "c1", "messages": [{"id": "2", "speaker": "x"}]}, "message 1 has no 'text'"),
        ({"id": "c1", "messages": [{"speaker": "x", "text": "y", "id": ["a"]}]}, "message 1 has an 'id' that is not"),
        ({"id": "c1", "messages": [{"id": "2", "speaker": "x", "text": "   "}]}, "no message has any text"),
        ({"id": "c1", "messages": [GOOD_MSG, dict(GOOD_MSG, id="2", time="yesterday")]},
         "message 2 has a time that names no date"),
        ({"id": "c1", "messages": [GOOD_MSG, dict(GOOD_MSG, text="again")]}, "message id '1' appears twice"),
    ],
)
def test_bad_conversation(seeded, conv, fragment) -> None:
    assert_rejected(seeded, files_of(seeded), InvalidInput, fragment, conversation=conv)


def test_malformed_conversation_json(seeded, tmp_path) -> None:
    f = tmp_path / "conv.json"
    f.write_text('{"id": "c1", "messages": [\n  {"id": "1",}\n]}')
    assert_rejected(seeded, files_of(seeded), InvalidInput, "conv.json: not valid JSON", conversation=f)
    f.write_bytes(b'{"id": "caf\xe9"}')
    assert_rejected(seeded, files_of(seeded), InvalidInput, "not UTF-8", conversation=f)
    assert_rejected(seeded, files_of(seeded), InvalidInput, "cannot read", conversation=tmp_path / "none.json")


def test_bad_conversation_with_good_files_writes_nothing(seeded, tmp_path) -> None:
    assert_rejected(seeded, files_of(seeded), InvalidInput, "appears twice", files=[good_file(tmp_path)],
                    text="some good text", conversation={"id": "c", "messages": [GOOD_MSG, dict(GOOD_MSG, text="hi")]})


# -- queries and entries --------------------------------------------------------------

@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query(seeded, query) -> None:
    before = files_of(seeded)
    with pytest.raises(MemgroveError, match="the query is empty"):
        seeded.search(query)
    assert files_of(seeded) == before


def test_alias_bomb_in_hand_written_entry(seeded) -> None:
    bomb = seeded.home / "tree/auth/jwt/bomb.md"
    bomb.write_text(BOMB)
    before = files_of(seeded)
    start = time.process_time()        # CPU seconds: an expanded bomb takes minutes of them
    assert seeded.search("lol") == []
    assert seeded.search("refresh")[0].path == "auth/jwt/rotation.md"
    rep = seeded.doctor()
    assert time.process_time() - start < 5
    assert any(p.startswith("auth/jwt/bomb.md") and "not allowed" in p for p in rep.problems)
    with pytest.raises(BatchRejected) as info:
        seeded.curate([{"op": "UPDATE", "path": "auth/jwt/bomb.md", "content": "x", "reason": "r"}])
    assert "aliases are not allowed" in info.value.errors[0] or "anchors are not allowed" in info.value.errors[0]
    assert "fix the file by hand" in info.value.errors[0]
    # listing the folder reports it instead of failing
    listing = seeded.list("auth/jwt")
    assert [e for e in listing["entries"] if e["path"] == "auth/jwt/bomb.md"][0]["error"]
    assert files_of(seeded) == before
    # the advice in the message works: replace: true rewrites it
    [res] = seeded.curate([{"op": "UPDATE", "path": "auth/jwt/bomb.md", "replace": True, "title": "Defused",
                            "content": "safe now", "reason": "fix"}])
    assert res.status == "updated"
    assert seeded.read("auth/jwt/bomb.md").title == "Defused"
    assert [h.path for h in seeded.search("defused")] == ["auth/jwt/bomb.md"]
    assert seeded.doctor().ok
    seeded.undo(res.id)
    assert bomb.read_text() == BOMB


def test_malformed_entry_blocks_only_ops_on_it(seeded) -> None:
    bad = seeded.home / "tree/auth/jwt/bad.md"
    bad.write_text("---\ntitle: [oops\n---\n# Bad\n")
    with pytest.raises(BatchRejected, match="malformed YAML"):
        seeded.curate([{"op": "MERGE", "path": "auth/jwt/bad.md", "merge_into": "auth/jwt/rotation.md",
                        "reason": "r"}])
    assert bad.read_text() == "---\ntitle: [oops\n---\n# Bad\n"
    seeded.curate([{"op": "ADD", "path": "auth/jwt/other.md", "title": "Other", "content": "fine", "reason": "r"}])
    assert seeded.read("auth/jwt/other.md").title == "Other"
    seeded.curate([{"op": "DELETE", "path": "auth/jwt/bad.md", "reason": "remove junk"}])
    assert not bad.exists()


def test_invalid_config(tmp_path) -> None:
    Memory.open(tmp_path / "cfg", create=True).close()
    (tmp_path / "cfg/.memgrove/config.toml").write_text("[tree\ntitle_boost = ")
    with pytest.raises(MemgroveError, match="invalid TOML"):
        Memory.open(tmp_path / "cfg")
    (tmp_path / "cfg/.memgrove/config.toml").write_text("[tree]\ngap_ratio = 3\n")
    with pytest.raises(MemgroveError, match="gap_ratio must be between 0 and 1"):
        Memory.open(tmp_path / "cfg")


def test_no_tree_here(tmp_path) -> None:
    with pytest.raises(TreeNotFound, match="memgrove init"):
        Memory.open(tmp_path / "nowhere")


# -- leftovers of dead processes ------------------------------------------------------

def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_lock_of_dead_process(seeded) -> None:
    pid = dead_pid()
    (seeded.home / "write.lock").write_text(str(pid))
    [res] = seeded.curate([{"op": "ADD", "path": "auth/jwt/after.md", "title": "After", "content": "x",
                            "reason": "r"}])
    assert res.status == "added"
    assert any(f"dead process {pid}" in n for n in seeded.tree.notices)
    assert any(f"dead process {pid}" in n for n in seeded.doctor().notices)
    assert (seeded.home / "write.lock").read_text() == ""   # released cleanly afterwards


def test_stale_lock_seen_by_a_new_process(tmp_path) -> None:
    Memory.open(tmp_path / "s", create=True, durable=False).close()
    pid = dead_pid()
    (tmp_path / "s/.memgrove/write.lock").write_text(str(pid))
    with Memory.open(tmp_path / "s", durable=False) as m:
        m.curate(SEED)
        assert any(str(pid) in n for n in m.tree.notices)
        assert m.read("auth/jwt/rotation.md").title == "Refresh rotation"


def write_pending(home: Path, records: list[JournalRecord]) -> None:
    Journal(home / "journal", durable=False).write_pending(records)


def test_pending_batch_is_rolled_forward_on_open(tmp_path) -> None:
    with Memory.open(tmp_path / "r", create=True, durable=False) as m:
        m.curate(SEED)
        old = (m.home / "tree/auth/jwt/rotation.md").read_text()
        home = m.home
    new_text = serialize(Entry(title="Interrupted", created_at="2026-01-01T00:00:00Z",
                               updated_at="2026-01-01T00:00:00Z", sections={"Narrative": "okapi sighting"}))
    updated = old.replace("Refresh tokens rotate on every use.", "Rotation, updated by a dead writer.")
    write_pending(home, [
        JournalRecord(id="20260101T000000-aaaaaa", at="2026-01-01T00:00:00Z", op="ADD", path="zoo/animals/okapi.md",
                      reason="crashed", actor="dead", before=None, after=new_text),
        JournalRecord(id="20260101T000000-bbbbbb", at="2026-01-01T00:00:00Z", op="UPDATE",
                      path="auth/jwt/rotation.md", reason="crashed", actor="dead", before=old, after=updated),
    ])
    # the dead writer got as far as the first file
    (home / "tree/zoo/animals").mkdir(parents=True)
    (home / "tree/zoo/animals/okapi.md").write_text(new_text)
    with Memory.open(tmp_path / "r", durable=False) as m:
        assert any("completed an interrupted batch of 2 operation(s)" in n for n in m.tree.notices)
        assert not (home / "journal/pending.json").exists()
        assert (home / "tree/zoo/animals/okapi.md").read_text() == new_text
        assert (home / "tree/auth/jwt/rotation.md").read_text() == updated
        assert (home / "tree/zoo/animals/context.md").is_file()
        assert [r.id for r in m.history(2)] == ["20260101T000000-bbbbbb", "20260101T000000-aaaaaa"]
        assert [h.path for h in m.search("okapi sighting")] == ["zoo/animals/okapi.md"]
        assert m.doctor().ok
        # and the rolled-forward ops can be undone like any other
        m.undo("20260101T000000-aaaaaa")
        assert not (home / "tree/zoo").exists()


def test_pending_batch_rolled_forward_once(tmp_path) -> None:
    """A crash after the journal append but before pending.json was cleared."""
    with Memory.open(tmp_path / "o", create=True, durable=False) as m:
        [res] = m.curate(SEED)
        rec = m.history(1)[0]
        home = m.home
    write_pending(home, [rec])
    with Memory.open(tmp_path / "o", durable=False) as m:
        assert [r.id for r in m.history()] == [res.id]
        assert m.doctor().ok


def test_unreadable_pending_file(tmp_path) -> None:
    with Memory.open(tmp_path / "u", create=True, durable=False) as m:
        m.curate(SEED)
        home = m.home
        before = files_of(m)
    (home / "journal/pending.json").write_text("{torn")
    # a torn write-ahead file cannot be rolled forward: it is set aside (never deleted), with a notice
    with Memory.open(tmp_path / "u", durable=False) as m:
        assert any("set aside a damaged write-ahead file" in n for n in m.tree.notices)
        assert files_of(m) == before
        assert m.doctor().ok
    assert [p.read_text() for p in (home / "journal").glob("pending.json.damaged-*")] == ["{torn"]


# a lone surrogate is what Python makes of undecodable bytes in an argument, or of a JSON "\ud800"
# escape: it cannot be written as UTF-8, and used to fail halfway (UnicodeEncodeError from the
# journal's pending file, the query log) instead of being refused up front
LONE = "notes \ud800 here"


def test_a_lone_surrogate_in_an_operation_is_refused_and_nothing_is_written(seeded) -> None:
    before = files_of(seeded)
    for field in ("content", "title", "reason", "path"):
        op = dict(SEED[0], path="auth/jwt/other.md") | {field: LONE if field != "path" else "auth/\ud800/x.md"}
        with pytest.raises(BatchRejected, match=r"lone surrogate \(U\+D800\)"):
            seeded.curate([op])
    assert files_of(seeded) == before


def test_a_lone_surrogate_in_text_or_a_question_is_a_clear_error(seeded) -> None:
    before = files_of(seeded)
    with pytest.raises(InvalidInput, match=r"the text contains a lone surrogate \(U\+D800\) at character 6"):
        seeded.ingest(text=LONE)
    with pytest.raises(InvalidInput, match=r"the question contains a lone surrogate"):
        seeded.query("what about \udcff rotation?")
    assert files_of(seeded) == before
    assert seeded.query("refresh rotation").sources   # the cache and query log still work

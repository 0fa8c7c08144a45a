"""The five curate operations, batch validation, relations and context.md files."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memgrove import BatchRejected, Memory
from memgrove.tree.entries.entry import parse


def op(kind: str, path: str, **fields: Any) -> dict[str, Any]:
    return {"op": kind, "path": path, "reason": fields.pop("reason", "test"), **fields}


def text_of(mem: Memory, rel: str) -> str:
    return (mem.home / "tree" / rel).read_text(encoding="utf-8")


class Clock:
    """A settable clock for createdAt/updatedAt."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc))


@pytest.fixture
def cmem(tmp_path: Path, clock: Clock):
    m = Memory.open(tmp_path / "clocked", create=True, durable=False, clock=clock)
    yield m
    m.close()


# -- ADD ------------------------------------------------------------------------

def test_add_creates_entry_with_result(mem) -> None:
    [res] = mem.curate([op("ADD", "Auth/JWT/Refresh Rotation", title="Refresh rotation",
                           content="Refresh tokens rotate on every use.", tags=["auth"], summary="Rotates.")])
    assert (res.op, res.path, res.status) == ("ADD", "auth/jwt/refresh_rotation.md", "added")
    assert res.message == "added auth/jwt/refresh_rotation.md"
    assert res.id
    e = mem.read("auth/jwt/refresh_rotation.md")
    assert e.title == "Refresh rotation"
    assert e.summary == "Rotates."
    assert e.tags == ["auth"]
    assert e.sections == {"Narrative": "Refresh tokens rotate on every use."}
    assert e.created_at == e.updated_at != ""


def test_add_fails_if_entry_exists(mem, snapshot) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="X", content="first")])
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate([op("ADD", "a/b/x.md", title="X", content="second")])
    assert len(info.value.errors) == 1
    assert "already exists" in info.value.errors[0] and "UPSERT" in info.value.errors[0]
    assert snapshot() == before
    assert mem.read("a/b/x.md").sections["Narrative"] == "first"


def test_add_without_title_takes_it_from_path(mem) -> None:
    mem.curate([op("ADD", "a/b/token_lifetimes.md", content="x")])
    assert mem.read("a/b/token_lifetimes.md").title == "Token lifetimes"


def test_add_needs_content_or_title(mem) -> None:
    with pytest.raises(BatchRejected, match="needs 'content'"):
        mem.curate([op("ADD", "a/b/x.md")])


def test_add_at_subtopic_depth(mem) -> None:
    mem.curate([op("ADD", "a/b/c/x.md", title="Deep", content="deep")])
    assert mem.read("a/b/c/x.md").title == "Deep"
    for folder in ("a", "a/b", "a/b/c"):
        assert (mem.home / "tree" / folder / "context.md").is_file()


# -- UPDATE -----------------------------------------------------------------------

def test_update_fails_if_absent(mem, snapshot) -> None:
    before = snapshot()
    with pytest.raises(BatchRejected, match="does not exist; use ADD or UPSERT"):
        mem.curate([op("UPDATE", "a/b/x.md", content="y")])
    assert snapshot() == before


def test_update_unions_lists_and_facts(mem, cmem, clock) -> None:
    cmem.curate([op("ADD", "a/b/x.md", title="X", tags=["t1", "t2"], keywords=["k1"], related=["a/b/y.md"],
                    summary="old summary", sources=[{"kind": "text", "ref": "r1"}],
                    content={"narrative": "old narrative", "facts": ["fact one", "fact two"]})])
    created = cmem.read("a/b/x.md").created_at
    clock.advance(hours=1)
    [res] = cmem.curate([op("UPDATE", "a/b/x.md", tags=["t2", "t3"], keywords=["k2"], related=["a/c/z.md"],
                            sources=[{"kind": "text", "ref": "r2"}],
                            content={"narrative": "new narrative", "facts": ["fact two", "fact three"]})])
    assert res.status == "updated"
    e = cmem.read("a/b/x.md")
    assert e.tags == ["t1", "t2", "t3"]
    assert e.keywords == ["k1", "k2"]
    assert e.related == ["a/b/y.md", "a/c/z.md"]
    assert e.sources == [{"kind": "text", "ref": "r1"}, {"kind": "text", "ref": "r2"}]
    assert e.facts == ["- fact one", "- fact two", "- fact three"]
    assert e.sections["Narrative"] == "new narrative"   # a given section replaces the old text
    assert e.summary == "old summary"                    # not given: kept
    assert e.title == "X"
    assert e.created_at == created
    assert e.updated_at == "2026-01-01T13:00:00Z"


def test_update_keeps_sections_not_mentioned(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="X", content={"raw_concept": {"task": "t"}, "narrative": "n"})])
    mem.curate([op("UPDATE", "a/b/x.md", content={"facts": ["f"]})])
    e = mem.read("a/b/x.md")
    assert list(e.sections) == ["Raw Concept", "Narrative", "Facts"]
    assert e.sections["Narrative"] == "n"


def test_update_with_replace_replaces(cmem, clock) -> None:
    cmem.curate([op("ADD", "a/b/x.md", title="X", tags=["t1"], keywords=["k1"], related=["a/b/y.md"],
                    content={"narrative": "old", "facts": ["f1"]}, extra={"owner": "ana"})])
    created = cmem.read("a/b/x.md").created_at
    clock.advance(days=1)
    cmem.curate([op("UPDATE", "a/b/x.md", replace=True, tags=["t2"], content={"facts": ["f2"]})])
    e = cmem.read("a/b/x.md")
    assert e.tags == ["t2"]
    assert e.keywords == [] and e.related == []
    assert e.facts == ["- f2"]
    assert "Narrative" not in e.sections
    assert e.title == "X"                 # not given: kept
    assert e.created_at == created        # history of the entry is kept
    assert e.extra == {"owner": "ana"}    # unknown keys are kept


def test_update_can_rename_title(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="Old", content="c")])
    mem.curate([op("UPDATE", "a/b/x.md", title="New  title", summary="now with summary")])
    e = mem.read("a/b/x.md")
    assert (e.title, e.summary) == ("New title", "now with summary")
    assert text_of(mem, "a/b/x.md").split("---\n", 2)[2].startswith("# New title\n")


def test_update_with_nothing_new_changes_nothing(cmem, clock) -> None:
    cmem.curate([op("ADD", "a/b/x.md", title="X", tags=["t"], content={"narrative": "n", "facts": ["f"]})])
    f = cmem.home / "tree/a/b/x.md"
    text, mtime = f.read_text(), f.stat().st_mtime_ns
    fingerprint = cmem.fingerprint()
    clock.advance(days=1)
    [res] = cmem.curate([op("UPDATE", "a/b/x.md", tags=["t"], content={"facts": ["f"]})])
    assert (res.status, res.id) == ("unchanged", "")
    assert res.message == "unchanged a/b/x.md: already up to date"
    assert f.read_text() == text and f.stat().st_mtime_ns == mtime   # updatedAt not bumped, file not rewritten
    assert len(cmem.history()) == 1                                   # nothing to journal
    assert cmem.tree.signals.get("a/b/x.md").update_count == 0        # and no update bonus
    assert cmem.fingerprint() == fingerprint
    # in a batch with real changes only the real ones are journaled
    results = cmem.curate([op("UPSERT", "a/b/x.md", title="X", tags=["t"]), op("UPSERT", "a/b/y.md", title="Y", content="y")])
    assert [r.status for r in results] == ["unchanged", "added"]
    assert [r.op for r in cmem.history()] == ["UPSERT", "ADD"]


# -- UPSERT -----------------------------------------------------------------------

def test_upsert_adds_then_updates(mem) -> None:
    [r1] = mem.curate([op("UPSERT", "a/b/x.md", title="X", tags=["a"], content="one")])
    assert (r1.op, r1.status) == ("UPSERT", "added")
    [r2] = mem.curate([op("UPSERT", "a/b/x.md", tags=["b"], content="two")])
    assert (r2.op, r2.status) == ("UPSERT", "updated")
    e = mem.read("a/b/x.md")
    assert e.tags == ["a", "b"]
    assert e.sections["Narrative"] == "two"


# -- MERGE ------------------------------------------------------------------------

def test_merge_combines_and_deletes_source(cmem, clock) -> None:
    tree = cmem.home / "tree"
    cmem.curate([op("ADD", "a/t/source.md", title="Source", tags=["y", "x"], keywords=["ks"],
                    summary="source summary", sources=[{"kind": "text", "ref": "s"}],
                    content={"narrative": "source text", "facts": ["f2", "f1"], "notes": "source notes"})])
    clock.advance(days=2)
    cmem.curate([op("ADD", "a/t/target.md", title="Target", tags=["x"], keywords=["kt"],
                    sources=[{"kind": "text", "ref": "t"}], related=["a/t/source.md"],
                    content={"narrative": "target text", "facts": ["f1"]}),
                 op("ADD", "b/u/linker.md", title="Linker", related=["a/t/source.md", "c/d/other.md"],
                    content="see the source")])
    clock.advance(days=1)
    [res] = cmem.curate([op("MERGE", "a/t/source.md", merge_into="a/t/target.md")])
    assert (res.op, res.path, res.status) == ("MERGE", "a/t/source.md", "merged")
    assert "into a/t/target.md" in res.message
    assert not (tree / "a/t/source.md").exists()
    e = cmem.read("a/t/target.md")
    assert e.title == "Target"
    assert e.tags == ["x", "y"]
    assert e.keywords == ["kt", "ks"]
    assert e.sources == [{"kind": "text", "ref": "t"}, {"kind": "text", "ref": "s"}]
    assert e.sections["Narrative"] == "target text\n\nsource text"   # target first, then source
    assert e.facts == ["- f1", "- f2"]
    assert e.sections["Notes"] == "source notes"
    assert e.summary == "source summary"   # target had none
    assert e.created_at == "2026-01-01T12:00:00Z"   # the earliest
    assert e.updated_at == "2026-01-04T12:00:00Z"
    assert e.related == []                          # no self-link after the merge
    # backlinks of the source now point at the target
    assert cmem.read("b/u/linker.md").related == ["a/t/target.md", "c/d/other.md"]
    forward, back = cmem.tree.links("a/t/target.md")
    assert back == ["b/u/linker.md"]
    assert cmem.tree.links("a/t/source.md") == ([], [])
    paths = [h.path for h in cmem.search("source text")]
    assert paths[0] == "a/t/target.md" and "a/t/source.md" not in paths


def test_merge_combines_signals(mem) -> None:
    mem.curate([op("ADD", "a/t/s.md", title="S", content="s"), op("ADD", "a/t/t.md", title="T", content="t")])
    sig = mem.tree.signals
    sig.record_access(["a/t/s.md"])
    sig.record_access(["a/t/s.md"])                  # s: 56, accessed twice
    sig.record_update(["a/t/t.md"])                  # t: 55, updated once
    sig.record_access(["a/t/t.md"])                  # t: 58, accessed once
    mem.curate([op("MERGE", "a/t/s.md", merge_into="a/t/t.md")])
    t = sig.get("a/t/t.md")
    assert t.importance == 58.0
    assert t.access_count == 3
    assert t.update_count == 1
    assert sig.get_many(["a/t/s.md"])["a/t/s.md"].importance == 50.0  # the source's row is gone


def test_merge_importance_takes_the_max_from_source(mem) -> None:
    mem.curate([op("ADD", "a/t/s.md", title="S", content="s"), op("ADD", "a/t/t.md", title="T", content="t")])
    sig = mem.tree.signals
    for _ in range(4):
        sig.record_update(["a/t/s.md"])              # s: 70, validated
    mem.curate([op("MERGE", "a/t/s.md", merge_into="a/t/t.md")])
    t = sig.get("a/t/t.md")
    assert t.importance == 70.0
    assert t.update_count == 4
    assert t.maturity == "validated"


@pytest.mark.parametrize(
    ("ops", "fragment"),
    [
        ([op("MERGE", "a/t/missing.md", merge_into="a/t/t.md")], "source a/t/missing.md does not exist"),
        ([op("MERGE", "a/t/t.md", merge_into="a/t/missing.md")], "target a/t/missing.md does not exist"),
        ([op("MERGE", "a/t/t.md")], "needs 'merge_into'"),
        ([op("MERGE", "a/t/t.md", merge_into="a/t/t.md")], "the same entry"),
    ],
)
def test_merge_errors(mem, snapshot, ops, fragment) -> None:
    mem.curate([op("ADD", "a/t/t.md", title="T", content="t")])
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate(ops)
    assert len(info.value.errors) == 1 and fragment in info.value.errors[0]
    assert snapshot() == before


# -- DELETE -----------------------------------------------------------------------

def test_delete_entry_removes_links_to_it(mem) -> None:
    mem.curate([op("ADD", "a/t/x.md", title="X", content="quokkaword"),
                op("ADD", "a/t/y.md", title="Y", content="y"),
                op("ADD", "b/u/l.md", title="L", related=["a/t/x.md", "a/t/y.md"], content="l")])
    assert [h.path for h in mem.search("quokkaword") if h.matched] == ["a/t/x.md"]
    [res] = mem.curate([op("DELETE", "a/t/x.md")])
    assert (res.status, res.message) == ("deleted", "deleted a/t/x.md")
    assert not (mem.home / "tree/a/t/x.md").exists()
    assert mem.read("b/u/l.md").related == ["a/t/y.md"]
    assert mem.tree.links("b/u/l.md")[0] == ["a/t/y.md"]
    assert mem.search("quokkaword") == []


def test_delete_missing_entry_fails(mem) -> None:
    with pytest.raises(BatchRejected, match="DELETE: a/t/x.md does not exist"):
        mem.curate([op("DELETE", "a/t/x.md")])


def test_delete_subtree(mem) -> None:
    mem.curate([op("ADD", "a/t/x.md", title="X", content="x"),
                op("ADD", "a/t/s/y.md", title="Y", content="y"),
                op("ADD", "a/k/keep.md", title="Keep", content="k", related=["a/t/x.md", "a/t/s/y.md"])])
    [res] = mem.curate([op("DELETE", "a/t")])
    assert res.status == "deleted"
    assert res.message == "deleted 2 entries under a/t/"
    tree = mem.home / "tree"
    assert not (tree / "a/t").exists()            # context files and folders went too
    assert (tree / "a/context.md").is_file()
    assert "t/context.md" not in text_of(mem, "a/context.md")
    assert mem.read("a/k/keep.md").related == []
    assert mem.count() == 3                        # keep.md, a/k/context.md, a/context.md


def test_delete_with_folder_and_title_deletes_one_entry(mem) -> None:
    mem.curate([op("ADD", "a/t/token_rotation.md", title="Token rotation", content="x"),
                op("ADD", "a/t/other.md", title="Other", content="y")])
    [res] = mem.curate([op("DELETE", "a/t", title="Token Rotation")])
    assert res.path == "a/t/token_rotation.md"
    assert mem.tree.entry_paths() == ["a/t/other.md"]


def test_delete_empty_folder_fails(mem) -> None:
    with pytest.raises(BatchRejected, match="has no entries"):
        mem.curate([op("DELETE", "nothing/here")])


# -- validation -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ({"op": "ADD", "path": "a/b/x.md", "title": "X"}, "'reason' is required"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "   "}, "'reason' is required"),
        ({"op": "RENAME", "path": "a/b/x.md", "reason": "r"}, "'op' must be one of"),
        ({"path": "a/b/x.md", "reason": "r"}, "'op' must be one of"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "colour": "red"}, "unknown field(s) 'colour'"),
        ({"op": "ADD", "title": "X", "reason": "r"}, "'path' is required"),
        ({"op": "ADD", "path": "a/b/x.md", "title": 5, "reason": "r"}, "'title' must be a string"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "tags": {"a": 1}}, "'tags' must be a list"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "sources": "s"}, "'sources' must be a list"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "related": ["../x"]}, "'..'"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "extra": {"title": "y"}}, "built-in"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "context": {"planet": "y"}}, "'context'"),
        ("not an op", "must be an object"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X\x00", "reason": "r"}, "NUL character"),
        ({"op": "ADD", "path": "a/b/x.md", "title": "X", "reason": "r", "content": {"facts": ["a\x00"]}},
         "NUL character"),
    ],
)
def test_invalid_ops(mem, snapshot, bad, fragment) -> None:
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate([bad])
    assert len(info.value.errors) == 1
    assert fragment in info.value.errors[0]
    assert info.value.errors[0].startswith("op 1")
    assert snapshot() == before


@pytest.mark.parametrize("ops", [[], None, "ADD a/b/c.md"])
def test_batch_must_be_a_non_empty_list(mem, ops) -> None:
    with pytest.raises(BatchRejected, match="non-empty list"):
        mem.curate(ops)


def test_op_not_allowed(mem) -> None:
    with pytest.raises(BatchRejected, match="DELETE is not allowed"):
        mem.curate([op("DELETE", "a/b/x.md")], allowed=("ADD", "UPSERT"))


def test_one_invalid_op_writes_nothing(mem, snapshot) -> None:
    mem.curate([op("ADD", "a/b/existing.md", title="E", content="e")])
    before = snapshot()
    fingerprint = mem.fingerprint()
    count = mem.count()
    with pytest.raises(BatchRejected) as info:
        mem.curate([
            op("ADD", "a/b/new1.md", title="New one", content="zyxwvut"),
            op("UPDATE", "a/b/existing.md", content="changed"),
            {"op": "ADD", "path": "a/b/new2.md", "title": "no reason"},
            op("DELETE", "a/b/existing.md"),
            op("ADD", "../escape.md", title="x"),
        ])
    assert len(info.value.errors) == 2
    assert info.value.errors[0].startswith("op 3 (ADD a/b/new2.md)")
    assert info.value.errors[1].startswith("op 5 (ADD ../escape.md)")
    assert "2 invalid operations" in str(info.value)
    assert snapshot() == before
    assert mem.fingerprint() == fingerprint
    assert mem.count() == count
    assert mem.search("zyxwvut") == []
    assert len(mem.history()) == 1


def test_ops_in_a_batch_see_earlier_ops(mem) -> None:
    results = mem.curate([
        op("ADD", "a/b/x.md", title="X", tags=["one"], content="first"),
        op("UPDATE", "a/b/x.md", tags=["two"]),
        op("ADD", "a/b/y.md", title="Y", content="why", related=["a/b/x.md"]),
        op("MERGE", "a/b/x.md", merge_into="a/b/y.md"),
        op("UPSERT", "a/b/x.md", title="X again", content="second"),
    ])
    assert [r.status for r in results] == ["added", "updated", "added", "merged", "added"]
    y = mem.read("a/b/y.md")
    assert y.tags == ["one", "two"]
    assert y.related == []
    assert mem.read("a/b/x.md").title == "X again"


def test_later_op_fails_on_effect_of_earlier_op(mem, snapshot) -> None:
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate([op("ADD", "a/b/x.md", title="X", content="1"), op("ADD", "a/b/x.md", title="X", content="2"),
                    op("DELETE", "a/b/y.md")])
    assert len(info.value.errors) == 2
    assert "op 2" in info.value.errors[0] and "already exists" in info.value.errors[0]
    assert "op 3" in info.value.errors[1]
    assert snapshot() == before


# -- context.md -------------------------------------------------------------------

def test_context_md_at_every_level_with_listing(mem) -> None:
    mem.curate([op("ADD", "auth/jwt/rotation.md", title="Refresh rotation", summary="Rotate on use.", content="x"),
                op("ADD", "auth/jwt/keys/signing.md", title="Signing keys", content="y"),
                op("ADD", "auth/sessions/store.md", title="Session store", content="z")])
    tree = mem.home / "tree"
    for folder in ("auth", "auth/jwt", "auth/jwt/keys", "auth/sessions"):
        assert (tree / folder / "context.md").is_file(), folder
    assert not (tree / "context.md").exists()
    jwt = parse(text_of(mem, "auth/jwt/context.md"))
    listing = jwt.sections["Contents"]
    assert "- [Keys](keys/context.md) — folder" in listing
    assert "- [Refresh rotation](rotation.md) — Rotate on use." in listing
    auth = parse(text_of(mem, "auth/context.md")).sections["Contents"]
    assert "(jwt/context.md)" in auth and "(sessions/context.md)" in auth
    # context files are indexed, entries and contexts alike
    assert mem.count() == 3 + 4


def test_context_overview_is_kept(mem) -> None:
    mem.curate([op("ADD", "auth/jwt/a.md", title="A", content="a",
                   context={"domain": "Everything about authentication.", "topic": "JSON Web Tokens."})])
    assert parse(text_of(mem, "auth/context.md")).sections["Overview"] == "Everything about authentication."
    assert parse(text_of(mem, "auth/jwt/context.md")).sections["Overview"] == "JSON Web Tokens."
    # a later op without context keeps the overview and refreshes the listing
    mem.curate([op("ADD", "auth/jwt/b.md", title="B entry", content="b")])
    ctx = parse(text_of(mem, "auth/jwt/context.md"))
    assert ctx.sections["Overview"] == "JSON Web Tokens."
    assert "[B entry](b.md)" in ctx.sections["Contents"]
    # and a new overview replaces it
    mem.curate([op("UPDATE", "auth/jwt/b.md", content="b2", context={"topic": "JWTs, revised."})])
    assert parse(text_of(mem, "auth/jwt/context.md")).sections["Overview"] == "JWTs, revised."
    hits = mem.search("revised")
    assert hits and hits[0].path == "auth/jwt/context.md"


def test_context_disappears_when_folder_is_emptied(mem) -> None:
    mem.curate([op("ADD", "auth/jwt/a.md", title="A", content="a"),
                op("ADD", "auth/sessions/s.md", title="S", content="s")])
    tree = mem.home / "tree"
    mem.curate([op("DELETE", "auth/jwt/a.md")])
    assert not (tree / "auth/jwt").exists()
    assert "jwt" not in parse(text_of(mem, "auth/context.md")).sections["Contents"]
    mem.curate([op("DELETE", "auth/sessions/s.md")])
    assert not (tree / "auth").exists()
    assert mem.count() == 0
    assert mem.doctor().ok


def test_reserved_and_hidden_files_are_not_listed(mem) -> None:
    mem.curate([op("ADD", "auth/jwt/a.md", title="A", content="a")])
    (mem.home / "tree/auth/jwt/_draft.md").write_text("# Draft\n")
    mem.curate([op("ADD", "auth/jwt/b.md", title="B", content="b")])
    listing = parse(text_of(mem, "auth/jwt/context.md")).sections["Contents"]
    assert "_draft" not in listing and "[A](a.md)" in listing and "[B](b.md)" in listing


def test_list_folder(mem) -> None:
    mem.curate([op("ADD", "auth/jwt/a.md", title="A", summary="sa", content="a",
                   context={"topic": "About JWT."}),
                op("ADD", "auth/jwt/keys/k.md", title="K", content="k")])
    listing = mem.list("auth/jwt")
    assert listing["path"] == "auth/jwt"
    assert listing["overview"] == "About JWT."
    # each entry as a list shows it: the fields read from its file (tags, dates, validity) too
    [row] = listing["entries"]
    assert {k: row[k] for k in ("path", "title", "summary", "tags", "superseded_by")} == \
        {"path": "auth/jwt/a.md", "title": "A", "summary": "sa", "tags": [], "superseded_by": ""}
    assert row["created"] and row["updated"]
    assert listing["folders"] == [{"path": "auth/jwt/keys", "title": "Keys", "entries": 1}]
    assert [f["path"] for f in mem.list()["folders"]] == ["auth"]

"""Property tests (hypothesis): paths, frontmatter round trips, and random
operation sequences after which tree, index and journal still agree."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgrove import BatchRejected, Entry, InvalidPath, JournalError, Memory, OperationConflict
from memgrove.tree.entries import frontmatter
from memgrove.tree.index.catalog import scan
from memgrove.tree.entries.entry import FIELD_ORDER, parse, serialize
from memgrove.tree.entries.paths import normalize_entry_path, normalize_folder

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")

# -- paths ----------------------------------------------------------------------------

segment_parts = st.sampled_from(list("abcXYZ019 _-.~/\\@:é ß\x00…") + ["..", "context", "Context.md", ".md"])
raw_paths = st.one_of(
    st.text(max_size=40),
    st.lists(st.lists(segment_parts, max_size=6).map("".join), min_size=0, max_size=6).map("/".join),
    st.lists(st.sampled_from(["..", ".", "", "a", "B c", "_x", ".y", "~", "d.md", "context.md", "Ünï"]),
             max_size=6).map("/".join),
)


def check_entry_path(p: str) -> None:
    assert p.endswith(".md")
    parts = p.split("/")
    assert ".." not in parts and "." not in parts
    assert not p.startswith("/") and "\\" not in p and "\x00" not in p
    assert 2 <= len(parts) - 1 <= 3
    assert parts[-1] != "context.md"
    for seg in parts[:-1] + [parts[-1][:-3]]:
        assert SNAKE.match(seg), seg


@FAST
@given(raw_paths)
def test_normalized_entry_paths_are_safe_and_idempotent(raw: str) -> None:
    try:
        p = normalize_entry_path(raw)
    except InvalidPath:
        return
    check_entry_path(p)
    assert normalize_entry_path(p) == p


@FAST
@given(raw_paths)
def test_normalized_folders_are_safe_and_idempotent(raw: str) -> None:
    try:
        f = normalize_folder(raw)
    except InvalidPath:
        return
    parts = f.split("/")
    assert 1 <= len(parts) <= 3
    assert all(SNAKE.match(s) for s in parts)
    assert normalize_folder(f) == f


# -- frontmatter round trips ------------------------------------------------------------

# NUL is refused by curate (no entry file may hold one), so entries never contain it
line_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r\x00"), max_size=30)
stripped = line_text.map(str.strip)
nonempty = stripped.filter(bool)
body_chars = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="#`~\r") | st.just("\n")
section_text = st.text(body_chars, max_size=80).map(lambda t: t.strip("\n")).filter(
    lambda t: t == "" or t.strip() != "")
section_name = nonempty.filter(lambda s: "\n" not in s)
source = st.fixed_dictionaries({"kind": st.sampled_from(["conversation", "file", "text"]), "ref": line_text,
                                "at": st.sampled_from(["2023-05-08T13:56:00Z", "2026-01-01", "", "yesterday"])})
extra_value = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), line_text,
                        st.lists(nonempty, max_size=3))
extra_key = nonempty.filter(lambda k: k not in FIELD_ORDER)

entries = st.builds(
    Entry,
    title=nonempty,
    summary=stripped,
    tags=st.lists(nonempty.filter(lambda s: "," not in s), unique=True, max_size=4),
    keywords=st.lists(nonempty, unique=True, max_size=4),
    related=st.lists(st.sampled_from(["a/b/c.md", "auth/jwt/x.md", "d/e/f/g.md"]), unique=True, max_size=3),
    created_at=st.one_of(st.just(""), st.sampled_from(["2026-12-02T10:00:00Z", "2026-12-02"]), stripped),
    updated_at=st.one_of(st.just(""), st.sampled_from(["2026-12-02T10:00:00Z", "1999-01-01 10:00:00"])),
    sources=st.lists(source, max_size=3),
    sections=st.dictionaries(section_name, section_text, max_size=4),
    extra=st.dictionaries(extra_key, extra_value, max_size=3),
)


@FAST
@given(entries)
def test_frontmatter_round_trip(e: Entry) -> None:
    text = serialize(e)
    back = parse(text)
    assert back == e
    assert serialize(back) == text
    assert text.split("---\n", 2)[2].startswith("# ")


any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
yaml_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), any_text),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3)
                          | st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), inner, max_size=3),
                          max_leaves=8)


plain_key = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ .-]{0,10}", fullmatch=True)


@FAST
@given(st.dictionaries(plain_key | any_text, yaml_value, max_size=6))
def test_libyaml_writes_what_the_pure_python_dumper_writes(data: dict) -> None:
    """Frontmatter is written by libyaml's emitter for speed; the text (and any refusal) must be
    byte for byte what PyYAML's own emitter writes, or every entry's diff would change."""
    def text_or_error(dumper: type) -> str:
        try:
            return frontmatter.dump(data, dumper=dumper)
        except yaml.YAMLError as exc:
            return type(exc).__name__
    assert text_or_error(None) == text_or_error(frontmatter._Dumper)


# -- random operation sequences ---------------------------------------------------------

PATHS = ["zoo/pen_a/one.md", "zoo/pen_a/two.md", "zoo/pen_b/three.md", "farm/barn/loft/four.md"]
TOKENS = ["walrus", "pelican", "gecko", "bison", "narwhal", "ocelot", "tapir", "lemur"]

curate_step = st.one_of(
    st.tuples(st.sampled_from(["ADD", "UPDATE", "UPSERT"]), st.integers(0, 3), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("MERGE"), st.integers(0, 3), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("DELETE"), st.integers(0, 3), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("SUPERSEDE"), st.integers(0, 3), st.integers(0, 3), st.booleans()),
    st.tuples(st.sampled_from(["ARCHIVE", "RESTORE"]), st.integers(0, 3), st.integers(0, 3), st.booleans()),
)
# a step is an undo, or a batch of one or two operations
step = st.one_of(
    st.tuples(st.just("UNDO"), st.integers(0, 20)),
    st.lists(curate_step, min_size=1, max_size=2).map(tuple),
)


def snapshot(home: Path) -> dict[str, bytes]:
    root = home / "tree"
    out = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    journal = home / "journal/journal.jsonl"
    out["<journal>"] = journal.read_bytes() if journal.exists() else b""
    return out


def to_op(kind: str, i: int, j: int, flag: bool) -> dict:
    path = PATHS[i]
    if kind == "MERGE":
        return {"op": "MERGE", "path": path, "merge_into": PATHS[j], "reason": "prop"}
    if kind == "SUPERSEDE":
        return {"op": "SUPERSEDE", "path": path, "by": PATHS[j], "reason": "prop",
                **({"since": "2026-03-02"} if flag else {})}
    if kind in ("ARCHIVE", "RESTORE"):
        return {"op": kind, "path": path, "reason": "prop"}
    if kind == "DELETE":
        if flag:   # a whole subtree
            return {"op": "DELETE", "path": path.rsplit("/", 2)[0], "reason": "prop"}
        return {"op": "DELETE", "path": path, "reason": "prop"}
    return {"op": kind, "path": path, "title": f"Entry {i}", "reason": "prop", "replace": flag and kind != "ADD",
            "tags": [TOKENS[j][:3]], "related": [PATHS[(i + 1) % 4]],
            "content": {"narrative": f"Notes mentioning {TOKENS[j]} today.", "facts": [f"fact {j}"]}}


def check_agreement(mem: Memory) -> None:
    root = mem.home / "tree"
    files = scan(root)
    entries = {p: (root / p).read_text() for p in files if not p.endswith("context.md")}
    # the index holds every file
    assert mem.count() == len(files)
    for token in TOKENS:
        expected = {p for p, text in entries.items() if re.search(rf"\b{token}\b", text)}
        found = {h.path for h in mem.tree.search(token, limit=50, record_access=False) if h.kind == "entry" and h.matched}
        if expected:
            assert found == expected, token
        else:
            assert not found & set(entries), token   # only fuzzy/prefix neighbours, never a false exact hit
    # replaying the journal's images reproduces the entries on disk
    replay: dict[str, str | None] = {}
    for rec in reversed(mem.history(limit=None)):
        for ch in rec.changes():
            if ch.path.endswith("context.md"):
                continue
            assert replay.get(ch.path) == ch.before, (rec.op, ch.path)
            replay[ch.path] = ch.after
    assert {p: t for p, t in replay.items() if t is not None and not p.startswith("@archive/")} == entries
    archive = mem.home / "archive"
    kept = {p: (archive / p).read_text() for p in scan(archive) if not p.endswith("context.md")} \
        if archive.is_dir() else {}
    assert {p[len("@archive/"):]: t for p, t in replay.items() if t is not None and p.startswith("@archive/")} == kept
    # the validity keys name each other both ways while both entries are in the tree
    for p, text in entries.items():
        by = parse(text).extra.get("supersededBy")
        if by in entries:
            assert p in parse(entries[by]).extra.get("supersedes", []), (p, by)
        for older in parse(text).extra.get("supersedes", []):
            if older in entries:
                assert parse(entries[older]).extra.get("supersededBy") == p, (older, p)
    # links in the catalog are those in the files
    for p, text in entries.items():
        assert mem.tree.links(p)[0] == sorted(parse(text).links())
    report = mem.doctor()
    assert report.ok, report.problems


@SLOW
@given(st.sets(st.integers(0, 3), max_size=4), st.lists(step, min_size=1, max_size=10))
def test_random_operation_sequences_keep_tree_index_and_journal_in_agreement(initial, steps) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(tmp, create=True, durable=False, profile="benchmark", gap_ratio=0.0)
        try:
            done: list[str] = []
            if initial:
                done += [r.id for r in mem.curate([to_op("ADD", i, i, False) for i in sorted(initial)])]
            for s in steps:
                before = snapshot(mem.home)
                try:
                    if s[0] == "UNDO":
                        if not done:
                            continue
                        results = [mem.undo(done[s[1] % len(done)])]
                    else:
                        results = mem.curate([to_op(*o) for o in s])
                except (BatchRejected, OperationConflict, JournalError):
                    assert snapshot(mem.home) == before   # a refused op writes nothing
                    continue
                done += [r.id for r in results if r.id]
            check_agreement(mem)
        finally:
            mem.close()

"""The verbatim curator never lets one input overwrite another (issue 13, item 4).

Different inputs that give one name (notes that open alike, two README.md, ids
``m-1`` and ``m_1``, names with no Latin letters) land in different entries,
in one batch and across calls; the same input curated again changes nothing.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgrove import InvalidInput, Memory
from memgrove.cli import cli
from memgrove.tree.inputs import curator
from memgrove.tree.entries.paths import normalize_entry_path
from memgrove.tree.inputs.placement import Owner, Placer

NOTE_A = "The deploy runbook says build on monday and ship on tuesday."
NOTE_B = "The deploy runbook says build nothing on friday, ever."


def words_of(mem: Memory, path: str) -> str:
    return mem.read(path).sections["Narrative"]


def assert_valid_paths(paths) -> None:
    for p in paths:
        assert normalize_entry_path(p) == p


@pytest.fixture()
def run(tmp_path, monkeypatch):
    """The CLI in a project folder (as tests/test_cli.py runs it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    runner = CliRunner()

    def invoke(*args: str):
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    invoke("init")
    return invoke


# -- free-text notes ------------------------------------------------------------------

def test_two_notes_with_the_same_opening_keep_both(mem) -> None:
    [a] = mem.ingest(text=NOTE_A)
    [b] = mem.ingest(text=NOTE_B)
    assert (a.status, b.status) == ("added", "added")
    day = a.path.split("/")[1]                      # the day's notes folder: one for both notes
    assert re.fullmatch(r"\d{4}_\d{2}_\d{2}", day)
    assert a.path == f"notes/{day}/the_deploy_runbook_says_build.md"
    assert b.path.startswith(f"notes/{day}/the_deploy_runbook_says_build_") and b.path != a.path
    assert words_of(mem, a.path) == NOTE_A and words_of(mem, b.path) == NOTE_B
    assert [h.path for h in mem.search("monday")] == [a.path]
    assert [h.path for h in mem.search("friday")] == [b.path]
    assert_valid_paths([a.path, b.path])
    # each finds its own entry again: nothing changes, in either order
    assert [(r.status, r.path) for r in mem.ingest(text=NOTE_B)] == [("unchanged", b.path)]
    assert [(r.status, r.path) for r in mem.ingest(text=NOTE_A)] == [("unchanged", a.path)]


def test_a_note_keeps_its_place_when_the_plain_name_is_freed(mem) -> None:
    [a] = mem.ingest(text=NOTE_A)
    [b] = mem.ingest(text=NOTE_B)
    mem.curate([{"op": "DELETE", "path": a.path, "reason": "drop note A"}])
    assert [(r.status, r.path) for r in mem.ingest(text=NOTE_B)] == [("unchanged", b.path)]


def test_an_entry_written_by_hand_is_not_taken_over(mem) -> None:
    mine = f"notes/{datetime.now(timezone.utc):%Y_%m_%d}/the_deploy_runbook_says_build.md"
    mem.curate([{"op": "ADD", "path": mine, "title": "Mine", "content": "written by hand", "reason": "by hand"}])
    [r] = mem.ingest(text=NOTE_A)
    assert r.status == "added" and r.path != mine
    assert words_of(mem, mine) == "written by hand"


def test_cli_second_note_with_the_same_opening_is_added(run) -> None:
    run("curate", NOTE_A)
    assert "1 added" in run("curate", NOTE_B)
    assert len(json.loads(run("search", "monday", "--json"))["hits"]) == 1
    assert len(json.loads(run("search", "friday", "--json"))["hits"]) == 1
    assert "1 unchanged" in run("curate", NOTE_A)


# -- files ---------------------------------------------------------------------------

def test_cli_two_readmes_in_one_call_keep_both(run, tmp_path, monkeypatch) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "README.md").write_text(f"# Readme\n\nProject {sub} installs with make-{sub}.\n")
    out = json.loads(run("curate", "-f", "a/README.md", "-f", "b/README.md", "--json"))["applied"]
    assert [r["status"] for r in out] == ["added", "added"]
    mem = Memory.open(tmp_path)
    refs = {p: mem.read(p).sources[0]["ref"] for p in (r["path"] for r in out)}
    assert sorted(refs.values()) == ["a/README.md#readme", "b/README.md#readme"]
    for path, ref in refs.items():
        assert words_of(mem, path) == f"Project {ref[0]} installs with make-{ref[0]}."
    assert_valid_paths(refs)
    # again, from a subfolder and in the other order: the same entries, unchanged
    monkeypatch.chdir(tmp_path / "a")
    again = CliRunner().invoke(cli, ["curate", "-f", "../b/README.md", "-f", "README.md", "--json"],
                               catch_exceptions=False)
    assert sorted((r["status"], r["path"]) for r in json.loads(again.output)["applied"]) == \
        sorted(("unchanged", p) for p in refs)


def test_a_readme_curated_later_does_not_replace_another(mem, tmp_path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "README.md").write_text(f"Project {sub} notes.\n")
    [a] = mem.ingest(files=[tmp_path / "a" / "README.md"])
    [b] = mem.ingest(files=[tmp_path / "b" / "README.md"])
    assert b.status == "added" and a.path != b.path
    assert words_of(mem, a.path) == "Project a notes." and words_of(mem, b.path) == "Project b notes."


def test_non_latin_file_names_get_distinct_stable_folders(mem, tmp_path) -> None:
    files = [tmp_path / "заметки.txt", tmp_path / "日记.txt"]
    files[0].write_text("Первая заметка: the boiler is serviced in May.")
    files[1].write_text("日记: the garden gate was painted green.")
    first = mem.ingest(files=files)
    assert [r.status for r in first] == ["added", "added"]
    assert first[0].path != first[1].path
    assert all(r.path.startswith("files/file_") for r in first)
    assert_valid_paths(r.path for r in first)
    assert "boiler" in words_of(mem, first[0].path) and "gate" in words_of(mem, first[1].path)
    assert [(r.status, r.path) for r in mem.ingest(files=files)] == [("unchanged", r.path) for r in first]


def test_a_section_named_context_is_curated_not_refused(mem, tmp_path) -> None:
    f = tmp_path / "design.md"
    f.write_text("# Design\n\nIntro.\n\n## Context\n\nWhy we built it.\n")
    results = mem.ingest(files=[f])
    assert [r.status for r in results] == ["added", "added"]
    assert results[1].path.startswith("files/design/context_")
    assert words_of(mem, results[1].path) == "Why we built it."


# -- conversations -------------------------------------------------------------------

def chat(cid: str, ids: list[str]) -> dict:
    return {"id": cid, "messages": [{"id": i, "speaker": "Ana", "text": f"message {n} says {i}"}
                                    for n, i in enumerate(ids)]}


@pytest.mark.parametrize("ids", [["m-1", "m_1"], ["一", "二", "三"], ["m 1", "M-1", "m_1"]])
def test_message_ids_that_give_one_name_keep_every_message(mem, ids) -> None:
    results = mem.ingest(conversation=chat("c1", ids))
    paths = [r.path for r in results]
    assert [r.status for r in results] == ["added"] * len(ids)
    assert len(set(paths)) == len(ids)
    assert [words_of(mem, p) for p in paths] == [f"message {n} says {i}" for n, i in enumerate(ids)]
    assert_valid_paths(paths)
    assert [(r.status, r.path) for r in mem.ingest(conversation=chat("c1", ids))] == \
        [("unchanged", p) for p in paths]
    assert mem.doctor().ok


def test_cli_all_cjk_message_ids_keep_every_message(run, tmp_path) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(chat("family", ["一", "二", "三"]), ensure_ascii=False))
    out = json.loads(run("curate", "--conversation", "chat.json", "--json"))["applied"]
    assert [r["status"] for r in out] == ["added"] * 3 and len({r["path"] for r in out}) == 3
    assert_valid_paths(r["path"] for r in out)


def test_a_message_added_later_with_a_clashing_id_is_kept(mem) -> None:
    [first] = mem.ingest(conversation=chat("c1", ["m-1"]))
    later = mem.ingest(conversation=chat("c1", ["m-1", "m_1"]))
    assert [r.status for r in later] == ["updated", "added"]   # m-1 gains a link to the next message
    assert later[0].path == first.path and later[1].path != first.path
    assert words_of(mem, first.path) == "message 0 says m-1"


def test_a_conversation_id_in_another_script_gets_a_folder_of_its_own(mem) -> None:
    a = mem.ingest(conversation=chat("家族", ["1"]))
    b = mem.ingest(conversation=chat("日记", ["1"]))
    folders = {a[0].path.split("/")[1], b[0].path.split("/")[1]}
    assert len(folders) == 2 and all(f.startswith("conversation_") for f in folders)
    assert [r.status for r in mem.ingest(conversation=chat("家族", ["1"]))] == ["unchanged"]


def test_an_entry_added_by_hand_to_a_conversation_does_not_move_it(mem) -> None:
    first = mem.ingest(conversation=chat("c1", ["m1", "m2"]))
    mem.curate([{"op": "ADD", "path": "conversations/c1/session_1/a_note.md", "title": "A note",
                 "content": "added by hand", "reason": "by hand"}])
    again = mem.ingest(conversation=chat("c1", ["m1", "m2"]))
    assert [(r.status, r.path) for r in again] == [("unchanged", r.path) for r in first]


def test_two_conversations_of_one_name_keep_their_own_folders(mem) -> None:
    a = mem.ingest(conversation=chat("c-1", ["1", "2"]))
    b = mem.ingest(conversation=chat("c_1", ["1", "2"]))
    assert [r.status for r in b] == ["added", "added"]
    folder_a, folder_b = a[0].path.split("/")[1], b[0].path.split("/")[1]
    assert folder_a == "c_1" and folder_b.startswith("c_1_")
    assert all(r.path.split("/")[1] == folder_b for r in b)
    assert mem.read(a[0].path).sources[0]["ref"] == "c-1#1"


# -- the mechanism -------------------------------------------------------------------

def test_placer_refuses_when_every_name_holds_another_input() -> None:
    placer = Placer(entry_sources=lambda path: [{"kind": "text", "ref": "someone else"}])
    with pytest.raises(InvalidInput, match="cannot place text t1: .*hold other inputs"):
        placer.entry("notes/x", "part_1", Owner("text", ("t1",)))


def test_an_input_another_writer_put_there_meanwhile_is_not_overwritten(mem, monkeypatch) -> None:
    """The places are chosen without the lock; under it, before writing, they are checked again."""
    path = f"notes/{datetime.now(timezone.utc):%Y_%m_%d}/the_deploy_runbook_says_build.md"
    recover = mem.tree.recover

    def another_writer_first() -> None:
        monkeypatch.setattr(mem.tree, "recover", recover)
        mem.curate([{"op": "ADD", "path": path, "title": "Other", "content": "other words", "reason": "race"}])
        recover()

    monkeypatch.setattr(mem.tree, "recover", another_writer_first)
    with pytest.raises(InvalidInput, match="now holds another input"):
        mem.ingest(text=NOTE_A)
    assert words_of(mem, path) == "other words"
    assert [r.path for r in mem.ingest(text=NOTE_A)] != [path]


# -- property: over any sequence of inputs, no entry ever changes hands --------------

class FakeTree:
    """Paths -> sources, as the curator's UPSERTs leave them; fails if one would change hands."""

    def __init__(self) -> None:
        self.sources: dict[str, list[dict]] = {}

    def folder_sources(self, folder: str) -> list[dict] | None:
        return next((self.sources[p] for p in sorted(self.sources) if p.startswith(folder + "/")), None)

    def placer(self) -> Placer:
        return Placer(self.sources.get, self.folder_sources)

    def apply(self, ops: list[dict]) -> None:
        assert len({o["path"] for o in ops}) == len(ops)
        for o in ops:
            assert normalize_entry_path(o["path"]) == o["path"]
            old = self.sources.get(o["path"])
            refs = {(s["kind"], s["ref"]) for s in o["sources"]}
            assert old is None or {(s["kind"], s["ref"]) for s in old} == refs, o["path"]
            self.sources[o["path"]] = o["sources"]


IDS = st.text(st.sampled_from(list("mM1-_ :.一二é")), min_size=1, max_size=4).filter(str.strip)
CONVERSATIONS = st.tuples(st.sampled_from(["c-1", "c_1", "C 1", "家", "日记"]),
                          st.lists(IDS, min_size=1, max_size=6, unique=True))
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.lists(CONVERSATIONS, min_size=1, max_size=4))
def test_no_message_ever_lands_on_another(calls) -> None:
    tree = FakeTree()
    for cid, ids in calls:
        tree.apply(curator.ops_from_conversation(chat(cid, ids), placer=tree.placer()))


@FAST
@given(st.lists(st.text(st.sampled_from(list("ab .\n")), max_size=12), min_size=1, max_size=5))
def test_no_note_ever_lands_on_another(tails) -> None:
    tree = FakeTree()
    for tail in tails:
        text = "One two three four five " + tail
        tree.apply(curator.ops_from_text(text, now=datetime(2026, 1, 1, tzinfo=timezone.utc), placer=tree.placer()))

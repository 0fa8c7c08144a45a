"""Folders of notes (tree/inputs/input_folders.py): `curate -f DIR` and `Memory.ingest(files=[dir])`
read markdown and text recursively, respect .gitignore and --exclude, and skip and count empty
and binary files instead of refusing the batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import InvalidInput
from memgrove.cli import cli
from memgrove.tree.inputs import input_folders


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    files = {
        "runbook.md": "# Deploys\n\nDeploys freeze on Fridays.\n",
        "team/people.txt": "Ana owns the billing service.\n",
        "team/deep/more/ideas.markdown": "# Ideas\n\nTry Kestrel for the queue.\n",
        "drafts/wip.md": "# WIP\n\nThe draft about zebras.\n",
        "build/out.md": "# Built\n\nGenerated file about walruses.\n",
        "scratch.md": "# Scratch\n\nScratch notes about otters.\n",
        "empty.md": "",
        "blank.txt": "  \n\n",
        "logo.md": None,
        "script.py": "print('not a note')\n",
        ".hidden/secret.md": "# Secret\n\nHidden words about lynxes.\n",
        ".gitignore": "build/\n*.log\n",
        "team/.gitignore": "deep/more/\n",
        "debug.log": "log words about herons\n",
    }
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
        else:
            p.write_text(text, encoding="utf-8")
    return root


def test_a_folder_is_read_recursively_minus_ignored_empty_and_binary_files(notes) -> None:
    # ignored folders (build/, team/deep/more/, drafts/) are not walked; files ignored by name are counted
    files, skipped = input_folders.expand([notes], exclude=["drafts/"])
    assert sorted(p.relative_to(notes).as_posix() for p in files) == ["runbook.md", "scratch.md", "team/people.txt"]
    assert skipped == {"ignored files": 1, "empty files": 2, "binary files": 1, "other files": 1}


def test_memory_ingest_takes_a_folder(mem, notes) -> None:
    results = mem.ingest(files=[notes], exclude=["scratch.md"])
    assert results.skipped["empty files"] == 2 and results.skipped["binary files"] == 1
    assert mem.search("Fridays deploys") and mem.search("billing Ana") and mem.search("zebras")
    for word in ("walruses", "otters", "lynxes", "herons", "Kestrel"):
        assert mem.search(word) == [], word
    again = mem.ingest(files=[notes], exclude=["scratch.md"])
    assert {r.status for r in again} == {"unchanged"}


def test_one_empty_file_among_many_is_skipped_and_counted(mem, tmp_path) -> None:
    paths = []
    for i in range(5):
        p = tmp_path / f"note_{i}.md"
        p.write_text(f"# Note {i}\n\nWords of note number {i}.\n" if i != 2 else "", encoding="utf-8")
        paths.append(p)
    results = mem.ingest(files=paths)
    assert len(results) == 4 and results.skipped == {"empty files": 1}


def test_a_missing_path_is_refused_before_anything_is_written(mem, notes) -> None:
    with pytest.raises(InvalidInput, match="cannot read"):
        mem.ingest(files=[notes, notes / "nope.md"])
    assert mem.count() == 0


def test_cli_curates_a_folder_with_exclude(tmp_path, notes, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    out = runner.invoke(cli, ["curate", "--verbatim", "-f", str(notes), "--exclude", "drafts", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["skipped"] == {"ignored files": 1, "empty files": 2, "binary files": 1, "other files": 1}
    refs = {s["ref"].split("#")[0] for r in report["applied"] for s in [runner_sources(tmp_path, r["path"])]}
    assert refs == {"notes/runbook.md", "notes/scratch.md", "notes/team/people.txt"}
    out = runner.invoke(cli, ["curate", "--verbatim", "-f", str(notes / "empty.md"), "-f", str(notes / "runbook.md")])
    assert out.exit_code == 0 and "skipped 1 empty file" in out.output


def runner_sources(project: Path, path: str) -> dict:
    from memgrove import Memory

    with Memory.open(project) as m:
        return m.read(path).sources[0]

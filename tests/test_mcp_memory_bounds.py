"""The memory tool under hostile sizes and paths: bounded work, bounded answers, clear errors.

A call's text arguments and the file an edit produces are capped by ``max_input_bytes`` and
refused before the writer lock is taken; a repeated ``old_str`` is reported in one pass with a
bounded list of lines; a path the file system cannot take is an ``InvalidPath``, never a raw
``OSError``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.mcp.memory_files import MemoryFiles
from memgrove.tree.base.errors import InvalidInput, InvalidPath

P = "/memories/notes/general/big.md"


def test_a_repeated_old_str_is_reported_with_a_bounded_list_of_lines(mem):
    files = MemoryFiles(mem)
    files.create(path=P, file_text="# Big\n\n" + "a\n" * 50_000)
    with pytest.raises(InvalidInput) as exc:
        files.str_replace(path=P, old_str="a", new_str="b")
    message = str(exc.value)
    assert "in lines: 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... and 49,990 more. Please ensure it is unique" in message
    assert "\n" not in message and len(message) < 300
    assert [r.op for r in mem.history(limit=None)] == ["ADD"]


def test_a_repeated_old_str_over_several_lines_counts_each_occurrence_once(mem):
    files = MemoryFiles(mem)
    files.create(path=P, file_text="# Big\n\nab\nab\nx ab ab\nx\nx\nx\nx\n")
    with pytest.raises(InvalidInput, match=r"in lines: 3, 4, 5, 5\. Please"):
        files.str_replace(path=P, old_str="ab", new_str="c")
    # as str.count counts them: occurrences do not overlap
    with pytest.raises(InvalidInput, match=r"in lines: 6, 8\. Please"):
        files.str_replace(path=P, old_str="x\nx", new_str="c")


@pytest.fixture
def small(tmp_path: Path):
    """A memory taking at most 1,000 bytes per input, whose writer lock another thread holds:
    a call that waited for the lock would fail with LockTimeout after 0.3 s."""
    with Memory.open(tmp_path / "p", create=True, durable=False, max_input_bytes=1000,
                     lock_timeout=0.3) as mem:
        files = MemoryFiles(mem)
        files.create(path=P, file_text="# Big\n\n" + "x\n" * 200)
        taken, release = threading.Event(), threading.Event()

        def holder() -> None:
            with mem.tree.lock.hold():
                taken.set()
                release.wait(30)

        t = threading.Thread(target=holder)
        t.start()
        taken.wait(10)
        try:
            yield mem, files
        finally:
            release.set()
            t.join(10)


@pytest.mark.parametrize("command, args, name", [
    ("create", {"path": "/memories/notes/general/new.md", "file_text": "é" * 501}, "file_text"),
    ("str_replace", {"path": P, "old_str": "y" * 1001, "new_str": ""}, "old_str"),
    ("str_replace", {"path": P, "old_str": "x", "new_str": "y" * 1001}, "new_str"),
    ("insert", {"path": P, "insert_line": 0, "insert_text": "y" * 1001}, "insert_text"),
])
def test_text_arguments_past_max_input_bytes_are_refused_before_the_lock(small, command, args, name):
    mem, files = small
    with pytest.raises(InvalidInput) as exc:
        files.run(command, args)
    assert str(exc.value) == (f"'{name}' holds more than 1,000 bytes (setting max_input_bytes); "
                              "write a large file in several smaller edits")
    assert len(mem.history(limit=None)) == 1


@pytest.mark.parametrize("command, args", [
    ("str_replace", {"path": P, "old_str": "# Big", "new_str": "# Big " + "y" * 700}),
    ("insert", {"path": P, "insert_line": 3, "insert_text": "y" * 700}),
])
def test_an_edit_whose_file_would_pass_max_input_bytes_is_refused(tmp_path, command, args):
    with Memory.open(tmp_path / "p", create=True, durable=False, max_input_bytes=1000) as mem:
        files = MemoryFiles(mem)
        files.create(path=P, file_text="# Big\n\n" + "x\n" * 200)
        before = mem.tree.read_text("notes/general/big.md")
        with pytest.raises(InvalidInput, match=r"^No edit was performed: /memories/notes/general/big.md would "
                                               r"hold more than 1,000 bytes \(setting max_input_bytes\)"):
            files.run(command, args)
        assert mem.tree.read_text("notes/general/big.md") == before
        assert len(mem.history(limit=None)) == 1


LONG = "a" * 300


@pytest.mark.parametrize("command, args", [
    ("view", {"path": f"/memories/{LONG}"}),
    ("view", {"path": f"/memories/notes/{LONG}.md"}),
    ("str_replace", {"path": f"/memories/notes/general/{LONG}.md", "old_str": "x", "new_str": "y"}),
    ("insert", {"path": f"/memories/notes/general/{LONG}.md", "insert_line": 0, "insert_text": "y"}),
    ("delete", {"path": f"/memories/notes/{LONG}"}),
    ("rename", {"old_path": f"/memories/notes/{LONG}", "new_path": "/memories/notes/b"}),
    ("create", {"path": f"/memories/notes/general/{'é' * 128}.md", "file_text": "x"}),
])
def test_a_name_longer_than_the_file_system_allows_is_an_invalid_path(mem, command, args):
    files = MemoryFiles(mem)
    with pytest.raises(InvalidPath, match=r"has a name longer than 255 bytes$"):
        files.run(command, args)


def test_a_path_the_file_system_cannot_take_is_an_invalid_path_for_every_command(tmp_path):
    """Names each within limits, but the whole path past PATH_MAX: the kernel refuses it
    (ENAMETOOLONG), and the tool says so in one line instead of passing the OSError on."""
    root = tmp_path
    while len(str(root)) < 3600:
        root = root / ("d" * 200)
    os.makedirs(root)
    with Memory.open(root, create=True, durable=False) as mem:
        files = MemoryFiles(mem)
        deep = "/memories/" + "/".join(c * 250 for c in "abc")
        for command, args in [("view", {"path": deep}), ("view", {"path": deep + "/x.md"}),
                              ("delete", {"path": deep}),
                              ("str_replace", {"path": deep + "/x.md", "old_str": "a", "new_str": "b"})]:
            with pytest.raises(InvalidPath, match=f"^cannot {command} /memories/aaa.*: File name too long$"):
                files.run(command, args)
        assert mem.history(limit=None) == []


def test_insert_counts_lines_as_view_does_and_keeps_other_line_separators(mem):
    files = MemoryFiles(mem)
    files.create(path=P, file_text="# Big\n\nkeep\u2028this\x0cand\x1ethat\nlast\n")
    assert "     3\tkeep\u2028this\x0cand\x1ethat\n     4\tlast" in files.view(path=P)
    files.insert(path=P, insert_line=3, insert_text="inserted")
    assert "     3\tkeep\u2028this\x0cand\x1ethat\n     4\tinserted\n     5\tlast\n" in files.view(path=P)
    with pytest.raises(InvalidInput, match=r"within the range \[0, 5\]"):
        files.insert(path=P, insert_line=6, insert_text="x")

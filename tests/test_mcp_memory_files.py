"""The file-style memory tool (``memory_20250818``) over the tree, called in-process.

The same commands are exercised over a real MCP session in test_mcp_stdio.py; here each
semantic is pinned down: the path mapping, exactly-once str_replace, insert ranges, the
frontmatter kept across edits, every write journaled, renames keeping links, and hostile
paths refused without writing anything.
"""

from __future__ import annotations

import threading

import pytest

from memgrove import Memory
from memgrove.mcp.memory_files import MemoryFiles, file_text, resolve
from memgrove.tree.base.errors import InvalidInput, InvalidPath, MemgroveError

P = "/memories/notes/general/progress.md"


@pytest.fixture
def files(mem):
    return MemoryFiles(mem)


def test_paths_map_onto_tree_entries_and_folders():
    assert resolve("/memories").rel == ""
    assert resolve("/memories/").rel == ""
    assert resolve("/memories/auth").rel == "auth"
    assert resolve("/memories/auth/jwt/").rel == "auth/jwt"
    t = resolve("/memories/auth/jwt/refresh/rotation.md", write=True)
    assert (t.rel, t.is_file) == ("auth/jwt/refresh/rotation.md", True)


@pytest.mark.parametrize("path, says", [
    ("/etc/passwd", "Path must start with /memories"),
    ("/memoriesX/a/b/c.md", "Path must start with /memories"),
    ("memories/a/b/c.md", "Path must start with /memories"),
    ("/memories/../secrets.md", "would escape /memories"),
    ("/memories/a/../../x.md", "would escape /memories"),
    ("/memories/a/./b/c.md", "would escape /memories"),
    ("/memories/a//b/c.md", "empty segment"),
    ("/memories/a\\..\\b/c.md", "backslashes"),
    ("/memories/a/b/c\x00.md", "NUL"),
    ("/memories/progress.md", "files live at /memories/<domain>/<topic>"),
    ("/memories/a/progress.md", "files live at /memories/<domain>/<topic>"),
    ("/memories/a/b/c/d/e.md", "files live at /memories/<domain>/<topic>"),
    ("/memories/a/b/.hidden.md", "reserved"),
    ("/memories/a/b/context.md", "reserved for folder overviews"),
    ("/memories/Notes/General/Progress.md", "use /memories/notes/general/progress.md"),
    ("/memories/a/b/notes.txt", "memory files are markdown"),
    ("", "a path is required"),
])
def test_hostile_or_invalid_paths_are_refused_and_nothing_is_written(files, mem, path, says):
    before = mem.history(limit=None)
    with pytest.raises(InvalidPath, match=None) as exc:
        files.create(path=path, file_text="x")
    assert says in str(exc.value)
    assert "\n" not in str(exc.value)
    assert mem.history(limit=None) == before
    assert not list(mem.home.parent.glob("**/secrets.md"))


def test_create_then_view_shows_the_text_with_line_numbers(files, mem):
    assert files.create(path=P, file_text="# Progress\n- step 1 done\n- step 2 todo\n") == \
        f"File created successfully at: {P}"
    out = files.view(path=P)
    assert out.splitlines() == [f"Here's the content of {P} with line numbers:", "     1\t# Progress", "     2\t",
                                "     3\t- step 1 done", "     4\t- step 2 todo", "     5\t"]
    assert files.view(path=P, view_range=[3, 3]).splitlines()[1:] == ["     3\t- step 1 done"]
    assert files.view(path=P, view_range=[4, -1]).splitlines()[1:] == ["     4\t- step 2 todo", "     5\t"]
    with pytest.raises(InvalidInput, match="view_range"):
        files.view(path=P, view_range=[9, 10])
    entry = mem.read("notes/general/progress.md")
    assert entry.title == "Progress"
    assert entry.sources == [{"kind": "tool", "ref": "memory"}]


def test_create_without_a_heading_takes_the_title_from_the_name(files, mem):
    files.create(path="/memories/user/prefs/editor_settings.md", file_text="Tabs, not spaces.")
    assert mem.read("user/prefs/editor_settings.md").title == "Editor settings"
    assert "Tabs, not spaces." in files.view(path="/memories/user/prefs/editor_settings.md")


def test_create_refuses_an_existing_file_and_keeps_it(files, mem):
    files.create(path=P, file_text="first")
    with pytest.raises(InvalidInput, match=f"File {P} already exists"):
        files.create(path=P, file_text="second")
    assert "first" in files.view(path=P)


def test_view_of_a_directory_lists_two_levels(files):
    files.create(path=P, file_text="a")
    files.create(path="/memories/notes/general/deep/more.md", file_text="b")
    files.create(path="/memories/auth/jwt/rotation.md", file_text="c")
    out = files.view(path="/memories").splitlines()
    assert out[0] == "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:"
    names = [line.split("\t")[1] for line in out[1:]]
    assert names == ["/memories", "/memories/auth/", "/memories/auth/jwt/", "/memories/notes/",
                     "/memories/notes/general/"]
    names = [line.split("\t")[1] for line in files.view(path="/memories/notes/general").splitlines()[1:]]
    assert names == ["/memories/notes/general", "/memories/notes/general/deep/",
                     "/memories/notes/general/deep/more.md", "/memories/notes/general/progress.md"]
    assert not any("context.md" in n for n in names)
    with pytest.raises(InvalidPath, match="does not exist"):
        files.view(path="/memories/nothing/here")


def test_str_replace_needs_exactly_one_occurrence(files, mem):
    files.create(path=P, file_text="# Progress\n- step 1 done\n- step 2 done\n")
    with pytest.raises(InvalidInput, match=r"Multiple occurrences of old_str `done` in lines: 3, 4"):
        files.str_replace(path=P, old_str="done", new_str="x")
    with pytest.raises(InvalidInput, match="did not appear verbatim"):
        files.str_replace(path=P, old_str="step 3", new_str="x")
    with pytest.raises(InvalidInput, match=r"old_str `a\\nb`"):   # quoted on one line
        files.str_replace(path=P, old_str="a\nb", new_str="x")
    out = files.str_replace(path=P, old_str="- step 2 done", new_str="- step 2 shipped")
    assert out.startswith("The memory file has been edited.")
    assert "     4\t- step 2 shipped" in out
    assert "- step 2 shipped" in mem.tree.read_text("notes/general/progress.md")


def test_edits_keep_the_frontmatter_the_model_never_sees(files, mem):
    mem.curate([{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Rotation", "summary": "Tokens rotate.",
                 "content": "Refresh tokens rotate on every use.", "tags": ["auth"], "keywords": ["refresh"],
                 "related": ["auth/jwt/expiry.md"], "sources": [{"kind": "file", "ref": "design.md"}],
                 "reason": "seed"}])
    text = files.view(path="/memories/auth/jwt/rotation.md")
    assert "tags" not in text and "---" not in text
    files.str_replace(path="/memories/auth/jwt/rotation.md", old_str="every use", new_str="every single use")
    e = mem.read("auth/jwt/rotation.md")
    assert (e.title, e.summary, e.tags, e.keywords, e.related) == \
        ("Rotation", "Tokens rotate.", ["auth"], ["refresh"], ["auth/jwt/expiry.md"])
    assert e.sources == [{"kind": "file", "ref": "design.md"}]
    assert "Refresh tokens rotate on every single use." in e.body


def test_insert_at_top_middle_end_and_out_of_range(files, mem):
    files.create(path=P, file_text="# Progress\n\n- one\n- three")
    files.insert(path=P, insert_line=3, insert_text="- two\n")
    files.insert(path=P, insert_line=5, insert_text="- four")
    assert file_text(mem.tree.read_text("notes/general/progress.md")) == "# Progress\n\n- one\n- two\n- three\n- four\n"
    with pytest.raises(InvalidInput, match=r"Invalid `insert_line` parameter: 9. It should be within the range \[0, 6\]"):
        files.insert(path=P, insert_line=9, insert_text="x")
    # a body line starting with "# " is body, not a second title
    files.insert(path=P, insert_line=2, insert_text="# Not the title")
    assert mem.read("notes/general/progress.md").title == "Progress"
    assert "# Not the title" in mem.read("notes/general/progress.md").body


def test_every_write_is_journaled_with_the_command_as_reason_and_can_be_undone(files, mem):
    files.create(path=P, file_text="one")
    files.str_replace(path=P, old_str="one", new_str="two")
    files.insert(path=P, insert_line=0, insert_text="zero")
    files.rename(old_path=P, new_path="/memories/notes/general/log.md")
    files.delete(path="/memories/notes/general/log.md")
    ops = [(r.op, r.reason, r.actor) for r in reversed(mem.history(limit=None))]
    assert ops == [
        ("ADD", f"memory tool: create {P}", "memory-tool"),
        ("UPDATE", f"memory tool: str_replace {P}", "memory-tool"),
        ("UPDATE", f"memory tool: insert {P} after line 0", "memory-tool"),
        ("ADD", f"memory tool: rename {P} to /memories/notes/general/log.md", "memory-tool"),
        ("MERGE", f"memory tool: rename {P} to /memories/notes/general/log.md", "memory-tool"),
        ("DELETE", "memory tool: delete /memories/notes/general/log.md", "memory-tool"),
    ]
    mem.undo(mem.history(limit=1)[0].id)
    assert "two" in mem.tree.read_text("notes/general/log.md")


def test_rename_keeps_every_field_and_rewrites_links(files, mem):
    mem.curate([{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Rotation", "content": "Rotate.",
                 "tags": ["auth"], "sources": [{"kind": "file", "ref": "a.md"}], "reason": "seed"},
                {"op": "ADD", "path": "auth/jwt/expiry.md", "title": "Expiry", "content": "Expire.",
                 "related": ["auth/jwt/rotation.md"], "reason": "seed"}])
    created = mem.read("auth/jwt/rotation.md").created_at
    assert files.rename(old_path="/memories/auth/jwt/rotation.md", new_path="/memories/auth/tokens/rotation.md") \
        == "Successfully renamed /memories/auth/jwt/rotation.md to /memories/auth/tokens/rotation.md"
    moved = mem.read("auth/tokens/rotation.md")
    assert (moved.title, moved.tags, moved.sources, moved.created_at) == \
        ("Rotation", ["auth"], [{"kind": "file", "ref": "a.md"}], created)
    assert "Rotate." in moved.body
    assert not mem.tree.exists("auth/jwt/rotation.md")
    assert mem.read("auth/jwt/expiry.md").related == ["auth/tokens/rotation.md"]


def test_rename_and_delete_of_directories(files, mem):
    files.create(path="/memories/notes/general/a.md", file_text="alpha")
    files.create(path="/memories/notes/general/b.md", file_text="beta")
    files.rename(old_path="/memories/notes/general", new_path="/memories/notes/archive")
    assert sorted(mem.tree.entries_under("notes/archive")) == ["notes/archive/a.md", "notes/archive/b.md"]
    assert mem.tree.entries_under("notes/general") == []
    assert "/memories/notes/general" not in files.view(path="/memories")   # moved, not copied
    files.create(path="/memories/notes/other/c.md", file_text="c")
    with pytest.raises(InvalidPath, match="The destination /memories/notes/archive already exists"):
        files.rename(old_path="/memories/notes/other", new_path="/memories/notes/archive")
    assert files.delete(path="/memories/notes/archive") == "Successfully deleted /memories/notes/archive"
    assert mem.tree.entries_under("notes/archive") == []
    with pytest.raises(InvalidPath, match="Cannot delete the /memories directory itself"):
        files.delete(path="/memories")
    with pytest.raises(InvalidPath, match="does not exist"):
        files.delete(path="/memories/notes/archive/a.md")


def test_rename_refusals(files):
    files.create(path=P, file_text="a")
    files.create(path="/memories/notes/general/other.md", file_text="b")
    with pytest.raises(InvalidPath, match="The destination /memories/notes/general/other.md already exists"):
        files.rename(old_path=P, new_path="/memories/notes/general/other.md")
    with pytest.raises(InvalidPath, match="does not exist"):
        files.rename(old_path="/memories/notes/general/none.md", new_path="/memories/notes/general/x.md")
    with pytest.raises(InvalidPath, match="would escape"):
        files.rename(old_path=P, new_path="/memories/../../x.md")
    with pytest.raises(InvalidPath, match="a file to a file"):
        files.rename(old_path=P, new_path="/memories/notes/elsewhere")


def test_unknown_command_and_missing_arguments_are_fixable_errors(files):
    for command, args in [("explode", {}), ("create", {"path": P}), ("str_replace", {"path": P}),
                          ("insert", {"path": P, "insert_text": "x"}), ("view", {})]:
        with pytest.raises(MemgroveError) as exc:
            files.run(command, args)
        assert "\n" not in str(exc.value)


def test_create_with_frontmatter_keeps_its_fields(files, mem):
    files.create(path="/memories/auth/jwt/rotation.md",
                 file_text="---\ntitle: Rotation\nsummary: Tokens rotate.\ntags: [auth]\n"
                           "sources: [{kind: file, ref: design.md}]\n---\nRefresh tokens rotate.\n")
    e = mem.read("auth/jwt/rotation.md")
    assert (e.title, e.summary, e.tags, e.sources) == \
        ("Rotation", "Tokens rotate.", ["auth"], [{"kind": "file", "ref": "design.md"}])
    assert files.view(path="/memories/auth/jwt/rotation.md").splitlines()[1:] == \
        ["     1\t# Rotation", "     2\t", "     3\tRefresh tokens rotate.", "     4\t"]


def test_concurrent_edits_of_one_file_lose_nothing(tmp_path, mem):
    """Two writers (each its own Memory, as two agents would be) insert into the same file at
    once: every line lands, because each edit reads and writes under the writer lock."""
    MemoryFiles(mem).create(path=P, file_text="# Log")
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        with Memory.open(tmp_path) as own:
            files = MemoryFiles(own)
            try:
                for i in range(8):
                    files.insert(path=P, insert_line=1, insert_text=f"{name} {i}")
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    body = mem.read("notes/general/progress.md").body
    assert sorted(line for line in body.splitlines() if line.strip()) == \
        sorted(f"{n} {i}" for n in "ab" for i in range(8))


def test_a_hand_placed_file_is_edited_by_its_exact_name(files, mem):
    folder = mem.tree.root / "Team-Notes" / "On Call"
    folder.mkdir(parents=True)
    (folder / "Rota 2024.md").write_text("# Rota\n\nAna covers March.\n", encoding="utf-8")
    path = "/memories/Team-Notes/On Call/Rota 2024.md"
    assert "Ana covers March." in files.view(path=path)
    files.str_replace(path=path, old_str="Ana", new_str="Ben")
    assert "Ben covers March." in (folder / "Rota 2024.md").read_text(encoding="utf-8")
    assert not (mem.tree.root / "team_notes").exists()
    # a new file still needs the canonical form
    with pytest.raises(InvalidPath, match="use /memories/team_notes/on_call/x.md"):
        files.create(path="/memories/Team-Notes/On Call/x.md", file_text="x")
    files.delete(path=path)
    assert not (folder / "Rota 2024.md").exists()

"""The CLI, through click's CliRunner (and one real process for the console script)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.demo import sample_dir

SAMPLE = sample_dir()


@pytest.fixture()
def run(tmp_path, monkeypatch):
    """Invoke the CLI in a project folder; unexpected errors are not swallowed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True, input: str | None = None):
        result = runner.invoke(cli, list(args), input=input, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke("init")
    return invoke


def test_init_creates_memory_and_commands_find_it_from_a_subfolder(run, tmp_path, monkeypatch):
    assert (tmp_path / ".memgrove" / "tree").is_dir()
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    run("curate", "Refresh tokens rotate on every use.")
    assert Memory.open(tmp_path).search("refresh tokens")


def test_curate_conversation_then_search_json(run):
    out = run("curate", "--conversation", str(SAMPLE / "conversation.json"), "--json").output
    results = json.loads(out)["applied"]
    assert len(results) == 45 and all(r["status"] == "added" for r in results)
    data = json.loads(run("search", "Lisbon trip April", "--json").output)
    top = data["hits"][0]
    assert top["path"].startswith("conversations/team_chat/")
    assert top["sources"][0]["ref"].startswith("team_chat#")
    assert 0 < top["score"] < 1 and "Lisbon" in top["excerpt"]


def test_curate_files_and_text_say_they_are_verbatim(run):
    out = run("curate", "-f", str(SAMPLE / "notes" / "auth_design.md"), "-f", str(SAMPLE / "notes" / "deploy_runbook.md")).output
    assert "verbatim" in out and "added" in out
    out = run("curate", "-", input="Pixel is a border collie mix.\n").output
    assert "1 added" in out


def test_curate_ops_file_and_show_with_links(run, tmp_path):
    ops = [
        {"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Rotation", "content": "Rotate refresh tokens.",
         "reason": "design review", "related": ["auth/sessions/store.md"]},
        {"op": "ADD", "path": "auth/sessions/store.md", "title": "Session store", "content": "Redis.", "reason": "r"},
    ]
    (tmp_path / "ops.json").write_text(json.dumps(ops))
    run("curate", "--ops", "ops.json")
    shown = json.loads(run("show", "auth/sessions/store.md", "--json").output)
    assert shown["backlinks"] == ["auth/jwt/rotation.md"]
    text = run("show", "auth/jwt/rotation.md").output
    assert text.startswith("---\ntitle: Rotation") and "→ auth/sessions/store.md" in text


def test_tree_json_lists_folders_and_entries(run):
    run("curate", "--conversation", str(SAMPLE / "conversation.json"))
    data = json.loads(run("tree", "--json").output)
    conv = data["folders"][0]
    assert conv["path"] == "conversations"
    sessions = conv["folders"][0]["folders"]
    assert [s["path"].rsplit("/", 1)[-1] for s in sessions] == ["session_1", "session_2", "session_3"]
    assert sum(len(s["entries"]) for s in sessions) == 45
    assert "session_1" in run("tree").output


def test_history_and_undo(run):
    run("curate", "Ben adopted a dog named Pixel.")
    records = json.loads(run("history", "--json").output)["operations"]
    assert records[0]["op"] == "UPSERT" and records[0]["reason"].startswith("verbatim curator")
    path = records[0]["path"]
    assert run("undo", records[0]["id"]).output.startswith("undid UPSERT")
    assert json.loads(run("search", "Pixel", "--json").output)["hits"] == []
    assert json.loads(run("history", "--json", "--path", path).output)["operations"][0]["op"] == "UNDO"


def test_reindex_and_doctor(run, tmp_path):
    run("curate", "--conversation", str(SAMPLE / "conversation.json"))
    data = json.loads(run("reindex", "--json").output)
    assert data["documents"] == 45 + 5  # entries + context.md at 3 levels (1 + 1 + 3 sessions)
    rep = json.loads(run("doctor", "--json").output)
    assert rep["ok"] and rep["entries"] == 45 and rep["indexed"] == 50
    bad = tmp_path / ".memgrove" / "tree" / "notes" / "misc" / "broken.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\ntitle: [unclosed\n---\nbody\n")
    result = run("doctor", ok=False)
    assert result.exit_code == 1 and "INCONSISTENT" in result.output and "broken.md" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (("show", "../etc/passwd.md"), "'..'"),
        (("show", "/etc/passwd"), "absolute"),
        (("show", "a/b/missing.md"), "no entry at a/b/missing.md"),
        (("undo", "nope"), "no operation with id 'nope'"),
        (("search", "  "), "the query is empty"),
        (("curate",), "give TEXT"),
    ],
)
def test_errors_are_one_line_and_exit_nonzero(run, args, message):
    result = run(*args, ok=False)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert [ln for ln in result.output.splitlines() if ln.startswith("Error:")] == [
        ln for ln in result.output.splitlines() if ln.strip() and not ln.startswith(("Usage:", "Try "))
    ]


def test_bad_ops_file_writes_nothing(run, tmp_path):
    ops = [
        {"op": "ADD", "path": "a/b/ok.md", "title": "fine", "content": "x", "reason": "r"},
        {"op": "ADD", "path": "a/b/no_reason.md", "title": "t", "content": "x"},
        {"op": "ADD", "path": "../../escape.md", "title": "t", "content": "x", "reason": "r"},
    ]
    (tmp_path / "ops.json").write_text(json.dumps(ops))
    result = run("curate", "--ops", "ops.json", ok=False)
    assert result.exit_code == 1
    assert "2 invalid operations" in result.output and "reason" in result.output and "'..'" in result.output
    assert not list((tmp_path / ".memgrove" / "tree").rglob("*.md"))
    assert not (tmp_path.parent / "escape.md").exists()


def test_binary_files_are_skipped_and_non_utf8_files_refused(run, tmp_path):
    (tmp_path / "blob.md").write_bytes(b"\x89PNG\x00\x00binary")
    (tmp_path / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    assert "skipped 1 binary file" in run("curate", "-f", "blob.md").output
    assert "not UTF-8" in run("curate", "-f", "latin1.md", ok=False).output
    assert not list((tmp_path / ".memgrove" / "tree").rglob("*.md"))


def test_no_memory_here_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    result = CliRunner().invoke(cli, ["search", "x"])
    assert result.exit_code == 1 and "memgrove init" in result.output


def test_root_option_and_env_var(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["--root", "proj", "init"]).exit_code == 0
    assert runner.invoke(cli, ["--root", "proj", "curate", "Whoosh was chosen for search."]).exit_code == 0
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path / "proj"))
    data = json.loads(runner.invoke(cli, ["search", "whoosh", "--json"]).output)
    assert data["hits"][0]["title"].startswith("Whoosh was chosen")


def test_console_script_runs_in_a_real_process(tmp_path):
    exe = Path(sys.executable).with_name("memgrove")
    env = {"PATH": str(exe.parent), "HOME": str(tmp_path)}
    subprocess.run([str(exe), "init"], cwd=tmp_path, env=env, check=True, capture_output=True)
    done = subprocess.run([str(exe), "show", "x/y/z.md"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip() == "Error: no entry at x/y/z.md"

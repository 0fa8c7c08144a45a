"""The CLI's habits: what a user who knows other command lines expects of it.

``-h``; ``--root``/``--json`` after the subcommand as well as before it; ``show`` taking the
paths tab completion gives; "N more" hints where output is limited; full paths at 80 columns;
``--json`` errors as one JSON object; ``stats`` without invented LLM tiers; a failing model
named once with the way out; output piped into ``head``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli

LONG = ("engineering/infrastructure_and_deployment/kubernetes_cluster_configuration/"
        "very_long_entry_name_about_the_production_ingress_controller_settings.md")


def _add(path: str, title: str, content: str, reason: str = "seed") -> dict:
    return {"op": "ADD", "path": path, "title": title, "content": content, "reason": reason}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with a memory: one long-named entry and two short ones."""
    home = tmp_path / "proj"
    with Memory.open(home, create=True, durable=False) as m:
        m.curate([_add(LONG, "Ingress controller settings", "The ingress controller allows 300 second uploads."),
                  _add("team/people/ana.md", "Ana leads payments", "Ana leads the payments team."),
                  _add("team/people/ben.md", "Ben handles search", "Ben handles search and the ingress.")])
    return home


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: no memory here or above, and none named by MEMGROVE_HOME."""
    away = tmp_path / "elsewhere"
    away.mkdir()
    monkeypatch.chdir(away)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    return away


def cli_run(*args: str, env: dict[str, str] | None = None):
    return CliRunner(env={"COLUMNS": "80", **(env or {})}).invoke(cli, list(args))


# -- -h ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [None, *sorted(cli.commands)])
def test_dash_h_is_help_on_the_group_and_every_command(command):
    args = [command, "-h"] if command else ["-h"]
    res = cli_run(*args)
    assert res.exit_code == 0, res.output
    assert res.output.startswith("Usage: ") and "-h, --help" in res.output
    assert res.output == cli_run(*args[:-1], "--help").output


# -- global options after the subcommand -------------------------------------------------------

FAMILIES = {
    "reading": [("search", "ingress"), ("show", "team/people/ana.md"), ("tree",), ("tree", "team")],
    "history": [("history",), ("history", "--path", "team")],
    "asking": [("query", "who leads payments"), ("stats",)],
    "maintenance": [("reindex",), ("doctor",)],
}


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_root_and_json_after_the_subcommand_mean_what_they_mean_before(project, elsewhere, family):
    for args in family:
        before = cli_run("--root", str(project), "--json", *args)
        after = cli_run(*args, "--root", str(project), "--json")
        assert before.exit_code == after.exit_code == 0, (args, before.output, after.output)
        a, b = json.loads(before.stdout), json.loads(after.stdout)
        for d in (a, b):
            if isinstance(d, dict):
                for volatile in ("latency_ms", "seconds", "cached"):
                    d.pop(volatile, None)
        if args[0] not in ("query", "stats"):         # the second question is a cache hit, logged too
            assert a == b, args
        # the plain output of the same command, --root after
        plain = cli_run(*args, "--root", str(project))
        assert plain.exit_code == 0 and not plain.stdout.lstrip().startswith(("{", "[")), (args, plain.output)


def test_writing_commands_take_root_after_the_subcommand(tmp_path, elsewhere):
    proj = tmp_path / "new"
    assert cli_run("init", "--root", str(proj)).exit_code == 0
    assert (proj / ".memgrove" / "config.toml").is_file()
    res = cli_run("curate", "Whoosh was chosen for search.", "--root", str(proj), "--json")
    assert res.exit_code == 0, res.output
    [done] = json.loads(res.stdout)["applied"]
    undone = cli_run("undo", done["id"], "--root", str(proj), "--json")
    assert undone.exit_code == 0, undone.output
    assert json.loads(undone.stdout)["status"] == "undone"


def test_root_after_the_subcommand_wins_over_the_environment(project, elsewhere, monkeypatch, tmp_path):
    other = tmp_path / "other"
    Memory.open(other, create=True).close()
    monkeypatch.setenv("MEMGROVE_HOME", str(other))
    hits = json.loads(cli_run("search", "ingress", "--json", "--root", str(project)).stdout)["hits"]
    assert hits and hits[0]["path"] in (LONG, "team/people/ben.md")


# -- show takes the paths tab completion gives ----------------------------------------------------

def test_show_accepts_tree_prefixed_and_absolute_paths(project, monkeypatch):
    monkeypatch.delenv("MEMGROVE_HOME")
    monkeypatch.chdir(project)
    want = json.loads(cli_run("show", "team/people/ana.md", "--json").stdout)["text"]
    entry = project / ".memgrove" / "tree" / "team" / "people" / "ana.md"
    for given, cwd in ((".memgrove/tree/team/people/ana.md", project),
                       ("./.memgrove/tree/team/people/ana.md", project),
                       ("tree/team/people/ana.md", project / ".memgrove"),
                       ("people/ana.md", project / ".memgrove" / "tree" / "team"),
                       ("../.memgrove/tree/team/people/ana.md", project / "src"),
                       (str(entry), project.parent)):
        cwd.mkdir(exist_ok=True)
        monkeypatch.chdir(cwd)
        res = cli_run("show", given, "--root", str(project), "--json")
        assert res.exit_code == 0, (given, res.output)
        data = json.loads(res.stdout)
        assert data["text"] == want and data["path"] == "team/people/ana.md", given
    monkeypatch.chdir(project)
    # tree-prefixed paths are accepted where a folder is asked for, too
    assert json.loads(cli_run("tree", ".memgrove/tree/team", "--json").stdout)["path"] == "team"
    assert json.loads(cli_run("history", "--path", ".memgrove/tree/team/people/ana.md", "--json").stdout)["operations"]


def test_show_refuses_paths_outside_the_tree(project, monkeypatch, tmp_path):
    monkeypatch.delenv("MEMGROVE_HOME")
    monkeypatch.chdir(project)
    outside = tmp_path / "secret.md"
    outside.write_text("---\ntitle: secret\n---\nnot memory\n")
    (project / "notes.md").write_text("---\ntitle: project file\n---\nnot memory either\n")
    for given in (str(outside), str(project / "notes.md"), "../secret.md",
                  str(project / ".memgrove" / "journal" / "journal.jsonl")):
        res = cli_run("show", given, "--json")
        assert res.exit_code == 1, (given, res.output)
        assert json.loads(res.stdout)["error"]["code"] == "invalid_path", given
        assert "not memory" not in res.output


# -- "N more" and full paths ----------------------------------------------------------------------

def test_history_says_how_many_more_and_how_to_see_them(project, elsewhere):
    with Memory.open(project, durable=False) as m:
        for i in range(43):                                      # 3 seeded + 43 = 46 operations
            m.curate([_add(f"log/day/n{i}.md", f"Note {i}", f"note number {i}")])
    out = cli_run("--root", str(project), "history").stdout
    assert out.count("ADD ") == 20
    assert "… 26 more: use --limit 0 or --all to see every one" in out
    for every in (("--all",), ("--limit", "0"), ("-n", "0")):
        full = cli_run("--root", str(project), "history", *every)
        assert full.exit_code == 0 and full.stdout.count("ADD ") == 46 and "more" not in full.stdout
    assert len(json.loads(cli_run("--root", str(project), "history", "--all", "--json").stdout)["operations"]) == 46
    none = cli_run("--root", str(project), "history", "-n", "45").stdout
    assert "… 1 more: use --limit 0 or --all" in none


def test_search_and_tree_say_when_more_is_left_out(project, elsewhere):
    with Memory.open(project, durable=False) as m:
        m.curate([_add(f"log/day/n{i}.md", f"Ingress note {i}", f"ingress note number {i}") for i in range(30)])
    res = cli_run("--root", str(project), "search", "ingress", "-n", "3")
    assert res.exit_code == 0
    assert "… more results: use --limit 13 to see more" in res.stdout
    assert "more results" not in cli_run("--root", str(project), "search", "payments").stdout
    tree = cli_run("--root", str(project), "tree").stdout
    assert "… 10 more entries: memgrove tree log/day --all" in tree
    assert "n19.md" in tree and "n20.md" not in tree
    full = cli_run("--root", str(project), "tree", "--all").stdout
    assert "more entries" not in full and all(f"n{i}.md" in full for i in range(30))
    assert "more entries" not in cli_run("--root", str(project), "tree", "log/day", "-n", "0").stdout


@pytest.mark.parametrize("args", [("search", "ingress controller"), ("history",), ("tree",), ("tree", "engineering"),
                                  ])
def test_paths_are_printed_whole_at_80_columns(project, elsewhere, tmp_path, args):
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([_add(LONG.replace("very_long", "another_very_long"), "Another", "ingress again")]))
    args = tuple(str(ops) if a == "OPS" else a for a in args)
    res = cli_run("--root", str(project), *args)
    assert res.exit_code == 0, res.output
    wanted = LONG if args[0] != "curate" else LONG.replace("very_long", "another_very_long")
    if args[0] == "tree":             # a tree shows each name under its folder
        wanted = wanted.rsplit("/", 1)[-1]
    assert wanted in res.stdout, res.stdout


# -- --json errors ------------------------------------------------------------------------------

def _json_error(res) -> dict:
    body = json.loads(res.stdout)
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    return body["error"]


@pytest.mark.parametrize("args, code, status", [
    (("show", "a/b/missing.md", "--json"), "invalid_path", 1),
    (("--json", "show", "../etc/passwd.md"), "invalid_path", 1),
    (("undo", "nope", "--json"), "journal_error", 1),
    (("search", "  ", "--json"), "memgrove_error", 1),
    (("search", "--json", "--bogus"), "usage", 2),
    (("--json", "frobnicate"), "usage", 2),
    (("--json", "curate"), "usage", 2),
    (("history", "--json", "--limit", "many"), "usage", 2),
])
def test_json_errors_are_a_json_object_on_stdout(project, elsewhere, args, code, status):
    res = cli_run("--root", str(project), *args)
    assert res.exit_code == status, res.output
    err = _json_error(res)
    assert err["code"] == code and err["message"] and "\n" not in err["message"]
    assert res.stderr == ""
    plain = cli_run("--root", str(project), *(a for a in args if a != "--json"))
    assert plain.exit_code == status and plain.stdout == "" and "Error: " in plain.stderr


def test_json_errors_with_no_memory_and_a_rejected_batch(elsewhere, tmp_path):
    err = _json_error(cli_run("search", "x", "--json"))
    assert err["code"] == "tree_not_found" and "memgrove init" in err["message"]
    proj = tmp_path / "p"
    Memory.open(proj, create=True).close()
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps([{"op": "ADD", "path": "a/b/c.md", "title": "t", "content": "x"}]))
    res = cli_run("--root", str(proj), "curate", "--ops", str(ops), "--json")
    assert res.exit_code == 1
    err = _json_error(res)
    assert err["code"] == "batch_rejected" and len(err["errors"]) == 1
    err = _json_error(cli_run("--root", str(proj), "curate", "--ops", str(tmp_path / "missing.json"), "--json"))
    assert err["code"] == "invalid_input" and "missing.json" in err["message"]


def test_unexpected_errors_under_json_are_internal(project, elsewhere, monkeypatch):
    monkeypatch.delenv("MEMGROVE_RAISE_ERRORS")

    def broken(self, *a, **k):
        raise RuntimeError("disk said no")

    monkeypatch.setattr(Memory, "search", broken)
    res = cli_run("--root", str(project), "search", "x", "--json")
    assert res.exit_code == 1
    assert _json_error(res) == {"code": "internal", "message": "unexpected RuntimeError: disk said no"}
    plain = cli_run("--root", str(project), "search", "x")
    assert plain.exit_code == 1 and plain.stderr == "Error: unexpected RuntimeError: disk said no\n"


# -- stats without a model -----------------------------------------------------------------------

def test_stats_shows_no_llm_tier_without_a_model(qmem, elsewhere):
    from conftest import QUESTIONS

    for q in QUESTIONS.values():
        qmem.query(q)
    out = cli_run("--root", str(qmem.home.parent), "stats").stdout
    assert "LLM call" not in out and "agent loop" not in out and "answered by an LLM" not in out
    assert "no model configured" in out
    assert "2 BM25" in out
    # the rows of questions that went past BM25 say what answered them
    assert out.count("best entries, no model") == 2
    data = json.loads(cli_run("--root", str(qmem.home.parent), "stats", "--json").stdout)
    assert {t["tier"]: t["llm"] for t in data["tiers"]} == {2: 0, 3: 0, 4: 0}


def test_stats_names_the_llm_tiers_when_a_model_answered(tmp_path, elsewhere):
    log = tmp_path / "p" / ".memgrove" / "query-log.jsonl"
    Memory.open(tmp_path / "p", create=True).close()
    log.write_text("\n".join(json.dumps(r) for r in [
        {"tier": 2, "latency_ms": 3.0}, {"tier": 3, "latency_ms": 900.0, "llm": True},
        {"tier": 4, "latency_ms": 2000.0, "llm": True}, {"tier": 3, "latency_ms": 5.0, "llm": False}]) + "\n")
    out = cli_run("--root", str(tmp_path / "p"), "stats").stdout
    assert "3 one LLM call" in out and "4 agent loop" in out and "2 answered by an LLM" in out
    assert "3 one LLM call (1 no model)" in out


# -- curate with a failing model --------------------------------------------------------------------

def test_a_failing_model_is_named_once_with_the_way_out(tmp_path, elsewhere, openai_server, monkeypatch):
    from helpers.openai_server import status

    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.delenv("MEMGROVE_RAISE_ERRORS")
    openai_server.queue(status(401))
    Memory.open(tmp_path / "p", create=True).close()
    res = cli_run("--root", str(tmp_path / "p"), "curate", "Ana leads payments.")
    assert res.exit_code == 1
    assert res.output.count("HTTP 401") == 1, res.output
    assert res.output.count("Incorrect API key") == 1
    assert "--verbatim" in res.stderr and res.stderr.startswith("Error: the LLM curator stopped")
    openai_server.queue(status(401))
    res = cli_run("--root", str(tmp_path / "p"), "curate", "Ana leads payments.", "--json")
    assert res.exit_code == 1 and res.stderr == ""
    data = json.loads(res.stdout)
    assert data["error"]["code"] == "model_failed" and "--verbatim" in data["error"]["message"]
    assert data["curator"] == "llm" and data["applied"] == [] and "HTTP 401" in data["stopped"]


# -- piped into head ------------------------------------------------------------------------------

def test_output_piped_into_head_ends_quietly(tmp_path):
    home = tmp_path / "big"
    with Memory.open(home, create=True, durable=False) as m:
        m.curate([_add(f"bulk/topic_{i % 4}/entry_{i}.md", f"Bulk entry {i} about the ingress controller " * 3,
                       f"entry {i} says the ingress controller restarted.") for i in range(700)])
    exe = Path(sys.executable).with_name("memgrove")
    env = {**os.environ, "MEMGROVE_HOME": str(home)}
    env.pop("MEMGROVE_RAISE_ERRORS", None)
    for args in (["tree"], ["history", "-n", "1000"], ["history", "-n", "1000", "--json"], ["tree", "--json"],
                 ["search", "ingress controller", "-n", "700"]):
        proc = subprocess.Popen([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        first = proc.stdout.readline()
        proc.stdout.close()                      # what `head -1` does after its line
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.wait(timeout=60) == 0, (args, err)
        assert first and err == "", (args, err)

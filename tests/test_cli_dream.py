"""`memgrove dream` and `memgrove review` through click's CliRunner (the library is in test_dream.py
and test_review.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.hygiene.findings import Candidate

from helpers.dream_scan import fake_scan

TEXT = "The staging database listens on port 6543 since March 2026."


@pytest.fixture()
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(cli, ["--no-server", *args], catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke("init")
    with Memory.open(tmp_path) as mem:
        for path, text in (("infra/db/staging_port.md", TEXT), ("chats/day1/staging_port_again.md", TEXT),
                           ("infra/db/staging_host.md", "The staging database runs on db-stage-1."),
                           ("ops/backups/nightly.md", "Backups run nightly at 02:00."),
                           ("ops/backups/every_night.md", "Backups run every night at 02:00 UTC.")):
            mem.curate([{"op": "ADD", "path": path, "title": path.rsplit("/", 1)[1][:-3], "content": text,
                         "reason": "test"}])
    fake_scan(monkeypatch, [
        Candidate("duplicate", ("infra/db/staging_port.md", "chats/day1/staging_port_again.md"), "MERGE",
                  ({"op": "MERGE", "path": "chats/day1/staging_port_again.md",
                    "merge_into": "infra/db/staging_port.md", "reason": "the same text"},), "the same text", 1.0),
        Candidate("link", ("infra/db/staging_port.md", "infra/db/staging_host.md"), "LINK",
                  ({"op": "UPDATE", "path": "infra/db/staging_port.md", "related": ["infra/db/staging_host.md"],
                    "reason": "related"},
                   {"op": "UPDATE", "path": "infra/db/staging_host.md", "related": ["infra/db/staging_port.md"],
                    "reason": "related"}), "closely related", 0.7),
        Candidate("near_duplicate", ("ops/backups/every_night.md", "ops/backups/nightly.md"), "MERGE",
                  ({"op": "MERGE", "path": "ops/backups/nightly.md", "merge_into": "ops/backups/every_night.md",
                    "reason": "nearly the same"},), "high lexical overlap", 0.75)])
    return invoke


def test_dream_prints_a_table_by_kind(run, tmp_path):
    out = run("dream").output
    assert "duplicate" in out and "near_duplicate" in out and "link" in out
    row = next(line for line in out.splitlines() if line.startswith("duplicate "))
    assert row.split() == ["duplicate", "1", "1", "0"]
    assert next(line for line in out.splitlines() if line.startswith("near_duplicate")).split() == \
        ["near_duplicate", "1", "0", "1"]
    assert "memgrove dream --undo" in out and "memgrove review" in out
    assert not (tmp_path / ".memgrove" / "tree" / "chats" / "day1" / "staging_port_again.md").exists()


def test_dream_json_has_the_run_and_every_candidate(run):
    data = json.loads(run("dream", "--json").output)
    assert data["run"]
    assert [(c["kind"], c["status"]) for c in data["candidates"]] == [
        ("duplicate", "applied"), ("link", "applied"), ("near_duplicate", "queued")]
    for c in data["candidates"]:
        assert {"kind", "paths", "action", "reason", "confidence", "status"} <= set(c)


def test_dry_run_changes_nothing(run, tmp_path):
    data = json.loads(run("dream", "--dry-run", "--json").output)
    assert data["run"] is None and {c["status"] for c in data["candidates"]} == {"found"}
    assert (tmp_path / ".memgrove" / "tree" / "chats" / "day1" / "staging_port_again.md").exists()
    assert "dry run" in run("dream", "--dry-run").output


def test_undo_restores_the_files(run, tmp_path):
    root = tmp_path / ".memgrove" / "tree"
    before = {p: p.read_bytes() for p in root.rglob("*.md") if p.name != "context.md"}
    run_id = json.loads(run("dream", "--json").output)["run"]
    out = run("dream", "--undo").output
    assert f"undid dream run {run_id}" in out
    assert {p: p.read_bytes() for p in root.rglob("*.md") if p.name != "context.md"} == before
    again = run("dream", "--undo", run_id, "--json", ok=False)
    assert again.exit_code == 1 and "already undone" in json.loads(again.output)["error"]["message"]


def test_review_list_show_approve_reject(run, tmp_path):
    run("dream")
    items = json.loads(run("review", "--json").output)
    assert len(items) == 1 and items[0]["candidate"]["kind"] == "near_duplicate"
    item = items[0]["id"]
    listing = run("review").output
    assert item in listing and "1 pending" in listing
    shown = run("review", "show", item[:6]).output
    assert "MERGE ops/backups/nightly.md -> ops/backups/every_night.md" in shown
    assert "approved" in run("review", "approve", item).output
    assert not (tmp_path / ".memgrove" / "tree" / "ops" / "backups" / "nightly.md").exists()
    assert "nothing waits" in run("review").output


def test_review_reject_all_and_usage(run):
    run("dream")
    bad = run("review", "approve", ok=False)
    assert bad.exit_code == 2 and "--all" in bad.output
    assert "rejected 1 change" in run("review", "reject", "--all").output
    data = json.loads(run("dream", "--json").output)
    assert [c["status"] for c in data["candidates"] if c["kind"] == "near_duplicate"] == ["rejected"]


def test_review_approve_conflict_is_one_line(run, tmp_path):
    run("dream")
    item = json.loads(run("review", "--json").output)[0]["id"]
    p = tmp_path / ".memgrove" / "tree" / "ops" / "backups" / "nightly.md"
    p.write_text(p.read_text() + "\nEdited by hand.\n")
    res = run("review", "approve", item, "--json", ok=False)
    assert res.exit_code == 1
    err = json.loads(res.output)["error"]
    assert err["code"] == "operation_conflict" and "changed since" in err["message"]
    assert p.exists()

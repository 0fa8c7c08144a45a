"""`memgrove serve`'s dream and review routes over a real socket (token-guarded like the rest), the
CLI going through the server, and idle runs (`[server] dream_when_idle`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.dream_scan import DUP, KEPT, TEXT, served_candidates, site_env
from helpers.memgrove_server import start_server, stop_server

from memgrove import Memory
from memgrove.cli import cli


def seed(root: Path, config: str = "") -> Path:
    with Memory.open(root, create=True) as mem:
        for path, text in ((KEPT, TEXT), (DUP, TEXT), ("ops/backups/nightly.md", "Backups run nightly at 02:00."),
                           ("ops/backups/every_night.md", "Backups run every night at 02:00 UTC.")):
            mem.curate([{"op": "ADD", "path": path, "title": path.rsplit("/", 1)[1][:-3], "content": text,
                         "reason": "seed"}])
    if config:
        (root / ".memgrove" / "config.toml").write_text(config, encoding="utf-8")
    return root


@pytest.fixture
def srv(tmp_path):
    root = seed(tmp_path / "p")
    s = start_server(root, env=site_env(tmp_path, served_candidates()))
    try:
        yield s
    finally:
        assert stop_server(s) == 0, s.log_text()


def test_dream_and_review_routes(srv):
    assert srv.http(token=None).post("/api/dream", json={}).status_code == 401
    assert srv.http(token=None).get("/api/review").status_code == 401
    c = srv.client
    dry = c.post("/api/dream", json={"dry_run": True}).json()
    assert dry["run"] is None and len(dry["candidates"]) == 2
    run = c.post("/api/dream", json={}).json()
    assert [(x["kind"], x["status"]) for x in run["candidates"]] == [("duplicate", "applied"),
                                                                     ("near_duplicate", "queued")]
    items = c.get("/api/review").json()["items"]
    item = items[0]["id"]
    assert c.get(f"/api/review/{item}").json()["candidate"]["kind"] == "near_duplicate"
    assert c.get("/api/review/zzzzzz").status_code == 404
    # a hand edit since the proposal: 409, nothing written
    p = srv.project / ".memgrove" / "tree" / "ops" / "backups" / "nightly.md"
    original = p.read_text()
    p.write_text(original + "\nEdited.\n")
    r = c.post("/api/review/approve", json={"id": item})
    assert r.status_code == 409 and r.json()["error"]["code"] == "operation_conflict"
    assert c.post("/api/review/reject", json={"all": True}).json()["rejected"][0]["id"] == item
    undone = c.post("/api/dream", json={"undo": ""}).json()
    assert undone["run"] == run["run"] and undone["status"] == "undone"
    assert undone["started"] and undone["operations"] == len(run["applied"]) == 1     # names what it undid
    assert (srv.project / ".memgrove" / "tree" / DUP).exists()
    again = c.post("/api/dream", json={"undo": run["run"]})
    assert again.status_code == 409 and "already undone" in again.json()["error"]["message"]


def test_the_cli_goes_through_the_server(srv, monkeypatch):
    monkeypatch.chdir(srv.project)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    res = CliRunner().invoke(cli, ["dream", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["candidates"][0]["status"] == "applied"
    # the server ran it: only its process has the stand-in scan
    res = CliRunner().invoke(cli, ["review", "--json"], catch_exceptions=False)
    assert len(json.loads(res.output)) == 1


def test_an_idle_server_dreams_when_the_gates_open(tmp_path):
    root = seed(tmp_path / "p", "[tree]\ndream_min_curations = 1\n[server]\ndream_when_idle = true\n"
                                "dream_check_s = 0.2\n")
    s = start_server(root, env=site_env(tmp_path, served_candidates()))
    try:
        runs = root / ".memgrove" / "dream" / "runs"

        def recorded() -> list[dict]:     # a run is recorded as it starts, and again as it ends
            return [json.loads(f.read_text()) for f in runs.glob("*.json")] if runs.exists() else []

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(r["status"] == "done" for r in recorded()):
            time.sleep(0.1)
        [run] = recorded()
        assert run["applied"] and not (root / ".memgrove" / "tree" / DUP).exists()
        time.sleep(1.0)             # the gates are closed now: one run only
        assert len(recorded()) == 1
    finally:
        assert stop_server(s) == 0, s.log_text()

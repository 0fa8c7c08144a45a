"""``memgrove serve`` with its tree on a full disk: read routes answer 200 with their data, a write
answers 507 only when nothing was written and 200 once it passed its commit point, and writes
resume without a restart when space comes back, each acknowledged one journaled exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgrove import Memory

from helpers.full_disk import fill, free, free_pages, small_disk
from helpers.memgrove_server import start_server, stop_server

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart the ingest worker number {i} with the drain flag.", "reason": "seed"}
        for i in range(8)]


def add(path: str, title: str, words: str) -> dict:
    return {"operations": [{"op": "ADD", "path": path, "title": title, "content": words, "reason": "served"}]}


def journal(home: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (home / "journal" / "journal.jsonl").read_text().splitlines()]


@pytest.fixture
def served(tmp_path: Path):
    with small_disk(tmp_path) as mnt:
        with Memory.open(mnt, create=True, durable=True) as mem:
            mem.curate(SEED)
            mem.query("How do I restart the ingest worker?")
        srv = start_server(mnt)
        try:
            yield srv
        finally:
            stop_server(srv)


def test_a_served_memory_on_a_full_disk(served):
    home, c = served.home, served.client
    fill(served.project)   # before the first request: the project is opened on a full disk
    reads = {
        "search": c.get("/api/search", params={"q": "restart ingest worker"}),
        "query": c.post("/api/query", json={"question": "How do I restart the ingest worker number 3?"}),
        "entry": c.get("/api/entries/ops/runbooks/r1.md"),
        "tree": c.get("/api/tree", params={"folder": "ops/runbooks"}),
        "history": c.get("/api/history"),
        "stats": c.get("/api/stats"),
        "doctor": c.get("/api/doctor"),
    }
    assert {k: r.status_code for k, r in reads.items()} == dict.fromkeys(reads, 200), \
        {k: r.text[:200] for k, r in reads.items()}
    assert reads["search"].json()["hits"][0]["path"].startswith("ops/runbooks/")
    assert "drain" in reads["query"].json()["answer"]
    assert reads["entry"].json()["title"] == "Runbook 1"
    assert len(reads["tree"].json()["entries"]) == 8
    assert len(reads["history"].json()["operations"]) == 8
    assert reads["doctor"].json()["entries"] == 8

    acknowledged = []
    ids = journal(home)
    big = add("ops/runbooks/big.md", "Big", "A long line about draining queues before a restart. " * 3000)
    r = c.post("/api/curate", json=big)
    assert r.status_code == 507 and r.json()["error"]["code"] == "not_writable", r.text
    assert journal(home) == ids
    # space comes back a page at a time: 507 while nothing was written, 200 from the commit point on
    refused = 0
    for _ in range(200):
        assert free_pages(served.project, 1), "the disk had room for the write long before this"
        r = c.post("/api/curate", json=add("ops/deploys/canary.md", "Canary", "Canary deploys go to one zone first. " * 20))
        if r.status_code == 507:
            assert r.json()["error"]["code"] == "not_writable"
            assert journal(home) == ids and not (home / "tree" / "ops/deploys/canary.md").exists()
            refused += 1
            continue
        assert r.status_code == 200, r.text
        acknowledged.append(r.json()["results"][0]["id"])
        break
    assert refused and acknowledged
    assert c.get("/api/search", params={"q": "drain flag"}).status_code == 200
    free(served.project)
    r = c.post("/api/curate", json=add("ops/deploys/rollback.md", "Rollback", "Roll back by redeploying the last tag."))
    assert r.status_code == 200, r.text
    acknowledged.append(r.json()["results"][0]["id"])
    assert c.get("/api/search", params={"q": "canary zone"}).json()["hits"][0]["path"] == "ops/deploys/canary.md"
    assert c.get("/api/search", params={"q": "redeploying tag"}).json()["hits"][0]["path"] == "ops/deploys/rollback.md"
    assert c.get("/api/doctor").json()["ok"]
    assert journal(home) == ids + acknowledged          # each acknowledged write once, in order

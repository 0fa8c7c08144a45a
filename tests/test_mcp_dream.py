"""Dream candidates resolved by an agent through MCP: a real ``mcp.ClientSession`` over stdio with
``memgrove mcp`` in its own process. The agent lists the candidates (nothing changes), applies the
one it agrees with through ``memgrove_curate``, and works the review queue with ``memgrove_review``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

from mcp import ClientSession

from helpers.dream_scan import DUP, KEPT, TEXT, served_candidates, site_env
from memgrove import Memory

from test_mcp_stdio import _env, session_on as stdio_session_on


def session_on(root: Path, tmp: Path, body: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    return stdio_session_on(root, body, env={**_env(), **site_env(tmp, served_candidates())})


def seed(root: Path) -> None:
    with Memory.open(root, create=True) as mem:
        for path, text in ((KEPT, TEXT), (DUP, TEXT), ("ops/backups/nightly.md", "Backups run nightly at 02:00."),
                           ("ops/backups/every_night.md", "Backups run every night at 02:00 UTC.")):
            mem.curate([{"op": "ADD", "path": path, "title": path.rsplit("/", 1)[1][:-3], "content": text,
                         "reason": "seed"}])


def test_an_agent_lists_candidates_and_resolves_one_through_curate(tmp_path):
    root = tmp_path / "project"
    seed(root)

    async def agent(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await s.call_tool("memgrove_dream", {})
        out["listed"] = listed.structuredContent
        # the agent judges with its own model; here it agrees with the duplicate and applies its operations
        chosen = next(c for c in listed.structuredContent["candidates"] if c["kind"] == "duplicate")
        out["curate"] = await s.call_tool("memgrove_curate", {"operations": chosen["ops"]})
        out["again"] = (await s.call_tool("memgrove_dream", {})).structuredContent
        return out

    out = session_on(root, tmp_path, agent)
    listed = out["listed"]
    assert listed["run"] is None and {c["status"] for c in listed["candidates"]} == {"found"}
    assert {c["kind"] for c in listed["candidates"]} == {"duplicate", "near_duplicate"}
    assert out["curate"].isError is False and out["curate"].structuredContent["written"] is True
    assert [c["kind"] for c in out["again"]["candidates"]] == ["near_duplicate"]
    with Memory.open(root) as mem:
        assert not mem.tree.exists(DUP)
        assert [r.actor for r in mem.history(limit=1)] == ["mcp"]


def test_an_agent_runs_dream_and_works_the_review_queue(tmp_path):
    root = tmp_path / "project"
    seed(root)

    async def agent(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["run"] = (await s.call_tool("memgrove_dream", {"apply": True})).structuredContent
        out["queue"] = (await s.call_tool("memgrove_review", {})).structuredContent
        item = out["queue"]["items"][0]["id"]
        out["show"] = (await s.call_tool("memgrove_review", {"action": "show", "id": item})).structuredContent
        out["bad"] = await s.call_tool("memgrove_review", {"action": "approve"})
        out["approve"] = (await s.call_tool("memgrove_review", {"action": "approve", "id": item})).structuredContent
        out["undo"] = await s.call_tool("memgrove_dream", {"undo": "last"})
        return out

    out = session_on(root, tmp_path, agent)
    assert [(c["kind"], c["status"]) for c in out["run"]["candidates"]] == [
        ("duplicate", "applied"), ("near_duplicate", "queued")]
    assert out["show"]["candidate"]["kind"] == "near_duplicate"
    assert out["bad"].isError and "all=true" in out["bad"].content[0].text
    assert [a["id"] for a in out["approve"]["applied"]] == [out["show"]["id"]]
    assert out["undo"].isError is False and out["undo"].structuredContent["status"] == "undone"
    undone = out["undo"].structuredContent     # names the run, and keeps (listing) what a person approved
    assert undone["run"] == out["run"]["run"] and undone["started"] and undone["operations"] == 1
    assert len(undone["approved_kept"]) == 1
    with Memory.open(root) as mem:
        assert mem.tree.exists(DUP)                               # the run undone
        assert not mem.tree.exists("ops/backups/nightly.md")      # the approved merge stays

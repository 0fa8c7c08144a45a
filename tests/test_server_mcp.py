"""``/mcp``: memgrove's MCP tools over streamable HTTP on ``memgrove serve``, behind the token.

Runs once ``memgrove.mcp`` (the MCP tool set, built separately) is installed; until then
the server starts without ``/mcp`` and this module is skipped.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

import pytest

pytest.importorskip("mcp")
pytest.importorskip("memgrove.mcp")

from helpers.memgrove_server import start_server, stop_server  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from memgrove import Memory  # noqa: E402


def test_mcp_over_streamable_http_needs_the_token_and_lists_tools(tmp_path: Path):
    project = tmp_path / "proj"
    with Memory.open(project, create=True) as m:
        m.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "Database pool",
                   "content": "The Postgres pool holds 20 connections.", "reason": "seed"}])
    srv = start_server(project)
    try:
        r = srv.http(token=None).post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"

        async def session() -> list[str]:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {srv.token}"}, timeout=30,
                                         trust_env=False) as client:
                async with streamable_http_client(f"{srv.url}/mcp", http_client=client) as (read, write, _):
                    async with ClientSession(read, write) as s:
                        await s.initialize()
                        return [t.name for t in (await s.list_tools()).tools]

        names = asyncio.run(session())
        assert "memgrove_search" in names and "memory" in names, names
    finally:
        assert stop_server(srv) == 0, srv.log_text()

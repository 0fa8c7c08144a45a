"""The MCP server over streamable HTTP: ``create_server(...).streamable_http_app()`` served by
uvicorn on a free 127.0.0.1 port, with a real ``mcp.ClientSession`` (what ``memgrove serve``
mounts at ``/mcp``)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import anyio
import httpx
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from memgrove import Memory
from memgrove.mcp import PROJECT_HEADER, create_server
from memgrove.mcp.projects import Projects

from test_mcp_stdio import TOOLS


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def projects(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    a, b = tmp_path / "a", tmp_path / "b"
    for root, path, words in ((a, "auth/jwt/rotation.md", "Refresh tokens rotate on every use."),
                              (b, "ops/deploy/runbook.md", "Deploys go out on Tuesdays.")):
        with Memory.open(root, create=True) as mem:
            mem.curate([{"op": "ADD", "path": path, "content": words, "reason": "seed"}])
    yield a, b


@pytest.fixture
def url(projects) -> Iterator[str]:
    opened = Projects(str(projects[0]))
    app = create_server(opened).streamable_http_app()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        opened.close()
    assert not thread.is_alive()


def over_http(url: str, body, headers: dict[str, str] | None = None) -> Any:
    async def main() -> Any:
        with anyio.fail_after(60):
            async with httpx.AsyncClient(headers=headers or {}, timeout=30) as client:
                async with streamable_http_client(url, http_client=client) as (read, write, _):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        return await body(session)

    return anyio.run(main)


def test_list_and_call_every_tool_over_streamable_http(url):
    async def body(s: ClientSession):
        names = {t.name for t in (await s.list_tools()).tools}
        out = {"names": names}
        out["query"] = await s.call_tool("memgrove_query", {"q": "how do refresh tokens rotate"})
        out["search"] = await s.call_tool("memgrove_search", {"query": "refresh rotate"})
        out["read"] = await s.call_tool("memgrove_read", {"path": "auth/jwt/rotation.md"})
        out["list"] = await s.call_tool("memgrove_list", {})
        out["curate"] = await s.call_tool("memgrove_curate", {"operations": [
            {"op": "UPSERT", "path": "auth/jwt/expiry.md", "content": "Access tokens last 15 minutes.",
             "reason": "told over HTTP"}]})
        out["memory"] = await s.call_tool("memory", {"command": "create", "path": "/memories/notes/http/hello.md",
                                                     "file_text": "# Hello\nwritten over HTTP"})
        out["view"] = await s.call_tool("memory", {"command": "view", "path": "/memories/notes/http/hello.md"})
        out["history"] = await s.call_tool("memgrove_history", {"limit": 2})
        out["undo"] = await s.call_tool("memgrove_undo", {"op_id": out["history"].structuredContent
                                                          ["operations"][0]["id"]})
        out["error"] = await s.call_tool("memory", {"command": "view", "path": "/etc/passwd"})
        return out

    r = over_http(url, body)
    assert r["names"] == TOOLS
    for key in ("query", "search", "read", "list", "curate", "memory", "view", "history", "undo"):
        assert not r[key].isError, (key, r[key].content[0].text)
    assert "Refresh tokens rotate on every use." in r["query"].content[0].text
    assert r["search"].structuredContent["hits"][0]["path"] == "auth/jwt/rotation.md"
    assert "     3\twritten over HTTP" in r["view"].content[0].text
    assert r["history"].structuredContent["operations"][0]["reason"] == \
        "memory tool: create /memories/notes/http/hello.md"
    assert r["undo"].structuredContent["status"] == "undone"
    assert r["error"].isError and r["error"].structuredContent["error"]["code"] == "invalid_path"


def test_the_project_header_picks_the_memory(url, projects):
    async def body(s: ClientSession):
        return (await s.call_tool("memgrove_search", {"query": "deploys tuesdays"})).structuredContent

    assert over_http(url, body)["hits"] == []
    other = over_http(url, body, headers={PROJECT_HEADER: str(projects[1])})
    assert "ops/deploy/runbook.md" in [h["path"] for h in other["hits"]]

"""``memgrove mcp`` over stdio: a real ``mcp.ClientSession`` talking to a spawned process.

Lists the tools with their annotations, calls every tool and every memory-tool command
(error cases included), and checks that the writes landed in the project's journal.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers.openai_server import serve, text
from memgrove import Memory

TOOLS = {"memgrove_query", "memgrove_search", "memgrove_read", "memgrove_list", "memgrove_curate",
         "memgrove_history", "memgrove_undo", "memgrove_dream", "memgrove_review", "memory"}
READ_ONLY = {"memgrove_query", "memgrove_search", "memgrove_read", "memgrove_list", "memgrove_history"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGROVE_HOME",)}
    env["PYTHONWARNINGS"] = "error"
    return env


def session_on(root: Path, body: Callable[[ClientSession], Awaitable[Any]], *, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgrove", "mcp", "--root", str(root)],
                                   env=_env() if env is None else env, cwd=str(cwd or root))

    async def main() -> Any:
        with anyio.fail_after(60), open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return anyio.run(main)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    with Memory.open(root, create=True) as mem:
        mem.curate([{"op": "ADD", "path": "auth/jwt/refresh_rotation.md", "title": "Refresh token rotation",
                     "content": "Refresh tokens rotate on every use; reuse revokes the family.",
                     "tags": ["auth"], "reason": "seed"}])
    return root


def shown(result) -> str:
    return result.content[0].text


def test_tools_are_listed_with_annotations_and_schemas(project):
    async def body(s: ClientSession):
        return (await s.list_tools()).tools

    tools = {t.name: t for t in session_on(project, body)}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        a = tool.annotations
        assert a.readOnlyHint is (name in READ_ONLY), name
        assert a.destructiveHint is (name not in READ_ONLY), name
        assert a.openWorldHint is False
        assert tool.description and "project" in tool.inputSchema["properties"]
    assert tools["memgrove_search"].annotations.idempotentHint is True
    memory = tools["memory"].inputSchema["properties"]
    assert set(memory) >= {"command", "path", "file_text", "old_str", "new_str", "insert_line", "insert_text",
                           "old_path", "new_path", "view_range"}
    assert memory["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]
    assert tools["memory"].inputSchema["required"] == ["command"]


def test_every_memgrove_tool_over_stdio(project):
    async def body(s: ClientSession):
        out = {}
        out["query"] = await s.call_tool("memgrove_query", {"query": "how do refresh tokens rotate"})
        out["search"] = await s.call_tool("memgrove_search", {"q": "refresh rotation", "limit": 3})
        out["read"] = await s.call_tool("memgrove_read", {"file_path": "auth/jwt/refresh_rotation.md"})
        out["list"] = await s.call_tool("memgrove_list", {"folder": "auth"})
        out["curate"] = await s.call_tool("memgrove_curate", {"operations": [
            {"op": "UPSERT", "path": "auth/jwt/expiry.md", "title": "Token expiry",
             "content": "Access tokens expire after 15 minutes.", "reason": "learned in review"}]})
        out["add_existing"] = await s.call_tool("memgrove_curate", {"operations": [
            {"op": "ADD", "path": "auth/jwt/expiry.md", "title": "Other", "content": "Different words.",
             "reason": "retry"}]})
        out["history"] = await s.call_tool("memgrove_history", {"limit": 5})
        op_id = out["history"].structuredContent["operations"][0]["id"]
        out["undo"] = await s.call_tool("memgrove_undo", {"op_id": op_id})
        out["read_gone"] = await s.call_tool("memgrove_read", {"path": "auth/jwt/expiry.md"})
        out["bad_undo"] = await s.call_tool("memgrove_undo", {"id": "no-such-op"})
        out["bad_curate"] = await s.call_tool("memgrove_curate", {"operations": [
            {"op": "ADD", "path": "../../etc/evil.md", "content": "x", "reason": "attack"}]})
        out["empty_query"] = await s.call_tool("memgrove_search", {"query": "  "})
        return out

    r = session_on(project, body)
    assert not r["query"].isError
    assert "Refresh tokens rotate on every use" in shown(r["query"])
    assert r["query"].structuredContent["tier"] in (2, 3, 4) and not r["query"].structuredContent["llm"]
    hits = json.loads(shown(r["search"]))["hits"]
    assert hits[0]["path"] == "auth/jwt/refresh_rotation.md"
    assert "reuse revokes the family" in shown(r["read"])
    assert r["list"].structuredContent["folders"][0]["path"] == "auth/jwt"
    assert r["curate"].structuredContent["applied"][0]["status"] == "added"
    # ADD onto an existing entry: nothing written, its current text returned
    existing = r["add_existing"].structuredContent
    assert not r["add_existing"].isError and existing["written"] is False
    assert "Access tokens expire after 15 minutes." in existing["existing"][0]["text"]
    first = r["history"].structuredContent["operations"][0]
    assert (first["op"], first["path"], first["reason"], first["actor"]) == \
        ("UPSERT", "auth/jwt/expiry.md", "learned in review", "mcp")
    assert r["undo"].structuredContent["status"] == "undone"
    assert r["read_gone"].isError and "no entry at auth/jwt/expiry.md" in shown(r["read_gone"])
    # errors a model can fix are tool results, not protocol errors, with the error body
    for key, code in (("bad_undo", "journal_error"), ("bad_curate", "batch_rejected"),
                      ("empty_query", "invalid_input")):
        assert r[key].isError, key
        assert shown(r[key]).startswith("Error: ") and r[key].structuredContent["error"]["code"] == code
    with Memory.open(project) as mem:
        assert not mem.tree.exists("auth/jwt/expiry.md")
        assert [x.op for x in mem.history(limit=3)] == ["UNDO", "UPSERT", "ADD"]
    assert not (project.parent / "etc").exists()


def test_every_memory_command_over_stdio(project):
    p = "/memories/notes/general/progress.md"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("view_root", {"command": "view", "path": "/memories"}),
        ("create", {"command": "create", "path": p, "file_text": "# Progress\n- step 1 done\n- step 2 todo\n"}),
        ("create_again", {"command": "create", "path": p, "file_text": "other"}),
        ("create_shallow", {"command": "create", "path": "/memories/progress.md", "file_text": "x"}),
        ("escape", {"command": "view", "path": "/memories/../../etc/passwd"}),
        ("outside", {"command": "create", "path": "/tmp/x.md", "file_text": "x"}),
        ("view", {"command": "view", "file_path": p}),
        ("view_range", {"command": "view", "path": p, "view_range": [3, 4]}),
        ("replace", {"command": "str_replace", "path": p, "old_str": "- step 2 todo", "new_str": "- step 2 done"}),
        ("replace_twice", {"command": "str_replace", "path": p, "old_str": "done", "new_str": "x"}),
        ("replace_missing", {"command": "str_replace", "path": p, "old_str": "step 9", "new_str": "x"}),
        ("insert", {"command": "insert", "path": p, "insert_line": 4, "insert_text": "- step 3 next"}),
        ("insert_range", {"command": "insert", "path": p, "insert_line": 99, "insert_text": "x"}),
        ("rename", {"command": "rename", "old_path": p, "new_path": "/memories/notes/general/log.md"}),
        ("view_renamed", {"command": "view", "path": "/memories/notes/general/log.md"}),
        ("view_old", {"command": "view", "path": p}),
        ("view_dir", {"command": "view", "path": "/memories/notes"}),
        ("delete", {"command": "delete", "path": "/memories/notes/general/log.md"}),
        ("delete_root", {"command": "delete", "path": "/memories"}),
        ("delete_missing", {"command": "delete", "path": "/memories/notes/general/log.md"}),
        ("unknown", {"command": "format_disk", "path": "/memories"}),
    ]

    async def body(s: ClientSession):
        return {name: await s.call_tool("memory", args) for name, args in calls}

    r = session_on(project, body)
    ok = {"view_root", "create", "view", "view_range", "replace", "insert", "rename", "view_renamed", "view_dir",
          "delete"}
    for name, _ in calls:
        assert r[name].isError is (name not in ok), (name, shown(r[name]))
    assert "/memories/auth/jwt/" in shown(r["view_root"])
    assert shown(r["create"]) == f"File created successfully at: {p}"
    assert shown(r["create_again"]) == (f"Error: File {p} already exists: view it, then edit it with str_replace "
                                       "or insert, or delete it first")
    assert "files live at /memories/<domain>/<topic>" in shown(r["create_shallow"])
    assert "would escape /memories directory" in shown(r["escape"])
    assert "Path must start with /memories, got: /tmp/x.md" in shown(r["outside"])
    assert "     3\t- step 1 done" in shown(r["view"])
    assert shown(r["view_range"]).splitlines()[1:] == ["     3\t- step 1 done", "     4\t- step 2 todo"]
    assert "     4\t- step 2 done" in shown(r["replace"])
    assert "Multiple occurrences of old_str `done` in lines: 3, 4" in shown(r["replace_twice"])
    assert "did not appear verbatim" in shown(r["replace_missing"])
    assert "It should be within the range [0, 5]" in shown(r["insert_range"])
    assert "     5\t- step 3 next" in shown(r["view_renamed"])
    assert "does not exist" in shown(r["view_old"])
    assert "/memories/notes/general/log.md" in shown(r["view_dir"])
    assert "Cannot delete the /memories directory itself" in shown(r["delete_root"])
    assert shown(r["unknown"]).startswith("Error: invalid arguments for memory: command: Input should be 'view'")
    assert r["unknown"].structuredContent["error"]["code"] == "invalid_arguments"
    assert "\n" not in shown(r["unknown"])
    with Memory.open(project) as mem:
        reasons = [x.reason for x in reversed(mem.history(limit=None))][1:]   # after the seed
    assert reasons == [f"memory tool: create {p}", f"memory tool: str_replace {p}",
                       f"memory tool: insert {p} after line 4",
                       f"memory tool: rename {p} to /memories/notes/general/log.md",
                       f"memory tool: rename {p} to /memories/notes/general/log.md",
                       "memory tool: delete /memories/notes/general/log.md"]


def test_a_project_argument_reaches_another_memory(project, tmp_path):
    other = tmp_path / "other"
    with Memory.open(other, create=True) as mem:
        mem.curate([{"op": "ADD", "path": "ops/deploy/runbook.md", "title": "Deploy runbook",
                     "content": "Deploys go out on Tuesdays.", "reason": "seed"}])

    async def body(s: ClientSession):
        here = await s.call_tool("memgrove_search", {"query": "deploys tuesdays"})
        there = await s.call_tool("memgrove_search", {"query": "deploys tuesdays", "project": str(other)})
        missing = await s.call_tool("memgrove_list", {"project": str(tmp_path / "nowhere")})
        return here, there, missing

    here, there, missing = session_on(project, body)
    assert here.structuredContent["hits"] == []
    assert there.structuredContent["hits"][0]["path"] == "ops/deploy/runbook.md"
    assert missing.isError and missing.structuredContent["error"]["code"] == "tree_not_found"


_STRAY = """
import sys
import memgrove.mcp.calls as calls
real = calls.search
def noisy(*args, **kwargs):
    print("a stray print from a library")      # must not reach the protocol stream
    return real(*args, **kwargs)
calls.search = noisy
from memgrove.cli import main
sys.argv = ["memgrove", "mcp", "--root", sys.argv[1]]
main()
"""


def test_stdout_carries_nothing_but_protocol(project):
    """Raw JSON-RPC over the pipes, with a tool that prints: stdout holds only JSON-RPC lines."""
    with subprocess.Popen([sys.executable, "-c", _STRAY, str(project)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                          cwd=str(project)) as proc:
        killer = threading.Timer(60, proc.kill)
        killer.start()
        try:
            def send(message: dict) -> None:
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()

            send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "raw", "version": "0"}}})
            first = json.loads(proc.stdout.readline())
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "memgrove_search", "arguments": {"query": "refresh token rotation"}}})
            second = json.loads(proc.stdout.readline())
            proc.stdin.close()
            rest, err = proc.stdout.read(), proc.stderr.read()
            assert proc.wait(timeout=30) == 0
        finally:
            killer.cancel()
            proc.kill()
    assert (first["id"], first["result"]["serverInfo"]["name"]) == (1, "memgrove")
    assert second["id"] == 2 and not second["result"]["isError"]
    assert "auth/jwt/refresh_rotation.md" in second["result"]["content"][0]["text"]
    assert rest == ""
    assert "a stray print from a library" in err


def test_a_write_waiting_for_the_lock_does_not_block_reads(project):
    """Tools run in worker threads: while a curate waits for the writer lock (held here by
    another process), a search in the same session is answered."""
    order: list[str] = []

    with Memory.open(project) as mem, contextlib.ExitStack() as held:
        held.enter_context(mem.tree.lock.hold())

        async def body(s: ClientSession):
            async def write() -> None:
                r = await s.call_tool("memgrove_curate", {"operations": [
                    {"op": "UPSERT", "path": "auth/jwt/expiry.md", "content": "Tokens last 15 minutes.",
                     "reason": "waits for the lock"}]})
                assert not r.isError, r.content[0].text
                order.append("curate")

            async with anyio.create_task_group() as tg:
                tg.start_soon(write)
                await anyio.sleep(0.5)
                found = await s.call_tool("memgrove_search", {"query": "refresh rotation"})
                order.append("search")
                assert found.structuredContent["hits"]
                held.close()           # the writer may go on now

        session_on(project, body)
    assert order == ["search", "curate"]
    with Memory.open(project) as mem:
        assert mem.tree.exists("auth/jwt/expiry.md")


def test_memgrove_query_uses_the_configured_model(project, monkeypatch):
    """With a model configured (here a scripted OpenAI-protocol server on 127.0.0.1), the LLM
    tiers answer through memgrove_query; without one they quote the evidence (tested above)."""
    with serve([text("Reusing a refresh token revokes the whole token family.")] * 3) as llm:
        monkeypatch.setenv("MEMGROVE_MODEL", "gpt-test")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)

        async def body(s: ClientSession):
            return await s.call_tool("memgrove_query", {"query": "what happens when someone reuses a token"})

        answer = session_on(project, body)
    assert not answer.isError, answer.content[0].text
    assert answer.structuredContent["llm"] is True and answer.structuredContent["tier"] in (3, 4)
    assert "revokes the whole token family" in answer.content[0].text
    assert llm.requests, "the model was never called"

"""``Memory.connect``: the same public API as ``Memory.open``, over a real ``memgrove serve``.

One server (a subprocess on 127.0.0.1) serves project ``served``. Reads are compared with
``Memory.open`` of the very same tree in this process (same index, so the same hits and scores);
writes run through both (``either``), each on its own paths; errors must be the same class with
the same code and message. Then what runs here over the server: the four tools, the query graph
and the memory agent; ``MEMGROVE_URL`` for ``Memory.open()``, the CLI (from another folder) and
``memgrove mcp``; and two processes curating through one server, each seeing the other's entries.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from helpers.memgrove_server import free_port, server_env, start_server, stop_server
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, ToolMessage

import memgrove
from memgrove import Memory
from memgrove.cli import cli
from memgrove.remote.memory import RemoteMemory, ServerError, ServerUnreachable, error_classes

FACTS = [
    ("auth/jwt/refresh_rotation.md", "Refresh token rotation", "Refresh tokens rotate on every use; reuse revokes the family."),
    ("infra/deploy/tuesday.md", "Deploy day", "The billing service is deployed every Tuesday at 10:00."),
    ("infra/db/pool.md", "Database pool", "The Postgres connection pool holds 20 connections per worker."),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("remote") / "served"
    with Memory.open(root, create=True) as m:
        m.curate([{"op": "ADD", "path": p, "title": t, "content": c, "reason": "seed",
                   "sources": [{"kind": "text", "ref": "seed"}]} for p, t, c in FACTS])
    srv = start_server(root)
    try:
        yield srv
    finally:
        assert stop_server(srv) == 0, srv.log_text()


@pytest.fixture
def remote(served):
    with Memory.connect(served.url, served.token) as m:
        yield m


@pytest.fixture
def local(served):
    with Memory.open(served.project) as m:
        yield m


@pytest.fixture(params=["open", "connect"])
def either(request, served):
    """The served project's memory, in this process or through the server."""
    mem = Memory.open(served.project) if request.param == "open" else Memory.connect(served.url, served.token)
    with mem:
        yield mem


def _unique(request: pytest.FixtureRequest, mem: Any) -> str:
    name = request.node.name.split("[")[0].removeprefix("test_")[:40]
    return f"{'remote' if isinstance(mem, RemoteMemory) else 'local'}/{name}"


# -- reads: the same answers, the same types --------------------------------------------------

def test_reads_give_the_same_results_and_types(local, remote):
    for q in ("postgres connection pool", "refresh token rotation", "deploy tuesday billing"):
        here, there = local.search(q, 5), remote.search(q, 5)
        assert all(isinstance(h, memgrove.Hit) for h in there)
        # every field, scores unrounded (an entry's importance decays by the second: not to the digit)
        assert [dataclasses.replace(h, score=0.0) for h in there] == [dataclasses.replace(h, score=0.0) for h in here]
        assert [h.score for h in there] == pytest.approx([h.score for h in here], rel=1e-6)
    assert remote.read("infra/db/pool.md") == local.read("infra/db/pool.md")
    assert isinstance(remote.read("infra/db/pool.md"), memgrove.Entry)
    assert remote.show("infra/db/pool.md") == local.show("infra/db/pool.md")
    assert remote.list("") == local.list("") and remote.list("infra") == local.list("infra")
    assert remote.history(None, "infra") == local.history(None, "infra")
    assert all(isinstance(r, memgrove.JournalRecord) for r in remote.history(5))
    assert remote.fingerprint() == local.fingerprint() and remote.count() == local.count()
    rep = remote.doctor()
    assert isinstance(rep, memgrove.DoctorReport) and rep.ok and rep.entries == local.doctor().entries
    assert set(remote.stats()) == set(local.stats())


def test_pages_through_the_server_are_the_local_pages(local, remote):
    assert remote.list("infra", offset=1, limit=1) == local.list("infra", offset=1, limit=1)
    assert remote.list("infra", limit=1)["next"] == 1 and remote.list("infra", offset=1, limit=1)["next"] is None
    for kw in ({"path": "infra"}, {"kinds": ["ADD"]}, {"kinds": ["UNDO"], "path": "auth"}):
        here, there = local.history_page(1, **kw), remote.history_page(1, **kw)
        assert there.records == here.records and there.next == here.next
        if here.next is not None:
            older = remote.history_page(5, before=there.next, **kw)
            assert older.records == local.history_page(5, before=here.next, **kw).records


def test_query_gives_the_answer_in_process_gives(local, remote):
    q = "How many connections does the postgres pool hold per worker?"
    there = remote.query(q)
    assert isinstance(there, memgrove.Answer)
    here = local.query(q)
    assert (there.answer, there.sources, there.evidence) == (here.answer, here.sources, here.evidence)
    assert "20 connections" in there.answer


# -- writes --------------------------------------------------------------------------------------

def test_curate_history_and_undo(either, request):
    base = _unique(request, either)
    results = either.curate([{"op": "ADD", "path": f"{base}/note.md", "title": "Note",
                              "content": "The staging database listens on port 6543.", "reason": "told"}])
    assert [type(r) for r in results] == [memgrove.OpResult] and results[0].status == "added"
    assert either.read(f"{base}/note.md").title == "Note"
    assert either.history(1)[0].id == results[0].id
    assert any(h.path == f"{base}/note.md" for h in either.search("staging database port 6543", 10))
    undone = either.undo(results[0].id, actor="ops-bot")
    assert isinstance(undone, memgrove.OpResult) and undone.status == "undone"
    assert either.history(1)[0].actor == "ops-bot"                       # the journal names who undid it
    with pytest.raises(memgrove.InvalidPath):
        either.read(f"{base}/note.md")


def test_ingest_text_files_and_a_conversation(either, request, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "runbook.md").write_text("# Runbook\n\n## Restart\n\nRestart the ingest worker with `svc restart ingest`.\n")
    (folder / "empty.txt").write_text("")
    word = "remote" if isinstance(either, RemoteMemory) else "local"
    out = either.ingest(text=f"The {word} cache holds answers for 30 days.")
    assert out and out[0].status == "added"
    files = either.ingest(files=[folder])
    assert [r.status for r in files] == ["added"] and files.skipped == {"empty files": 1}
    entry = either.read(files[0].path)
    assert "svc restart ingest" in entry.body and "runbook.md" in str(entry.sources)
    conv = {"id": f"chat-{word}", "messages": [
        {"id": "m1", "speaker": "ana", "text": f"The {word} release train leaves on Thursdays.",
         "time": "2026-03-02T10:00:00Z"},
        {"id": "m2", "speaker": "ana", "text": "   ", "time": "2026-03-02T10:01:00Z"}]}
    talked = either.ingest(conversation=conv)
    assert len(talked) == 1 and talked.skipped == {"empty messages": 1}
    assert "Thursdays" in either.read(talked[0].path).body


# -- errors: the same class, code and message ------------------------------------------------------

FAILING = {
    "missing entry": lambda m: m.show("infra/db/missing.md"),
    "read missing": lambda m: m.read("infra/db/missing.md"),
    "escaping path": lambda m: m.curate([{"op": "ADD", "path": "../x.md", "title": "x", "content": "y", "reason": "z"},
                                         {"op": "FROB", "path": "a/b.md", "reason": "z"}]),
    "not a list": lambda m: m.curate({"op": "ADD"}),
    "add onto an entry": lambda m: m.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "t",
                                              "content": "c", "reason": "r"}]),
    "unknown operation id": lambda m: m.undo("20200101T000000-0000000000"),
    "empty question": lambda m: m.query("   "),
    "nothing to ingest": lambda m: m.ingest(),
    "unknown review item": lambda m: m.review_show("zzzzzz"),
    "bad folder": lambda m: m.list("../up"),
}


@pytest.mark.parametrize("case", sorted(FAILING))
def test_errors_are_the_same_exceptions(local, remote, case):
    with pytest.raises(memgrove.MemgroveError) as here:
        FAILING[case](local)
    with pytest.raises(memgrove.MemgroveError) as there:
        FAILING[case](remote)
    assert type(there.value) is type(here.value)
    assert there.value.code == here.value.code
    assert str(there.value) == str(here.value)
    if isinstance(here.value, memgrove.BatchRejected):
        assert there.value.errors == here.value.errors


def test_every_library_code_has_its_class():
    table = error_classes()
    assert table["invalid_path"] is memgrove.InvalidPath and table["batch_rejected"] is memgrove.BatchRejected
    assert table["journal_error"] is memgrove.JournalError and table["cancelled"] is memgrove.Cancelled


def test_a_wrong_token_an_absent_server_and_the_local_token(served):
    with Memory.connect(served.url, "not-the-token") as m, pytest.raises(ServerError) as err:
        m.search("pool")
    assert err.value.code == "unauthorized"
    with Memory.connect(served.url, token="") as m:      # a server of this machine: its project's token file
        assert m.search("pool")[0].path == "infra/db/pool.md"
    gone = Memory.connect(f"http://127.0.0.1:{free_port()}", "t")
    with pytest.raises(ServerUnreachable, match="could not be reached"):
        gone.search("pool")
    with pytest.raises(ServerError, match="reindex runs where the tree is"):
        gone.reindex()
    with pytest.raises(ServerUnreachable, match="nothing was sent"):
        gone.curate([{"op": "ADD", "path": "a/b/c.md", "title": "c", "content": "c", "reason": "r"}])
    with pytest.raises(memgrove.InvalidInput, match="not a memgrove server URL"):
        Memory.connect("ftp://example")


# -- what runs here over the server -----------------------------------------------------------------

def test_the_four_tools_work_against_the_server(remote, local):
    tools = {t.name: t for t in remote.tools()}
    assert sorted(tools) == ["curate", "list_tree", "read_entry", "search_knowledge"]
    found = json.loads(tools["search_knowledge"].invoke({"query": "postgres pool"}))
    assert found["entries"][0]["path"] == "infra/db/pool.md"
    assert "20 connections" in tools["read_entry"].invoke({"path": "infra/db/pool.md"})
    assert json.loads(tools["list_tree"].invoke({"folder": "infra"}))["path"] == "infra"
    wrote = tools["curate"].invoke({"operations": [{"op": "UPSERT", "path": "tools/remote/cache.md", "title": "Cache",
                                                    "content": "The answer cache keeps 30 days.", "reason": "r"}]})
    assert json.loads(wrote)["applied"][0]["status"] == "added"
    assert local.history(1)[0].actor == "agent"                          # written by the server, journaled there
    refused = tools["curate"].invoke({"operations": [{"op": "ADD", "path": "../x.md", "reason": "r"}]})
    assert refused.startswith("Error: nothing was written")
    reader = remote.tools(read_only=True)
    assert [t.name for t in reader] == ["search_knowledge", "read_entry", "list_tree"]


def test_the_query_graph_runs_here_over_the_server(remote, local):
    q = "How many connections does the postgres pool hold per worker?"
    out = remote.graph("query").invoke({"question": q})
    assert out["answer"]["answer"] == local.query(q).answer
    chat = remote.graph("query").invoke({"messages": [("user", "When is the billing service deployed?")]})
    assert "Tuesday" in chat["messages"][-1].content


def test_the_memory_agent_runs_here_and_curates_on_the_server(remote, local, served):
    port = {"op": "UPSERT", "path": "agent/remote/staging_port.md", "title": "Staging database port",
            "content": "The staging database listens on port 6543.", "reason": "the user said so"}
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query="staging database port"),
                                       tool_call("curate", operations=[port]), "Noted.",
                                       tool_call("read_entry", path="agent/remote/staging_port.md"), "Port 6543."])
    agent = remote.agent(model=model)
    one = agent.invoke({"messages": [("user", "The staging DB moved to 6543.")]}, {"configurable": {"thread_id": "t1"}})
    assert one["messages"][-1].content == "Noted."
    assert local.read("agent/remote/staging_port.md").title == "Staging database port"
    assert local.history(1)[0].actor == "memory-agent"
    two = agent.invoke({"messages": [("user", "Which port?")]}, {"configurable": {"thread_id": "t2"}})
    assert "6543" in [m for m in two["messages"] if isinstance(m, ToolMessage)][0].content
    assert (remote.tree.home / "threads.db").is_file()                   # threads kept on this side
    assert remote.home == served.project / ".memgrove"


# -- MEMGROVE_URL ---------------------------------------------------------------------------------

def test_memory_open_without_a_path_follows_memgrove_url(served, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMGROVE_URL", served.url)
    monkeypatch.setenv("MEMGROVE_TOKEN", served.token)
    with Memory.open() as m:
        assert isinstance(m, RemoteMemory) and m.search("pool")[0].path == "infra/db/pool.md"
    with Memory.open(tmp_path / "mine", create=True) as m:                 # a path is a path
        assert isinstance(m, Memory)


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return res.exit_code, res.output


def test_the_cli_uses_memgrove_url_from_another_folder(served, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.delenv("MEMGROVE_HOME")
    env = {"MEMGROVE_URL": served.url, "MEMGROVE_TOKEN": served.token}
    code, out = _cli(["search", "postgres pool", "--json"], elsewhere, env)
    assert code == 0 and json.loads(out)["hits"][0]["path"] == "infra/db/pool.md"
    ops = elsewhere / "ops.json"
    ops.write_text(json.dumps([{"op": "ADD", "path": "cli/remote/replica.md", "title": "Read replica",
                                "content": "The read replica lags at most five seconds.", "reason": "ops"}]))
    code, out = _cli(["curate", "--ops", str(ops), "--json"], elsewhere, env)
    assert code == 0 and json.loads(out)["applied"][0]["status"] == "added", out
    (elsewhere / "notes.md").write_text("# Notes\n\nThe cli remote notes name the on-call rota.\n")
    code, out = _cli(["curate", "-f", "notes.md", "--verbatim"], elsewhere, env)
    assert code == 0 and "1 added" in out, out
    code, out = _cli(["show", "cli/remote/replica.md"], elsewhere, env)
    assert code == 0 and "five seconds" in out
    code, out = _cli(["history", "--json", "--path", "cli"], elsewhere, env)
    assert [r["path"] for r in json.loads(out)["operations"]] == ["cli/remote/replica.md"]
    code, out = _cli(["tree"], elsewhere, env)
    assert code == 0 and "cli/" in out and str(served.project / ".memgrove" / "tree") in out
    code, out = _cli(["tree", "cli"], elsewhere, env)
    assert code == 0 and "replica.md" in out
    code, out = _cli(["doctor", "--json"], elsewhere, env)
    assert code == 0 and json.loads(out)["ok"] is True
    assert not (elsewhere / ".memgrove").exists()                         # nothing was opened here
    with Memory.open(served.project) as m:
        assert m.read("cli/remote/replica.md").title == "Read replica"
    # the same error, code and exit status as in-process
    code, out = _cli(["show", "cli/remote/missing.md", "--json"], elsewhere, env)
    here = _cli(["show", "cli/remote/missing.md", "--json", "--no-server", "--root", str(served.project)],
                elsewhere, {})
    assert (code, json.loads(out)) == (here[0], json.loads(here[1]))


def test_memgrove_mcp_follows_memgrove_url(served, tmp_path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = server_env(MEMGROVE_URL=served.url, MEMGROVE_TOKEN=served.token, PYTHONWARNINGS="error")
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgrove", "mcp"], env=env, cwd=str(tmp_path))

    async def main() -> Any:
        with anyio.fail_after(90), open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = {t.name for t in (await session.list_tools()).tools}
                    found = await session.call_tool("memgrove_search", {"query": "postgres pool"})
                    wrote = await session.call_tool("memgrove_curate", {"operations": [
                        {"op": "ADD", "path": "mcp/remote/note.md", "title": "MCP note", "content": "over the bridge",
                         "reason": "test"}]})
                    bad = await session.call_tool("memgrove_read", {"path": "mcp/remote/missing.md"})
                    return names, found, wrote, bad

    names, found, wrote, bad = anyio.run(main)
    assert {"memgrove_query", "memgrove_search", "memgrove_curate", "memory"} <= names
    assert found.structuredContent["hits"][0]["path"] == "infra/db/pool.md"
    assert wrote.structuredContent["written"] is True
    assert bad.isError and bad.structuredContent["error"]["code"] == "invalid_path"
    assert not (tmp_path / ".memgrove").exists()
    with Memory.open(served.project) as m:
        assert m.read("mcp/remote/note.md").title == "MCP note"


# -- several app processes, one memory ---------------------------------------------------------------

WORKER = textwrap.dedent("""
    import json, sys
    from memgrove import Memory
    name, n = sys.argv[1], int(sys.argv[2])
    with Memory.open() as mem:                        # MEMGROVE_URL and MEMGROVE_TOKEN
        for i in range(n):
            mem.curate([{"op": "ADD", "path": f"apps/{name}/fact_{i}.md", "title": f"{name} fact {i}",
                         "content": f"Worker {name} learned fact number {i}.", "reason": "shared memory"}])
        print(json.dumps({"seen": sorted(e["path"] for f in mem.list("apps")["folders"]
                                         for e in mem.list(f["path"])["entries"])}))
""")


def test_two_app_processes_share_one_memory(served):
    env = server_env(MEMGROVE_URL=served.url, MEMGROVE_TOKEN=served.token, PYTHONWARNINGS="error")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, name, "8"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in ("one", "two")]
    outs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    expected = sorted(f"apps/{n}/fact_{i}.md" for n in ("one", "two") for i in range(8))
    with Memory.connect(served.url, served.token) as mem:
        seen = sorted(e["path"] for f in mem.list("apps")["folders"] for e in mem.list(f["path"])["entries"])
        assert seen == expected
        assert {h.path for h in mem.search("worker two learned fact number 3", 3)} >= {"apps/two/fact_3.md"}
        assert sum(1 for r in mem.history(None, "apps")) == 16
    # whichever finished last saw every entry of the other
    assert max(len(json.loads(o[0])["seen"]) for o in outs) == 16


def test_the_studio_graphs_follow_memgrove_url(served, tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setenv("MEMGROVE_URL", served.url)
    monkeypatch.setenv("MEMGROVE_TOKEN", served.token)
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path / "not-used"))
    path = Path(__file__).resolve().parents[1] / "graphs" / "deployment.py"
    spec = importlib.util.spec_from_file_location("memgrove_remote_deployment", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        assert isinstance(module.memory, RemoteMemory)
        out = module.query.invoke({"question": "When is the billing service deployed?"})
        assert "Tuesday" in out["answer"]["answer"]
        assert not (tmp_path / "not-used").exists()           # no sample curated into a local memory
    finally:
        module.memory.close()


def test_the_llm_curator_runs_here_and_queues_on_the_server(remote, local):
    from memgrove.graphs.settings import CurateSettings

    model = ScriptedChatModel(replies=[tool_call("curate", operations=[
        {"op": "UPSERT", "path": "learn/remote/release.md", "title": "Release date",
         "content": "v2.4.0 ships on March 20.", "reason": "from the notes"},
        {"op": "DELETE", "path": "infra/deploy/tuesday.md", "reason": "no longer true"}])])
    report = remote.learn(text="v2.4.0 ships on March 20; deploys are no longer on Tuesdays.", model=model,
                          settings=CurateSettings(finish_on_curate=True))
    assert [(a.op, a.status) for a in report.applied] == [("UPSERT", "added"), ("DELETE", "queued")]
    assert local.read("learn/remote/release.md").title == "Release date"
    assert local.read("infra/deploy/tuesday.md")                          # waits for a person, on the server
    waiting = [i for i in local.review() if "infra/deploy/tuesday.md" in i["candidate"]["paths"]]
    assert len(waiting) == 1 and remote.review_show(waiting[0]["id"])["id"] == waiting[0]["id"]
    remote.review_reject(waiting[0]["id"])


def test_langgraph_dev_adds_no_routes_of_its_own_with_memgrove_url(served, tmp_path, monkeypatch):
    from memgrove.server import app as app_module

    monkeypatch.setenv("MEMGROVE_URL", served.url)
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path / "not-used"))
    app = app_module._langgraph_app()
    assert not [r for r in app.routes if getattr(r, "path", "").startswith("/api")]
    assert not (tmp_path / "not-used").exists()


@pytest.mark.parametrize("case", ["wrong token", "no server"])
def test_memgrove_mcp_answers_what_the_server_did_not(served, tmp_path, case):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import McpError

    url = served.url if case == "wrong token" else f"http://127.0.0.1:{free_port()}"
    env = server_env(MEMGROVE_URL=url, MEMGROVE_TOKEN="not-the-token", PYTHONWARNINGS="error")
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgrove", "mcp"], env=env, cwd=str(tmp_path))

    async def main() -> str:
        with anyio.fail_after(90), open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    with pytest.raises(McpError) as err:
                        await session.initialize()
                    return str(err.value)

    said = anyio.run(main)
    assert f"memgrove serve at {url}" in said
    assert ("answered 401" in said and "bearer token" in said) if case == "wrong token" else "could not be reached" in said

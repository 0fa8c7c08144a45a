"""The memory agent (graphs/agent.py): search before answering, curate after learning, threads."""

from __future__ import annotations

import pytest
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from memgrove import Memory
from memgrove.graphs import build_memory_agent

PORT = {"op": "UPSERT", "path": "infra/db/staging_port.md", "title": "Staging database port",
        "content": "The staging database listens on port 6543 (changed from 5432 on 2026-03-02).",
        "sources": [{"kind": "conversation", "ref": "user"}], "reason": "the user told us the new port"}


def tool_names(messages) -> list[str]:
    return [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


def test_the_agent_learns_in_one_thread_and_reuses_it_in_the_next(mem):
    model = ScriptedChatModel(replies=[
        # run 1: the user tells it something; it checks memory, then curates
        tool_call("search_knowledge", query="staging database port"),
        tool_call("curate", operations=[PORT]),
        "Noted: staging now listens on 6543.",
        # run 2, a new thread: it searches and reads before answering
        tool_call("search_knowledge", query="staging database port"),
        tool_call("read_entry", path="infra/db/staging_port.md"),
        "Port 6543 (infra/db/staging_port.md).",
    ])
    agent = mem.agent(model=model)
    one = agent.invoke({"messages": [("user", "FYI the staging DB moved to port 6543.")]},
                       {"configurable": {"thread_id": "t1"}})
    assert tool_names(one["messages"]) == ["search_knowledge", "curate"]
    assert one["messages"][-1].content == "Noted: staging now listens on 6543."
    assert mem.read("infra/db/staging_port.md").title == "Staging database port"
    assert [(r.op, r.actor) for r in mem.history()] == [("UPSERT", "memory-agent")]

    two = agent.invoke({"messages": [("user", "Which port does the staging database use?")]},
                       {"configurable": {"thread_id": "t2"}})
    assert tool_names(two["messages"]) == ["search_knowledge", "read_entry"]
    found = [m for m in two["messages"] if isinstance(m, ToolMessage)]
    assert "infra/db/staging_port.md" in found[0].content and "6543" in found[1].content
    assert two["messages"][-1].content == "Port 6543 (infra/db/staging_port.md)."
    assert "memory" in model.prompt_text(0).lower() and "search_knowledge" in model.prompt_text(0)
    assert sorted(model.bound_tools[0]) == ["curate", "list_tree", "read_entry", "search_knowledge"]


def test_threads_persist_in_sqlite_across_agent_instances(tmp_path):
    home = tmp_path / "proj"
    with Memory.open(home, create=True) as m:
        m.agent(model=ScriptedChatModel(replies=["Hello Ana."])).invoke(
            {"messages": [("user", "I am Ana.")]}, {"configurable": {"thread_id": "ana"}})
    assert (home / ".memgrove" / "threads.db").is_file()
    with Memory.open(home) as m:
        model = ScriptedChatModel(replies=["You said you are Ana."])
        out = m.agent(model=model).invoke({"messages": [("user", "Who am I?")]},
                                          {"configurable": {"thread_id": "ana"}})
    assert [msg.content for msg in out["messages"]] == ["I am Ana.", "Hello Ana.", "Who am I?",
                                                        "You said you are Ana."]
    assert "I am Ana." in model.prompt_text(0)


def test_the_agent_keeps_the_callers_own_tools_and_allowed_ops(mem):
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    model = ScriptedChatModel(replies=[
        tool_call("add", a=2, b=3),
        tool_call("curate", operations=[{"op": "DELETE", "path": "infra/db/staging_port.md", "reason": "x"}]),
        "5",
    ])
    mem.curate([PORT])
    out = mem.graph("agent", model=model, tools=[add], allow=("ADD", "UPSERT")).invoke(
        {"messages": [("user", "2+3?")]})
    assert sorted(model.bound_tools[0]) == ["add", "curate", "list_tree", "read_entry", "search_knowledge"]
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results[0].content == "5"
    assert results[1].status == "error" and "'ADD' or 'UPSERT'" in results[1].content
    assert mem.read("infra/db/staging_port.md")     # not deleted


def test_without_a_model_the_graph_builds_and_a_run_says_what_to_set(mem):
    agent = build_memory_agent(mem)                  # no key needed to build (langgraph dev lists it)
    with pytest.raises(RuntimeError, match="no model configured: set MEMGROVE_MODEL"):
        agent.invoke({"messages": [("user", "hi")]})


def test_a_model_from_the_environment_is_used_at_run_time(mem, openai_server, monkeypatch):
    from helpers.openai_server import text, tool_calls

    agent = build_memory_agent(mem)                  # built before the environment names a model
    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.queue(tool_calls(("curate", {"operations": [PORT]})), text("Saved."))
    out = agent.invoke({"messages": [("user", "staging moved to 6543")]})
    assert out["messages"][-1].content == "Saved."
    assert openai_server.requests[0]["model"] == "test-model"
    assert mem.read("infra/db/staging_port.md")


def test_the_agent_runs_async_as_langgraph_dev_runs_it(mem, openai_server, monkeypatch):
    import asyncio

    from helpers.openai_server import text, tool_calls

    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.queue(tool_calls(("curate", {"operations": [PORT]})), text("Saved."))
    out = asyncio.run(build_memory_agent(mem).ainvoke({"messages": [("user", "staging moved to 6543")]}))
    assert out["messages"][-1].content == "Saved." and mem.read("infra/db/staging_port.md")


def test_an_async_run_against_the_test_server_leaves_no_socket_open(tmp_path):
    # the async test above once ended the whole suite with "ResourceWarning: unclosed <socket ...>":
    # the client's pooled connection outlived the event loop it was opened on
    import subprocess
    import sys
    from pathlib import Path

    code = f"""
import asyncio, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from helpers.openai_server import serve, text
from langchain_openai import ChatOpenAI
with serve([text("hi")]) as srv:
    model = ChatOpenAI(model="m", base_url=srv.base_url, api_key="x", max_retries=0)
    assert asyncio.run(model.ainvoke("q")).content == "hi"
"""
    done = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr

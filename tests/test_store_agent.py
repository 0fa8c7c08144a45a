"""``ContextTreeStore`` as the store of a LangChain agent: ``create_agent(..., store=...)`` with
tools reading and writing ``runtime.store``, and langmem's memory tools over it (when langmem is
installed). The model is scripted (tests/helpers): no LLM is reachable here."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import ToolMessage

from memgrove import ContextTreeStore, Memory

NS = ("memories", "user_1")


@tool
def remember(text: str, runtime: ToolRuntime) -> str:
    """Save something about the user for later conversations."""
    key = f"m{len(runtime.store.search(NS, limit=1000)) + 1}"
    runtime.store.put(NS, key, {"text": text})
    return f"saved as {key}"


@tool
def recall(query: str, runtime: ToolRuntime) -> str:
    """Search what is known about the user."""
    items = runtime.store.search(NS, query=query, limit=3)
    return "\n".join(f"{i.key} ({i.score:.2f}): {i.value['text']}" for i in items) or "nothing found"


def test_create_agent_with_the_tree_as_its_store(tmp_path: Path) -> None:
    model = ScriptedChatModel(replies=[
        tool_call("remember", text="Prefers dark mode in every editor"),
        tool_call("remember", text="Lives in Lisbon"),
        tool_call("recall", query="which editor theme"),
        "You prefer dark mode.",
    ])
    with ContextTreeStore(tmp_path) as store:
        agent = create_agent(model, tools=[remember, recall], store=store)
        out = agent.invoke({"messages": [{"role": "user", "content": "Remember my settings, then tell me my theme."}]})
        tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        assert [t.content for t in tools[:2]] == ["saved as m1", "saved as m2"]
        assert tools[2].content.startswith("m1 (") and "Prefers dark mode in every editor" in tools[2].content
        assert "Lisbon" not in tools[2].content
        assert "Prefers dark mode in every editor" in model.prompt_text(3)   # the model saw what recall found
        assert out["messages"][-1].content == "You prefer dark mode."
        assert store.get(NS, "m2").value == {"text": "Lives in Lisbon"}
    with Memory.open(tmp_path) as mem:                                        # entries of the tree
        assert mem.read("memories/user_1/m1.md").sections["text"] == "Prefers dark mode in every editor"
        assert {r.actor for r in mem.history(2)} == {"langgraph-store"}


def test_create_agent_async_with_the_tree_as_its_store(tmp_path: Path) -> None:
    import asyncio

    model = ScriptedChatModel(replies=[tool_call("remember", text="Uses vim keybindings"),
                                       tool_call("recall", query="vim"), "Noted."])
    with ContextTreeStore(tmp_path) as store:
        agent = create_agent(model, tools=[remember, recall], store=store)
        out = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "I use vim."}]}))
        tools = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
        assert tools[0] == "saved as m1" and "Uses vim keybindings" in tools[1]


def test_langmem_memory_tools_over_the_tree(tmp_path: Path) -> None:
    langmem = pytest.importorskip("langmem")
    ns = ("memories", "{langgraph_user_id}")
    manage = langmem.create_manage_memory_tool(namespace=ns)
    search = langmem.create_search_memory_tool(namespace=ns)
    model = ScriptedChatModel(replies=[
        tool_call(manage.name, content="User prefers dark mode", action="create"),
        tool_call(manage.name, content="User works from Lisbon", action="create"),
        tool_call(search.name, query="dark mode"),
        "You prefer dark mode.",
    ])
    config = {"configurable": {"langgraph_user_id": "ana"}}
    with ContextTreeStore(tmp_path) as store:
        agent = create_agent(model, tools=[manage, search], store=store)
        out = agent.invoke({"messages": [{"role": "user", "content": "Remember this and look it up."}]}, config)
        tools = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
        assert tools[0].startswith("created memory") and tools[1].startswith("created memory"), tools
        assert "User prefers dark mode" in tools[2], tools[2]
        items = store.search(("memories", "ana"), limit=10)
        assert sorted(i.value["content"] for i in items) == ["User prefers dark mode", "User works from Lisbon"]
        key = items[0].key
        model2 = ScriptedChatModel(replies=[tool_call(manage.name, id=key, action="delete"), "Forgotten."])
        create_agent(model2, tools=[manage], store=store).invoke(
            {"messages": [{"role": "user", "content": "Forget it."}]}, config)
        assert store.get(("memories", "ana"), key) is None
    with Memory.open(tmp_path) as mem:
        assert len(mem.tree.entries_under("memories/ana")) == 1
        assert mem.history(1)[0].op == "DELETE"

"""The graphs as parts of a user's larger LangGraph workflow.

The query graph as a node of a ``MessagesState`` parent and of a custom-state
parent (sync, async, stream), with a scripted tool-calling model reaching
tier 4: the parent gains only the answer, and the model never sees the
parent's unrelated turns. Every registered graph has a small public face
(input / output / context schemas), and the run's context picks the project.
"""

from __future__ import annotations

import asyncio
import importlib.util
import operator
import sys
from pathlib import Path
from typing import Annotated

import pytest
from conftest import QUERY_SEED, QUESTIONS
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from typing_extensions import TypedDict

from memgrove import Memory
from memgrove.graphs import build_query_graph, recall_node, remember_node, tiers
from memgrove.tree.base.errors import MemgroveError

REPO = Path(__file__).resolve().parent.parent
UNRELATED = "my cat is called Zebedee-7731"
TIER4_ANSWER = "Ana leads payments (team/people/ana.md); billing runs on Postgres 16 (infra/db/postgres_version.md)."


def tier4_model() -> ScriptedChatModel:
    return ScriptedChatModel(replies=[tool_call("search_knowledge", query="billing database"),
                                      TIER4_ANSWER])


def chat_history() -> list:
    return [HumanMessage(UNRELATED, id="u1"), AIMessage("Nice name.", id="a1"),
            HumanMessage(QUESTIONS["agent"], id="u2")]


def messages_parent(node):
    g = StateGraph(MessagesState)
    g.add_node("memory", node)
    g.add_edge(START, "memory")
    return g.compile()


def check_tier4_turn(out: dict, model: ScriptedChatModel) -> None:
    msgs = out["messages"]
    assert [m.id for m in msgs[:3]] == ["u1", "a1", "u2"]
    assert len(msgs) == 4, [type(m).__name__ for m in msgs]          # exactly one message appended
    assert isinstance(msgs[3], AIMessage) and msgs[3].content == TIER4_ANSWER
    assert not msgs[3].tool_calls
    assert not any(isinstance(m, (SystemMessage, ToolMessage)) for m in msgs)
    # the model saw the graph's own prompt first and the question, never the parent's other turns
    assert len(model.calls) == 2
    for call in model.calls:
        assert isinstance(call[0], SystemMessage)
        assert UNRELATED not in "\n".join(str(m.content) for m in call)
        assert "Nice name." not in "\n".join(str(m.content) for m in call)
    assert any(isinstance(m, ToolMessage) for m in model.calls[1])   # the loop itself ran its tool


def test_query_graph_as_a_node_of_a_messages_state_graph(qmem):
    model = tier4_model()
    out = messages_parent(build_query_graph(qmem, model=model)).invoke({"messages": chat_history()})
    check_tier4_turn(out, model)
    assert set(out) == {"messages"}


def test_query_graph_as_a_node_async(qmem):
    model = tier4_model()
    out = asyncio.run(messages_parent(build_query_graph(qmem, model=model)).ainvoke({"messages": chat_history()}))
    check_tier4_turn(out, model)


def test_query_graph_as_a_node_streamed(qmem):
    model = tier4_model()
    parent = messages_parent(build_query_graph(qmem, model=model))
    updates = list(parent.stream({"messages": chat_history()}, stream_mode="updates"))
    assert len(updates) == 1 and set(updates[0]) == {"memory"}
    # the node's update is the conversation plus the answer: the parent's reducer keeps one copy of each
    assert [type(m).__name__ for m in updates[0]["memory"]["messages"]][-1] == "AIMessage"
    values = list(messages_parent(build_query_graph(qmem, model=tier4_model())).stream(
        {"messages": chat_history()}, stream_mode="values"))
    check_tier4_turn(values[-1], model)


def test_query_graph_as_a_node_of_a_custom_state_graph(qmem):
    class Parent(TypedDict, total=False):
        question: str
        answer: dict
        log: Annotated[list[str], operator.add]

    model = tier4_model()
    g = StateGraph(Parent)
    g.add_node("before", lambda s: {"log": ["before"]})
    g.add_node("recall", build_query_graph(qmem, model=model))
    g.add_edge(START, "before")
    g.add_edge("before", "recall")
    out = g.compile().invoke({"question": QUESTIONS["agent"], "log": ["start"]})
    assert set(out) == {"question", "answer", "log"}
    a = tiers.Answer.from_dict(out["answer"])
    assert (a.tier, a.llm, a.text) == (4, True, TIER4_ANSWER)
    assert out["log"] == ["start", "before"]
    assert "messages" not in out


def test_public_face_of_the_query_graph(qmem):
    g = build_query_graph(qmem)
    assert set(g.get_input_jsonschema()["properties"]) == {"question", "messages"}
    assert set(g.get_output_jsonschema()["properties"]) == {"answer", "messages"}
    assert set(g.get_context_jsonschema()["properties"]) >= {"memgrove_home"}


def test_question_taken_from_the_last_human_message(qmem):
    out = build_query_graph(qmem).invoke({"messages": [{"role": "user", "content": "hello"},
                                                       {"role": "assistant", "content": "hi"},
                                                       {"role": "user", "content": QUESTIONS["direct"]}]})
    a = tiers.Answer.from_dict(out["answer"])
    assert (a.question, a.tier, a.sources[0]) == (QUESTIONS["direct"], 2, "auth/jwt/rotation.md")
    assert len(out["messages"]) == 4 and out["messages"][-1].content == a.text


def test_no_question_and_no_human_message_is_a_clear_error(qmem):
    with pytest.raises(MemgroveError, match="question is empty"):
        build_query_graph(qmem).invoke({"messages": [AIMessage("hi")]})


def test_context_selects_the_project_for_the_query_graph(tmp_path_factory, qmem):
    other = Memory.open(tmp_path_factory.mktemp("other"), create=True, durable=False)
    other.curate([{"op": "ADD", "path": "garden/plants/tomato.md", "title": "Tomato watering",
                   "content": "Water the tomato plants every morning before nine.", "reason": "seed"}])
    q = "When do I water the tomato plants?"
    g = build_query_graph(qmem)
    assert "garden/plants/tomato.md" not in tiers.Answer.from_dict(g.invoke({"question": q})["answer"]).sources
    by_home = tiers.Answer.from_dict(g.invoke({"question": q}, context={"memgrove_home": str(other.home.parent)})
                                     ["answer"])
    assert by_home.sources == ["garden/plants/tomato.md"]
    by_memory = tiers.Answer.from_dict(g.invoke({"question": q}, context={"memory": other})["answer"])
    assert by_memory.sources == ["garden/plants/tomato.md"]
    # a graph built with no memory at all serves whichever project the context names
    g2 = build_query_graph(None)
    assert tiers.Answer.from_dict(g2.invoke({"question": q}, context={"memory": other})["answer"]).sources == \
        ["garden/plants/tomato.md"]
    with pytest.raises(MemgroveError, match="memgrove_home"):
        g2.invoke({"question": q})
    other.close()


def test_context_reaches_the_agent_loop_tools(tmp_path_factory, qmem):
    other = Memory.open(tmp_path_factory.mktemp("other"), create=True, durable=False)
    other.curate([{"op": "ADD", "path": "garden/plants/tomato.md", "title": "Tomato watering",
                   "content": "Water the tomato plants every morning before nine.", "reason": "seed"}])
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query="tomato watering"), "Before nine."])
    g = build_query_graph(qmem, model=model)
    out = g.invoke({"question": QUESTIONS["agent"]}, context={"memory": other})
    assert tiers.Answer.from_dict(out["answer"]).tier == 4
    tool_results = [m for call in model.calls for m in call if isinstance(m, ToolMessage)]
    assert tool_results and "garden/plants/tomato.md" in tool_results[0].content
    other.close()


def load_deployment(monkeypatch, home: Path):
    monkeypatch.setenv("MEMGROVE_HOME", str(home))
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    spec = importlib.util.spec_from_file_location("memgrove_test_deployment", REPO / "graphs" / "deployment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, inputs, outputs", [
    ("query", {"question", "messages"}, {"answer", "messages"}),
    ("curate", {"text", "files", "conversation"}, {"summary", "applied", "notes", "errors", "stopped", "chunk_count",
                                                  "model_calls", "prompt_tokens", "completion_tokens"}),
    ("agent", {"messages"}, {"messages"}),
])
def test_registered_graphs_declare_small_schemas(tmp_path, monkeypatch, name, inputs, outputs):
    g = getattr(load_deployment(monkeypatch, tmp_path), name)
    assert set(g.get_input_jsonschema()["properties"]) == inputs
    assert set(g.get_output_jsonschema()["properties"]) <= outputs | {"structured_response", "jump_to"}
    assert set(g.get_output_jsonschema()["properties"]) >= outputs
    assert "memgrove_home" in g.get_context_jsonschema()["properties"]


def test_recall_and_remember_nodes_in_a_users_graph(qmem):
    g = StateGraph(MessagesState)
    g.add_node("remember", remember_node(qmem))
    g.add_node("recall", recall_node(qmem))
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    app = g.compile()
    fact = "The staging database listens on port 6543 since the migration."
    out = app.invoke({"messages": [HumanMessage(fact)]})
    assert [type(m).__name__ for m in out["messages"]] == ["HumanMessage", "AIMessage"]
    assert any("6543" in str(qmem.read(h.path).sections) for h in qmem.search("staging database port"))
    out = app.invoke({"messages": [HumanMessage("Which port does the staging database listen on?")]})
    assert "6543" in out["messages"][-1].content


def test_remember_node_with_custom_keys(qmem):
    class S(TypedDict, total=False):
        note: str
        question: str
        answer: dict

    g = StateGraph(S)
    g.add_node("remember", remember_node(qmem, text_key="note"))
    g.add_node("recall", recall_node(qmem))
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    out = g.compile().invoke({"note": "Deploys freeze every Friday after noon.",
                              "question": "When do deploys freeze?"})
    assert "Friday" in tiers.Answer.from_dict(out["answer"]).text


def test_remember_node_without_text_is_a_clear_error(qmem):
    with pytest.raises(MemgroveError, match="nothing to remember"):
        remember_node(qmem)({"messages": []})


def test_messages_that_are_not_chat_messages_are_a_clear_error(qmem):
    from memgrove.tree.base.errors import InvalidInput

    with pytest.raises(InvalidInput, match="messages: not a list of chat messages"):
        build_query_graph(qmem).invoke({"messages": [{"nonsense": 1}]})


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))

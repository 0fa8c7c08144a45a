"""Tiers 3 and 4: one LLM call with the prefetched entries, and an agentic loop.

Every failure of the model (timeout, HTTP error, malformed tool call) becomes
the extractive answer of ``tiers.extractive_answer`` with the error named:
a question never raises because an LLM misbehaved.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict

from memgrove.tools.knowledge import knowledge_tools
from memgrove.tree.entries.entry import reader_text
from memgrove.tree.ranking.hits import Hit

from . import tiers
from .llm import describe_error, prompt
from .settings import QuerySettings

_PATH = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+){1,3}\.md")


def context_block(tree, hits: list[Hit], s: QuerySettings) -> tuple[str, list[str]]:
    """The entries an LLM answers from: the best hits, plus one hop of their links, each as
    its reader view (``entry.reader_text``: title, sources, updated, body; not the frontmatter)."""
    paths = [h.path for h in hits if h.kind == "entry"][: s.direct_max_entries]
    if s.expand_relations:
        for p in list(paths):
            try:
                forward, back = tree.links(p)
            except Exception:  # noqa: BLE001 - a vanished entry just has no links
                continue
            for q in forward + back:
                if q not in paths and len(paths) < s.direct_max_entries * 2:
                    paths.append(q)
    blocks, used = [], []
    for p in paths:
        try:
            text = reader_text(tree.read(p))
        except Exception:  # noqa: BLE001 - a vanished or unreadable entry is left out
            continue
        blocks.append(f"=== {p} ===\n{text[: s.direct_max_chars]}")
        used.append(p)
    return "\n\n".join(blocks), used


def cited(text: str, allowed: list[str]) -> list[str]:
    """Entry paths the answer cites, in order; only paths that exist in the context."""
    out = []
    for m in _PATH.findall(text):
        if m in allowed and m not in out:
            out.append(m)
    return out


def _content(msg: Any) -> str:
    c = getattr(msg, "content", msg)
    if isinstance(c, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in c)
    return str(c or "")


def tier3_llm(tree, model, question: str, hits: list[Hit], s: QuerySettings, started: float) -> tiers.Answer:
    context, used = context_block(tree, hits, s)
    try:
        reply = model.invoke([
            SystemMessage(prompt("answer_v1")),
            HumanMessage(f"Question: {question}\n\nMemory entries:\n\n{context or '(none found)'}"),
        ])
        text = _content(reply).strip()
        if not text:
            raise ValueError("the model returned an empty answer")
    except Exception as exc:  # noqa: BLE001 - any model failure degrades, named
        return tiers.extractive_answer(tree, question, hits, s, 3, started, describe_error(exc))
    sources = cited(text, used) or used
    return tiers.Answer(question=question, text=text, tier=3, sources=sources,
                        evidence=tiers.evidence_of_paths(tree, sources, s), top_score=tiers.top_scores(hits)[0],
                        latency_ms=tiers.elapsed_ms(started), llm=True)


class AgentState(TypedDict):
    # not ``messages``: inside a parent graph that key is the parent's conversation, which the
    # loop must neither read (the model sees only its own prompt) nor write to
    agent_messages: Annotated[list[AnyMessage], add_messages]
    model_calls: Annotated[int, operator.add]


ERROR_KEY = "memgrove_error"


def agent_messages(question: str) -> list[AnyMessage]:
    return [SystemMessage(prompt("agent_v1")), HumanMessage(question)]


def build_agent_loop(tree, get_model, s: QuerySettings):
    """A tool loop: the model searches, reads and lists until it answers (bounded).

    ``get_model`` is called at run time, so one compiled loop serves whatever
    model is configured when it runs. A model failure ends the loop with an
    empty AIMessage carrying the error, for ``agent_result`` to report.
    """
    tools = knowledge_tools(tree)
    bound: dict[int, Any] = {}

    def call_model(state: AgentState) -> dict:
        try:
            model = get_model()
            if state.get("model_calls", 0) >= s.agent_max_iterations:
                # out of iterations: one last call without tools forces an answer
                msgs = state["agent_messages"] + [HumanMessage("Stop searching now and answer with what you have found.")]
                return {"agent_messages": [model.invoke(msgs)], "model_calls": 1}
            if id(model) not in bound:
                bound.clear()
                bound[id(model)] = model.bind_tools(tools)
            return {"agent_messages": [bound[id(model)].invoke(state["agent_messages"])], "model_calls": 1}
        except Exception as exc:  # noqa: BLE001 - reported by agent_result, never raised
            return {"agent_messages": [AIMessage(content="", additional_kwargs={ERROR_KEY: describe_error(exc)})],
                    "model_calls": 1}

    def should_continue(state: AgentState) -> str:
        last = state["agent_messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls and state["model_calls"] <= s.agent_max_iterations:
            return "tools"
        return END

    g = StateGraph(AgentState)
    g.add_node("model", call_model)
    g.add_node("tools", ToolNode(tools, handle_tool_errors=True, messages_key="agent_messages"))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", should_continue, ["tools", END])
    g.add_edge("tools", "model")
    return g.compile()


def agent_result(tree, question: str, hits: list[Hit], messages: list[AnyMessage], s: QuerySettings,
                 started: float) -> tiers.Answer:
    """The agent's final message as an Answer, or the extractive answer naming what went wrong."""
    last = messages[-1] if messages else None
    error = None
    if not isinstance(last, AIMessage):
        error = "the agent ended without an answer"
    elif last.additional_kwargs.get(ERROR_KEY):
        error = last.additional_kwargs[ERROR_KEY]
    elif getattr(last, "invalid_tool_calls", None) and not _content(last).strip():
        bad = last.invalid_tool_calls[0]
        error = f"malformed tool call {bad.get('name')!r}: {bad.get('error') or 'arguments are not valid JSON'}"
    elif not _content(last).strip():
        error = "the agent ended without an answer"
    if error:
        return tiers.extractive_answer(tree, question, hits, s, 4, started, error)
    text = _content(last).strip()
    seen = [p for m in messages if getattr(m, "type", "") == "tool" for p in _PATH.findall(_content(m))]
    allowed = list(dict.fromkeys(seen + [h.path for h in hits]))
    sources = cited(text, allowed)
    return tiers.Answer(question=question, text=text, tier=4, sources=sources,
                        evidence=tiers.evidence_of_paths(tree, sources, s), top_score=tiers.top_scores(hits)[0],
                        latency_ms=tiers.elapsed_ms(started), llm=True)


def tier4_agent(tree, model, question: str, hits: list[Hit], s: QuerySettings, started: float,
                loop=None, config: dict | None = None) -> tiers.Answer:
    loop = loop or build_agent_loop(tree, lambda: model, s)
    try:
        out = loop.invoke({"agent_messages": agent_messages(question), "model_calls": 0},
                          config={**(config or {}), "recursion_limit": recursion_limit(s)})
    except Exception as exc:  # noqa: BLE001 - e.g. the recursion limit: degrade, named
        return tiers.extractive_answer(tree, question, hits, s, 4, started, describe_error(exc))
    return agent_result(tree, question, hits, out["agent_messages"], s, started)


def recursion_limit(s: QuerySettings) -> int:
    return 2 * s.agent_max_iterations + 6

"""The 5-tier query pipeline as a LangGraph ``StateGraph``.

    START ─┬─ fingerprint ─┐
           └─ search ──────┴─ exact_cache ─ fuzzy_cache ─ classify ─┬─ out_of_domain ─┐
                                  │              │                  ├─ direct_answer ─┤
                                  │              │                  ├─ llm_answer ────┤
                                  │              │                  └─ agent_prompt ─ agent ─ agent_answer ─┤
                                  └──────────────┴──────────────────────────────────────── finish ─ END

Nodes adapt the plain functions of ``tiers``/``llm_tiers`` through a
``QueryPipeline``; routers are small pure functions of the state. Nodes are
plain ``def``s: their file and SQLite I/O must not run on a server's event
loop (``langgraph dev`` refuses blocking calls in ``async`` nodes).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from memgrove.tree.search import hit_from_dict

from . import llm_tiers, tiers
from .pipeline import QueryPipeline
from .settings import QuerySettings


def _earliest(a: float | None, b: float | None) -> float:
    return min(x for x in (a, b) if x) if (a or b) else 0.0


def _add(a: int | None, b: int | None) -> int:
    return (a or 0) + (b or 0)


class QueryState(TypedDict, total=False):
    question: str
    started: Annotated[float, _earliest]   # both START branches stamp it; the earliest wins
    fingerprint: str
    search_fingerprint: str               # taken just before the search: what the answer is cached under
    hits: list[dict]
    terms: list[str]
    entry_count: int
    route: str                            # out_of_domain | direct | llm | agent
    # a tiers.Answer: the same object Memory.query returns, and a dict, so the state stays plain JSON
    answer: dict
    messages: Annotated[list[AnyMessage], add_messages]   # the agent loop's conversation
    model_calls: Annotated[int, _add]


# -- routers -------------------------------------------------------------------

def after_cache(state: QueryState) -> str:
    return "finish" if state.get("answer") else "next"


ROUTE_NODES = {"out_of_domain": "out_of_domain", "direct": "direct_answer", "llm": "llm_answer",
               "agent": "agent_prompt"}


def after_classify(state: QueryState) -> str:
    return ROUTE_NODES[state["route"]]


def after_agent_prompt(state: QueryState) -> str:
    return "finish" if state.get("answer") else "agent"


# -- the graph -------------------------------------------------------------------

def build_query_graph(memory: Any, *, model: Any = None, settings: QuerySettings | None = None):
    """Compile the query graph over ``memory`` (a ``Memory`` or ``ContextTree``).

    ``model``: any LangChain chat model; default: ``MEMGROVE_MODEL`` via ``ChatOpenAI``, or none.
    """
    tree = getattr(memory, "tree", memory)
    pipe = QueryPipeline(tree, settings=settings, model=model)
    s = pipe.settings

    def hits_of(state: QueryState):
        return [hit_from_dict(h) for h in state.get("hits", [])]

    def question_of(state: QueryState) -> str:
        return pipe.check(state.get("question"))

    def fingerprint(state: QueryState) -> dict:
        return {"started": time.perf_counter(), "fingerprint": tree.fingerprint()}

    def search(state: QueryState) -> dict:
        started = time.perf_counter()
        q = question_of(state)
        # the parallel fingerprint branch may run after a write this search did not see;
        # caching under that later fingerprint would serve a stale answer, so take one here first
        before = tree.fingerprint()
        hits = tree.search(q, s.prefetch_limit)
        # asdict, not to_dict: to_dict rounds scores, and routing must see what Memory.query sees
        return {"started": started, "hits": [dataclasses.asdict(h) for h in hits], "terms": tree.engine.terms(q),
                "entry_count": tree.entry_count(), "search_fingerprint": before}

    def exact_cache(state: QueryState) -> dict:
        hit = tiers.tier0_exact(pipe.cache, question_of(state), state["fingerprint"])
        return {"answer": tiers.from_cache(hit, question_of(state), 0, state["started"])} if hit else {}

    def fuzzy_cache(state: QueryState) -> dict:
        hit = tiers.tier1_fuzzy(pipe.cache, question_of(state), state["fingerprint"], s)
        return {"answer": tiers.from_cache(hit, question_of(state), 1, state["started"])} if hit else {}

    def classify(state: QueryState) -> dict:
        return {"route": tiers.route(hits_of(state), state.get("terms", []), state.get("entry_count", 0), s)}

    def out_of_domain(state: QueryState) -> dict:
        return {"answer": tiers.out_of_domain_answer(question_of(state), hits_of(state), state["started"])}

    def direct_answer(state: QueryState) -> dict:
        a = tiers.direct_answer(tree, question_of(state), hits_of(state), s, state["started"])
        return {"answer": a}

    def no_model_answer(state: QueryState, tier: int) -> dict | None:
        model, error = pipe.model_or_error()
        if model is not None:
            return None
        a = tiers.extractive_answer(tree, question_of(state), hits_of(state), s, tier, state["started"], error)
        return {"answer": a}

    def llm_answer(state: QueryState) -> dict:
        fallback = no_model_answer(state, 3)
        if fallback:
            return fallback
        a = llm_tiers.tier3_llm(tree, pipe.model(), question_of(state), hits_of(state), s, state["started"])
        return {"answer": a}

    def agent_prompt(state: QueryState) -> dict:
        return no_model_answer(state, 4) or {"messages": llm_tiers.agent_messages(question_of(state)),
                                             "model_calls": 0}

    def agent_answer(state: QueryState) -> dict:
        a = llm_tiers.agent_result(tree, question_of(state), hits_of(state), state.get("messages", []), s,
                                   state["started"])
        return {"answer": a}

    def finish(state: QueryState) -> dict:
        a = tiers.Answer.from_dict(state["answer"])   # an Answer, or its JSON from a checkpoint
        if not a.cached:
            a = tiers.Answer.from_dict({**a, "latency_ms": tiers.elapsed_ms(state["started"])})
        pipe.finish(a, state.get("search_fingerprint") or state["fingerprint"])
        return {"answer": a}

    g = StateGraph(QueryState)
    g.add_node("fingerprint", fingerprint)
    g.add_node("search", search)
    g.add_node("exact_cache", exact_cache)
    g.add_node("fuzzy_cache", fuzzy_cache)
    g.add_node("classify", classify)
    g.add_node("out_of_domain", out_of_domain)
    g.add_node("direct_answer", direct_answer)
    g.add_node("llm_answer", llm_answer)
    g.add_node("agent_prompt", agent_prompt)
    g.add_node("agent", llm_tiers.build_agent_loop(tree, pipe.model, s))
    g.add_node("agent_answer", agent_answer)
    g.add_node("finish", finish)

    g.add_edge(START, "fingerprint")
    g.add_edge(START, "search")
    g.add_edge(["fingerprint", "search"], "exact_cache")
    g.add_conditional_edges("exact_cache", after_cache, {"finish": "finish", "next": "fuzzy_cache"})
    g.add_conditional_edges("fuzzy_cache", after_cache, {"finish": "finish", "next": "classify"})
    g.add_conditional_edges("classify", after_classify, list(ROUTE_NODES.values()))
    for node in ("out_of_domain", "direct_answer", "llm_answer"):
        g.add_edge(node, "finish")
    g.add_conditional_edges("agent_prompt", after_agent_prompt, ["agent", "finish"])
    g.add_edge("agent", "agent_answer")
    g.add_edge("agent_answer", "finish")
    g.add_edge("finish", END)
    return g.compile(name="memgrove-query").with_config(recursion_limit=llm_tiers.recursion_limit(s) + 20)


def __getattr__(name: str):
    # `graph` for langgraph.json: built on first access, over MEMGROVE_HOME or the
    # project found from the working directory (created if missing).
    if name == "graph":
        from memgrove.memory import Memory

        g = build_query_graph(Memory.open(os.environ.get("MEMGROVE_HOME") or os.getcwd(), create=True))
        globals()["graph"] = g
        return g
    raise AttributeError(name)

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
import time
import uuid
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, convert_to_messages
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from memgrove.tools.runtime import MemoryClass, MemoryContext, NoMemory, memory_from_context
from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import InvalidInput
from memgrove.tree.ranking.hits import hit_from_dict

from . import llm_tiers, tiers
from .llm import resolve_model
from .pipeline import QueryPipeline
from .settings import QuerySettings


def _earliest(a: float | None, b: float | None) -> float:
    return min(x for x in (a, b) if x) if (a or b) else 0.0


def _add(a: int | None, b: int | None) -> int:
    return (a or 0) + (b or 0)


class QueryInput(TypedDict, total=False):
    """What the graph reads: ``question``, or else the last human turn of ``messages``."""

    question: str
    messages: list[AnyMessage]


class QueryOutput(TypedDict, total=False):
    """What the graph gives back: ``answer``; and, when it was given ``messages``, them plus one AIMessage."""

    # a tiers.Answer: the same object Memory.query returns, and a dict, so the state stays plain JSON
    answer: dict
    messages: list[AnyMessage]


class QueryState(QueryInput, QueryOutput, total=False):
    started: Annotated[float, _earliest]   # both START branches stamp it; the earliest wins
    fingerprint: str
    search_fingerprint: str               # taken just before the search: what the answer is cached under
    hits: list[dict]
    terms: list[str]
    entry_count: int
    route: str                            # out_of_domain | direct | llm | agent
    # the agent loop's conversation: private, so a parent's ``messages`` never reach the model
    agent_messages: Annotated[list[AnyMessage], add_messages]
    model_calls: Annotated[int, _add]


def _human_text(message: Any) -> str | None:
    if getattr(message, "type", None) != "human":
        return None
    content = message.content
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def given_messages(state: dict) -> list:
    """The ``messages`` given, as message objects (Studio and HTTP clients send dicts)."""
    try:
        return convert_to_messages(state.get("messages") or [])
    except (ValueError, TypeError, NotImplementedError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidInput(f"messages: not a list of chat messages ({first[:200]})") from None


def question_text(state: dict) -> Any:
    """``question`` if given, else the text of the last human message (what a chat parent asks)."""
    q = state.get("question")
    if isinstance(q, str) and q.strip():
        return q
    messages = state.get("messages")
    if messages:
        for m in reversed(given_messages(state)):
            text = _human_text(m)
            if text is not None:
                return text
    return q


def answer_turn(state: dict, answer: tiers.Answer) -> dict:
    """The ``messages`` update: the conversation as given plus one AIMessage with the answer text.

    The whole list, not just the new turn: a parent whose ``messages`` has no reducer keeps its
    conversation; one with ``add_messages`` matches the given turns by id and appends the answer.
    """
    if not state.get("messages"):
        return {}
    return {"messages": [*given_messages(state),
                         AIMessage(content=answer.text, name="memgrove", id=f"memgrove-{uuid.uuid4().hex}")]}


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

def build_query_graph(memory: Any = None, *, model: Any = None, settings: QuerySettings | None = None,
                      memory_class: MemoryClass | None = None):
    """Compile the query graph over ``memory`` (a ``Memory`` or ``ContextTree``).

    A run's context may name another project (``{"memgrove_home": ...}`` or ``{"memory": Memory}``);
    ``memory`` may then be left out. ``model``: any LangChain chat model; default:
    ``MEMGROVE_MODEL`` via ``ChatOpenAI``, or none. ``memory_class`` (``Memory``, handed in) opens a
    project folder a run's context names.
    """
    default_tree = getattr(memory, "tree", memory) if memory is not None else None
    pipes: dict[Any, QueryPipeline] = {}
    lock = forksafe.lock()

    def pipe_for(tree) -> QueryPipeline:
        # one pipeline (query cache, settings, model) per project, kept for the graph's life
        with lock:
            pipe = pipes.get(tree.home)
            if pipe is None:
                pipe = pipes[tree.home] = QueryPipeline(tree, settings=settings, model=model)
            return pipe

    def pipe_of(runtime: Runtime | None) -> QueryPipeline:
        mem = memory_from_context(getattr(runtime, "context", None), memory_class)
        tree = getattr(mem, "tree", mem) if mem is not None else default_tree
        if tree is None:
            raise NoMemory("this query graph was built without a memory: run it with "
                           "context={'memgrove_home': '/path/to/project'} or pass one to build_query_graph")
        return pipe_for(tree)

    def hits_of(state: QueryState):
        return [hit_from_dict(h) for h in state.get("hits", [])]

    def question_of(state: QueryState) -> str:
        return QueryPipeline.check(question_text(state))

    def fingerprint(state: QueryState, runtime: Runtime) -> dict:
        return {"started": time.perf_counter(), "fingerprint": pipe_of(runtime).fingerprint()}

    def search(state: QueryState, runtime: Runtime) -> dict:
        started = time.perf_counter()
        q = question_of(state)
        pipe = pipe_of(runtime)
        tree = pipe.tree
        # the parallel fingerprint branch may run after a write this search did not see;
        # caching under that later fingerprint would serve a stale answer, so take one here first
        before = pipe.fingerprint()
        hits = tree.search(q, pipe.settings.prefetch_limit)
        # asdict, not to_dict: to_dict rounds scores, and routing must see what Memory.query sees
        return {"started": started, "hits": [dataclasses.asdict(h) for h in hits], "terms": tree.engine.terms(q),
                "entry_count": tree.entry_count(), "search_fingerprint": before}

    def exact_cache(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        hit = tiers.tier0_exact(pipe.cache, question_of(state), state["fingerprint"])
        return {"answer": tiers.from_cache(hit, question_of(state), 0, state["started"])} if hit else {}

    def fuzzy_cache(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        hit = tiers.tier1_fuzzy(pipe.cache, question_of(state), state["fingerprint"], pipe.settings)
        return {"answer": tiers.from_cache(hit, question_of(state), 1, state["started"])} if hit else {}

    def classify(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        return {"route": tiers.route(hits_of(state), state.get("terms", []), state.get("entry_count", 0),
                                     pipe.settings)}

    def out_of_domain(state: QueryState) -> dict:
        return {"answer": tiers.out_of_domain_answer(question_of(state), hits_of(state), state["started"])}

    def direct_answer(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        a = tiers.direct_answer(pipe.tree, question_of(state), hits_of(state), pipe.settings, state["started"])
        return {"answer": a}

    def no_model_answer(pipe: QueryPipeline, state: QueryState, tier: int) -> dict | None:
        model, error = pipe.model_or_error()
        if model is not None:
            return None
        a = tiers.extractive_answer(pipe.tree, question_of(state), hits_of(state), pipe.settings, tier,
                                    state["started"], error)
        return {"answer": a}

    def llm_answer(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        fallback = no_model_answer(pipe, state, 3)
        if fallback:
            return fallback
        a = llm_tiers.tier3_llm(pipe.tree, pipe.model(), question_of(state), hits_of(state), pipe.settings,
                                state["started"])
        return {"answer": a}

    def agent_prompt(state: QueryState, runtime: Runtime) -> dict:
        return no_model_answer(pipe_of(runtime), state, 4) or {
            "agent_messages": llm_tiers.agent_messages(question_of(state)), "model_calls": 0}

    def agent_answer(state: QueryState, runtime: Runtime) -> dict:
        pipe = pipe_of(runtime)
        a = llm_tiers.agent_result(pipe.tree, question_of(state), hits_of(state), state.get("agent_messages", []),
                                   pipe.settings, state["started"])
        return {"answer": a}

    def finish(state: QueryState, runtime: Runtime) -> dict:
        a = tiers.Answer.from_dict(state["answer"])   # an Answer, or its JSON from a checkpoint
        if not a.cached:
            a = tiers.Answer.from_dict({**a, "latency_ms": tiers.elapsed_ms(state["started"])})
        pipe_of(runtime).finish(a, state.get("search_fingerprint") or state["fingerprint"])
        return {"answer": a, **answer_turn(state, a)}

    # the loop's tools follow the run's context like the nodes do (ToolRuntime); its model and
    # bounds are the graph's: one model for every project, the build-time project's settings
    loop_settings = settings or (pipe_for(default_tree).settings if default_tree is not None else QuerySettings())
    resolved: dict[str, Any] = {}

    def loop_model() -> Any:
        if default_tree is not None:      # the very client tier 3 uses: one connection pool, not two
            return pipe_for(default_tree).model()
        if "model" not in resolved:
            resolved["model"] = resolve_model(model, timeout=loop_settings.llm_timeout,
                                              retries=loop_settings.llm_retries)
        return resolved["model"]

    g = StateGraph(QueryState, input_schema=QueryInput, output_schema=QueryOutput, context_schema=MemoryContext)
    g.add_node("fingerprint", fingerprint)
    g.add_node("search", search)
    g.add_node("exact_cache", exact_cache)
    g.add_node("fuzzy_cache", fuzzy_cache)
    g.add_node("classify", classify)
    g.add_node("out_of_domain", out_of_domain)
    g.add_node("direct_answer", direct_answer)
    g.add_node("llm_answer", llm_answer)
    g.add_node("agent_prompt", agent_prompt)
    g.add_node("agent", llm_tiers.build_agent_loop(default_tree, loop_model, loop_settings))
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
    return g.compile(name="memgrove-query").with_config(recursion_limit=llm_tiers.recursion_limit(loop_settings) + 20)


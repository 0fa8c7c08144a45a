"""The LLM curator: content in, entries out, through the ``curate`` tool.

    START ─ split ─ curate_chunk ─┬─ curate_chunk   (while chunks remain)
                                  └─ summarize ─ END

``split`` cuts text, files or a conversation into chunks (``tree.chunks``);
``curate_chunk`` shows the model one chunk with the existing entries most like
it and lets it search, read and curate (a LangChain 1.x ``create_agent`` loop);
``summarize`` reports what the tool actually wrote. The memory comes from the
builder or from the run's context (``{"memgrove_home": ...}``); the model from
the builder or from ``MEMGROVE_MODEL``. Nodes are sync ``def``s (``langgraph dev``).
"""

from __future__ import annotations

import dataclasses
import operator
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Callable

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from memgrove.tools.curate import curate_tool
from memgrove.tools.knowledge import knowledge_tools
from memgrove.tools.runtime import MemoryClass, MemoryContext, MemoryRef
from memgrove.tree.inputs import curator
from memgrove.tree.inputs.chunks import Chunk, conversation_chunks, text_chunks
from memgrove.tree.base.errors import InvalidInput
from memgrove.tree.writes.operations import OPS

from .curate_report import CurateReport, as_results, summarize
from .llm import describe_error, prompt, resolve_model
from .settings import CurateSettings, load_curate_settings


class CurateInput(TypedDict, total=False):
    text: str
    files: list[str]
    conversation: dict


class CurateOutput(TypedDict, total=False):
    """The run's report: what was written (``applied``), the summary, and what it cost."""

    summary: str
    applied: Annotated[list[dict], operator.add]     # OpResult.to_dict()s: the state stays JSON
    notes: Annotated[list[str], operator.add]
    errors: Annotated[list[str], operator.add]
    stopped: str
    chunk_count: int
    model_calls: Annotated[int, operator.add]
    prompt_tokens: Annotated[int, operator.add]
    completion_tokens: Annotated[int, operator.add]


class CurateState(CurateInput, CurateOutput, total=False):
    chunks: list[dict]
    position: int


@dataclasses.dataclass(frozen=True)
class ChunkOutcome:
    applied: list[dict]
    note: str
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    error: str = ""


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- plain functions ---------------------------------------------------------------

def input_chunks(tree, data: dict[str, Any], s: CurateSettings, now: str) -> list[Chunk]:
    """The chunks of everything in ``data`` (text, files, conversation); checked before any is curated."""
    limit = tree.settings.max_input_bytes
    size, overlap = s.chunk_chars, s.chunk_overlap_chars
    chunks: list[Chunk] = []
    if data.get("text") is not None:
        if len(str(data["text"]).encode("utf-8", "surrogatepass")) > limit:
            raise InvalidInput(f"the text is larger than {limit:,} bytes (setting max_input_bytes)")
        chunks += text_chunks(data["text"], size=size, overlap=overlap, at=now)
    for f in data.get("files") or []:
        p = Path(f)
        try:
            text = curator.decode_input(curator.read_input(p, limit), str(p), limit)
        except OSError as exc:
            raise InvalidInput(f"cannot read {p}: {exc.strerror}") from None
        chunks += text_chunks(text, size=size, overlap=overlap, source=str(p), kind="file", at=now)
    if data.get("conversation") is not None:
        chunks += conversation_chunks(data["conversation"], size=size, overlap=overlap)
    if not chunks:
        raise InvalidInput("nothing to curate: give text, files or a conversation")
    return chunks


def chunk_prompt(tree, chunk: Chunk, s: CurateSettings, now: str) -> str:
    """The user turn for one chunk: what it is, what the tree already holds, the material."""
    parts = [f"Chunk: {chunk.label}", f"Now: {now}"]
    top = tree.list_folder("", counts=False)   # no subtree scans: this runs once per chunk
    domains = [f"{c['path']} ({c.get('title') or ''})" for c in top.get("folders", [])]
    parts.append("Top-level domains: " + (", ".join(domains) if domains else "(none yet: the memory is empty)"))
    words = list(dict.fromkeys(w.strip(".,:;!?()[]\"'").lower() for w in chunk.text.split()))
    hits = tree.search(" ".join(w for w in words if len(w) > 2)[:2000], s.prefetch_entries, record_access=False) \
        if s.prefetch_entries else []
    if hits:
        parts.append("Existing entries most like this chunk:\n" + "\n".join(
            f"- {h.path}: {h.title}. {h.summary or h.excerpt[:160]}" for h in hits))
    if chunk.context:
        parts.append(f"Earlier, already curated (context only):\n{chunk.context}")
    parts.append(f"New material to curate:\n{chunk.text}")
    return "\n\n".join(parts)


def _usage(msg: AIMessage) -> tuple[int, int]:
    u = getattr(msg, "usage_metadata", None) or {}
    return int(u.get("input_tokens", 0) or 0), int(u.get("output_tokens", 0) or 0)


def _curated(messages: list) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, ToolMessage) and last.name == "curate" and bool(last.artifact)


def _finish_on_curate():
    """Ends a chunk's loop once a ``curate`` call has written: the model's closing line would
    resend the whole chunk to say "done" (measured: 62% of the curator's prompt tokens)."""
    from langchain.agents.middleware import before_model

    @before_model(can_jump_to=["end"])
    def finish_on_curate(state, runtime) -> dict | None:
        return {"jump_to": "end"} if _curated(state["messages"]) else None

    return finish_on_curate


# what the LLM curator writes with: every operation but moving entries in and out of the archive,
# which is the user's (or a reviewed dream's) call, never a side effect of reading a chunk
CURATOR_OPS = tuple(op for op in OPS if op not in ("ARCHIVE", "RESTORE"))


def curate_chunk(memory, model, chunk: Chunk, s: CurateSettings, now: str) -> ChunkOutcome:
    """Let the model curate one chunk with the memory tools. A model failure raises."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware
    from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError

    tree = getattr(memory, "tree", memory)
    from memgrove.tree.hygiene.dream import review_ops

    # a model's MERGE and DELETE (setting review_ops) wait in the review queue; a user's curate never does
    tools = knowledge_tools(memory) + [curate_tool(memory, actor="llm-curator", max_ops=s.max_ops,
                                                   default_sources=chunk.sources, allow=CURATOR_OPS,
                                                   review_ops=review_ops(tree.settings))]
    # finishing comes first: a chunk whose last allowed call wrote is done, not given up
    middleware = [_finish_on_curate()] if s.finish_on_curate else []
    middleware.append(ModelCallLimitMiddleware(run_limit=s.max_steps, exit_behavior="error"))
    agent = create_agent(model, tools, system_prompt=prompt("curate_v1"), name="memgrove-curate-chunk",
                         middleware=middleware)
    error = ""
    try:
        out = agent.invoke({"messages": [HumanMessage(chunk_prompt(tree, chunk, s, now))]},
                           config={"recursion_limit": 10 * s.max_steps + 10})   # a backstop; the middleware counts
        messages = out["messages"]
    except (ModelCallLimitExceededError, GraphRecursionError):
        # what was curated before the limit stays written; the tally of calls is lost with the state
        return ChunkOutcome([], "", s.max_steps, 0, 0, f"{chunk.label}: gave up after {s.max_steps} model calls")
    ais = [m for m in messages if isinstance(m, AIMessage)]
    applied = [a for m in messages if isinstance(m, ToolMessage) and m.name == "curate" for a in (m.artifact or [])]
    last = ais[-1] if ais else None
    # the model's closing line, or what it said alongside its last tool call
    note = str(last.content).strip() if last is not None and isinstance(last.content, str) else ""
    if last is not None and getattr(last, "invalid_tool_calls", None) and not last.tool_calls:
        error = f"{chunk.label}: malformed tool call {last.invalid_tool_calls[0].get('name')!r}; chunk left as is"
    tokens = [_usage(m) for m in ais]
    return ChunkOutcome(applied, note, len(ais), sum(t[0] for t in tokens), sum(t[1] for t in tokens), error)


# -- the graph -------------------------------------------------------------------

def more_chunks(state: CurateState) -> str:
    if state.get("stopped") or state.get("position", 0) >= len(state.get("chunks", [])):
        return "summarize"
    return "curate_chunk"


def build_curate_graph(memory: Any = None, *, model: Any = None, settings: CurateSettings | None = None,
                       clock: Callable[[], str] = _utc_now, memory_class: MemoryClass | None = None):
    """Compile the LLM curator. ``memory``/``model`` default to the run's context and ``MEMGROVE_MODEL``;
    a project folder the context names is opened with ``memory_class`` (``Memory``, handed in)."""
    ref = MemoryRef(memory, memory_class)
    resolved: dict[str, Any] = {}

    def settings_of(mem) -> CurateSettings:
        return settings or load_curate_settings(getattr(mem, "tree", mem).home)

    def get_model(s: CurateSettings):
        if "model" not in resolved:
            m = resolve_model(model, timeout=s.llm_timeout, retries=s.llm_retries)
            if m is None:
                raise RuntimeError("no model configured for the LLM curator: set MEMGROVE_MODEL (and "
                                   "OPENAI_API_KEY or OPENAI_BASE_URL), or pass model=; "
                                   "without one, use the verbatim curator (Memory.ingest)")
            resolved["model"] = m
        return resolved["model"]

    def split(state: CurateState, runtime: Runtime) -> dict:
        mem = ref.get(runtime)
        chunks = input_chunks(getattr(mem, "tree", mem), dict(state), settings_of(mem), clock())
        return {"chunks": [dataclasses.asdict(c) for c in chunks], "position": 0, "chunk_count": len(chunks)}

    def curate_next(state: CurateState, runtime: Runtime) -> dict:
        mem = ref.get(runtime)
        s = settings_of(mem)
        i = state["position"]
        chunk = Chunk(**state["chunks"][i])
        try:
            o = curate_chunk(mem, get_model(s), chunk, s, clock())
        except Exception as exc:  # noqa: BLE001 - a model failure stops the run; what is written stays
            return {"position": i + 1, "stopped": f"{chunk.label}: {describe_error(exc)}"}
        return {"position": i + 1, "applied": o.applied, "notes": [o.note] if o.note else [],
                "errors": [o.error] if o.error else [], "model_calls": o.model_calls,
                "prompt_tokens": o.prompt_tokens, "completion_tokens": o.completion_tokens}

    def report(state: CurateState) -> dict:
        return {"summary": summarize(
            "llm", state.get("applied", []), chunks=len(state.get("chunks", [])),
            model_calls=state.get("model_calls", 0), prompt_tokens=state.get("prompt_tokens", 0),
            completion_tokens=state.get("completion_tokens", 0), errors=state.get("errors", []),
            stopped=state.get("stopped", ""))}

    g = StateGraph(CurateState, input_schema=CurateInput, output_schema=CurateOutput, context_schema=MemoryContext)
    g.add_node("split", split)
    g.add_node("curate_chunk", curate_next)
    g.add_node("summarize", report)
    g.add_edge(START, "split")
    g.add_conditional_edges("split", more_chunks, ["curate_chunk", "summarize"])
    g.add_conditional_edges("curate_chunk", more_chunks, ["curate_chunk", "summarize"])
    g.add_edge("summarize", END)
    return g.compile(name="memgrove-curate")


def report_from_state(state: dict[str, Any]) -> CurateReport:
    chunks = state.get("chunk_count", len(state.get("chunks", [])))
    return CurateReport(curator="llm", applied=as_results(state.get("applied", [])), chunks=chunks,
                        model_calls=state.get("model_calls", 0), prompt_tokens=state.get("prompt_tokens", 0),
                        completion_tokens=state.get("completion_tokens", 0), notes=state.get("notes", []),
                        errors=state.get("errors", []), stopped=state.get("stopped", ""),
                        summary=state.get("summary", ""))

"""The ``curate`` tool: a batch of ADD/UPDATE/UPSERT/MERGE/DELETE/SUPERSEDE/ARCHIVE/RESTORE operations,
each with a reason.

The batch is all or nothing (``ContextTree.curate``). When the tree rejects it
(an escaping path, a missing reason, ADD on an existing entry) the model gets
one line per invalid operation and is asked to send the corrected batch; a
configuration error (an unknown op in ``allow``) raises when the tool is built.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Optional

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, create_model

from memgrove.tree.base.errors import BatchRejected, MemgroveError
from memgrove.tree.base.nesting import MAX_DEPTH, too_deep
from memgrove.tree.writes.operations import OPS, OpResult, check_batch_size

from .runtime import NO_RUNTIME, MemoryClass, MemoryRef


class Source(BaseModel):
    kind: str = Field(description="What the knowledge came from: conversation, file, text, url, tool, task.")
    ref: str = Field(description="Where exactly: a message id such as 'D1:3', a file path, a URL.")
    at: Optional[str] = Field(default=None, description="ISO date/time of the source, when known.")


_OP_FIELDS: dict[str, Any] = {
    "path": (str, Field(description="Entry path 'domain/topic/entry_name.md' or 'domain/topic/subtopic/entry_name.md', "
                                    "snake_case, inside the memory. For DELETE a folder path removes that subtree.")),
    "reason": (Optional[str], Field(default=None, description="Required: one sentence saying why this change is made.")),
    "title": (Optional[str], Field(default=None, description="Human title of the entry.")),
    "summary": (Optional[str], Field(default=None, description="One line: what the entry says.")),
    "content": (Optional[str | dict[str, str]], Field(
        default=None, description="Markdown body, or sections {'Raw Concept': ..., 'Narrative': ..., 'Facts': ...}. "
                                  "Keep exact values, names, numbers and absolute dates.")),
    "tags": (Optional[list[str]], Field(default=None, description="Short labels.")),
    "keywords": (Optional[list[str]], Field(default=None, description="Words someone would search for.")),
    "related": (Optional[list[str]], Field(default=None, description="Paths of related entries.")),
    "merge_into": (Optional[str], Field(default=None, description="MERGE only: the entry that absorbs 'path'.")),
    "by": (Optional[str], Field(default=None, description="SUPERSEDE only: the newer entry that replaces 'path'.")),
    "since": (Optional[str], Field(default=None, description="SUPERSEDE only: ISO date from which 'by' holds "
                                                             "(default: the newer entry's date).")),
    "sources": (Optional[list[Source]], Field(default=None, description="Provenance of this knowledge.")),
    "context": (Optional[dict[str, str]], Field(
        default=None, description="Overview text for a new folder: {'domain': ..., 'topic': ..., 'subtopic': ...}.")),
    "replace": (bool, Field(default=False, description="UPDATE/UPSERT: replace lists instead of uniting them.")),
}


def _schema(allow: tuple[str, ...]) -> type[BaseModel]:
    # the op enum lists only what this tool may do, so the model is not invited to try the rest
    op_type = Literal[allow]  # type: ignore[valid-type]
    doc = {"ADD": "ADD creates (fails if it exists)", "UPDATE": "UPDATE changes an existing entry",
           "UPSERT": "UPSERT adds or updates (preferred)",
           "MERGE": "MERGE folds 'path' into 'merge_into' and deletes 'path'", "DELETE": "DELETE removes",
           "SUPERSEDE": "SUPERSEDE closes the fact at 'path' because the entry 'by' replaces it (a value changed: "
                        "write the new entry, then SUPERSEDE the old one; the old stays as history)",
           "ARCHIVE": "ARCHIVE moves an entry out of search", "RESTORE": "RESTORE brings an archived entry back"}
    op_doc = "; ".join(doc[a] for a in allow) + "."
    operation: Any = create_model("Operation", op=(op_type, Field(description=op_doc)), **_OP_FIELDS)
    return create_model("CurateArgs", operations=(list[operation], Field(
        min_length=1, description="The operations, applied together: all of them or none.")))


class _BoundedTool(StructuredTool):
    """Refuses arguments nested deeper than any batch needs before LangChain prints or
    validates them: both recurse, and ``[[[...]]]`` 100k deep raised RecursionError."""

    def _too_deep(self, tool_input: Any, tool_call_id: str | None) -> Any:
        msg = (f"Error: nothing was written: the arguments nest lists or objects more than {MAX_DEPTH} "
               "levels deep; send flat operations.")
        if tool_call_id:
            return ToolMessage(content=msg, tool_call_id=tool_call_id, name=self.name, status="error")
        return msg

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        if too_deep(tool_input):
            return self._too_deep(tool_input, kwargs.get("tool_call_id"))
        return super().run(tool_input, *args, **kwargs)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        if too_deep(tool_input):
            return self._too_deep(tool_input, kwargs.get("tool_call_id"))
        return await super().arun(tool_input, *args, **kwargs)


def _plain(op: Any) -> dict[str, Any]:
    d = op.model_dump(exclude_none=True) if isinstance(op, BaseModel) else dict(op)
    if not d.get("replace"):
        d.pop("replace", None)
    return d


def _with_known_sources(given: list[dict] | None, known: list[dict[str, str]]) -> list[dict]:
    """Sources naming a known message by its short id ('D1:3') get its full ref and time; none given: all known."""
    if not given:
        return [dict(s) for s in known]
    by_id = {s["ref"].rsplit("#", 1)[-1]: s for s in known}
    by_id.update({s["ref"]: s for s in known})
    return [dict(by_id[str(s.get("ref"))]) if str(s.get("ref")) in by_id else s for s in given]


def _queued(mem: Any, held: list[dict[str, Any]]) -> list[OpResult]:
    """Put a model's operations that wait for a person in the review queue, as results saying so."""
    if not held:
        return []
    from memgrove.tree.hygiene import review

    bad = [d for d in held if not str(d.get("reason") or "").strip()]
    if bad:
        raise BatchRejected([f"{d.get('op')} {d.get('path')}: every operation needs a 'reason'" for d in bad])
    queue = getattr(mem, "queue_review", None)
    forward = getattr(getattr(mem, "tree", mem), "forward_writes", None)
    if queue is None and forward is not None:       # a read replica's memory: the primary's queue
        queue = lambda ops, proposed_by: forward("queue_review", ops=ops, proposed_by=proposed_by)  # noqa: E731
    if queue is not None:                  # a memory on a server (Memory.connect): its queue
        item_id = queue(held, proposed_by="model")
    else:
        item = review.queue(getattr(mem, "tree", mem), review.proposal(held), proposed_by="model")
        item_id = item.id if item is not None else None
    note = (f"waiting for review (memgrove review show {item_id})" if item_id is not None
            else "not applied: a person rejected this change before")
    return [OpResult(str(d.get("op", "")).upper(), str(d.get("path", "")), "queued" if item_id else "rejected", note)
            for d in held]


def curate_tool(memory: Any = None, *, allow: tuple[str, ...] | list[str] = OPS, actor: str = "agent",
                max_ops: int = 50, default_sources: list[dict[str, str]] | None = None,
                name: str = "curate", review_ops: tuple[str, ...] | list[str] | set[str] = (),
                memory_class: MemoryClass | None = None) -> BaseTool:
    """A tool that applies a batch of curate operations to ``memory``.

    ``allow``: which operations the model may use. ``default_sources``: provenance
    given to ADD/UPDATE/UPSERT operations that name none (the LLM curator passes
    the chunk's message ids). ``review_ops``: operations that are not applied but put
    in the review queue (tree/hygiene/review.py) for a person to approve (the LLM curator
    passes the ``review_ops`` setting: a model's MERGE and DELETE wait). With no
    ``memory``, it comes from the run's context (a folder there opened with ``memory_class``).
    """
    waiting = {str(o).upper() for o in review_ops}
    allow = tuple(str(a).upper() for a in allow)
    bad = [a for a in allow if a not in OPS]
    if bad or not allow:
        raise ValueError(f"allow must name some of {', '.join(OPS)}; got {list(allow)!r}")
    if max_ops < 1:
        raise ValueError("max_ops must be at least 1")
    ref = MemoryRef(memory, memory_class)

    def curate(operations: list[Any], runtime: ToolRuntime = NO_RUNTIME) -> tuple[str, list[dict[str, Any]]]:
        mem = ref.get(runtime)
        ops = [_plain(o) for o in operations]
        if len(ops) > max_ops:
            return (f"Error: {len(ops)} operations in one call; send at most {max_ops} per call "
                    "(split the batch)."), []
        try:
            check_batch_size(ops, getattr(mem, "tree", mem).settings.max_input_bytes)
            if default_sources:
                for d in ops:
                    if d.get("op") in ("ADD", "UPDATE", "UPSERT"):
                        d["sources"] = _with_known_sources(d.get("sources"), default_sources)
            held = [d for d in ops if isinstance(d, dict) and str(d.get("op", "")).upper() in waiting]
            rest = [d for d in ops if not (isinstance(d, dict) and str(d.get("op", "")).upper() in waiting)]
            results = mem.curate(rest, actor=actor, allowed=allow) if rest else []
            results += _queued(mem, held)
        except BatchRejected as exc:
            lines = "\n".join(f"- {e}" for e in exc.errors)
            return ("Error: nothing was written. Fix these operations and call curate again with the whole "
                    f"batch:\n{lines}"), []
        except MemgroveError as exc:
            return f"Error: nothing was written: {exc}. Try again.", []
        done = [r.to_dict() for r in results]
        applied = [{k: d[k] for k in ("op", "path", "status", "message")} for d in done]
        return json.dumps({"applied": applied}, ensure_ascii=False), done

    return _BoundedTool.from_function(
        curate, name=name, args_schema=_schema(allow), response_format="content_and_artifact",
        description=("Write to the memory: a batch of operations, each with a reason. Search first and prefer "
                     "UPSERT or MERGE over adding a near-duplicate. Allowed here: " + ", ".join(allow) + "."))

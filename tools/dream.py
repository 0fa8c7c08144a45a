"""``dream_candidates``: what ``memgrove dream`` would do, as a LangChain tool, for an agent that
resolves the candidates with its own model through ``curate``. Nothing changes when it is called."""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from memgrove.tree.base.errors import MemgroveError

from .runtime import NO_RUNTIME, MemoryClass, MemoryRef

KINDS = ("duplicate", "near_duplicate", "superseded", "link", "archive")


class DreamArgs(BaseModel):
    kinds: list[str] = Field(default_factory=list, description="Only these kinds of finding: duplicate, "
                             "near_duplicate, superseded, link, archive; empty for all.")
    limit: int = Field(default=20, ge=1, le=200, description="Most candidates to return.")


def dream_candidates_tool(memory: Any = None, *, memory_class: MemoryClass | None = None) -> BaseTool:
    """The ``dream_candidates`` tool over ``memory`` (or the run's context's, a folder opened with
    ``memory_class``)."""
    ref = MemoryRef(memory, memory_class)

    def dream_candidates(kinds: list[str] | None = None, limit: int = 20, runtime: ToolRuntime = NO_RUNTIME) -> str:
        bad = [k for k in kinds or () if k not in KINDS]
        if bad:
            return f"Error: unknown kind(s) {', '.join(bad)}. Use some of {', '.join(KINDS)}, or none for all."
        mem = ref.get(runtime)
        try:
            out = mem.dream(dry_run=True) if hasattr(mem, "dream") else None
            if out is None:
                from memgrove.tree.hygiene.dream import dream

                out = dream(mem, dry_run=True).to_dict()
        except MemgroveError as exc:
            return f"Error: {exc}. Try again later."
        rows = [{k: c[k] for k in ("kind", "paths", "action", "reason", "confidence", "ops")}
                for c in out["candidates"] if not kinds or c["kind"] in kinds]
        if not rows:
            return "Nothing to clean: no duplicates, superseded facts, missing links or archive candidates."
        return json.dumps({"candidates": rows[:limit], "more": max(0, len(rows) - limit),
                           "how": "Judge each candidate; apply the ones you agree with by calling curate with "
                                  "its ops (or better ones), leave the rest."}, ensure_ascii=False)

    return StructuredTool.from_function(
        dream_candidates, name="dream_candidates", args_schema=DreamArgs,
        description="Find what needs cleaning in the memory (no LLM, nothing changes): exact and near "
                    "duplicates, superseded facts, missing links, archive candidates, each with the curate "
                    "operations that would carry it out.")

"""Read tools over the tree: ``search_knowledge``, ``read_entry``, ``list_tree``.

Built by a factory with keyword-only configuration. A mistake the model can
fix (a bad path, an empty query) comes back as tool output saying how to fix
it; a configuration error raises.
"""

from __future__ import annotations

import json
import time
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from memgrove.tree.base.errors import MemgroveError, QuestionTooLong
from memgrove.tree.entries.paths import normalize_entry_path
from memgrove.tree.base.question_bound import check_length

from .runtime import NO_RUNTIME, MemoryClass, MemoryRef


class SearchArgs(BaseModel):
    query: str = Field(description="Words to look for: names, numbers, key terms of the question.")
    limit: int = Field(default=5, ge=1, le=20, description="How many entries to return (1-20).")


class ReadArgs(BaseModel):
    path: str = Field(description="Entry path exactly as returned by search_knowledge, e.g. 'auth/jwt/rotation.md'.")


class ListArgs(BaseModel):
    folder: str = Field(default="", description="Folder path such as 'auth' or 'auth/jwt'; '' for the top level.")


def fix(exc: Exception, hint: str) -> str:
    """Tool output for a mistake the model can fix: what is wrong, then what to do."""
    return f"Error: {exc}. {hint}"


def cached_answer(memory: Any, query: str) -> dict[str, Any] | None:
    """Tiers 0–1: an answer already given to this (or a near-identical) question, if still valid."""
    pipeline = getattr(memory, "pipeline", None)
    if pipeline is None:  # a bare ContextTree has no answer cache
        return None
    a = pipeline.from_caches(query.strip(), pipeline.fingerprint(), time.perf_counter())
    if a is None:
        return None
    return {"tier": a.tier, "answer": a.text, "sources": a.sources}


def knowledge_tools(memory: Any = None, *, search_limit: int = 20, max_chars: int = 8000,
                    use_cache: bool = True, memory_class: MemoryClass | None = None) -> list[BaseTool]:
    """The read-only memory tools for ``memory`` (a ``Memory`` or ``ContextTree``).

    With no ``memory``, each call finds it in the run's context (see ``tools.runtime``; a folder
    there is opened with ``memory_class``).
    ``use_cache``: let ``search_knowledge`` return an answer cached by the query pipeline.
    """
    ref = MemoryRef(memory, memory_class)

    def search_knowledge(query: str, limit: int = 5, runtime: ToolRuntime = NO_RUNTIME) -> str:
        mem = ref.get(runtime)
        tree = getattr(mem, "tree", mem)
        if not query.strip():
            return fix(MemgroveError("the query is empty"), "Please give a non-empty query of a few key words.")
        try:
            check_length(query, "query")
        except QuestionTooLong as exc:
            return fix(exc, "Please search with a few key words instead.")
        try:
            cached = cached_answer(mem, query) if use_cache else None
            hits = tree.search(query, min(limit, search_limit))
        except MemgroveError as exc:
            return fix(exc, "The memory could not be searched; try again, or browse it with list_tree('').")
        found = [{"path": h.path, "title": h.title, "score": round(h.relevance, 3), "excerpt": h.excerpt}
                 for h in hits]
        if not found and not cached:
            return "No entries match. Try other words (synonyms, names, numbers) or list_tree('') to browse."
        out: dict[str, Any] = {"entries": found}
        if cached:
            out["cached_answer"] = cached
        return json.dumps(out, ensure_ascii=False)

    def read_entry(path: str, runtime: ToolRuntime = NO_RUNTIME) -> str:
        tree = ref.tree(runtime)
        try:
            text = tree.read_text(path)
            links, backlinks = tree.links(path) if not path.endswith("context.md") else ([], [])
        except MemgroveError as exc:
            return fix(exc, "Use a path exactly as search_knowledge or list_tree returned it.")
        if not path.endswith("context.md"):
            tree.record_delivery([normalize_entry_path(path)])
        if len(text) > max_chars:
            text = text[:max_chars] + f"\n… (truncated at {max_chars} characters)"
        out = text
        if links or backlinks:
            out += "\n\nLinks: " + ", ".join(links) + ("\nBacklinks: " + ", ".join(backlinks) if backlinks else "")
        return out

    def list_tree(folder: str = "", runtime: ToolRuntime = NO_RUNTIME) -> str:
        tree = ref.tree(runtime)
        try:
            node = tree.list_folder(folder)
        except MemgroveError as exc:
            return fix(exc, "Use '' for the top level, or a folder path from an earlier list_tree.")
        return json.dumps(node, ensure_ascii=False)

    return [
        StructuredTool.from_function(search_knowledge, name="search_knowledge", args_schema=SearchArgs,
                                     description="Full-text search of the memory (no LLM). Returns entry paths, "
                                                 "titles, relevance scores and excerpts, and an earlier answer "
                                                 "to the same question when one is cached."),
        StructuredTool.from_function(read_entry, name="read_entry", args_schema=ReadArgs,
                                     description="Read one memory entry in full, with its links and backlinks."),
        StructuredTool.from_function(list_tree, name="list_tree", args_schema=ListArgs,
                                     description="List a folder of the memory: its overview, subfolders and entries."),
    ]

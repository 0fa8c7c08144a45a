"""Read tools over the tree: ``search_knowledge``, ``read_entry``, ``list_tree``.

Built by a factory with keyword-only configuration. A mistake the model can
fix (a bad path, an empty query) comes back as tool output saying how to fix
it; a configuration error raises.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from memgrove.tree.errors import MemgroveError


class SearchArgs(BaseModel):
    query: str = Field(description="Words to look for: names, numbers, key terms of the question.")
    limit: int = Field(default=5, ge=1, le=20, description="How many entries to return (1-20).")


class ReadArgs(BaseModel):
    path: str = Field(description="Entry path exactly as returned by search_knowledge, e.g. 'auth/jwt/rotation.md'.")


class ListArgs(BaseModel):
    folder: str = Field(default="", description="Folder path such as 'auth' or 'auth/jwt'; '' for the top level.")


def _fix(exc: Exception, hint: str) -> str:
    return f"Error: {exc}. {hint}"


def knowledge_tools(memory: Any, *, search_limit: int = 20, max_chars: int = 8000) -> list[BaseTool]:
    """The read-only memory tools for ``memory`` (a ``Memory`` or ``ContextTree``)."""
    tree = getattr(memory, "tree", memory)
    if not hasattr(tree, "search") or not hasattr(tree, "list_folder"):
        raise TypeError(f"knowledge_tools needs a memgrove Memory or ContextTree, not {type(memory).__name__}")

    def search_knowledge(query: str, limit: int = 5) -> str:
        try:
            hits = tree.search(query, min(limit, search_limit))
        except MemgroveError as exc:
            return _fix(exc, "Please give a non-empty query of a few key words.")
        if not hits:
            return "No entries match. Try other words (synonyms, names, numbers) or list_tree('') to browse."
        return json.dumps([{"path": h.path, "title": h.title, "score": round(h.relevance, 3), "excerpt": h.excerpt}
                           for h in hits], ensure_ascii=False)

    def read_entry(path: str) -> str:
        try:
            text = tree.read_text(path)
            links, backlinks = tree.links(path) if not path.endswith("context.md") else ([], [])
        except MemgroveError as exc:
            return _fix(exc, "Use a path exactly as search_knowledge or list_tree returned it.")
        if len(text) > max_chars:
            text = text[:max_chars] + f"\n… (truncated at {max_chars} characters)"
        out = text
        if links or backlinks:
            out += "\n\nLinks: " + ", ".join(links) + ("\nBacklinks: " + ", ".join(backlinks) if backlinks else "")
        return out

    def list_tree(folder: str = "") -> str:
        try:
            node = tree.list_folder(folder)
        except MemgroveError as exc:
            return _fix(exc, "Use '' for the top level, or a folder path from an earlier list_tree.")
        return json.dumps(node, ensure_ascii=False)

    return [
        StructuredTool.from_function(search_knowledge, name="search_knowledge", args_schema=SearchArgs,
                                     description="Full-text search of the memory (no LLM). Returns entry paths, "
                                                 "titles, relevance scores and excerpts."),
        StructuredTool.from_function(read_entry, name="read_entry", args_schema=ReadArgs,
                                     description="Read one memory entry in full, with its links and backlinks."),
        StructuredTool.from_function(list_tree, name="list_tree", args_schema=ListArgs,
                                     description="List a folder of the memory: its overview, subfolders and entries."),
    ]

"""Argument names models commonly guess, mapped onto the names the tools declare.

Models call ``memgrove_read(file_path=...)`` or ``memgrove_search(q=...)`` often enough that
refusing them costs a round trip each time; an alias is used only when the tool has the
canonical parameter, the call does not give it, and the alias is not a parameter itself.
"""

from __future__ import annotations

from typing import Any, Iterable

ALIASES: dict[str, tuple[str, ...]] = {
    "path": ("file_path", "filepath", "entry_path", "entry", "file"),
    "query": ("q", "question", "search", "query_text", "text"),
    "folder": ("path", "dir", "directory", "folder_path"),
    "limit": ("n", "k", "top_k", "max_results"),
    "operations": ("ops", "operation"),
    "op_id": ("id", "operation_id"),
    "old_str": ("old_string", "old_text"),
    "new_str": ("new_string", "new_text"),
    "file_text": ("content", "text"),
    "old_path": ("from_path", "source_path", "src"),
    "new_path": ("to_path", "destination_path", "dest"),
}


def canonical(arguments: dict[str, Any] | None, params: Iterable[str]) -> dict[str, Any]:
    """``arguments`` with guessed names renamed to the tool's own (``params``)."""
    params = set(params)
    out = dict(arguments or {})
    for name, aliases in ALIASES.items():
        if name not in params or name in out:
            continue
        for alias in aliases:
            if alias in out and alias not in params:
                out[name] = out.pop(alias)
                break
    return out

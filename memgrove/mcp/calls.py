"""What the ``memgrove_*`` MCP tools do, as plain functions of a ``Memory``.

Each returns JSON-ready data and raises a ``MemgroveError`` for a mistake the caller can fix;
the MCP layer (``server.py``) only adapts them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from memgrove.tree.base.errors import InvalidInput, MemgroveError
from memgrove.tree.base.nesting import deep_error, too_deep
from memgrove.tree.writes.operations import check_batch_size
from memgrove.tree.entries.paths import existing_literal, normalize_entry_path

ACTOR = "mcp"
MAX_LIMIT = 100


def _limit(value: Any, default: int, most: int = MAX_LIMIT) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"'limit' must be a whole number from 1 to {most}")
    return min(value, most)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"'{name}' is required: give a non-empty string")
    return value


def query(mem: Any, question: Any) -> dict[str, Any]:
    """The 5-tier pipeline; tiers 3–4 call a model only when one is configured."""
    return mem.query(_text(question, "query")).to_dict()


def search(mem: Any, text: Any, limit: Any = None, include_archived: Any = False) -> dict[str, Any]:
    hits = mem.search(_text(text, "query"), limit=_limit(limit, 10), include_archived=bool(include_archived))
    return {"query": text, "hits": [h.to_dict() for h in hits]}


def read(mem: Any, path: Any) -> dict[str, Any]:
    data = mem.show(_text(path, "path"))
    if not path.endswith("context.md"):
        mem.tree.record_delivery([_tree_path(mem, path)])
    return data


def list_folder(mem: Any, folder: Any = "") -> dict[str, Any]:
    if folder is None:
        folder = ""
    if not isinstance(folder, str):
        raise InvalidInput("'folder' must be a folder path such as 'auth' or 'auth/jwt', or '' for the top")
    return mem.list(folder.strip().strip("/"))


def curate(mem: Any, operations: Any) -> dict[str, Any]:
    """Explicit operations, all or nothing. An ADD whose path holds an entry writes nothing and
    answers with that entry's text, so the caller can UPDATE it instead of losing either."""
    if isinstance(operations, dict):
        operations = [operations]
    if not isinstance(operations, list) or not operations:
        raise InvalidInput("'operations' must be a non-empty list of {op, path, reason, ...} objects")
    if too_deep(operations):
        raise deep_error("the operations")
    check_batch_size(operations, mem.tree.settings.max_input_bytes)  # before waiting for the lock
    with mem.tree.lock.hold():
        mem.tree.recover()
        taken = _taken_by_add(mem, operations)
        if taken:
            return {"written": False,
                    "message": "nothing was written: ADD onto an existing entry; here is its current text. "
                               "Use UPDATE (or UPSERT) to change it, or ADD under another path.",
                    "existing": taken}
        results = mem.curate(operations, actor=ACTOR)
    return {"written": True, "applied": [dataclasses.asdict(r) for r in results]}


def _taken_by_add(mem: Any, operations: list[Any]) -> list[dict[str, str]]:
    out = []
    for d in operations:
        if not isinstance(d, dict) or str(d.get("op", "")).strip().upper() != "ADD":
            continue
        raw = d.get("path")
        if not isinstance(raw, str):
            continue              # the tree's own validation names what is wrong with it
        try:
            rel = _tree_path(mem, raw)
        except MemgroveError:     # an invalid path is reported by the batch's validation
            continue
        if (mem.tree.root / rel).is_file():
            out.append({"path": rel, "text": mem.tree.read_text(rel)})
    return out


def _tree_path(mem: Any, path: str) -> str:
    return existing_literal(mem.tree.root, path) or normalize_entry_path(path)


def history(mem: Any, limit: Any = None, path: Any = None) -> dict[str, Any]:
    if path is not None and not isinstance(path, str):
        raise InvalidInput("'path' must be an entry or folder path")
    records = mem.history(limit=_limit(limit, 20, 500), path=path or None)
    return {"operations": [{k: v for k, v in r.to_json().items() if k not in ("before", "after", "also")}
                           | {"files": [c.path for c in r.changes()]} for r in records]}


def undo(mem: Any, op_id: Any, force: Any = False) -> dict[str, Any]:
    result = mem.undo(_text(op_id, "op_id").strip(), force=bool(force), actor=ACTOR)
    return dataclasses.asdict(result)


def dream(mem: Any, apply: Any = False, undo: Any = None, force: Any = False,
          with_approved: Any = False) -> dict[str, Any]:
    """Without ``apply``: the candidates a scan finds, each with the operations that would carry
    it out, for the caller to judge and apply through curate; nothing changes. With ``apply``: a
    dream run (duplicates and links applied, the rest queued for review). ``undo``: revert a run
    ("" or "last": the newest one), ``with_approved`` also what was approved from its proposals."""
    if undo is not None:
        if not isinstance(undo, str):
            raise InvalidInput("'undo' must be a dream run's id, or \"last\"")
        return mem.dream(undo=True if undo.strip() in ("", "last") else undo.strip(), force=bool(force),
                         with_approved=bool(with_approved))
    return mem.dream(dry_run=not bool(apply))


REVIEW_ACTIONS = ("list", "show", "approve", "reject")


def review(mem: Any, action: Any = "list", item_id: Any = None, all_items: Any = False) -> dict[str, Any]:
    """The review queue: list it, show one item, approve or reject one item or all of them."""
    if action not in REVIEW_ACTIONS:
        raise InvalidInput(f"'action' must be one of {', '.join(REVIEW_ACTIONS)}")
    if action == "list":
        return {"items": mem.review()}
    if action == "show":
        return mem.review_show(_text(item_id, "id").strip())
    if bool(item_id) == bool(all_items):
        raise InvalidInput(f"give one review item's 'id' to {action}, or all=true")
    fn = mem.review_approve if action == "approve" else mem.review_reject
    return fn(str(item_id).strip() if item_id else None, all=bool(all_items))

"""The Journal: operations newest first, filterable by kind and folder, each with its reason and
its diff (from the before/after the journal keeps), for the page to offer undo."""

from __future__ import annotations

import difflib
from typing import Any

from . import PAGE

DIFF_LINES = 400         # a diff longer than this is cut, saying so
DIFF_INPUT_LINES = 20_000   # a file longer than this is not diffed line by line (difflib's time grows fast)
READS = 3               # read budgets a journal page may spend looking for its first row
KINDS = ("ADD", "UPDATE", "UPSERT", "MERGE", "DELETE", "SUPERSEDE", "ARCHIVE", "RESTORE", "UNDO")


def diff(before: str | None, after: str | None, path: str) -> dict[str, Any]:
    """A unified diff of one file, as rows ``(kind, text)`` with kind in "+ - @ ="; bounded."""
    if max(len((before or "").splitlines()), len((after or "").splitlines())) > DIFF_INPUT_LINES:
        return {"path": path, "created": before is None, "removed": after is None, "cut": 0,
                "rows": [("@", f"(a file over {DIFF_INPUT_LINES:,} lines: {len(before or '')} -> {len(after or '')} "
                               "characters; not diffed here)")]}
    lines = list(difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(),
                                      fromfile=path if before is not None else "(none)",
                                      tofile=path if after is not None else "(removed)", lineterm="", n=2))
    rows = []
    for line in lines[2:DIFF_LINES + 2]:
        kind = line[:1] if line[:1] in "+-@" else "="
        rows.append((kind, line))
    return {"path": path, "created": before is None, "removed": after is None, "rows": rows,
            "cut": max(0, len(lines) - 2 - DIFF_LINES)}


def operation(record: Any, *, with_diff: bool = False) -> dict[str, Any]:
    out = {"id": record.id, "at": record.at, "op": record.op, "path": record.path, "reason": record.reason,
           "actor": record.actor, "files": [c.path for c in record.changes()]}
    if with_diff:
        out["diffs"] = [diff(c.before, c.after, c.path) for c in record.changes()]
    return out


def find(mem: Any, op_id: str, at: int | None = None) -> dict[str, Any]:
    """One operation with its diffs (what a journal row shows when opened): the line at ``at``
    (the row's offset), else looked for from the journal's end."""
    return operation(mem.tree.operation(op_id, at), with_diff=True)


def journal(mem: Any, *, kind: str = "", folder: str = "", before: int | None = None) -> dict[str, Any]:
    """A page of the operations, newest first, of ``kind`` (an op name) touching ``folder``, older than
    the cursor ``before`` (the previous page's ``next``), read from the journal's end in bounded time:
    a page that found nothing within its read budget reads on, at most ``READS`` budgets."""
    kind = kind.upper() if kind.upper() in KINDS else ""
    got = mem.history_page(PAGE, kinds=[kind] if kind else (), path=folder or None, before=before)
    for _ in range(READS - 1):
        if got.records or got.next is None:
            break
        got = mem.history_page(PAGE, kinds=[kind] if kind else (), path=folder or None, before=got.next)
    # a page from a primary, over the wire (a read replica's), says no offsets: each row is then found by id
    offsets = got.offsets or [None] * len(got.records)
    rows = [operation(r) | {"offset": at} for r, at in zip(got.records, offsets)]
    return {"operations": rows, "kind": kind, "folder": folder, "before": before, "more": got.next is not None,
            "next": got.next, "kinds": KINDS}

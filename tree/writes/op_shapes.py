"""Curate operations' shapes: the op names, the result type, a batch's size limit, and the
validation of one operation dict (no tree access). ``plan_batch`` (operations.py) uses them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..entries import entry as entry_mod
from ..base.errors import BatchRejected, InvalidEntry, InvalidPath
from .journal import JournalRecord
from ..entries.paths import normalize_entry_path, normalize_folder
from ..base.text_checks import text_problem

OPS = ("ADD", "UPDATE", "UPSERT", "MERGE", "DELETE", "SUPERSEDE", "ARCHIVE", "RESTORE")
# the operations that change no entry's text: they close, move or bring back one
VALIDITY_OPS = ("SUPERSEDE", "ARCHIVE", "RESTORE")
_KNOWN_KEYS = {
    "op", "path", "title", "content", "reason", "related", "merge_into", "target", "tags", "keywords",
    "summary", "sources", "replace", "context", "extra", "by", "since", "statement", "value", "new_value",
}
_WRITES = ("title", "content", "summary", "tags", "keywords", "related", "sources", "extra", "context")
CONTEXT_LEVELS = ("domain", "topic", "subtopic")


@dataclass(frozen=True)
class OpResult:
    """What one applied operation did: ``status`` is added/updated/unchanged/merged/deleted/undone
    (an ``unchanged`` op wrote nothing and has no journal record, so its ``id`` is empty)."""

    op: str
    path: str
    status: str
    message: str
    id: str = ""

    def to_dict(self) -> dict[str, str]:
        """The JSON form: the CLI's ``--json``, the ``curate`` tool's artifact, the curate graph's state."""
        return {"op": self.op, "path": self.path, "status": self.status, "message": self.message, "id": self.id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "OpResult":
        return cls(op=str(data["op"]), path=str(data["path"]), status=str(data["status"]),
                   message=str(data.get("message", "")), id=str(data.get("id", "")))


@dataclass
class Planned:
    record: JournalRecord
    result: OpResult
    updated: list[str] = field(default_factory=list)   # entries whose update signal to bump
    merged: tuple[str, str] | None = None
    removed: list[str] = field(default_factory=list)
    vacated: list[str] = field(default_factory=list)   # entries moved out of the tree (ARCHIVE): signals kept
    contexts: dict[str, str] = field(default_factory=dict)  # folder -> overview text


# -- limits: a batch's size, and what the reader accepts back ---------------

def text_size(value: Any, limit: int) -> int:
    """UTF-8 bytes of the text in ``value`` (strings and keys of nested lists and mappings),
    counted up to just past ``limit``. A loop, not recursion: nesting depth is the caller's."""
    total, stack = 0, [value]
    while stack and total <= limit:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v) if v.isascii() else len(v.encode("utf-8", "surrogatepass"))
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif v is not None:
            total += 8  # a number or a flag (str() of a huge int may itself refuse)
    return total


def op_label(i: int, d: Any) -> str:
    if not isinstance(d, dict):
        return f"op {i}"
    path = str(d.get("path", "?"))
    return f"op {i} ({str(d.get('op', '?')).upper()[:10]} {path if len(path) <= 120 else path[:120] + '…'})"


def check_batch_size(ops: Any, max_bytes: int) -> None:
    """Refuse a batch holding more than ``max_bytes`` of text (setting ``max_input_bytes``,
    the same limit as for a file or text given to the curator) before any work is done on it:
    the tool took a 20 MB operation and the writer spent its lock on it."""
    if not isinstance(ops, list):
        return
    total = 0
    for i, d in enumerate(ops, 1):
        total += text_size(d, max_bytes - total)
        if total > max_bytes:
            alone = text_size(d, max_bytes) > max_bytes
            who = f"{op_label(i, d)} alone holds" if alone else f"ops 1-{i} hold"
            raise BatchRejected([f"{who} more than {max_bytes:,} bytes of text, the most one batch may hold "
                                 "(setting max_input_bytes): shorten the content, or split it over several "
                                 "entries and batches"])


# -- validation of one op's shape (no tree access) ---------------------------

def _norm_list(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int, float)) for v in value):
        raise InvalidEntry(f"'{name}' must be a list of strings")
    return list(dict.fromkeys(s for s in (str(v).strip() for v in value) if s))


def _norm_sources(value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InvalidEntry("'sources' must be a list of {kind, ref, at} mappings")
    return [{str(k): str(v) for k, v in s.items() if v is not None} for s in value]


def check_shape(d: Any, allowed: tuple[str, ...] = OPS) -> dict[str, Any]:
    """Normalize an op dict; raise InvalidEntry/InvalidPath with a fixable message."""
    if not isinstance(d, dict):
        raise InvalidEntry("each operation must be an object with at least 'op', 'path' and 'reason'")
    bad = text_problem(d)
    if bad:
        raise InvalidEntry(f"the operation contains {bad}; give plain text")
    unknown = sorted(set(d) - _KNOWN_KEYS)
    if unknown:
        raise InvalidEntry(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(_KNOWN_KEYS))}")
    op = str(d.get("op", "")).strip().upper()
    if op not in OPS:
        raise InvalidEntry(f"'op' must be one of {', '.join(OPS)}, not {d.get('op')!r}")
    if op not in allowed:
        raise InvalidEntry(f"operation {op} is not allowed here; allowed: {', '.join(allowed)}")
    reason = d.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidEntry("'reason' is required: say in one sentence why this change is made")
    raw_path = d.get("path")
    if not isinstance(raw_path, str):
        raise InvalidPath("'path' is required, e.g. 'domain/topic/entry.md'")
    n: dict[str, Any] = {"op": op, "reason": reason.strip(), "replace": bool(d.get("replace", False))}
    if op == "DELETE" and not raw_path.strip().lower().endswith(".md"):
        folder = normalize_folder(raw_path)
        if d.get("title"):
            n["path"] = normalize_entry_path(folder + "/" + str(d["title"]))
        else:
            n["path"], n["subtree"] = folder, True
    else:
        n["path"] = normalize_entry_path(raw_path)
    if op in VALIDITY_OPS:
        return _validity_shape(d, n)
    if op == "MERGE":
        target = d.get("merge_into", d.get("target"))
        if not isinstance(target, str):
            raise InvalidEntry("MERGE needs 'merge_into': the path of the entry that absorbs 'path'")
        n["target"] = normalize_entry_path(target)
        if n["target"] == n["path"]:
            raise InvalidEntry("MERGE 'path' and 'merge_into' are the same entry")
    title = d.get("title")
    if title is not None and not isinstance(title, str):
        raise InvalidEntry("'title' must be a string")
    n["title"] = " ".join(title.split()) if title else None
    n["summary"] = None if d.get("summary") is None else " ".join(str(d["summary"]).split())
    n["sections"] = entry_mod.sections_from_content(d.get("content"))
    for key in ("tags", "keywords"):
        n[key] = _norm_list(d.get(key), key)
    n["related"] = [normalize_entry_path(p) for p in _norm_list(d.get("related"), "related")]
    n["sources"] = _norm_sources(d.get("sources"))
    extra = d.get("extra") or {}
    if not isinstance(extra, dict):
        raise InvalidEntry("'extra' must be a mapping of additional frontmatter keys")
    clash = sorted(set(extra) & set(entry_mod.FIELD_ORDER))
    if clash:
        raise InvalidEntry(f"'extra' may not set built-in frontmatter keys: {', '.join(clash)}")
    n["extra"] = dict(extra)
    ctx = d.get("context") or {}
    if not isinstance(ctx, dict) or not all(k in CONTEXT_LEVELS for k in ctx):
        raise InvalidEntry("'context' must map 'domain'/'topic'/'subtopic' to overview text")
    n["context"] = {k: str(v).strip() for k, v in ctx.items() if v and str(v).strip()}
    if op in ("ADD", "UPSERT") and not n["sections"] and not n["title"] and not n["summary"]:
        raise InvalidEntry(f"{op} needs 'content' (markdown or a dict of sections) or at least a 'title'")
    return n




def _validity_shape(d: dict[str, Any], n: dict[str, Any]) -> dict[str, Any]:
    """SUPERSEDE (``by``, optional ``since``), ARCHIVE and RESTORE: they write no text of their own."""
    op = n["op"]
    given = sorted(k for k in _WRITES if d.get(k) not in (None, "", [], {}))
    if given:
        raise InvalidEntry(f"{op} changes no entry's text, so {', '.join(map(repr, given))} cannot go with it; "
                           "write the new text with ADD/UPSERT/UPDATE in the same batch")
    if op != "SUPERSEDE":
        if d.get("by") or d.get("since") or d.get("statement"):
            raise InvalidEntry(f"'by', 'since' and 'statement' belong to SUPERSEDE, not {op}")
        return n
    # one statement of 'path' replaced, not all of it: recorded on it, the entry stays current
    for key in ("statement", "value", "new_value"):
        value = d.get(key)
        if value in (None, ""):
            continue
        if not isinstance(value, str) or len(value) > 2000:
            raise InvalidEntry(f"SUPERSEDE '{key}' must be a string (the statement replaced and its old and new "
                               "values), of at most 2,000 characters")
        n[key] = value.strip()
    if (n.get("value") or n.get("new_value")) and not n.get("statement"):
        raise InvalidEntry("SUPERSEDE 'value' and 'new_value' go with 'statement': the statement of 'path' replaced")
    by = d.get("by")
    if not isinstance(by, str) or not by.strip():
        raise InvalidEntry("SUPERSEDE needs 'by': the path of the newer entry that replaces 'path'")
    n["by"] = normalize_entry_path(by)
    if n["by"] == n["path"]:
        raise InvalidEntry("SUPERSEDE 'path' and 'by' are the same entry: an entry cannot replace itself")
    since = d.get("since")
    if since not in (None, ""):
        try:
            datetime.fromisoformat(str(since).strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidEntry(f"'since' must be an ISO date such as 2026-03-02 (or a date and time), "
                               f"not {str(since)[:40]!r}") from None
        n["since"] = str(since).strip()
    return n

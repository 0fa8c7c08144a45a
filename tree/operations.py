"""The five curate operations as plain functions over an overlay of the tree.

``plan_batch`` validates every operation and computes, without touching disk,
each one's file changes (with before/after images for the journal). Ops in
one batch see the effects of earlier ops through the ``Overlay``. If any op
is invalid, the whole batch is rejected with one message per invalid op.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import yaml

from . import entry as entry_mod, frontmatter
from .cancel import checkpoint
from .entry import Entry
from .errors import BatchRejected, InvalidEntry, InvalidPath
from .frontmatter import MAX_FRONTMATTER_BYTES
from .journal import Change, JournalRecord, new_op_id, utc_now_iso
from .nesting import MAX_DEPTH, too_deep
from .overlay import Overlay
from .paths import (CONTEXT_FILE, is_entry_file, literal_path, normalize_entry_path, normalize_folder, parent_folders,
                    snake_case)
from .settings import TreeSettings
from .text_checks import text_problem

OPS = ("ADD", "UPDATE", "UPSERT", "MERGE", "DELETE")
_KNOWN_KEYS = {
    "op", "path", "title", "content", "reason", "related", "merge_into", "target", "tags", "keywords",
    "summary", "sources", "replace", "context", "extra",
}
_CONTEXT_LEVELS = ("domain", "topic", "subtopic")


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


def _label(i: int, d: Any) -> str:
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
            who = f"{_label(i, d)} alone holds" if alone else f"ops 1-{i} hold"
            raise BatchRejected([f"{who} more than {max_bytes:,} bytes of text, the most one batch may hold "
                                 "(setting max_input_bytes): shorten the content, or split it over several "
                                 "entries and batches"])


# What to do when one part of an entry's frontmatter is too large.
_SHRINK = {
    "title": "shorten the title and put the text in 'content', which has no such limit",
    "summary": "keep the summary to a sentence or two and put the text in 'content', which has no such limit",
    "tags": "give fewer and shorter tags",
    "keywords": "give fewer and shorter keywords",
    "related": "link fewer entries in 'related'",
}


def _yaml_size(key: str, value: Any) -> int:
    """Bytes ``key: value`` takes in the frontmatter (its text alone, if that is already far too big)."""
    size = text_size(value, 2 * MAX_FRONTMATTER_BYTES)
    if size > 2 * MAX_FRONTMATTER_BYTES:
        return size
    return len(frontmatter.dump({key: value}).encode("utf-8", "surrogatepass"))


def _too_big(e: Entry, path: str) -> InvalidEntry:
    parts = {"title": e.title, "summary": e.summary, "tags": e.tags, "keywords": e.keywords,
             "related": e.related, "sources": e.sources, **{f"extra '{k}'": v for k, v in e.extra.items()}}
    keys = {f"extra '{k}'": k for k in e.extra}
    name, size = max(((name, _yaml_size(keys.get(name, name), v)) for name, v in parts.items()), key=lambda x: x[1])
    if name == "sources":
        what = f"'sources' lists {len(e.sources)} sources ({size / 1024:.1f} KiB)"
        fix = ("an entry that gains a source with every update fills up: put the new knowledge in a new entry "
               f"(ADD) that names {path} in 'related', instead of updating this one")
    else:
        what = f"{name} holds {size / 1024:.1f} KiB"
        fix = _SHRINK.get(name, f"shrink {name} or move its text to 'content', which has no such limit")
    return InvalidEntry(f"{path} would not be readable: its frontmatter would be over the "
                        f"{MAX_FRONTMATTER_BYTES // 1024} KiB an entry may hold ({what}); {fix}")


def _check_floor(e: Entry, path: str) -> None:
    """Refuse, before rendering it, an entry whose frontmatter text alone is too big (YAML only adds)."""
    floor = sum(text_size(v, MAX_FRONTMATTER_BYTES) for v in
                (e.title, e.summary, e.tags, e.keywords, e.related, e.sources, e.extra))
    if floor > MAX_FRONTMATTER_BYTES:
        raise _too_big(e, path)


def _render(e: Entry, path: str) -> str:
    """The file text of ``e``, only if the reader takes it back: nothing is written that
    ``parse`` would refuse (a 70 KB summary was "added", then unreadable and unsearchable)."""
    _check_floor(e, path)
    try:
        text = entry_mod.serialize(e)
    except yaml.YAMLError as exc:  # an 'extra' value from the Python API that YAML cannot hold (a set)
        raise InvalidEntry(f"{path}: a frontmatter value cannot be written as YAML ({exc}); give text, "
                           "numbers, lists and mappings") from None
    if entry_mod.frontmatter_bytes(text) > MAX_FRONTMATTER_BYTES:
        raise _too_big(e, path)
    try:
        entry_mod.parse(text, where=path)
    except InvalidEntry as exc:
        raise InvalidEntry(f"the entry would not read back: {exc}") from None
    return text


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
    if not isinstance(ctx, dict) or not all(k in _CONTEXT_LEVELS for k in ctx):
        raise InvalidEntry("'context' must map 'domain'/'topic'/'subtopic' to overview text")
    n["context"] = {k: str(v).strip() for k, v in ctx.items() if v and str(v).strip()}
    if op in ("ADD", "UPSERT") and not n["sections"] and not n["title"] and not n["summary"]:
        raise InvalidEntry(f"{op} needs 'content' (markdown or a dict of sections) or at least a 'title'")
    return n


# -- building and combining entries -----------------------------------------

def _union(a: list, b: list) -> list:
    """``a``, then what ``b`` adds (a set beside the list: a membership test per item was k² steps)."""
    out, seen = list(a), set(a)
    for x in b:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def _union_sources(a: list[dict], b: list[dict]) -> list[dict]:
    """Provenance unioned by (kind, ref): the same source curated again is not a new one."""
    seen = {(x.get("kind"), x.get("ref")) for x in a}
    out = list(a)
    for x in b:
        key = (x.get("kind"), x.get("ref"))
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


def _merge_facts(a: str, b: str) -> str:
    lines = _union(entry_mod.fact_lines(a), entry_mod.fact_lines(b))
    rest_a = "\n".join(ln for ln in a.split("\n") if ln.strip() and not ln.strip().startswith(("- ", "* ")))
    return "\n".join(([rest_a] if rest_a else []) + lines)


def _title_from_path(path: str) -> str:
    stem = path.rsplit("/", 1)[-1][:-3]
    return stem.replace("_", " ").strip().capitalize()


def new_entry(n: dict[str, Any], now: str) -> Entry:
    return Entry(
        title=n["title"] or _title_from_path(n["path"]),
        summary=n["summary"] or "",
        tags=n["tags"], keywords=n["keywords"], related=[r for r in n["related"] if r != n["path"]],
        created_at=now, updated_at=now, sources=n["sources"], sections=dict(n["sections"]), extra=n["extra"],
    )


def updated_entry(old: Entry, n: dict[str, Any], now: str) -> Entry:
    """UPDATE: given fields replace; list fields and facts are unioned unless ``replace``."""
    if n["replace"]:
        fresh = new_entry({**n, "title": n["title"] or old.title}, now)
        fresh.created_at = old.created_at or now
        fresh.extra = {**old.extra, **n["extra"]}
        return fresh
    sections = dict(old.sections)
    for name, text in n["sections"].items():
        sections[name] = _merge_facts(sections.get(name, ""), text) if name == "Facts" else text
    return Entry(
        title=n["title"] or old.title,
        summary=old.summary if n["summary"] is None else n["summary"],
        tags=_union(old.tags, n["tags"]), keywords=_union(old.keywords, n["keywords"]),
        related=[r for r in _union(old.related, n["related"]) if r != n["path"]],
        created_at=old.created_at or now, updated_at=now,
        sources=_union_sources(old.sources, n["sources"]), sections=sections, extra={**old.extra, **n["extra"]},
    )


def merged_entry(target: Entry, source: Entry, target_path: str, source_path: str, now: str) -> Entry:
    """MERGE: lists unioned, sections concatenated target-then-source, earliest createdAt."""
    sections = dict(target.sections)
    for name, text in source.sections.items():
        if name == "Facts":
            sections[name] = _merge_facts(sections.get(name, ""), text)
        elif not sections.get(name, "").strip():
            sections[name] = text
        elif text.strip() and text.strip() not in sections[name]:
            sections[name] = sections[name].rstrip("\n") + "\n\n" + text.strip("\n")
    created = min([c for c in (target.created_at, source.created_at) if c] or [now])
    related = [r for r in _union(target.related, source.related) if r not in (target_path, source_path)]
    summary = target.summary or source.summary
    return Entry(
        title=target.title, summary=summary, tags=_union(target.tags, source.tags),
        keywords=_union(target.keywords, source.keywords), related=related, created_at=created,
        updated_at=now, sources=_union_sources(target.sources, source.sources), sections=sections,
        extra={**source.extra, **target.extra},
    )


def _parse_existing(text: str, path: str) -> Entry:
    try:
        return entry_mod.parse(text, where=path)
    except InvalidEntry as exc:
        raise InvalidEntry(f"{exc}; fix the file by hand or rewrite it with UPDATE and replace: true") from None


def _relink(overlay: Overlay, old: str, new: str | None, skip: set[str], now: str) -> list[Change]:
    """Rewrite ``related`` links to ``old`` so they point at ``new`` (or vanish)."""
    changes = []
    for p in overlay.linkers(old):
        if p in skip:
            continue
        before = overlay.read(p)
        e = entry_mod.parse(before or "", where=p)
        e.related = [r for r in dict.fromkeys(new if r == old else r for r in e.related) if r and r != p]
        after = _render(e, p)
        if after != before:
            overlay.set(p, after)
            changes.append(Change(p, before, after))
    return changes


# -- planning ----------------------------------------------------------------

def plan_one(n: dict[str, Any], overlay: Overlay, now_dt: datetime, actor: str) -> Planned:
    now = utc_now_iso(now_dt)
    op, path = n["op"], n["path"]
    before = overlay.read(path) if not n.get("subtree") else None
    also: list[Change] = []
    p = Planned(record=None, result=None)  # type: ignore[arg-type]
    if op == "UPSERT":
        op_eff = "UPDATE" if before is not None else "ADD"
    else:
        op_eff = op
    if op_eff == "ADD":
        if before is not None:
            raise InvalidEntry(f"ADD: {path} already exists; use UPDATE or UPSERT to change it, or pick another path")
        after = _render(new_entry(n, now), path)
        status, msg = "added", f"added {path}"
    elif op_eff == "UPDATE":
        if before is None:
            raise InvalidEntry(f"UPDATE: {path} does not exist; use ADD or UPSERT to create it")
        try:
            old = _parse_existing(before, path)
        except InvalidEntry:
            if not n["replace"]:
                raise
            old = Entry(title="")  # unreadable: replaced whole, as the error message advises
        new = updated_entry(old, n, now)
        _check_floor(new, path)
        if entry_mod.serialize(replace(new, updated_at=old.updated_at)) == entry_mod.serialize(old):
            # nothing new (the same input curated again): the file, its updatedAt and signals stay
            after, status, msg = before, "unchanged", f"unchanged {path}: already up to date"
        else:
            after = _render(new, path)
            status, msg = "updated", f"updated {path}"
            p.updated.append(path)
    elif op_eff == "MERGE":
        target = n["target"]
        t_before = overlay.read(target)
        if before is None:
            raise InvalidEntry(f"MERGE: source {path} does not exist")
        if t_before is None:
            raise InvalidEntry(f"MERGE: target {target} does not exist; to move an entry, ADD the target first")
        src, tgt = _parse_existing(before, path), _parse_existing(t_before, target)
        t_after = _render(merged_entry(tgt, src, target, path, now), target)
        overlay.set(target, t_after)
        also.append(Change(target, t_before, t_after))
        after = None
        overlay.set(path, None)
        also += _relink(overlay, path, target, {path}, now)
        status, msg = "merged", f"merged {path} into {target}"
        p.merged = (path, target)
        p.removed.append(path)
    else:  # DELETE
        if n.get("subtree"):
            victims = overlay.entries_under(path)
            if not victims:
                raise InvalidEntry(f"DELETE: folder {path} has no entries")
            for v in victims:
                also.append(Change(v, overlay.read(v), None))
                overlay.set(v, None)
            gone = set(victims)
            for v in victims:
                checkpoint()
                also += _relink(overlay, v, None, gone, now)
            after = None
            status, msg = "deleted", f"deleted {len(victims)} entries under {path}/"
            p.removed.extend(victims)
        else:
            if before is None:
                raise InvalidEntry(f"DELETE: {path} does not exist")
            after = None
            overlay.set(path, None)
            also += _relink(overlay, path, None, {path}, now)
            status, msg = "deleted", f"deleted {path}"
            p.removed.append(path)
    if op_eff in ("ADD", "UPDATE"):
        overlay.set(path, after)
    for folder in sorted({f for r in p.removed for f in parent_folders(r)}, key=lambda f: -f.count("/")):
        ctx = f"{folder}/{CONTEXT_FILE}"
        ctx_text = overlay.read(ctx)
        if ctx_text is not None and not overlay.holds_entries(folder):
            # the folder empties: journal its context.md so an undo brings the overview back
            also.append(Change(ctx, ctx_text, None))
            overlay.set(ctx, None)
    op_id = new_op_id(now_dt)
    p.record = JournalRecord(id=op_id, at=now, op=op, path=path, reason=n["reason"], actor=actor,
                             before=before, after=after, also=tuple(also))
    p.result = OpResult(op=op, path=path, status=status, message=msg, id=op_id if status != "unchanged" else "")
    folders = path.split("/")[:-1] if path.endswith(".md") else path.split("/")
    for level, text in n.get("context", {}).items():
        depth = _CONTEXT_LEVELS.index(level) + 1
        if depth <= len(folders):
            p.contexts["/".join(folders[:depth])] = text
    return p


def plan_batch(ops: list[dict[str, Any]], overlay: Overlay, now: datetime, *, actor: str = "user",
               allowed: tuple[str, ...] = OPS, max_bytes: int = TreeSettings.max_input_bytes) -> list[Planned]:
    if not isinstance(ops, list) or not ops:
        raise BatchRejected(["give a non-empty list of operations"])
    if too_deep(ops):  # before anything walks or prints it: that would raise RecursionError
        raise BatchRejected([f"the operations nest lists or objects more than {MAX_DEPTH} levels deep"])
    check_batch_size(ops, max_bytes)
    errors: list[str] = []
    planned: list[Planned] = []
    for i, d in enumerate(ops, 1):
        checkpoint()
        label = _label(i, d)
        try:
            n = check_shape(d, allowed)
            _hand_placed(d, n, overlay)
            planned.append(plan_one(n, overlay, now, actor))
        except (InvalidEntry, InvalidPath) as exc:
            errors.append(f"{label}: {exc}")
        except RecursionError:
            errors.append(f"{label}: a value is nested too deeply; give plain text, lists and mappings")
    if errors:
        raise BatchRejected(errors)
    return planned


def _hand_placed(d: dict[str, Any], n: dict[str, Any], overlay: Overlay) -> None:
    """An op naming a hand-placed file or folder by the exact path search gave for it
    (``Team-Notes/On Call/Rota 2024.md``, not snake_case) acts on it, when it exists."""
    def exact(raw: Any, normalized: str, folder: bool = False) -> str:
        lit = literal_path(raw.strip().rstrip("/")) if isinstance(raw, str) else None
        if lit is None or lit == normalized:   # most paths: snake_case already, nothing to look up
            return normalized
        if folder:
            return lit if overlay.holds_entries(lit) else normalized
        return lit if is_entry_file(lit) and overlay.exists(lit) else normalized

    n["path"] = exact(d.get("path"), n["path"], folder=bool(n.get("subtree")))
    if n["op"] == "MERGE":
        n["target"] = exact(d.get("merge_into", d.get("target")), n["target"])


def entry_name(title: str) -> str:
    """The file name an entry with this title gets: ``snake_case(title).md``."""
    return (snake_case(title) or "entry") + ".md"

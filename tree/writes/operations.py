"""The curate operations as plain functions over an overlay of the tree.

``plan_batch`` validates every operation and computes, without touching disk,
each one's file changes (with before/after images for the journal). Ops in
one batch see the effects of earlier ops through the ``Overlay``. If any op
is invalid, the whole batch is rejected with one message per invalid op.

The parts live beside it: the shapes and their validation (``op_shapes``), building
entries (``op_entries``), and SUPERSEDE / ARCHIVE / RESTORE (``validity_ops``). The names
others import from here stay importable from here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from . import archive, validity_ops
from ..entries import entry as entry_mod
from .cancel import checkpoint
from ..entries.entry import Entry
from ..base.errors import BatchRejected, InvalidEntry, InvalidPath
from .journal import Change, JournalRecord, new_op_id, utc_now_iso
from ..base.nesting import MAX_DEPTH, too_deep
from .op_entries import (check_floor, merged_entry, new_entry, parse_existing, relink, render,  # noqa: F401
                         updated_entry)
from .op_shapes import (CONTEXT_LEVELS, OPS, VALIDITY_OPS, OpResult, Planned, check_batch_size,  # noqa: F401
                        check_shape, op_label, text_size)
from .overlay import Overlay  # noqa: F401 - imported from here by ContextTree and the benchmarks
from ..entries.paths import CONTEXT_FILE, is_entry_file, literal_path, parent_folders, snake_case
from ..settings import TreeSettings

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
        after = render(new_entry(n, now), path)
        status, msg = "added", f"added {path}"
    elif op_eff == "UPDATE":
        if before is None:
            raise InvalidEntry(f"UPDATE: {path} does not exist; use ADD or UPSERT to create it")
        try:
            old = parse_existing(before, path)
        except InvalidEntry:
            if not n["replace"]:
                raise
            old = Entry(title="")  # unreadable: replaced whole, as the error message advises
        new = updated_entry(old, n, now)
        check_floor(new, path)
        if entry_mod.serialize(replace(new, updated_at=old.updated_at)) == entry_mod.serialize(old):
            # nothing new (the same input curated again): the file, its updatedAt and signals stay
            after, status, msg = before, "unchanged", f"unchanged {path}: already up to date"
        else:
            after = render(new, path)
            status, msg = "updated", f"updated {path}"
            p.updated.append(path)
    elif op_eff == "MERGE":
        target = n["target"]
        t_before = overlay.read(target)
        if before is None:
            raise InvalidEntry(f"MERGE: source {path} does not exist")
        if t_before is None:
            raise InvalidEntry(f"MERGE: target {target} does not exist; to move an entry, ADD the target first")
        src, tgt = parse_existing(before, path), parse_existing(t_before, target)
        t_after = render(merged_entry(tgt, src, target, path, now), target)
        overlay.set(target, t_after)
        also.append(Change(target, t_before, t_after))
        after = None
        overlay.set(path, None)
        also += relink(overlay, path, target, {path}, now)
        also += validity_ops.relink_validity(overlay, path, before, target, {path})
        status, msg = "merged", f"merged {path} into {target}"
        p.merged = (path, target)
        p.removed.append(path)
    elif op_eff == "SUPERSEDE":
        before, after, closed, msg = validity_ops.plan_supersede(n, overlay)
        also += closed
        status = "superseded" if after != before or closed else "unchanged"
        if status == "unchanged":
            msg = f"unchanged {path}: already superseded by {n['by']}"
    elif op_eff == "ARCHIVE":
        before, moved, msg = validity_ops.plan_archive(n, overlay)
        also += moved
        after, status = None, "archived"
        p.vacated.append(path)
    elif op_eff == "RESTORE":
        after, moved, msg, overviews = validity_ops.plan_restore(n, overlay)
        also += moved
        p.contexts.update(overviews)
        status = "restored"
    else:  # DELETE
        if n.get("subtree"):
            victims = overlay.entries_under(path)
            if not victims:
                raise InvalidEntry(f"DELETE: folder {path} has no entries")
            texts = {}
            for v in victims:
                texts[v] = overlay.read(v)
                also.append(Change(v, texts[v], None))
                overlay.set(v, None)
            gone = set(victims)
            for v in victims:
                checkpoint()
                also += relink(overlay, v, None, gone, now)
                also += validity_ops.relink_validity(overlay, v, texts[v], None, gone)
            after = None
            status, msg = "deleted", f"deleted {len(victims)} entries under {path}/"
            p.removed.extend(victims)
        else:
            if before is None:
                raise validity_ops.missing("DELETE", path, overlay)
            after = None
            overlay.set(path, None)
            also += relink(overlay, path, None, {path}, now)
            also += validity_ops.relink_validity(overlay, path, before, None, {path})
            status, msg = "deleted", f"deleted {path}"
            p.removed.append(path)
    if op_eff in ("ADD", "UPDATE"):
        overlay.set(path, after)
    for folder in sorted({f for r in p.removed + p.vacated for f in parent_folders(r)}, key=lambda f: -f.count("/")):
        ctx = f"{folder}/{CONTEXT_FILE}"
        ctx_text = overlay.read(ctx)
        if ctx_text is not None and not overlay.holds_entries(folder):
            # the folder empties: journal its context.md so an undo brings the overview back
            also.append(Change(ctx, ctx_text, None))
            overlay.set(ctx, None)
            if op_eff == "ARCHIVE":
                also += validity_ops.saved_overview(ctx, ctx_text, overlay)
    op_id = new_op_id(now_dt)
    p.record = JournalRecord(id=op_id, at=now, op=op, path=path, reason=n["reason"], actor=actor,
                             before=before, after=after, also=tuple(also))
    p.result = OpResult(op=op, path=path, status=status, message=msg, id=op_id if status != "unchanged" else "")
    folders = path.split("/")[:-1] if path.endswith(".md") else path.split("/")
    for level, text in n.get("context", {}).items():
        depth = CONTEXT_LEVELS.index(level) + 1
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
        label = op_label(i, d)
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
    def exact(raw: Any, normalized: str, folder: bool = False, archived: bool = False) -> str:
        lit = literal_path(raw.strip().rstrip("/")) if isinstance(raw, str) else None
        if lit is None or lit == normalized:   # most paths: snake_case already, nothing to look up
            return normalized
        if folder:
            return lit if overlay.holds_entries(lit) else normalized
        # RESTORE looks for it in the archive, where ARCHIVE put it under the same path
        return lit if is_entry_file(lit) and overlay.exists(archive.archived(lit) if archived else lit) else normalized

    n["path"] = exact(d.get("path"), n["path"], folder=bool(n.get("subtree")), archived=n["op"] == "RESTORE")
    if n["op"] == "MERGE":
        n["target"] = exact(d.get("merge_into", d.get("target")), n["target"])
    if n["op"] == "SUPERSEDE":
        n["by"] = exact(d.get("by"), n["by"])


def entry_name(title: str) -> str:
    """The file name an entry with this title gets: ``snake_case(title).md``."""
    return (snake_case(title) or "entry") + ".md"

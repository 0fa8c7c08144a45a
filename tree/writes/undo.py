"""Planning an undo: restore one operation's before-images, or say exactly why not.

An operation can be undone while every file it wrote is still as it left it.
Otherwise the message names what changed since: later operations (undo those
first, newest first) or a hand edit. ``force`` undoes anyway; what it
overwrites is the UNDO record's before-image, so undoing the UNDO brings it back.
An UNDO that removes entries (undoing their ADD) drops the links to them, as DELETE does
(``unlink_removed``): undoing one message of a conversation left its neighbour linking to nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Callable

from . import validity_ops
from .archive import in_tree, is_archived
from ..base.errors import InvalidEntry, OperationConflict
from .journal import Change, JournalRecord, new_op_id, utc_now_iso
from .op_entries import relink
from .operations import OpResult, Planned
from .overlay import Overlay
from ..entries.paths import is_entry_file


def plan_undo(rec: JournalRecord, later: list[JournalRecord], read_disk: Callable[[str], str | None],
              now: datetime, *, force: bool = False, actor: str = "user", overlay: Overlay | None = None) -> Planned:
    """The UNDO of ``rec`` as a planned write (status ``unchanged`` when there is nothing to do);
    with ``overlay`` (the tree before it), the links to the entries it removes go too."""
    planned = _plan_undo(rec, later, read_disk, now, force=force, actor=actor)
    if overlay is not None:
        unlink_removed([planned], overlay, now)
    return planned


def _plan_undo(rec: JournalRecord, later: list[JournalRecord], read_disk: Callable[[str], str | None],
               now: datetime, *, force: bool, actor: str) -> Planned:
    changes = rec.changes()
    final = {ch.path: ch.after for ch in changes}   # what the operation left in each file
    first = {}
    for ch in changes:
        first.setdefault(ch.path, ch.before)          # what each file held before it
    current = {p: read_disk(p) for p in final}
    if all(current[p] == first[p] for p in final):
        by = next((r.id for r in reversed(later) if r.op == "UNDO" and r.reason.startswith(f"undo {rec.id} ")), None)
        message = (f"{rec.id} is already undone (by {by}; undo {by} to redo it)" if by
                   else f"nothing to undo: the files are as they were before {rec.id}")
        return Planned(record=rec, result=OpResult("UNDO", rec.path, "unchanged", message, ""))
    changed = [p for p in final if current[p] != final[p]]
    if changed and not force:
        raise OperationConflict(_conflict_message(rec.id, changed, later))
    also = tuple(Change(p, current[p], first[p]) for p in reversed(list(final)) if current[p] != first[p])
    new_id = new_op_id(now)
    record = JournalRecord(id=new_id, at=utc_now_iso(now), op="UNDO", path=rec.path,
                           reason=f"undo {rec.id} ({rec.op} {rec.path})", actor=actor,
                           before=None, after=None, also=also)
    message = f"undid {rec.op} {rec.path} ({rec.id})"
    if changed:
        message += (f"; discarded what changed since in {', '.join(changed)} "
                    f"(kept in the journal: undo {new_id} to get it back)")
    return Planned(record=record, result=OpResult("UNDO", rec.path, "undone", message, new_id))


def _conflict_message(op_id: str, changed: list[str], later: list[JournalRecord]) -> str:
    changed_set = set(changed)
    touching = [r.id for r in later if any(ch.path in changed_set for ch in r.changes())]
    where = ", ".join(changed)
    if touching:
        newest_first = ", ".join(reversed(touching))
        return (f"cannot undo {op_id}: {where} changed after it, by {newest_first}; undo those first "
                f"(newest first), or use --force to undo anyway (what it overwrites is kept in the journal)")
    return (f"cannot undo {op_id}: {where} was edited by hand since; use --force to undo anyway "
            "(the hand edit is kept in the journal, so undoing the undo brings it back)")


def plan_undo_all(recs: list[JournalRecord], later: list[JournalRecord], read_disk: Callable[[str], str | None],
                  now: datetime, *, force: bool = False, actor: str = "user",
                  overlay: Overlay | None = None) -> list[Planned]:
    """The UNDOs of ``recs`` (journal order), newest first, as one batch: each sees the files as the
    UNDOs before it leave them, so the batch brings every file back to what it held before the
    first of them. ``later``: the records journaled after the first that are not in ``recs``
    (what a refusal names); ``overlay``: as ``plan_undo``'s."""
    images: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        return images[path] if path in images else read_disk(path)

    out: list[Planned] = []
    for rec in reversed(recs):
        planned = _plan_undo(rec, later, read, now, force=force, actor=actor)
        for ch in planned.record.also if planned.result.status != "unchanged" else ():
            images[ch.path] = ch.after
        out.append(planned)
    if overlay is not None:
        unlink_removed(out, overlay, now)
    return out


def unlink_removed(planned: list[Planned], overlay: Overlay, now: datetime) -> None:
    """Drop the links to the entries these UNDOs remove, as DELETE does (``relink`` and the
    validity keys): the rewritten linkers join the last UNDO's record, so undoing it puts the
    links back with the entries. ``overlay`` reads the tree as it is before the batch."""
    live = [p for p in planned if p.result.status != "unchanged"]
    for p in live:
        for ch in p.record.also:
            overlay.set(ch.path, ch.after)
    # an entry that goes to the archive keeps its links, as ARCHIVE does (undoing the undo of an ARCHIVE)
    archived = {in_tree(ch.path) for p in live for ch in p.record.also if is_archived(ch.path) and ch.after is not None}
    removed = {ch.path: ch.before for p in live for ch in p.record.also
               if ch.after is None and ch.before is not None and is_entry_file(ch.path) and ch.path not in archived}
    if not removed:
        return
    stamp = utc_now_iso(now)
    extra: list[Change] = []
    for path, text in removed.items():
        try:
            extra += relink(overlay, path, None, set(removed), stamp)
            extra += validity_ops.relink_validity(overlay, path, text, None, set(removed))
        except InvalidEntry:   # a linker edited by hand into something unreadable: left as it is
            continue
    # one change per file, from what it held before the batch to what it holds after
    merged: dict[str, Change] = {}
    for ch in extra:
        merged[ch.path] = Change(ch.path, merged[ch.path].before if ch.path in merged else ch.before, ch.after)
    last = live[-1]
    last.record = replace(last.record, also=last.record.also + tuple(merged.values()))
    last.removed.extend(removed)

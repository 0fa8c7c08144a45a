"""Planning SUPERSEDE, ARCHIVE and RESTORE, and keeping the validity keys true when MERGE or
DELETE removes an entry that names or is named by them.

- ``SUPERSEDE`` ``{"op", "path": OLD, "by": NEW, "reason", "since"?}``: OLD stays, closed
  (``supersededBy: NEW``, ``validUntil: since``, else the day NEW is about: its sources' time,
  else its creation); NEW lists OLD in ``supersedes``. Neither text nor ``updatedAt`` changes:
  closing a fact is not news about it. With ``statement`` (and ``value``, ``new_value``), one
  statement of OLD is replaced, not all it says (a long message naming five things): OLD stays
  current and records it in ``supersededStatements`` (``[{"statement", "value", "by", "newValue",
  "since"}]``), for search and the answer to put the new value first.
- ``ARCHIVE`` ``{"op", "path", "reason"}``: the file moves, byte for byte, to
  ``.memgrove/archive/<path>`` (tree/writes/archive.py); links to it stay as they are.
- ``RESTORE``: the archived file moves back, onto no existing entry.

Each returns the operation's changes; ``operations.plan_one`` journals them like the others.
"""

from __future__ import annotations

from typing import Any

from ..text import dates
from ..entries import entry as entry_mod, validity
from .archive import archived
from ..index.contexts import OVERVIEW
from ..entries.entry import Entry
from ..base.errors import InvalidEntry
from .journal import Change
from .op_entries import parse_existing, render
from .overlay import Overlay
from ..entries.paths import CONTEXT_FILE, parent_folders


def missing(op: str, path: str, overlay: Overlay) -> InvalidEntry:
    hint = " (it is archived: RESTORE it first)" if overlay.exists(archived(path)) else ""
    return InvalidEntry(f"{op}: {path} does not exist{hint}")


def _since(n: dict[str, Any], new: Entry) -> str:
    """``validUntil``: the op's ``since``, else the day the newer entry is about."""
    if n.get("since"):
        return n["since"]
    day = next((d for s in new.sources if isinstance(s, dict) and (d := dates.day_of(str(s.get("at") or "")))),
               None) or dates.day_of(new.created_at or "")
    return day.isoformat() if day else ""


def plan_supersede(n: dict[str, Any], overlay: Overlay) -> tuple[str | None, str | None, list[Change], str]:
    """``(before, after, also, message)`` of closing ``path`` by ``by``."""
    old_path, new_path = n["path"], n["by"]
    before, new_before = overlay.read(old_path), overlay.read(new_path)
    if before is None:
        raise missing("SUPERSEDE", old_path, overlay)
    if new_before is None:
        if overlay.exists(archived(new_path)):
            raise InvalidEntry(f"SUPERSEDE: the newer entry {new_path} ('by') is archived; RESTORE it first")
        raise InvalidEntry(f"SUPERSEDE: the newer entry {new_path} ('by') does not exist; write it first "
                           "(an ADD or UPSERT earlier in the same batch will do)")
    old, new = parse_existing(before, old_path), parse_existing(new_before, new_path)
    if n.get("statement"):
        return _record_statement(n, old, new, before)
    by = validity.superseded_by(old)
    if by and by != new_path:
        raise InvalidEntry(f"SUPERSEDE: {old_path} is already superseded by {by}; supersede {by} by {new_path} "
                           "instead, or undo that first")
    cur, seen = new_path, set()
    while cur and cur not in seen:     # NEW, or an entry that replaced it, must not be OLD
        if cur == old_path:
            raise InvalidEntry(f"SUPERSEDE: {new_path} is itself superseded by {old_path} (directly or through "
                               "newer entries); a fact cannot replace the one that replaced it")
        seen.add(cur)
        text = overlay.read(cur)
        cur = validity.superseded_by(parse_existing(text, cur)) if text is not None else ""
    old.extra = {**old.extra, validity.SUPERSEDED_BY: new_path, validity.VALID_UNTIL: _since(n, new)}
    new.extra = {**new.extra, validity.SUPERSEDES: list(dict.fromkeys(validity.supersedes(new) + [old_path]))}
    after, new_after = render(old, old_path), render(new, new_path)
    also = []
    if new_after != new_before:
        overlay.set(new_path, new_after)
        also.append(Change(new_path, new_before, new_after))
    overlay.set(old_path, after)
    return before, after, also, f"superseded {old_path} by {new_path} (valid until {old.extra[validity.VALID_UNTIL]})"


def _record_statement(n: dict[str, Any], old: Entry, new: Entry, before: str) -> tuple[str, str, list[Change], str]:
    """SUPERSEDE of one statement: recorded on the older entry, which stays current for the rest."""
    mark = {"statement": n["statement"], "value": n.get("value", ""), "by": n["by"],
            "newValue": n.get("new_value", ""), "since": _since(n, new)}
    kept = old.extra.get(validity.SUPERSEDED_STATEMENTS)
    kept = [m for m in kept if isinstance(m, dict)] if isinstance(kept, list) else []
    if any(m.get("statement") == mark["statement"] and m.get("by") == mark["by"] for m in kept):
        return before, before, [], f"unchanged {n['path']}: the statement is already recorded as replaced"
    old.extra = {**old.extra, validity.SUPERSEDED_STATEMENTS: kept + [mark]}
    return before, render(old, n["path"]), [], (f"recorded that {n['by']} replaces a statement of {n['path']} "
                                               f"({mark['value'] or '...'} -> {mark['newValue'] or '...'})")


def plan_archive(n: dict[str, Any], overlay: Overlay) -> tuple[str, list[Change], str]:
    """``(before, also, message)`` of moving ``path`` into the archive."""
    path = n["path"]
    before, kept = overlay.read(path), overlay.read(archived(path))
    if before is None:
        if kept is not None:
            raise InvalidEntry(f"ARCHIVE: {path} is already archived (RESTORE brings it back)")
        raise InvalidEntry(f"ARCHIVE: {path} does not exist")
    if kept is not None:
        raise InvalidEntry(f"ARCHIVE: the archive already holds an older {path}; RESTORE it under this path "
                           "first (after moving this entry), or archive this one under another path")
    overlay.set(path, None)
    overlay.set(archived(path), before)
    return before, [Change(archived(path), None, before)], f"archived {path} (moved to .memgrove/archive/{path})"


def plan_restore(n: dict[str, Any], overlay: Overlay) -> tuple[str, list[Change], str, dict[str, str]]:
    """``(after, also, message, overviews)`` of moving ``path`` back from the archive; ``overviews``:
    the folder overviews ARCHIVE kept (``saved_overview``) for folders the tree no longer has,
    given back to their context files."""
    path = n["path"]
    kept = overlay.read(archived(path))
    if kept is None:
        raise InvalidEntry(f"RESTORE: {path} is not in the archive"
                           + (" (it is in the tree)" if overlay.exists(path) else ""))
    if overlay.exists(path):
        raise InvalidEntry(f"RESTORE: an entry already exists at {path}; move or delete it first, "
                           "restoring never overwrites")
    also, overviews = [Change(archived(path), kept, None)], {}
    for folder in parent_folders(path):
        ctx = f"{folder}/{CONTEXT_FILE}"
        saved = overlay.read(archived(ctx))
        if saved is None or overlay.read(ctx) is not None:
            continue
        # the tree's context file is derived from here on (its listing is regenerated), so it is
        # not journaled: its overview goes back as the operation's folder overview
        also.append(Change(archived(ctx), saved, None))
        overlay.set(archived(ctx), None)
        try:
            overviews[folder] = entry_mod.parse(saved, where=ctx).sections.get(OVERVIEW, "").strip()
        except InvalidEntry:
            continue
    overlay.set(archived(path), None)
    overlay.set(path, kept)
    return kept, also, f"restored {path} from the archive", {f: o for f, o in overviews.items() if o}


def saved_overview(ctx: str, text: str, overlay: Overlay) -> list[Change]:
    """ARCHIVE empties a folder: its context file goes to the archive too (unless one is there),
    so a RESTORE gives the folder its overview back."""
    if overlay.read(archived(ctx)) is not None:
        return []
    overlay.set(archived(ctx), text)
    return [Change(archived(ctx), None, text)]


def relink_validity(overlay: Overlay, gone: str, gone_text: str | None, into: str | None,
                    skip: set[str]) -> list[Change]:
    """When ``gone`` leaves the tree (MERGE into ``into``, or DELETE: ``into`` None), the entries
    its validity keys name are brought in step: one it replaced now names ``into`` as its
    replacement (or, deleted, is current again); the one that replaced it forgets it. The links
    are both ways by construction, so ``gone``'s own keys name every entry to change."""
    if not gone_text:
        return []
    try:
        g = parse_existing(gone_text, gone)
    except InvalidEntry:
        return []
    changes = []

    def edit(path: str, change) -> None:
        before = overlay.read(path)
        if before is None or path in skip:
            return
        try:
            e = parse_existing(before, path)
        except InvalidEntry:
            return
        change(e)
        after = render(e, path)
        if after != before:
            overlay.set(path, after)
            changes.append(Change(path, before, after))

    def reopen_or_repoint(e: Entry) -> None:
        if validity.superseded_by(e) != gone:
            return
        if into:
            e.extra = {**e.extra, validity.SUPERSEDED_BY: into}
        else:
            e.extra = {k: v for k, v in e.extra.items() if k not in (validity.SUPERSEDED_BY, validity.VALID_UNTIL)}

    def forget(e: Entry) -> None:
        left = [p for p in validity.supersedes(e) if p != gone]
        e.extra = {k: v for k, v in e.extra.items() if k != validity.SUPERSEDES}
        if left:
            e.extra[validity.SUPERSEDES] = left

    for older in validity.supersedes(g):
        if older != into:
            edit(older, reopen_or_repoint)
    newer = validity.superseded_by(g)
    if newer and newer != into:
        edit(newer, forget)
    return changes

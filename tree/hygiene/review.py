"""The review queue: changes that wait for a person's approval, as plain functions over files.

``memgrove dream`` and the LLM curator put here what they may not apply on their own (setting
``review_ops``: a merge, a delete, an archive; a model's decision below ``review_confidence``).
Each pending item is one JSON file, ``.memgrove/review/pending/<id>.json``::

    {"id", "candidate": {"key", "kind", "paths", "action", "ops", "reason", "confidence", "evidence"},
     "proposed_by": "dream" | "model" | "agent", "created", "run", "before": {path: digest}}

``before`` holds a digest of every file the change touches as it was when proposed. Approving
re-reads them: a file changed since (a later curation, a hand edit) is a ``ReviewConflict``
naming it, never a blind overwrite. Approved items are applied as one journaled batch (each
item all or nothing, ``ContextTree.curate_groups``), linked first to the dream run that proposed
them (``dream_state.link_approved``: undoing the run names them), and leave the queue; rejected ones leave it
too, and their ``key`` goes to ``review/rejected.jsonl`` so the next dream does not propose
the same change again. Queue files are written atomically under the tree's writer lock.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import dream_state
from ..base.errors import InvalidInput, ItemNotFound, ReviewConflict
from .findings import Candidate
from ..base.fsio import append_line, atomic_write
from ..writes.journal import utc_now_iso

if TYPE_CHECKING:
    from ..store import ContextTree

REVIEW_DIR = "review"
ACTOR = "review"
PROPOSERS = ("dream", "model", "agent")


def review_dir(home: Path) -> Path:
    return home / REVIEW_DIR


def _pending_dir(home: Path) -> Path:
    return review_dir(home) / "pending"


def digest(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ReviewItem:
    """One pending change (see the module's docstring for its file)."""

    id: str
    candidate: dict[str, Any]
    proposed_by: str
    created: str
    before: dict[str, str | None] = field(default_factory=dict)
    run: str | None = None

    @property
    def ops(self) -> list[dict[str, Any]]:
        reason = str(self.candidate.get("reason") or "approved in review")
        return [dict(op) if op.get("reason") else {**op, "reason": reason} for op in self.candidate.get("ops", [])]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "candidate": self.candidate, "proposed_by": self.proposed_by,
                "created": self.created, "run": self.run, "before": dict(self.before)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ReviewItem":
        return cls(id=str(d["id"]), candidate=dict(d["candidate"]), proposed_by=str(d.get("proposed_by", "")),
                   created=str(d.get("created", "")), before=dict(d.get("before") or {}), run=d.get("run"))


@dataclass(frozen=True)
class ApproveReport:
    """What approving did: per item applied (with its operations' results), in conflict (files
    changed since), or refused by the tree (its operations no longer apply)."""

    applied: list[dict[str, Any]] = field(default_factory=list)     # {"id", "results": [OpResult dicts]}
    conflicts: list[dict[str, Any]] = field(default_factory=list)   # {"id", "message"}
    failed: list[dict[str, Any]] = field(default_factory=list)      # {"id", "errors": [...]}
    obsolete: list[dict[str, Any]] = field(default_factory=list)    # {"id", "message"}: left the queue

    def to_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "conflicts": self.conflicts, "failed": self.failed,
                "obsolete": self.obsolete}


def touched(candidate: dict[str, Any]) -> list[str]:
    """The entries a change reads or writes: its paths and every path its operations name."""
    out = [str(p) for p in candidate.get("paths", ())]
    for op in candidate.get("ops", ()):
        for k in ("path", "merge_into", "target", "by"):
            if isinstance(op.get(k), str):
                out.append(op[k])
    return list(dict.fromkeys(out))


def proposal(ops: list[dict[str, Any]], *, kind: str = "curate", reason: str = "",
             confidence: float | None = None) -> dict[str, Any]:
    """A candidate dict for operations that come without a scan's finding (a model curating):
    its key is a digest of the operations, so the same proposal is queued once."""
    ops = [dict(op) for op in ops]
    key = hashlib.sha256(json.dumps([kind, ops], sort_keys=True, ensure_ascii=False, default=str)
                         .encode()).hexdigest()[:16]
    paths = list(dict.fromkeys(str(op.get("path", "")) for op in ops))
    return {"key": key, "kind": kind, "paths": paths,
            "action": ",".join(dict.fromkeys(str(op.get("op", "")).upper() for op in ops)), "ops": ops,
            "reason": reason or "; ".join(str(op.get("reason", "")) for op in ops if op.get("reason")),
            "confidence": confidence, "evidence": {}}


# -- reading ------------------------------------------------------------------------------

def pending(tree: "ContextTree") -> list[ReviewItem]:
    """Every pending item, oldest first."""
    items = []
    try:
        files = sorted(_pending_dir(tree.home).glob("*.json"))
    except OSError:
        return []
    for f in files:
        try:
            items.append(ReviewItem.from_dict(json.loads(f.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError):
            continue   # a damaged item is skipped, never deleted: a person may want it
    return sorted(items, key=lambda i: (i.created, i.id))


def show(tree: "ContextTree", item_id: str) -> ReviewItem:
    """The pending item ``item_id`` (a unique prefix of at least 4 characters is enough)."""
    item_id = str(item_id).strip()
    if len(item_id) < 4 or not item_id.isalnum():
        raise ItemNotFound(f"no pending review item {item_id!r}: give its id (or 4+ characters of it), "
                           "see `memgrove review`")
    found = [i for i in pending(tree) if i.id.startswith(item_id)]
    if not found:
        raise ItemNotFound(f"no pending review item {item_id!r} (see `memgrove review`)")
    if len(found) > 1:
        raise ItemNotFound(f"{item_id!r} is the start of {len(found)} review items' ids; give more of it")
    return found[0]


def rejected_keys(home: Path) -> set[str]:
    """Keys of every change a person rejected: the next dream leaves them alone."""
    try:
        lines = (review_dir(home) / "rejected.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return set()
    keys = set()
    for line in lines:
        try:
            keys.add(str(json.loads(line)["key"]))
        except (ValueError, KeyError, TypeError):
            continue
    return keys


def pending_keys(tree: "ContextTree") -> set[str]:
    return {str(i.candidate.get("key", i.id)) for i in pending(tree)}


# -- writing ------------------------------------------------------------------------------

def queue(tree: "ContextTree", candidate: Candidate | dict[str, Any], *, proposed_by: str,
          run: str | None = None, now: datetime | None = None,
          rejected: set[str] | None = None) -> ReviewItem | None:
    """Put a change in the queue; the item (the one already there for the same key), or None when
    a person rejected this change before (``rejected``: those keys, when the caller has read them)."""
    if proposed_by not in PROPOSERS:
        raise InvalidInput(f"proposed_by must be one of {', '.join(PROPOSERS)}, not {proposed_by!r}")
    c = candidate.to_dict() if isinstance(candidate, Candidate) else dict(candidate)
    key = str(c.get("key") or proposal(list(c.get("ops", ())))["key"])
    c["key"] = key
    if not c.get("ops"):
        raise InvalidInput("a review item needs the operations that carry it out")
    if key in (rejected_keys(tree.home) if rejected is None else rejected):
        return None
    with tree.lock.hold():
        path = _pending_dir(tree.home) / f"{key}.json"
        if path.exists():
            try:
                return ReviewItem.from_dict(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError):
                pass
        item = ReviewItem(id=key, candidate=c, proposed_by=proposed_by,
                          created=_stamp(now),
                          before={p: digest(_read(tree, p)) for p in touched(c)}, run=run)
        atomic_write(path, json.dumps(item.to_dict(), ensure_ascii=False, indent=1), durable=tree.settings.durable)
    return item


def conflict(tree: "ContextTree", item: ReviewItem) -> str | None:
    """Why ``item`` cannot be approved as proposed (a file it touches changed since), or None."""
    changed = [p for p, d in item.before.items() if digest(_read(tree, p)) != d]
    if not changed:
        return None
    return (f"review item {item.id}: {', '.join(changed)} changed since it was proposed ({item.created}); "
            "nothing was written. Reject it (`memgrove review reject`), and run `memgrove dream` again "
            "for a fresh proposal")


def approve(tree: "ContextTree", item_id: str | None = None, *, all_items: bool = False) -> ApproveReport:
    """Apply one pending item (``item_id``) or every one (``all_items``) as one journaled batch.
    One item whose files changed since raises ``ReviewConflict``; with ``all_items`` such items
    are reported and stay pending, and the others are applied."""
    if not all_items and not item_id:
        raise InvalidInput("name the review item to approve, or approve all of them")
    report = ApproveReport()
    with tree.lock.hold():
        items = pending(tree) if all_items else [show(tree, str(item_id))]
        ready = []
        for item in items:
            why = conflict(tree, item)
            if why is None:
                ready.append(item)
            elif not all_items:
                raise ReviewConflict(why)
            else:
                report.conflicts.append({"id": item.id, "message": why})
        if not ready:
            return report
        outcomes = tree.curate_groups([item.ops for item in ready], actor=ACTOR,
                                      before_write=lambda out: _link_to_runs(tree, ready, out))
        for item, outcome in zip(ready, outcomes):
            gone = [p for p, d in item.before.items() if d is not None and _read(tree, p) is None]
            if outcome.ok:
                report.applied.append({"id": item.id, "results": [r.to_dict() for r in outcome.results]})
                _remove(tree, item.id)
            elif gone and all_items:
                # an entry it needs was merged or archived by another item of this batch: it cannot
                # apply as proposed any more; dream proposes it again over what the tree holds now
                report.obsolete.append({"id": item.id, "message": f"{', '.join(gone)} left the tree in this "
                                        "batch (merged or archived by another item); run `memgrove dream` again"})
                _remove(tree, item.id)
            else:
                report.failed.append({"id": item.id, "errors": list(outcome.errors)})
    if report.failed and not all_items:
        raise ReviewConflict(f"review item {report.failed[0]['id']} no longer applies; nothing was written: "
                             + "; ".join(report.failed[0]["errors"]))
    return report


def reject(tree: "ContextTree", item_id: str | None = None, *, all_items: bool = False,
           now: datetime | None = None) -> list[ReviewItem]:
    """Drop one pending item or every one; their keys are remembered, so dream does not propose
    them again. The items rejected."""
    if not all_items and not item_id:
        raise InvalidInput("name the review item to reject, or reject all of them")
    at = utc_now_iso(now or datetime.now(timezone.utc))
    with tree.lock.hold():
        items = pending(tree) if all_items else [show(tree, str(item_id))]
        for item in items:
            c = item.candidate
            append_line(review_dir(tree.home) / "rejected.jsonl", json.dumps(
                {"key": c.get("key", item.id), "id": item.id, "at": at, "kind": c.get("kind"),
                 "action": c.get("action"), "paths": c.get("paths", [])}, ensure_ascii=False),
                durable=tree.settings.durable)
            _remove(tree, item.id)
    return items


def _link_to_runs(tree: "ContextTree", items: list[ReviewItem], outcomes: list[Any]) -> None:
    """Before the batch: each item proposed by a dream run, with the ids it is about to apply,
    linked to that run, so undoing the run can name them or revert them too (tree/hygiene/dream_undo.py)."""
    at = utc_now_iso(datetime.now(timezone.utc))
    for item, outcome in zip(items, outcomes):
        ids = [r.id for r in outcome.results if r.id]
        if item.run and ids:
            dream_state.link_approved(tree.home, str(item.run), item.id, ids, at, durable=tree.settings.durable)


def _stamp(now: datetime | None) -> str:
    # to the microsecond: the queue lists items in the order they were proposed
    return (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _remove(tree: "ContextTree", item_id: str) -> None:
    try:
        os.unlink(_pending_dir(tree.home) / f"{item_id}.json")
    except FileNotFoundError:
        pass


def _read(tree: "ContextTree", path: str) -> str | None:
    try:
        return tree._read_disk(path)
    except Exception:  # noqa: BLE001 - an unreadable or escaping path is "not as proposed"
        return "\x00unreadable"


def preview(tree: "ContextTree", item: ReviewItem) -> dict[str, Any]:
    """What approving ``item`` would write, planned as ``approve`` plans it and written nowhere:
    ``{"changes": [{"path", "before", "after"}], "error"}`` (``after`` None: the file goes; an
    ``error`` when it no longer applies, e.g. a file it needs changed or left)."""
    from ..base.errors import MemgroveError
    from ..writes.operations import plan_batch
    from ..writes.overlay import Overlay

    why = conflict(tree, item)
    try:
        overlay = Overlay(tree._read_disk, tree.entries_under, tree.catalog.backlinks)
        planned = plan_batch(item.ops, overlay, tree._clock(), actor=ACTOR)
    except MemgroveError as exc:
        return {"changes": [], "error": why or str(exc)}
    first: dict[str, str | None] = {}
    last: dict[str, str | None] = {}
    for p in planned:       # a file two operations touch: before the first, after the last
        for c in p.record.changes():
            first.setdefault(c.path, c.before)
            last[c.path] = c.after
    return {"changes": [{"path": k, "before": first[k], "after": last[k]} for k in first], "error": why}

"""Undoing a dream run (``memgrove dream --undo [RUN]``), and settling a run that was killed.

Which run: the one named, else the newest run, whatever it did: a run that applied nothing (it
queued everything, or was killed before its batch) is named and nothing is undone; an earlier
run is undone only when named. Reaching past the newest run silently undid an earlier one when
a run was killed before its batch.

A run's record is written as it starts and, with the ids it is about to apply, before its batch
(tree/hygiene/dream.py). Killed, it stays "running" or "applying"; the next run or undo, holding the
dream lock (so the run's process is gone), settles it: "interrupted", keeping the ids the
journal holds once any interrupted batch is rolled forward (the whole batch or none of it).

What a person approved from a run's proposals (``review approve``) is linked to the run
(``dream_state.link_approved``). Undoing the run reverts its own operations and keeps those: a
person chose them, one by one. The answer lists their ids; ``with_approved`` reverts them too,
in the same batch (alone, when the run itself applied nothing or is already undone).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from . import dream_state
from ..base.errors import JournalError, OperationConflict
from ..writes.journal import utc_now_iso

if TYPE_CHECKING:
    from ..store import ContextTree

UNSETTLED = ("running", "applying", "queueing")   # what a record says while its run is alive
_ID = re.compile(rb'^\{"id": "([^"\\]+)"')          # how the journal writes a record's id first


def journaled(tree: "ContextTree", ids: list[str]) -> set[str]:
    """Which of ``ids`` the journal holds, once any batch a dead writer left is settled."""
    wanted = set(ids)
    if not wanted:
        return set()
    found: set[str] = set()
    with tree._writing():     # rolls an interrupted batch forward (or back) first
        try:
            fh = tree.journal.file.open("rb")
        except FileNotFoundError:
            return found
        with fh:
            for line in fh:
                m = _ID.match(line)
                rid = m.group(1).decode() if m else _id_of(line)
                if rid in wanted:
                    found.add(rid)
    return found


def _id_of(line: bytes) -> str | None:
    try:
        return str(json.loads(line)["id"])
    except (ValueError, KeyError, TypeError):
        return None


def settle(tree: "ContextTree", run: dict[str, Any]) -> dict[str, Any]:
    """A run's record as it stands once its dead run is accounted for (call under the dream lock)."""
    if run.get("status") not in UNSETTLED:
        return run
    planned = list(run.get("applied") or [])
    held = journaled(tree, planned)
    run = {**run, "status": "interrupted", "interrupted_while": run["status"],
           "applied": [i for i in planned if i in held], "settled": utc_now_iso(datetime.now(timezone.utc))}
    dream_state.save_run(tree.home, run, durable=tree.settings.durable)
    return run


def settle_last(tree: "ContextTree") -> dict[str, Any] | None:
    """The newest run, settled. Only it can be unsettled: each run and undo settles it first."""
    run = dream_state.last_run(tree.home)
    return None if run is None else settle(tree, run)


def _approved(tree: "ContextTree", run: dict[str, Any]) -> list[str]:
    """The ids of operations approved from ``run``'s proposals, journaled and not yet reverted by
    undoing the run, oldest first."""
    ids = [i for link in dream_state.approved_links(tree.home, run["run"]) for i in link["ops"]]
    done = set(run.get("approved_undone") or ())
    held = journaled(tree, [i for i in ids if i not in done])
    return [i for i in ids if i in held]


def label(run: dict[str, Any]) -> str:
    """How messages name a run: its id and start, and whether it was killed."""
    how = ", interrupted" if run.get("status") == "interrupted" or run.get("interrupted_while") else ""
    return f"{run['run']} (started {run.get('started', '?')}{how})"


def undo_run(tree: "ContextTree", run_id: str | None = None, *, force: bool = False,
             with_approved: bool = False) -> dict[str, Any]:
    """Revert every operation a run applied (default: the newest run), as one batch: each file is
    back to what it held before the run. ``with_approved``: also what was approved from its
    proposals. Refused, naming the files, if one changed since, unless ``force`` (what it
    overwrites stays in the journal); refused, saying why, when there is nothing to revert.
    Returns ``{"run", "started", "status", "operations", "applied", "approved", "approved_kept",
    "undo", "results"}``."""
    with dream_state.run_lock(tree.home):
        run = settle(tree, dream_state.load_run(tree.home, run_id)) if run_id else settle_last(tree)
        if run is None:
            raise JournalError("no dream run to undo: `memgrove dream` has not run in this memory")
        rid = run["run"]
        own = [] if run.get("status") == "undone" else list(run.get("applied") or [])
        approved = _approved(tree, run)
        todo = own + (approved if with_approved else [])
        if not todo:
            raise JournalError(_nothing_to_undo(tree, run, approved))
        try:
            results = tree.undo_all(todo, force=force, actor=dream_state.ACTOR)
        except OperationConflict as exc:
            hint = "" if with_approved or not approved else (
                f" ({len(approved)} operation(s) were approved from its proposals since: "
                f"`memgrove dream --undo {rid} --with-approved` reverts them with it)")
            raise OperationConflict(f"cannot undo dream run {label(run)}: {exc}{hint}") from None
        undo = [r.id for r in results if r.id]
        now = utc_now_iso(datetime.now(timezone.utc))
        record = {**run, "undo": list(run.get("undo") or []) + undo}
        if own:
            record.update(status="undone", undone_at=now)
        if with_approved and approved:
            record["approved_undone"] = list(run.get("approved_undone") or []) + approved
        dream_state.save_run(tree.home, record, durable=tree.settings.durable)
        return {"run": rid, "started": run.get("started"), "interrupted": record.get("interrupted_while") is not None,
                "status": "undone", "operations": len(todo), "applied": own,
                "approved": approved if with_approved else [], "approved_kept": [] if with_approved else approved,
                "undo": undo, "results": [r.to_dict() for r in results]}


def _nothing_to_undo(tree: "ContextTree", run: dict[str, Any], approved: list[str]) -> str:
    rid = run["run"]
    if approved:     # only without with_approved: else they would be undone
        ids = ", ".join(approved)
        what = (f"dream run {label(run)} is already undone (by {', '.join(run.get('undo') or []) or '?'})"
                if run.get("status") == "undone" else f"dream run {label(run)} applied nothing itself")
        return (f"{what}; {len(approved)} operation(s) were approved from its proposals in review ({ids}): "
                f"revert them with `memgrove dream --undo {rid} --with-approved`, or one at a time with "
                "`memgrove undo ID`, newest first")
    if run.get("status") == "undone" or run.get("approved_undone"):
        message = (f"dream run {label(run)} is already undone (by {', '.join(run.get('undo') or []) or '?'}); "
                   "earlier runs are left alone")
    else:
        why = " (it was stopped before its batch was written)" if run.get("status") == "interrupted" else ""
        message = f"dream run {label(run)} applied nothing{why}: there is nothing to undo; earlier runs are left alone"
    earlier = dream_state.last_run(tree.home, undoable=True)
    if earlier is not None:
        message += (f" (the last run that applied something is {label(earlier)}, {len(earlier['applied'])} "
                    f"operation(s): `memgrove dream --undo {earlier['run']}` undoes it)")
    return message

"""``memgrove dream``: one run of the memory's hygiene, and undoing a run.

A run scans the tree (``tree/hygiene/scan.py``: duplicates, near duplicates, superseded facts, missing
links, archive candidates), then for each candidate:

- applies what loses nothing on its own: an exact duplicate merged into one entry holding
  every source, a missing link added both ways;
- asks the model, when one is given (``decide``, graphs/dream.py), about near duplicates and
  superseded facts: its decision is applied when its confidence reaches ``review_confidence``
  and none of its operations is in ``review_ops``, else queued for review;
- queues the rest (``tree/hygiene/review.py``): archive candidates, and everything without a model or
  once the run's time budget (``dream_budget_s``) is spent; a change a person rejected before
  is left alone.

Everything applied goes in one journaled batch (each candidate all or nothing), recorded with
the run's id in ``.memgrove/dream/runs/<run>.json`` as the run starts and again, with the ids it
is about to apply, before the batch is written: a run killed at any instant is found by
``undo_run`` (tree/hygiene/dream_undo.py), which reverts that batch exactly or says the run applied
nothing. A run holds the dream lock throughout: runs never overlap.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable

from . import dream_state, review
from .dream_undo import settle_last, undo_run  # noqa: F401 - undo_run: dream's public pair
from .findings import Candidate
from ..writes.journal import tail_lines, utc_now_iso

if TYPE_CHECKING:
    from ..store import ContextTree

LOSSLESS = ("duplicate", "link")      # kinds applied without asking: nothing is lost
ASKED = ("near_duplicate", "superseded")   # kinds the model decides; the rest (archive) always waits
STATUSES = ("found", "applied", "queued", "skipped", "rejected", "failed")


@dataclass(frozen=True)
class Decision:
    """The model's decision about one candidate: ``action`` MERGE, SUPERSEDE, LINK or SKIP, the
    operations that carry it out (checked against the candidate's paths), how sure it is, why."""

    action: str
    ops: tuple[dict[str, Any], ...]
    confidence: float
    reason: str


Decide = Callable[[Candidate], "Decision | None"]   # None: no decision (the model failed): queue it


@dataclass(frozen=True)
class DreamReport:
    """A run: its id (None for ``dry_run``), one row per candidate with its ``status`` (found,
    applied, queued, skipped, rejected, failed), the ids of the operations applied."""

    run: str | None
    candidates: list[dict[str, Any]]
    applied: list[str] = field(default_factory=list)
    dry_run: bool = False
    seconds: float = 0.0
    budget_hit: bool = False
    model_calls: int = 0

    def counts(self) -> dict[str, dict[str, int]]:
        """Per kind: found, applied, queued."""
        out: dict[str, dict[str, int]] = {}
        for row in self.candidates:
            c = out.setdefault(row["kind"], {"found": 0, "applied": 0, "queued": 0})
            c["found"] += 1
            if row["status"] in ("applied", "queued"):
                c[row["status"]] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "dry_run": self.dry_run, "candidates": self.candidates,
                "applied": self.applied, "counts": self.counts(), "seconds": round(self.seconds, 3),
                "budget_hit": self.budget_hit, "model_calls": self.model_calls}


def review_ops(settings: Any) -> set[str]:
    return {o.strip().upper() for o in str(settings.review_ops).split(",") if o.strip()}


def needs_review(ops: Iterable[dict[str, Any]], confidence: float, settings: Any) -> bool:
    """A model's decision waits for a person when it is unsure or its operations are ones that wait."""
    waiting = review_ops(settings)
    return confidence < settings.review_confidence or any(str(op.get("op", "")).upper() in waiting for op in ops)


def _row(c: Candidate, status: str, **extra: Any) -> dict[str, Any]:
    """A candidate's line of the report; ``ops`` are the operations proposed (what a calling agent
    may apply through ``curate``), ``op_ids`` those applied."""
    return {"kind": c.kind, "paths": list(c.paths), "action": c.action, "reason": c.reason,
            "confidence": round(c.confidence, 3), "status": status, "key": c.key,
            "ops": [dict(op) for op in c.ops], **extra}


def _removes(ops: Iterable[dict[str, Any]]) -> list[str]:
    return [str(op["path"]) for op in ops if str(op.get("op", "")).upper() in ("MERGE", "DELETE", "ARCHIVE")]


@dataclass
class _Plan:
    """What a run decided for its candidates, before anything is written."""

    rows: list[dict[str, Any]]
    groups: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)   # to apply
    decided: dict[int, Decision] = field(default_factory=dict)                    # the model's, applied
    to_queue: list[tuple[int, dict[str, Any], str]] = field(default_factory=list)  # (i, candidate, proposed by)
    calls: int = 0
    budget_hit: bool = False


def dream(tree: "ContextTree", *, dry_run: bool = False, decide: Decide | None = None,
          candidates: list[Candidate] | None = None, budget_s: float | None = None,
          now: datetime | None = None, clock: Callable[[], float] = time.monotonic) -> DreamReport:
    """One run (see the module's docstring). ``candidates``: what to consider (default: a scan
    of the tree); ``dry_run``: only scan, nothing applied, queued or recorded."""
    started = clock()
    when = now or datetime.now(timezone.utc)
    budget = tree.settings.dream_budget_s if budget_s is None else budget_s
    durable = tree.settings.durable
    with dream_state.run_lock(tree.home):
        if not dry_run:
            settle_last(tree)       # a run killed before this one: its record says what it applied
            run_id = dream_state.new_run_id(when)
            # recorded before anything else: killed from here on, undo finds this run, not an earlier one
            record = {"run": run_id, "started": utc_now_iso(when), "status": "running", "applied": []}
            dream_state.save_run(tree.home, record, durable=durable)
        if candidates is None:
            from .scan import scan

            candidates = scan(tree, tree.settings, now=when)
        if dry_run:
            return DreamReport(None, [_row(c, "found") for c in candidates], dry_run=True, seconds=clock() - started)
        rejected = review.rejected_keys(tree.home)
        plan = _plan(tree, candidates, decide, rejected, lambda: clock() - started > budget)

        def before_write(ids: list[str]) -> None:
            dream_state.save_run(tree.home, {**record, "status": "applying", "applied": ids}, durable=durable)

        applied = _apply(tree, candidates, plan, before_write)
        record = {**record, "status": "done", "applied": applied, "budget_hit": plan.budget_hit,
                  "model_calls": plan.calls}
        if applied:   # recorded before queueing: a failure there leaves the run undoable
            dream_state.save_run(tree.home, {**record, "status": "queueing"}, durable=durable)
        _queue(tree, candidates, plan, run_id, rejected)
        last = tail_lines(tree.journal.file, 1)
        dream_state.save_run(tree.home, {**record, "finished": utc_now_iso(datetime.now(timezone.utc)),
                                         "candidates": plan.rows, "last_op": _id_of(last[0]) if last else None},
                             durable=tree.settings.durable)
        return DreamReport(run_id, plan.rows, applied, seconds=clock() - started, budget_hit=plan.budget_hit,
                           model_calls=plan.calls)


def _plan(tree: "ContextTree", candidates: list[Candidate], decide: Decide | None, rejected: set[str],
          out_of_time: Callable[[], bool]) -> _Plan:
    """Each candidate's fate: applied (lossless, or the model's sure decision), queued, skipped."""
    plan = _Plan(rows=[{} for _ in candidates])
    waiting = review.pending_keys(tree)
    gone: set[str] = set()          # entries this run merges or archives away
    # duplicates, then links, then the rest: what a merge takes away, later candidates leave alone
    rank = {kind: n for n, kind in enumerate(LOSSLESS)}
    for i in sorted(range(len(candidates)), key=lambda i: rank.get(candidates[i].kind, len(LOSSLESS))):
        c = candidates[i]
        hit = next((p for p in c.paths if p in gone), None)
        if c.key in rejected:
            plan.rows[i] = _row(c, "rejected", note="a person rejected this change before")
        elif hit is not None:
            plan.rows[i] = _row(c, "skipped", note=f"{hit} was merged or archived by this run")
        elif c.key in waiting:
            plan.rows[i] = _row(c, "queued", note="already waiting in the review queue", review_id=c.key)
        elif c.kind in LOSSLESS:
            plan.groups.append((i, [dict(op) for op in c.ops]))
            gone.update(_removes(c.ops))
        elif decide is None or c.kind not in ASKED or plan.budget_hit or out_of_time():
            plan.budget_hit = plan.budget_hit or (decide is not None and c.kind in ASKED)
            plan.to_queue.append((i, c.to_dict(), "dream"))
        else:
            plan.calls += 1
            decision = decide(c)
            if decision is None:
                plan.to_queue.append((i, c.to_dict(), "dream"))
            elif decision.action == "SKIP" or not decision.ops:
                plan.rows[i] = _row(c, "skipped", note=f"the model: {decision.reason}",
                                    confidence=round(decision.confidence, 3))
            elif needs_review(decision.ops, decision.confidence, tree.settings):
                plan.to_queue.append((i, {**c.to_dict(), "action": decision.action, "ops": list(decision.ops),
                                          "reason": decision.reason, "confidence": decision.confidence}, "model"))
            else:
                plan.groups.append((i, list(decision.ops)))
                plan.decided[i] = decision
                gone.update(_removes(decision.ops))
    return plan


def _apply(tree: "ContextTree", candidates: list[Candidate], plan: _Plan,
           before_write: Callable[[list[str]], None]) -> list[str]:
    """The planned groups as one journaled batch; the ids of the operations applied.
    ``before_write(ids)``: the ids about to be applied, before anything is written."""
    if not plan.groups:
        return []
    applied: list[str] = []
    outcomes = tree.curate_groups([ops for _, ops in plan.groups], actor=dream_state.ACTOR,
                                  before_write=lambda out: before_write([r.id for o in out for r in o.results if r.id]))
    for (i, _), outcome in zip(plan.groups, outcomes):
        d = plan.decided.get(i)
        extra = {"action": d.action, "reason": d.reason, "ops": list(d.ops),
                 "confidence": round(d.confidence, 3)} if d else {}
        if outcome.ok:
            ids = [r.id for r in outcome.results if r.id]
            applied += ids
            plan.rows[i] = {**_row(candidates[i], "applied", op_ids=ids), **extra}
        else:
            plan.rows[i] = {**_row(candidates[i], "failed", error="; ".join(outcome.errors)), **extra}
    return applied


def _queue(tree: "ContextTree", candidates: list[Candidate], plan: _Plan, run_id: str, rejected: set[str]) -> None:
    for i, cand, who in plan.to_queue:
        c = candidates[i]
        item = review.queue(tree, cand, proposed_by=who, run=run_id, rejected=rejected)
        if item is None:
            plan.rows[i] = _row(c, "rejected", note="a person rejected this change before")
        else:
            plan.rows[i] = {**_row(c, "queued", review_id=item.id), "action": cand["action"], "ops": cand["ops"],
                            "reason": cand["reason"], "confidence": round(float(cand["confidence"] or 0.0), 3)}


def _id_of(line: bytes) -> str | None:
    try:
        return str(json.loads(line)["id"])
    except (ValueError, KeyError, TypeError):
        return None

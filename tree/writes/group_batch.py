"""Planning groups of operations as one batch, each group standing or falling alone.

``memgrove dream`` and approving the review queue apply many independent changes (each
duplicate merged, each link added, each queued item) at once: one batch, one journal append,
one index update, where a batch per change would cost an index commit each. But one invalid
change (an entry a hand edit removed, a link to an entry an earlier change merged away) must
not refuse the others, as a plain batch would. So each group is planned over a child of the
batch's overlay; a group that plans cleanly joins the batch and its changes become the parent's,
one that does not is reported with its errors and leaves no trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..base.errors import BatchRejected
from .operations import OPS, OpResult, Planned, plan_batch
from .overlay import Overlay


@dataclass(frozen=True)
class GroupOutcome:
    """One group's fate: its results when it joined the batch, else the errors that kept it out."""

    results: tuple[OpResult, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def plan_groups(groups: list[list[dict[str, Any]]], overlay: Overlay, now: datetime, *, actor: str,
                allowed: tuple[str, ...] = OPS, max_bytes: int | None = None) -> tuple[list[Planned], list[GroupOutcome]]:
    """Plan every group over ``overlay`` in order; the planned operations of the groups that
    are valid (seeing the earlier valid groups' changes), and one outcome per group."""
    planned: list[Planned] = []
    outcomes: list[GroupOutcome] = []
    for ops in groups:
        child = Overlay(overlay.read, overlay.entries_under, overlay.linkers)
        try:
            kw = {} if max_bytes is None else {"max_bytes": max_bytes}
            got = plan_batch(list(ops), child, now, actor=actor, allowed=allowed, **kw)
        except BatchRejected as exc:
            outcomes.append(GroupOutcome(errors=tuple(exc.errors)))
            continue
        for path, text in child.changes.items():
            overlay.set(path, text)
        planned.extend(got)
        outcomes.append(GroupOutcome(results=tuple(p.result for p in got)))
    return planned, outcomes

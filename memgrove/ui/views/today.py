"""What a person opening the page in the morning wants first: what waits for them, what changed
since yesterday and who changed it, when dream last ran."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

from memgrove.tree.hygiene import dream_state

RECENT = 200          # the newest operations looked at (a busy day beyond that says "200+")


def summary(mem: Any, now: datetime | None = None) -> dict[str, Any]:
    now = now or datetime.now(timezone.utc)
    since = (now - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = [r for r in mem.history(limit=RECENT) if r.at >= since]
    return {"pending": len(mem.review()), "changed": len(recent), "more": len(recent) >= RECENT,
            "by": Counter(r.actor or "?" for r in recent).most_common(4), "dream": last_dream(mem)}


def last_dream(mem: Any) -> dict[str, Any] | None:
    """The newest dream run: its id, start, status and how many operations it applied."""
    last = dream_state.last_run(mem.tree.home)
    if last is None:
        return None
    return {"run": last.get("run"), "started": last.get("started"), "status": last.get("status"),
            "applied": len(last.get("applied") or [])}

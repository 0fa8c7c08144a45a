"""Dream runs when a served project is idle (``[server] dream_when_idle``, off by default).

Every ``dream_check_s`` seconds the server looks at each open project's gates
(``tree/dream_state.idle_due``: ``dream_idle_hours`` since its last run and ``dream_min_curations``
curations since) and, when they open and no write of that project is queued or running, runs
``Memory.dream`` in the project's writer queue like any write. A run that fails is logged; the
next look tries again.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any

from memgrove.tree.hygiene.dream_state import idle_due
from memgrove.tree.base.errors import MemgroveError

from .projects import Projects

log = logging.getLogger("memgrove.server")


def dream_if_due(mem: Any, budget_s: float, now: datetime | None = None) -> dict[str, Any] | None:
    """Run dream on ``mem`` when its idle gates are open; the run's report, or None."""
    s = mem.tree.settings
    due, why = idle_due(mem.home, mem.tree.journal, s.dream_idle_hours, s.dream_min_curations,
                        now or datetime.now(timezone.utc))
    if not due:
        return None
    log.info("idle dream in %s: %s", mem.home, why)
    return mem.dream(budget_s=min(s.dream_budget_s, budget_s))


async def dream_when_idle(projects: Projects, every: float) -> None:
    """Look at every open project's gates every ``every`` seconds, until cancelled."""
    while True:
        await asyncio.sleep(every)
        for home in projects.open_homes():
            served = next((sv for sv in projects.served if sv.home == home), None)
            if served is None:
                continue
            try:
                mem = projects.memory_for(served)
                if projects.writer(mem).locked():
                    continue          # busy: not idle
                await projects.write(served, lambda m: dream_if_due(m, projects.timeout / 2))
            except MemgroveError as exc:
                log.warning("idle dream in %s failed: %s", home, exc)
            except Exception:  # noqa: BLE001 - the loop must outlive one project's failure
                log.exception("idle dream in %s failed", home)

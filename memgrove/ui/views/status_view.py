"""The Status view: what the memory holds (entries, vectors ready, the index engine), its health
(``doctor``, on request: it reads every file), replication, the queries' figures, and the
server's own (process, projects open, sessions)."""

from __future__ import annotations

import os
import time
from typing import Any

from memgrove.tree.hygiene import dream_state, review

STARTED = time.time()


def memory(mem: Any, *, with_doctor: bool = False) -> dict[str, Any]:
    tree = mem.tree
    stats = mem.stats()
    vectors = stats.get("vectors") or tree.vector_state()
    rep = tree.replication
    last = dream_state.last_run(tree.home)
    out = {
        "folder": str(tree.home.parent), "engine": tree.engine.name, "entries": tree.entry_count(),
        "documents": mem.count(), "vectors": vectors, "stats": {k: v for k, v in stats.items() if k != "vectors"},
        "pending_review": len(review.pending_keys(tree)),
        "last_dream": {"run": last.get("run"), "started": last.get("started"), "status": last.get("status"),
                       "applied": len(last.get("applied") or [])} if last else None,
        "replication": rep.status() if rep is not None else None,
        "doctor": mem.doctor().to_dict() if with_doctor else None,
    }
    return out


def server(projects: Any, sessions: int, replica: Any = None) -> dict[str, Any]:
    from memgrove import __version__

    return {"pid": os.getpid(), "version": __version__, "uptime_s": round(time.time() - STARTED),
            "projects_served": len(list(projects.served)), "projects_open": len(getattr(projects, "_open", {})),
            "sessions": sessions, "replica": replica.health() if replica is not None else None}

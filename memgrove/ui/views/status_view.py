"""The Status view: what the memory holds (entries, vectors ready, the index engine), its health
(``doctor``, on request: it reads every file), replication, the queries' figures, and the
server's own (process, projects open, sessions)."""

from __future__ import annotations

import os
import time
from typing import Any

from .today import last_dream

STARTED = time.time()


def memory(mem: Any, *, with_doctor: bool = False) -> dict[str, Any]:
    tree = mem.tree
    stats = mem.stats()
    rep = tree.replication
    return {
        "folder": str(tree.home.parent), "engine": tree.engine.name, "entries": tree.entry_count(),
        "documents": mem.count(), "vectors": stats["vectors"],
        "stats": {k: v for k, v in stats.items() if k != "vectors"},
        "pending_review": len(mem.review()), "last_dream": last_dream(mem),
        "replication": rep.status() if rep is not None else None,
        "doctor": mem.doctor().to_dict() if with_doctor else None,
    }


def server(projects: Any, sessions: int, replica: Any = None) -> dict[str, Any]:
    from memgrove import __version__

    return {"pid": os.getpid(), "version": __version__, "uptime_s": round(time.time() - STARTED),
            "projects_served": len(list(projects.served)), "projects_open": len(getattr(projects, "_open", {})),
            "sessions": sessions, "replica": replica.health() if replica is not None else None}

"""What ``GET /health`` says of replication: ``role`` (``primary``, ``replica`` or ``standalone``),
the ``commit`` served and ``lag_seconds``, with the details under ``replication``.

A primary's lag is how far its remote lags it (the age of its oldest commit not pushed yet);
a replica's, how far it may lag its primary (``replica.py``). No token is needed: a load
balancer probes it, so remote URLs are shown without their credentials.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def health_fields(app: Any) -> dict[str, Any]:
    replica = getattr(app.state, "replica", None)
    if replica is not None:
        return await asyncio.to_thread(replica.health)
    mem = await app.state.projects.amemory_for()
    rep = mem.tree.replication
    if rep is None:
        return {"role": "standalone", "commit": None, "lag_seconds": None}
    status = await asyncio.to_thread(rep.status)
    return {"role": "primary", "commit": status.get("commit"), "lag_seconds": status.get("lag_seconds"),
            "replication": status}

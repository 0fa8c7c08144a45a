"""The primary's side of read replicas: where its tree is replicated, and a wait for its next push.

``GET /api/replication`` tells a replica (or anyone with the project's token) the git remote,
branch and commits; ``GET /api/replication/wait?after=<commit>`` answers once the remote's tip
is another commit than ``after`` (the primary pushed), or after ``timeout`` seconds: a replica
holds one such request and follows at once, instead of polling the remote.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from .errors import NotFound
from .routes import P, Proj

router = APIRouter(prefix="/api", tags=["replication"])


async def _replication(p: Any, proj: Any) -> Any:
    mem = await p.amemory_for(proj)
    rep = mem.tree.replication
    if rep is None:
        raise NotFound("this memory is not replicated: set [replication] remote in its config.toml to serve replicas")
    return rep


@router.get("/replication")
async def replication(p: P, proj: Proj) -> dict[str, Any]:
    """The remote a replica clones and follows (with its credentials, if its URL has any: the caller holds the token)."""
    rep = await _replication(p, proj)
    status = await asyncio.to_thread(rep.status)
    # "project": the project it replicates, which a replica names in every write it forwards
    return {"remote": rep.remote, "branch": rep.settings.branch, "commit": status.get("commit"),
            "pushed": rep.pushed_head, "project": str(proj.folder)}


@router.get("/replication/wait")
async def wait(p: P, proj: Proj, request: Request, after: str = "",
               timeout: Annotated[float, Query(ge=0, le=60)] = 20.0) -> dict[str, Any]:
    """Answer once the remote's tip is not ``after`` (the primary pushed), or after ``timeout`` s
    (at once when the server is stopping: a held wait must not hold up its graceful stop)."""
    rep = await _replication(p, proj)
    stopping = getattr(request.app.state, "stopping", None)
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline and not (stopping and stopping.is_set()):
        if rep.pushed_head and rep.pushed_head != after:
            break
        await asyncio.sleep(0.05)
    return {"pushed": rep.pushed_head}

"""The owner's routes: add a project to a running server (``memgrove serve --add DIR``).

Only the owner token reaches them (``.memgrove/server.owner-token`` of the server's own
project, 0600, new at each start, never given to a client), with or without ``--no-auth``;
no project's token does, so an agent holding one cannot widen what the server serves. The
owner token reaches no project either.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from .errors import Unauthorized
from .served import OWNER, caller_of


def _owner_only(request: Request) -> None:
    if caller_of(request.scope) != OWNER:
        raise Unauthorized("this route needs the owner token, in the server's .memgrove/server.owner-token")


owner_router = APIRouter(prefix="/owner", tags=["owner"], dependencies=[Depends(_owner_only)])


class AddProject(BaseModel):
    project: str = Field(min_length=1, max_length=4096, description="the project folder (absolute)")


def _described(served: Any) -> dict[str, Any]:
    return {"project": str(served.folder), "token_file": str(served.token_file) if served.token_file else None}


@owner_router.get("/projects")
async def list_projects(request: Request) -> dict[str, Any]:
    """The projects this server serves, the server's own first."""
    return {"projects": [_described(s) for s in request.app.state.projects.served]}


@owner_router.post("/projects")
async def add_project(request: Request, body: AddProject) -> dict[str, Any]:
    """Serve one more project: it gets its own token, in its ``.memgrove/server.token``."""
    served = await asyncio.to_thread(request.app.state.projects.served.add_folder, body.project)
    return _described(served)

"""What a graph or tool running on another machine reads of the tree (``memgrove/remote/memory.py``'s
``RemoteTree``): the settings it decides with, the fingerprint answers are cached under, the
engine's analysis of a question, and the entries an answer delivered. No logic of their own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from .routes import P, Proj

tree_router = APIRouter(prefix="/api", tags=["tree"])


class TextBody(BaseModel):
    text: str


class TermsBody(BaseModel):
    terms: list[str] = Field(max_length=10_000)


class PathsBody(BaseModel):
    paths: list[str] = Field(max_length=1_000)


class QueueBody(BaseModel):
    operations: list[dict[str, Any]] = Field(min_length=1)
    proposed_by: str = "model"


def _queue(m: Any, body: QueueBody) -> dict[str, Any]:
    from memgrove.tree.hygiene import review

    item = review.queue(m.tree, review.proposal(body.operations), proposed_by=body.proposed_by)
    return {"item": item.to_dict() if item is not None else None}


def _settings(m: Any) -> dict[str, Any]:
    from memgrove.graphs.settings import load_query_settings

    return {"engine": m.tree.engine.name, "tree": dataclasses.asdict(m.tree.settings),
            "query": dataclasses.asdict(load_query_settings(m.tree.home))}


@tree_router.get("/settings")
async def settings(p: P, proj: Proj) -> dict[str, Any]:
    """The tree's settings (``[tree]``) and the query pipeline's (``[query]``), as in effect."""
    return await p.read(proj, _settings)


@tree_router.get("/fingerprint")
async def fingerprint(p: P, proj: Proj) -> dict[str, Any]:
    """The tree's fingerprint (its files and ranking settings), its number of entries and of indexed
    documents (entries and folder overviews)."""
    return await p.read(proj, lambda m: {"fingerprint": m.tree.fingerprint(), "entries": m.tree.entry_count(),
                                         "documents": m.count()})


@tree_router.post("/analysis/terms")
async def terms(p: P, proj: Proj, body: TextBody) -> dict[str, Any]:
    """The words the engine indexes ``text`` by (its analyzer)."""
    return await p.read(proj, lambda m: {"terms": m.tree.engine.terms(body.text)})


@tree_router.post("/analysis/idf")
async def idf(p: P, proj: Proj, body: TermsBody) -> dict[str, Any]:
    """The inverse document frequency of each term in the index."""
    return await p.read(proj, lambda m: {"idf": m.tree.engine.idf(body.terms)})


@tree_router.post("/delivered")
async def delivered(p: P, proj: Proj, body: PathsBody) -> dict[str, Any]:
    """Entries given to a user or an agent as evidence: they gain importance (``record_delivery``)."""
    await p.read(proj, lambda m: m.tree.record_delivery(body.paths))
    return {"recorded": len(body.paths)}


@tree_router.post("/review/queue")
async def review_queue(p: P, proj: Proj, body: QueueBody, request: Request) -> dict[str, Any]:
    """Operations a model decided that wait for a person (the LLM curator's ``review_ops``): the
    queued item, or null when a person rejected the same change before."""
    return await p.write(proj, lambda m: _queue(m, body), gone=request.is_disconnected)

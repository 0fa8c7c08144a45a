"""LangGraph's ``BaseStore`` over HTTP: ``POST /api/store/batch``, what ``ContextTreeStore(url=...)``
(``memgrove/store/remote.py``) sends.

One route, as ``BaseStore`` has one seam (``batch``): a list of get / put / search /
list_namespaces operations in, their results out in the same order. The batch runs as
``ContextTreeStore.batch`` runs in-process (reads see the tree as it was before the batch; its
puts and deletes are one curate batch). A batch holding a put or delete queues in the project's
writer queue and is cancelled before its commit point when its client goes or its time runs out,
as ``/api/curate`` is; a batch of reads runs concurrently with everything. Authentication, the
project a request reaches and the body limit are the guard's, as for every route.

Items come back as ``Item.dict()`` gives them (``namespace``, ``key``, ``value``, ``created_at``,
``updated_at`` in ISO 8601, and ``score`` for a search's). LangGraph's own refusals become
errors with codes of their own, which the client raises again as LangGraph's exceptions:
``invalid_namespace`` (``InvalidNamespaceError``) and ``not_supported`` (``NotImplementedError``,
a TTL).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from memgrove.store.errors import InvalidNamespace, NotSupported

from .routes import P, Proj

MAX_LIMIT = 1000     # the most items one search or listing answers (a page: use offset for more)


class GetBody(BaseModel):
    op: Literal["get"]
    namespace: list[str]
    key: str


class PutBody(BaseModel):
    op: Literal["put"]
    namespace: list[str]
    key: str
    value: dict[str, Any] | None = Field(description="the item's value; null deletes the item")
    index: Literal[False] | list[str] | None = Field(None, description="the fields searched; false: none")
    ttl: float | None = Field(None, description="refused when set: the tree keeps items until deleted")


class SearchBody(BaseModel):
    op: Literal["search"]
    namespace_prefix: list[str] = Field(default_factory=list)
    query: str | None = None
    filter: dict[str, Any] | None = None
    limit: int = Field(10, ge=0, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


class Condition(BaseModel):
    match_type: Literal["prefix", "suffix"]
    path: list[str]


class ListBody(BaseModel):
    op: Literal["list_namespaces"]
    match_conditions: list[Condition] = Field(default_factory=list)
    max_depth: int | None = Field(None, ge=1)
    limit: int = Field(100, ge=0, le=MAX_LIMIT)
    offset: int = Field(0, ge=0)


OpBody = Annotated[Union[GetBody, PutBody, SearchBody, ListBody], Field(discriminator="op")]


class BatchBody(BaseModel):
    ops: list[OpBody] = Field(description="get / put / search / list_namespaces operations, answered in order")
    index: list[str] | None = Field(None, description="the value fields a put searches when it does not say "
                                                      "(default: every top-level text field)")


def to_op(body: BaseModel) -> Any:
    """A LangGraph ``Op`` from its JSON form."""
    from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

    if isinstance(body, GetBody):
        return GetOp(tuple(body.namespace), body.key)
    if isinstance(body, PutBody):
        index = body.index if body.index is None or body.index is False else list(body.index)
        return PutOp(tuple(body.namespace), body.key, body.value, index=index, ttl=body.ttl)
    if isinstance(body, SearchBody):
        return SearchOp(tuple(body.namespace_prefix), body.filter, body.limit, body.offset, body.query)
    assert isinstance(body, ListBody)
    conditions = tuple(MatchCondition(c.match_type, tuple(c.path)) for c in body.match_conditions)
    return ListNamespacesOp(conditions, body.max_depth, body.limit, body.offset)


def result_json(result: Any) -> Any:
    """A result as JSON: an item's ``dict()``, a list of them, a list of namespaces, or null."""
    if result is None:
        return None
    if isinstance(result, list):
        return [list(r) if isinstance(r, tuple) else r.dict() for r in result]
    return result.dict()


def run_batch(mem: Any, ops: list[Any], index: list[str] | None) -> list[Any]:
    """``ContextTreeStore.batch`` over the served memory, LangGraph's refusals made ``MemgroveError``s."""
    from langgraph.store.base import InvalidNamespaceError

    from memgrove.store.tree_store import ContextTreeStore

    try:
        return [result_json(r) for r in ContextTreeStore(mem, index=index).batch(ops)]
    except InvalidNamespaceError as exc:
        raise InvalidNamespace(str(exc)) from None
    except NotImplementedError as exc:
        raise NotSupported(str(exc)) from None


store_router = APIRouter(prefix="/api/store", tags=["store"])


@store_router.post("/batch")
async def batch(p: P, proj: Proj, body: BatchBody, request: Request) -> Response:
    """LangGraph ``BaseStore.batch``: the operations' results in order (null for a put)."""
    from langgraph.store.base import PutOp

    ops = [to_op(o) for o in body.ops]
    if any(isinstance(op, PutOp) for op in ops):
        results = await p.write(proj, lambda m: run_batch(m, ops, body.index), gone=request.is_disconnected)
    else:
        results = await p.read(proj, lambda m: run_batch(m, ops, body.index))
    # json.dumps, not FastAPI's encoder: values are JSON already, and big ones cost it milliseconds
    return Response(json.dumps({"results": results}, ensure_ascii=False), media_type="application/json")

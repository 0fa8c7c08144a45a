"""The REST API: one route per ``Memory`` method, no logic of its own.

Every route but ``/health`` takes the project from the ``X-Memgrove-Project`` header or
``?project=`` (default: the project of the request's token; the server's own without
authentication); ``ServedProjects.choose`` refuses a project not served, or another's token.
Reads run concurrently in threads; writes (curate, ingest, undo, doctor --fix) queue per
project, and are cancelled before their commit point when their client goes
(``request.is_disconnected``) or their time runs out. Errors are ``{"error": {"code",
"message"}}`` (``errors.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from pydantic import BaseModel, Field

from .ingest_paths import inside_project
from .projects import Projects
from .served import Served, caller_of

Project = Annotated[str | None, Header(alias="X-Memgrove-Project", description="project folder (default: the server's)")]
ProjectParam = Annotated[str | None, Query(alias="project", description="project folder, instead of the header")]


def projects(request: Request) -> Projects:
    return request.app.state.projects


def project(request: Request, header: Project = None, param: ProjectParam = None) -> Served:
    return projects(request).served.choose(header or param, caller_of(request.scope))


P = Annotated[Projects, Depends(projects)]
Proj = Annotated[Served, Depends(project)]


class CurateBody(BaseModel):
    # items are the library's to check: one that is not an object gets its message, as in the CLI
    operations: list[Any] = Field(description="ADD/UPDATE/UPSERT/MERGE/DELETE/SUPERSEDE/ARCHIVE/RESTORE operations, "
                                              "each with a reason; "
                                                         "applied all or nothing")
    actor: str = "api"
    allowed: list[str] | None = Field(None, description="the operations this batch may use (default: all)")


class Document(BaseModel):
    name: str = Field(description="the file's name; .md files become one entry per section")
    text: str


class IngestBody(BaseModel):
    text: str | None = None
    files: list[Document] = Field(default_factory=list, description="files' contents (an empty one is skipped)")
    paths: list[str] = Field(default_factory=list,
                             description="files and folders inside the project, read as `curate -f` reads them")
    exclude: list[str] = Field(default_factory=list, description="gitignore-style patterns left out of folders")
    # any shape the CLI and Memory.ingest take: an object, a list of messages, an export
    conversation: dict[str, Any] | list[Any] | None = Field(
        None, description='{"id", "messages": [...]}, a list of messages, a ChatGPT or Claude export')
    system: bool = Field(False, description="keep system prompts (skipped and counted by default)")
    window: int = Field(1, ge=1, le=100)


class QueryBody(BaseModel):
    # an empty question is the library's to refuse, with the message the CLI prints in-process
    question: str


class UndoBody(BaseModel):
    id: str = Field(min_length=1)
    force: bool = False
    actor: str = "api"


class DreamBody(BaseModel):
    dry_run: bool = Field(False, description="only scan: the candidates, nothing changed")
    undo: str | None = Field(None, description='revert a run instead: its id, or "" for the newest run')
    force: bool = Field(False, description="with undo: revert even if files changed since")
    with_approved: bool = Field(False, description="with undo: also revert what was approved from the run's proposals")
    use_model: bool = Field(True, description="false: queue what the model would decide, without asking it")


class ReviewDecision(BaseModel):
    id: str | None = Field(None, description="the review item (or 4+ characters of its id)")
    all: bool = Field(False, description="every pending item instead")


def _results(results: list) -> dict[str, Any]:
    out: dict[str, Any] = {"results": [dataclasses.asdict(r) for r in results]}
    if getattr(results, "skipped", None):
        out["skipped"] = results.skipped          # Memory.ingest's IngestResult: what was left out
    return out


router = APIRouter(prefix="/api", tags=["memory"])
health_router = APIRouter(tags=["server"])


@health_router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """Is the server up, its replication role, commit and lag, and how far its project's vectors are
    (``vectors``: ``ContextTree.vector_state``: with the embedder's model loaded, how many entries
    have their vector, counted without reading an entry; never loading the model). Never
    needs the token; clients probe it."""
    from memgrove import __version__

    from .replica_status import health_fields

    mem = await request.app.state.projects.amemory_for()
    return {"status": "ok", "pid": os.getpid(), "version": __version__,
            "project": str(request.app.state.projects.default), **await health_fields(request.app),
            "vectors": await asyncio.to_thread(mem.tree.vector_state)}


@router.get("/tree")
async def tree(p: P, proj: Proj, folder: str = "", offset: Annotated[int, Query(ge=0)] = 0,
               limit: Annotated[int | None, Query(ge=0)] = None) -> dict[str, Any]:
    """A folder's title, overview, subfolders (with entry counts) and entries; the top without ``folder``;
    ``limit`` children from ``offset`` (``next``: the next page's offset)."""
    return await p.read(proj, lambda m: m.list(folder, offset=offset, limit=limit))


@router.get("/entries/{path:path}")
async def read_entry(p: P, proj: Proj, path: str) -> dict[str, Any]:
    """One entry: its text, title, summary, links, backlinks and sources."""
    return await p.read(proj, lambda m: m.show(path))


@router.get("/search")
async def search(p: P, proj: Proj, q: Annotated[str, Query()],
                 limit: Annotated[int, Query(ge=1, le=200)] = 10,
                 include_archived: Annotated[bool, Query()] = False,
                 exact: Annotated[bool, Query()] = False) -> dict[str, Any]:
    """BM25F search (no LLM); ``include_archived`` searches the archived entries too; ``exact``
    gives every field of each hit, scores unrounded (what ``Memory.connect``'s search returns)."""
    hits = await p.read(proj, lambda m: m.search(q, limit=limit, include_archived=include_archived))
    return {"query": q, "hits": [dataclasses.asdict(h) if exact else h.to_dict() for h in hits]}


@router.post("/query")
async def query(p: P, proj: Proj, body: QueryBody) -> dict[str, Any]:
    """Answer through the five tiers; the same dict as ``Memory.query(q).to_dict()``."""
    answer = await p.read(proj, lambda m: m.query(body.question))
    return answer.to_dict()


@router.post("/curate")
async def curate(p: P, proj: Proj, body: CurateBody, request: Request) -> dict[str, Any]:
    """Apply explicit operations, all or nothing."""
    allowed = {} if body.allowed is None else {"allowed": tuple(str(a).upper() for a in body.allowed)}
    return _results(await p.write(proj, lambda m: m.curate(body.operations, actor=body.actor, **allowed),
                                  gone=request.is_disconnected))


@router.post("/ingest")
async def ingest(p: P, proj: Proj, body: IngestBody, request: Request) -> dict[str, Any]:
    """Curate text, files' contents and/or a conversation with the verbatim curator (no LLM)."""
    docs = [(d.name, d.text) for d in body.files]
    paths = [inside_project(proj.folder, p) for p in body.paths]
    return _results(await p.write(proj, lambda m: m.ingest(text=body.text, conversation=body.conversation,
                                                            window=body.window, documents=docs, files=paths,
                                                            exclude=body.exclude, system=body.system),
                                  gone=request.is_disconnected))


@router.get("/history")
async def history(p: P, proj: Proj, limit: Annotated[int, Query(ge=0)] = 50, path: str | None = None,
                  page: bool = False, kinds: str = "", before: Annotated[int | None, Query(ge=0)] = None) -> dict[str, Any]:
    """Curate operations, newest first (``limit=0``: all). ``page``: a page read from the journal's end in
    bounded time (``Memory.history_page``), of ``kinds`` (op names, comma-separated), older than ``before``
    (an earlier page's ``next``)."""
    if not page:
        records = await p.read(proj, lambda m: m.history(limit=limit or None, path=path))
        return {"operations": [r.to_listing() for r in records]}     # `memgrove history --json`'s shape
    got = await p.read(proj, lambda m: m.history_page(limit or None, path=path, before=before,
                                                      kinds=[k.strip() for k in kinds.split(",") if k.strip()]))
    return {"operations": [r.to_listing() for r in got.records], "next": got.next}


@router.post("/undo")
async def undo(p: P, proj: Proj, body: UndoBody, request: Request) -> dict[str, Any]:
    """Restore what one operation changed (409 when the files changed since, unless ``force``)."""
    return dataclasses.asdict(await p.write(proj, lambda m: m.undo(body.id, force=body.force, actor=body.actor),
                                            gone=request.is_disconnected))


class VectorsBody(BaseModel):
    paths: list[str] | None = Field(None, description="entries another process wrote (default: look at every entry)")


@router.post("/vectors/ahead")
async def vectors_ahead(p: P, proj: Proj, body: VectorsBody) -> dict[str, Any]:
    """Entries another process wrote (a CLI command beside this server): their missing vectors are
    computed by this server's background embedder (``ContextTree.vectors_ahead``). Harmless to repeat."""
    return await p.read(proj, lambda m: m.tree.vectors_ahead(body.paths))


@router.get("/stats")
async def stats(p: P, proj: Proj) -> dict[str, Any]:
    """Tier distribution and latency percentiles of the queries asked so far."""
    return await p.read(proj, lambda m: m.stats())


@router.get("/doctor")
async def doctor(p: P, proj: Proj) -> dict[str, Any]:
    """Check that files, index and journal agree."""
    return (await p.read(proj, lambda m: m.doctor())).to_dict()


@router.post("/doctor/fix")
async def doctor_fix(p: P, proj: Proj, request: Request) -> dict[str, Any]:
    """Repair what is derived (index, context files, temp files); a write, queued like curations."""
    return (await p.write(proj, lambda m: m.doctor(fix=True), gone=request.is_disconnected)).to_dict()


@router.post("/dream")
async def dream(p: P, proj: Proj, body: DreamBody, request: Request) -> dict[str, Any]:
    """One dream run (``Memory.dream``): duplicates and links applied, the rest decided by the
    server's model or queued; ``dry_run`` only scans, ``undo`` reverts a run. The model's time is
    kept within half the request's (``request_timeout``); what it had no time for is queued."""
    if body.undo is not None:
        return await p.write(proj, lambda m: m.dream(undo=body.undo or True, force=body.force,
                                                         with_approved=body.with_approved),
                             gone=request.is_disconnected)
    return await p.write(proj, lambda m: m.dream(dry_run=body.dry_run, use_model=body.use_model, budget_s=min(
        m.tree.settings.dream_budget_s, p.timeout / 2)), gone=request.is_disconnected)


@router.get("/review")
async def review(p: P, proj: Proj) -> dict[str, Any]:
    """The review queue: every pending change, oldest first."""
    return {"items": await p.read(proj, lambda m: m.review())}


@router.get("/review/{item_id}")
async def review_show(p: P, proj: Proj, item_id: str) -> dict[str, Any]:
    """One pending change."""
    return await p.read(proj, lambda m: m.review_show(item_id))


@router.post("/review/approve")
async def review_approve(p: P, proj: Proj, body: ReviewDecision, request: Request) -> dict[str, Any]:
    """Apply a pending change (or ``all``) as one journaled batch; 409 if its files changed since."""
    return await p.write(proj, lambda m: m.review_approve(body.id, all=body.all), gone=request.is_disconnected)


@router.post("/review/reject")
async def review_reject(p: P, proj: Proj, body: ReviewDecision, request: Request) -> dict[str, Any]:
    """Drop a pending change (or ``all``); dream does not propose it again."""
    return await p.write(proj, lambda m: m.review_reject(body.id, all=body.all), gone=request.is_disconnected)

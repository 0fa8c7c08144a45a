"""The pages that change the memory: Journal (undo), Review (approve, reject), dream (run, undo).

Every change is a POST with the page's CSRF token (``auth.check_change``), runs as the same
``Memory`` call the CLI and the REST API make, queued like theirs (``Projects.write``: one
write of a project at a time, cancelled before its commit point if its client goes), journaled
as the CLI journals it (an undo or a restore with the actor ``web``; approvals are ``review``'s, a
run ``dream``'s, as from the CLI), and answers with a redirect to the page it came from (post/redirect/get)
carrying what happened as a notice."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import Response

from memgrove.tree.base.errors import MemgroveError

from .auth import after_change, check_change, ui_page
from .render import Page, page
from .views import changes_view, review_view

ACTOR = "web"
router = APIRouter(prefix="/ui", include_in_schema=False)
UI = Annotated[Page, Depends(ui_page)]
Csrf = Annotated[str, Form(max_length=200)]
Back = Annotated[str, Form(alias="next", max_length=2000)]


def projects(request: Request) -> Any:
    return request.app.state.projects


@router.get("/journal")
async def journal(request: Request, ui: UI, kind: str = "", folder: str = "",
                  before: Annotated[int | None, Query(ge=0)] = None) -> Response:
    view = await projects(request).read(ui.project, lambda m: changes_view.journal(m, kind=kind, folder=folder,
                                                                                     before=before))
    return page("journal.html", ui, view=view, nav="journal")


@router.get("/fragment/operation")
async def operation_fragment(request: Request, ui: UI, id: Annotated[str, Query(min_length=1, max_length=200)],
                             at: Annotated[int | None, Query(ge=0)] = None) -> Response:
    """One operation's diffs, for the script to put under the journal row opened (``at``: where its
    line starts, as the journal's page said; else it is looked for from the journal's end)."""
    op = await projects(request).read(ui.project, lambda m: changes_view.find(m, id, at))
    return page("operation.html", ui, op=op)


@router.get("/operation")
async def operation(request: Request, ui: UI, id: Annotated[str, Query(min_length=1, max_length=200)]) -> Response:
    op = await projects(request).read(ui.project, lambda m: changes_view.find(m, id))
    return page("operation_page.html", ui, op=op, nav="journal")


@router.post("/undo")
async def undo(request: Request, ui: UI, id: Annotated[str, Form(min_length=1, max_length=200)],
               csrf: Csrf = "", force: Annotated[bool, Form()] = False, next: Back = "") -> Response:
    check_change(request, ui, csrf)
    try:
        done = await projects(request).write(ui.project, lambda m: m.undo(id, force=force, actor=ACTOR),
                                             gone=request.is_disconnected)
    except MemgroveError as exc:
        return after_change(request, ui, "error", f"undo {id}: {exc}", next or ui.url("/ui/journal"))
    return after_change(request, ui, "ok", f"undo {id}: {done.status} {done.path} — {done.message}",
                        next or ui.url("/ui/journal"))


@router.post("/restore")
async def restore(request: Request, ui: UI, path: Annotated[str, Form(min_length=1, max_length=4096)],
                  csrf: Csrf = "") -> Response:
    """An archived entry back into the tree (``memgrove restore``: a journaled RESTORE)."""
    check_change(request, ui, csrf)
    try:
        done = await projects(request).write(ui.project, lambda m: m.restore(path, actor=ACTOR),
                                             gone=request.is_disconnected)
    except MemgroveError as exc:
        return after_change(request, ui, "error", f"restore {path}: {exc}", ui.url("/ui/archive"))
    return after_change(request, ui, "ok", f"{done.message} [{done.id}]", ui.entry_link(path))


@router.get("/review")
async def review(request: Request, ui: UI, page_no: Annotated[int, Query(alias="page", ge=0)] = 0) -> Response:
    view = await projects(request).read(ui.project, lambda m: review_view.page(m, page_no))
    return page("review.html", ui, view=view, nav="review")


@router.get("/fragment/review")
async def review_item(request: Request, ui: UI, id: Annotated[str, Query(min_length=1, max_length=200)]) -> Response:
    """What one pending change would write, for the script to put under the item opened."""
    it = await projects(request).read(ui.project, lambda m: review_view.one(m, id))
    return page("review_diffs.html", ui, it=it)


async def _decide(request: Request, ui: UI, how: str, item: str, every: bool, csrf: str) -> Response:
    check_change(request, ui, csrf)
    call = (lambda m: m.review_approve(item or None, all=every)) if how == "approve" else \
        (lambda m: m.review_reject(item or None, all=every))
    what = "every pending change" if every else f"review item {item}"
    try:
        out = await projects(request).write(ui.project, call, gone=request.is_disconnected)
    except MemgroveError as exc:
        return after_change(request, ui, "error", f"{how} {what}: {exc}", ui.url("/ui/review"))
    return after_change(request, ui, "ok", review_view.decided(how, what, out), ui.url("/ui/review"))


@router.post("/review/approve")
async def approve(request: Request, ui: UI, id: Annotated[str, Form(max_length=200)] = "",
                  all: Annotated[bool, Form()] = False, csrf: Csrf = "") -> Response:
    return await _decide(request, ui, "approve", id, all, csrf)


@router.post("/review/reject")
async def reject(request: Request, ui: UI, id: Annotated[str, Form(max_length=200)] = "",
                 all: Annotated[bool, Form()] = False, csrf: Csrf = "") -> Response:
    return await _decide(request, ui, "reject", id, all, csrf)


@router.post("/dream")
async def dream(request: Request, ui: UI, csrf: Csrf = "") -> Response:
    """One dream run, as ``POST /api/dream`` runs it (the model's time within half the request's)."""
    check_change(request, ui, csrf)
    p = projects(request)
    try:
        out = await p.write(ui.project, lambda m: m.dream(budget_s=min(m.tree.settings.dream_budget_s, p.timeout / 2)),
                            gone=request.is_disconnected)
    except MemgroveError as exc:
        return after_change(request, ui, "error", f"dream: {exc}", ui.url("/ui/review"))
    return after_change(request, ui, "ok", review_view.dreamt(out), ui.url("/ui/review"))


@router.post("/dream/undo")
async def dream_undo(request: Request, ui: UI, run: Annotated[str, Form(min_length=1, max_length=100)],
                     csrf: Csrf = "", force: Annotated[bool, Form()] = False) -> Response:
    check_change(request, ui, csrf)
    try:
        out = await projects(request).write(ui.project, lambda m: m.dream(undo=run, force=force),
                                            gone=request.is_disconnected)
    except MemgroveError as exc:
        return after_change(request, ui, "error", f"undo dream run {run}: {exc}", ui.url("/ui/review"))
    return after_change(request, ui, "ok", f"undid dream run {out.get('run')}: {out.get('operations', 0)} "
                        "operation(s) reverted", ui.url("/ui/review"))

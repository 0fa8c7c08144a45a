"""The pages that read: Tree (and a folder's children for the script), Entry, Search and ask,
Status, the static files. Each route reads through ``Projects.read`` (a thread, a lease) and
renders; the views hold the logic."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import FileResponse, RedirectResponse, Response

from memgrove.server.errors import NotFound
from memgrove.tree.base.question_bound import MAX_QUESTION_CHARS

from .auth import check_change, sessions, ui_page
from .render import HEADERS, Page, page
from .views import entry_view, search_view, status_view, today, tree_view

STATIC = Path(__file__).parent / "static"
STATIC_FILES = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8",
                "icon.svg": "image/svg+xml"}

router = APIRouter(prefix="/ui", include_in_schema=False)
UI = Annotated[Page, Depends(ui_page)]


def projects(request: Request) -> Any:
    return request.app.state.projects


@router.get("")
@router.get("/")
async def home(ui: UI) -> Response:
    return RedirectResponse(ui.url("/ui/tree"), status_code=303, headers=dict(HEADERS))


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC_FILES:
        raise NotFound(f"no file {name[:100]!r} in the page's assets")
    return FileResponse(STATIC / name, media_type=STATIC_FILES[name],
                        headers={"cache-control": "max-age=3600", "x-content-type-options": "nosniff"})


@router.get("/tree")
async def tree(request: Request, ui: UI, folder: str = "", page_no: Annotated[int, Query(alias="page", ge=0)] = 0) -> Response:
    view = await projects(request).read(ui.project, lambda m: tree_view.folder(m, folder, page_no))
    now = None if folder or page_no else await projects(request).read(ui.project, today.summary)
    return page("tree.html", ui, view=view, today=now, nav="tree")


@router.get("/fragment/folder")
async def folder_fragment(request: Request, ui: UI, folder: str = "",
                          page_no: Annotated[int, Query(alias="page", ge=0)] = 0) -> Response:
    """A folder's children, for the script to put under the folder opened in place."""
    view = await projects(request).read(ui.project, lambda m: tree_view.folder(m, folder, page_no))
    return page("folder_children.html", ui, view=view)


@router.get("/archive")
async def archive(request: Request, ui: UI, page_no: Annotated[int, Query(alias="page", ge=0)] = 0) -> Response:
    view = await projects(request).read(ui.project, lambda m: tree_view.archive(m, page_no))
    return page("archive.html", ui, view=view, nav="tree")


@router.get("/entry/{path:path}")
async def entry(request: Request, ui: UI, path: str) -> Response:
    view = await projects(request).read(ui.project, lambda m: entry_view.entry(m, path, ui.entry_link))
    return page("entry.html", ui, view=view, nav="tree")


@router.get("/search")
async def search(request: Request, ui: UI, q: Annotated[str, Query(max_length=MAX_QUESTION_CHARS)] = "",
                 archived: bool = False) -> Response:
    view = await projects(request).read(ui.project, lambda m: search_view.hits(m, q, include_archived=archived))
    return page("search.html", ui, view=view, answer=None, nav="search")


@router.post("/ask")
async def ask(request: Request, ui: UI, q: Annotated[str, Form(max_length=MAX_QUESTION_CHARS)] = "",
              csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    """A question through the five tiers, as ``query`` answers it (a POST: asking counts in the
    stats and the cache, and the entries it delivers gain importance). The answer shows its
    evidence; the hits of a search for the same words are one click away (not run here: a second
    search doubled what asking cost at 100,000 entries)."""
    check_change(request, ui, csrf)
    answer = await projects(request).read(ui.project, lambda m: search_view.answer(m, q, ui.entry_link))
    return page("search.html", ui, view={"q": q.strip(), "hits": None, "archived": False}, answer=answer,
                nav="search")


@router.get("/status")
async def status(request: Request, ui: UI, doctor: bool = False) -> Response:
    view = await projects(request).read(ui.project, lambda m: status_view.memory(m, with_doctor=doctor))
    server = status_view.server(projects(request), len(sessions(request)), getattr(request.app.state, "replica", None))
    return page("status.html", ui, view=view, server=server, nav="status")

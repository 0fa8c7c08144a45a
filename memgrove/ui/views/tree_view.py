"""The Tree view: a folder's overview, its subfolders with their counts, a page of its entries
with title, summary, tags, dates and validity."""

from __future__ import annotations

from typing import Any

from memgrove.tree.index.listing import entry_row
from memgrove.tree.writes.archive import archive_root

from . import PAGE


def crumbs(path: str) -> list[dict[str, str]]:
    """The folders from the top to ``path``: ``[{"path", "name"}]``."""
    out, parts = [], [p for p in path.split("/") if p]
    for i, name in enumerate(parts):
        out.append({"path": "/".join(parts[: i + 1]), "name": name})
    return out


def shown_row(row: dict[str, Any]) -> dict[str, Any]:
    """A listing's row (``tree/index/listing.entry_row``) with every field the templates read."""
    blank = {"title": "", "summary": "", "tags": [], "created": "", "updated": "", "superseded_by": "",
             "valid_until": "", "error": ""}
    return {**blank, **row, "tags": (row.get("tags") or [])[:8], "valid_until": row.get("valid_until") or ""}


def folder(mem: Any, path: str = "", page: int = 0) -> dict[str, Any]:
    """A folder: title, overview, subfolders (path, title, entries) and page ``page`` of its children
    (``Memory.list`` reads only the page's entries)."""
    page = max(0, page)
    listing = mem.list(path, offset=page * PAGE, limit=PAGE)
    rows = [shown_row(e) for e in listing["entries"]]
    return {"path": listing["path"], "title": listing["title"], "overview": listing["overview"],
            "folders": listing["folders"], "entries": rows, "total": listing["total_entries"], "page": page,
            "more": listing["next"] is not None, "crumbs": crumbs(listing["path"]),
            "remaining": max(0, listing["total_folders"] + listing["total_entries"] - (page + 1) * PAGE)}


def archive(mem: Any, page: int = 0) -> dict[str, Any]:
    """The archived entries (``.memgrove/archive/``), a page of them with what each was."""
    paths = mem.tree.archived()      # found in the archive itself: its files, by their tree paths
    page = max(0, page)
    root = archive_root(mem.tree.home)
    rows = [shown_row(entry_row(root / p, p)) for p in paths[page * PAGE:(page + 1) * PAGE]]
    return {"entries": rows, "total": len(paths), "page": page, "more": (page + 1) * PAGE < len(paths)}

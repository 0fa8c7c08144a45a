"""The Tree view: a folder's overview, its subfolders with their counts, a page of its entries
with title, summary, tags, dates and validity."""

from __future__ import annotations

from typing import Any

from memgrove.tree.base.errors import EntryNotFound, InvalidEntry
from memgrove.tree.entries import entry as entry_mod, validity
from memgrove.tree.writes.archive import read_archived

from . import PAGE


def crumbs(path: str) -> list[dict[str, str]]:
    """The folders from the top to ``path``: ``[{"path", "name"}]``."""
    out, parts = [], [p for p in path.split("/") if p]
    for i, name in enumerate(parts):
        out.append({"path": "/".join(parts[: i + 1]), "name": name})
    return out


def entry_row(tree: Any, path: str, title: str = "", summary: str = "", *, archived: bool = False) -> dict[str, Any]:
    """One entry as a list shows it (its file read for tags, dates and validity; ``archived``: its
    copy in the archive)."""
    row: dict[str, Any] = {"path": path, "title": title, "summary": summary, "tags": [], "created": "",
                           "updated": "", "superseded_by": "", "valid_until": "", "error": ""}
    try:
        if archived:
            text = read_archived(tree.home, path)
            if text is None:
                raise InvalidEntry(f"{path}: no longer in the archive")
            e = entry_mod.parse(text, where=path)
        else:
            e = tree.read(path)
    except (OSError, InvalidEntry, EntryNotFound, ValueError) as exc:
        row["error"] = str(exc)[:300]
        return row
    until = validity.valid_until(e)
    row.update(title=e.title or title, summary=e.summary or summary, tags=e.tags[:8], created=e.created_at,
               updated=e.updated_at, superseded_by=validity.superseded_by(e),
               valid_until=until.isoformat() if until else "")
    return row


def folder(mem: Any, path: str = "", page: int = 0) -> dict[str, Any]:
    """A folder: title, overview, subfolders (path, title, entries) and page ``page`` of its children
    (``Memory.list`` reads only the page's entries)."""
    page = max(0, page)
    listing = mem.list(path, offset=page * PAGE, limit=PAGE)
    blank = {"tags": [], "created": "", "updated": "", "superseded_by": "", "valid_until": "", "error": ""}
    rows = [{**blank, **e, "tags": (e.get("tags") or [])[:8], "valid_until": e.get("valid_until") or ""}
            for e in listing["entries"]]
    return {"path": listing["path"], "title": listing["title"], "overview": listing["overview"],
            "folders": listing["folders"], "entries": rows, "total": listing["total_entries"], "page": page,
            "more": listing["next"] is not None, "crumbs": crumbs(listing["path"]),
            "remaining": max(0, listing["total_folders"] + listing["total_entries"] - (page + 1) * PAGE)}


def archive(mem: Any, page: int = 0) -> dict[str, Any]:
    """The archived entries (``.memgrove/archive/``), a page of them with what each was."""
    paths = mem.tree.archived()
    page = max(0, page)
    rows = [entry_row(mem.tree, p, archived=True) for p in paths[page * PAGE:(page + 1) * PAGE]]
    return {"entries": rows, "total": len(paths), "page": page, "more": (page + 1) * PAGE < len(paths)}

"""A folder's listing, a page at a time (``ContextTree.list_folder``: the agent's ``list_tree``,
``memgrove tree``, ``GET /api/tree``, the web page's tree).

A folder's children are its subfolders, then its entries, each in natural order (``s1_m2`` before
``s1_m10``); ``offset`` and ``limit`` page over that one sequence. The names come from one listing
of the folder (no file opened, no stat), and only the entries of the page are read, so a folder
of 5,000 entries costs its page, not 5,000 parses. Each subfolder's count of entries is one
grouped query of the catalog (``subtree_counts``) for them all, not a walk of every subtree.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from ..base.errors import InvalidEntry
from ..entries import entry as entry_mod, validity
from ..entries.paths import CONTEXT_FILE, is_entry_file, natural_key
from . import contexts
from .catalog import scan


def subtree_counts(catalog: Any, under: str) -> dict[str, int]:
    """``{subfolder of under: files below it that are not context files}`` (``under``: "" for the
    tree's top), as the catalog holds them: one query on its folder index, summed up in Python."""
    lo, hi = (under + "/", under + "0") if under else ("", "\U0010ffff")   # "0" follows "/"
    rows = catalog._db().execute("SELECT folder, count(*) FROM files WHERE folder >= ? AND folder < ? "
                                 "GROUP BY folder", (lo, hi)).fetchall()
    # every folder's own context file is one of its files: not an entry
    held = catalog.stats_of([f"{f}/{CONTEXT_FILE}" for f, _ in rows])
    out: dict[str, int] = {}
    for folder, n in rows:
        child = folder[len(lo):].split("/", 1)[0]
        if child:
            out[lo + child] = out.get(lo + child, 0) + n - (f"{folder}/{CONTEXT_FILE}" in held)
    return out


def _catalog_titles(catalog: Any, folders: list[str]) -> dict[str, tuple[tuple[int, int], str]]:
    """``{folder: ((mtime_ns, size), title)}`` of these folders' context files, as the catalog holds them."""
    out = {}
    for i in range(0, len(folders), 500):
        part = [f"{f}/{CONTEXT_FILE}" for f in folders[i:i + 500]]
        rows = catalog._db().execute(f"SELECT path, mtime_ns, size, title FROM files WHERE kind = 'context' AND "
                                     f"path IN ({','.join('?' * len(part))})", part)
        out.update({p.rpartition("/")[0]: ((m, s), t or "") for p, m, s, t in rows})
    return out


def _folder_title(folder_abs: Path, held: tuple[tuple[int, int], str] | None) -> str:
    """The title of its context file: the catalog's while the file is as it indexed it, else read."""
    if held is not None:
        try:
            st = (folder_abs / CONTEXT_FILE).stat()
            if (st.st_mtime_ns, st.st_size) == held[0]:
                return held[1] or contexts.humanize(folder_abs.name)
        except OSError:
            pass
    return contexts.folder_title(folder_abs)


def listing(base: Path, rel: str, *, catalog: Any = None, counts: bool = True, offset: int = 0,
            limit: int | None = None) -> dict[str, Any]:
    """The folder ``rel`` (at ``base`` on disk): its title, overview and children, ``limit`` of them
    from ``offset`` (None: all). ``catalog``: one in step with the files, for the subfolders' counts
    and titles (None: they are read from the files); ``counts``: each subfolder's entries (-1 when off).

    ``total_folders`` and ``total_entries`` count every child; ``next`` is the offset of the next
    page, None after the last."""
    ctx = contexts.read_context(base / CONTEXT_FILE)
    folder_names, entry_names = [], []
    with os.scandir(base) as it:
        for d in it:
            if d.name.startswith((".", "_")) or d.is_symlink():
                continue
            crel = f"{rel}/{d.name}" if rel else d.name
            if d.is_dir():
                folder_names.append(d.name)
            elif is_entry_file(crel):
                entry_names.append(d.name)
    folder_names.sort(key=natural_key)
    entry_names.sort(key=natural_key)
    offset = max(0, int(offset))
    end = len(folder_names) + len(entry_names) if limit is None else offset + max(0, int(limit))
    page_folders = folder_names[offset:end]
    page_entries = entry_names[max(0, offset - len(folder_names)):max(0, end - len(folder_names))]
    paths = [f"{rel}/{n}" if rel else n for n in page_folders]
    n_of: dict[str, int] | None = None
    titles: dict[str, tuple[tuple[int, int], str]] = {}
    if paths and catalog is not None:
        try:
            titles = _catalog_titles(catalog, paths)
            n_of = subtree_counts(catalog, rel) if counts else None
        except sqlite3.DatabaseError:    # damaged, or being rebuilt: the files say it
            titles = {}
    if counts and n_of is None:
        n_of = {p: sum(1 for f in scan(base / n) if f.rsplit("/", 1)[-1] != CONTEXT_FILE)
                for p, n in zip(paths, page_folders)}
    folders = [{"path": p, "title": _folder_title(base / n, titles.get(p)),
                "entries": n_of.get(p, 0) if n_of is not None else -1} for p, n in zip(paths, page_folders)]
    entries = [entry_row(base / n, f"{rel}/{n}" if rel else n) for n in page_entries]
    total = len(folder_names) + len(entry_names)
    return {"path": rel, "title": ctx.title if ctx else (contexts.humanize(base.name) if rel else "Context Tree"),
            "overview": ctx.sections.get(contexts.OVERVIEW, "") if ctx else "", "folders": folders,
            "entries": entries, "offset": offset, "total_folders": len(folder_names),
            "total_entries": len(entry_names), "next": end if end < total else None}


def entry_row(file: Path, rel: str) -> dict[str, Any]:
    """What a listing shows of one entry (the file ``file``, at ``rel``): title, summary, tags, dates
    and whether it still holds; ``error`` (and no more) when it cannot be read."""
    try:
        e = entry_mod.parse(file.read_text(encoding="utf-8"), where=rel)
    except (OSError, UnicodeDecodeError, InvalidEntry) as exc:
        return {"path": rel, "title": "", "summary": "", "error": str(exc)}
    until = validity.valid_until(e)
    return {"path": rel, "title": e.title, "summary": e.summary, "tags": list(e.tags), "created": e.created_at,
            "updated": e.updated_at, "superseded_by": validity.superseded_by(e),
            "valid_until": until.isoformat() if until else None}

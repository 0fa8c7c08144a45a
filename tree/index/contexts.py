"""``context.md`` at every folder level: an overview plus a generated listing.

The Overview is written by whoever curates (an LLM supplying domain/topic
context, or a person) and is preserved; the Contents listing is regenerated
from the children after every operation, so the tree stays browsable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ..entries import entry as entry_mod
from .catalog import Listed
from ..base.errors import InvalidEntry
from ..entries.paths import CONTEXT_FILE, natural_key

OVERVIEW = "Overview"
CONTENTS = "Contents"
# a folder's listing names at most this many entries, then says how many more there are: the
# listing is rewritten after every batch that changes the folder, so listing a flat folder whole
# made a write O(folder) and filling it O(N²) (one message of 37,500 parts: 5 ms an entry at the
# end against 1.6 ms at 300); a person or an agent reads a thousand names at most anyway
LISTED_AT_MOST = 1000


def humanize(name: str) -> str:
    return name.replace("_", " ").strip().capitalize()


def read_context(path: Path) -> entry_mod.Entry | None:
    """A folder's context file, parsed; None if it is absent, unreadable or a symlink (never
    followed: it may lead out of the tree, and the file it replaces is regenerated)."""
    try:
        if path.is_symlink():
            return None
        return entry_mod.parse(path.read_text(encoding="utf-8"), where=str(path))
    except (OSError, UnicodeDecodeError, InvalidEntry):
        return None


def folder_title(folder_abs: Path) -> str:
    ctx = read_context(folder_abs / CONTEXT_FILE)
    return ctx.title if ctx is not None and ctx.title else humanize(folder_abs.name)


def _title_summary(child: Path, listed: Listed | None) -> tuple[str, str] | None:
    """An entry's title and summary: as the catalog has them while the file is as it indexed it
    (its stat unchanged), else read from the file; None if it is not a readable entry."""
    if listed is not None:
        try:
            st = child.stat()
        except OSError:
            return None
        if (st.st_mtime_ns, st.st_size) == tuple(listed.stat):
            return None if listed.kind != "entry" else (listed.title, listed.summary)
    try:
        e = entry_mod.parse(child.read_text(encoding="utf-8"), where=child.name)
    except (OSError, UnicodeDecodeError, InvalidEntry):
        return None
    return e.title, e.summary


def render(folder_abs: Path, rel_folder: str, overview: str | None, now: str,
           known: Mapping[str, Listed] | None = None) -> str | None:
    """The context.md text for a folder, or None if the folder holds no entries at all.

    ``known``: the catalog's rows of the folder's files (``Catalog.folder_files``). Re-reading
    every entry of the folder made each write O(folder), a build of a flat folder O(N²); with
    them only the files changed since they were indexed are read (the text is the same)."""
    existing = read_context(folder_abs / CONTEXT_FILE)
    if overview is None:
        overview = existing.sections.get(OVERVIEW, "") if existing else ""
    subfolders, entries, unlisted = [], [], 0
    try:
        children = sorted(folder_abs.iterdir(), key=lambda p: natural_key(p.name))
    except FileNotFoundError:
        return None
    for child in children:
        if child.name.startswith((".", "_")) or child.is_symlink():
            continue
        if child.is_dir():
            if any(child.rglob("*.md")):
                subfolders.append(f"- [{folder_title(child)}]({child.name}/{CONTEXT_FILE}) — folder")
        elif child.suffix == ".md" and child.name != CONTEXT_FILE:
            if len(entries) >= LISTED_AT_MOST:
                unlisted += 1          # counted, not read
                continue
            got = _title_summary(child, known.get(child.name) if known else None)
            if got is None:
                continue
            title, summary = got
            entries.append(f"- [{title}]({child.name})" + (f" — {summary}" if summary else ""))
    if not subfolders and not entries:
        return None
    more = [f"- … and {unlisted} more files (`memgrove tree --all {rel_folder}` shows them all)"] if unlisted else []
    listing = "\n".join(subfolders + entries + more)
    title = existing.title if existing and existing.title else humanize(folder_abs.name)
    sections = {}
    if overview:
        sections[OVERVIEW] = overview
    sections[CONTENTS] = listing
    old_sections = existing.sections if existing else {}
    # keep the old timestamp when nothing changed, so the file is not rewritten
    unchanged = existing is not None and old_sections.get(CONTENTS) == listing and old_sections.get(OVERVIEW, "") == overview
    e = entry_mod.Entry(
        title=title,
        summary=(existing.summary if existing else "") or f"Knowledge under {rel_folder}/",
        created_at=(existing.created_at if existing and existing.created_at else now),
        updated_at=(existing.updated_at if unchanged and existing.updated_at else now),
        sections=sections,
        extra={**(existing.extra if existing else {}), "kind": "context"},
    )
    return entry_mod.serialize(e)

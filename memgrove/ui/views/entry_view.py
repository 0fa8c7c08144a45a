"""The Entry view: the body rendered inert, the metadata, sources (a message's speaker and
time), links and backlinks, validity, and the entry's own history with each reason."""

from __future__ import annotations

from typing import Any, Callable

from memgrove.tree.base.errors import EntryNotFound
from memgrove.tree.entries import validity
from memgrove.tree.entries.entry import parse, split_frontmatter
from memgrove.tree.writes.archive import read_archived

from ..markdown import render
from .changes_view import operation
from .tree_view import crumbs

HISTORY = 50


def source_rows(entry: Any) -> list[dict[str, str]]:
    """Each source as a line: its kind, what it points at, its time; a conversation's message also
    names who said it (the verbatim curator tags a message with its speakers)."""
    out = []
    for s in entry.sources[:50]:
        kind = str(s.get("kind", ""))
        ref = str(s.get("ref", s.get("path", s.get("url", ""))))
        row = {"kind": kind, "ref": ref, "at": str(s.get("at", "")), "speaker": ""}
        if kind == "conversation":
            row["speaker"] = ", ".join(entry.tags[:3])
            conv, _, message = ref.partition("#")
            row["ref"] = f"{conv}, message {message}" if message else conv
        out.append(row)
    return out


def _shown(mem: Any, path: str) -> tuple[dict[str, Any], Any, bool]:
    """(``Memory.show``'s dict, the parsed entry, archived?): an archived entry is read from the
    archive (``@archive/<path>``), shown with what it was and a way back."""
    try:
        shown = mem.show(path)
        return shown, parse(shown["text"], where=path), False     # its text, read once by show
    except EntryNotFound:
        text = read_archived(mem.tree.home, path)
        if text is None:
            raise
        return {"text": text, "links": [], "backlinks": []}, parse(text, where=path), True


def without_title(body: str, title: str) -> str:
    """The body without its first heading when that heading is the title (the page shows it already)."""
    first, _, rest = body.lstrip("\n").partition("\n")
    if first.startswith("# ") and first[2:].strip() == title.strip():
        return rest.lstrip("\n")
    return body


def entry(mem: Any, path: str, link: Callable[[str], str] | None = None) -> dict[str, Any]:
    """An entry as its page shows it; ``link(path)``: the page's address of another entry."""
    shown, e, archived = _shown(mem, path)
    text = shown["text"]
    body = without_title(split_frontmatter(text, where=path)[1], e.title)
    until = validity.valid_until(e)
    exists = mem.tree.exists
    statements = e.extra.get(validity.SUPERSEDED_STATEMENTS) or []
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return {
        "path": path, "title": e.title, "summary": e.summary, "tags": e.tags, "keywords": e.keywords,
        "created": e.created_at, "updated": e.updated_at,
        "superseded_by": validity.superseded_by(e), "valid_until": until.isoformat() if until else "",
        "supersedes": validity.supersedes(e),
        "statements": [s for s in statements if isinstance(s, dict)][:20],
        "body": render(body, entry_path=path, exists=exists, entry_url=link),
        "sources": source_rows(e), "links": shown["links"], "backlinks": shown["backlinks"],
        "history": [operation(r) for r in mem.history_page(HISTORY, path=path).records],
        "crumbs": crumbs(folder), "folder": folder, "archived": archived,
    }

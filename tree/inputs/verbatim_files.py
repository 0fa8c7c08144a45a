"""The verbatim curator's free text and files (``curator``): input bytes read and decoded,
notes in the day's folder, a markdown page's sections (its front matter their metadata:
``documents``, ``markdown_sections``) or another text file's ~220-word parts.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..text import dates
from ..base.errors import InvalidInput
from ..entries.paths import snake_case
from .placement import Owner, Placer, digest as _digest
from . import markdown_sections
from .documents import FrontMatter, split_front_matter
from .verbatim_parts import _FENCE, _chunks, _first_sentence, _iso, _words, paragraphs

# the frontmatter key of a page's first entry holding what its front matter said beyond title,
# description, tags and keywords: the dates as written, aliases, other keys
DOCUMENT_KEY = "document"


def _too_large(name: str, size: int, max_bytes: int) -> InvalidInput:
    return InvalidInput(f"{name} is {size:,} bytes; the curator takes at most {max_bytes:,} bytes "
                        "(setting max_input_bytes)")


def read_input(path: Path, max_bytes: int) -> bytes:
    """The bytes of an input file; an enormous one is refused before it is read into memory."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise _too_large(str(path), size, max_bytes)
        return fh.read(max_bytes + 1)  # +1: a file that grew meanwhile is still caught below


def decode_input(raw: bytes, name: str, max_bytes: int) -> str:
    """Bytes of an input to text, or a clear InvalidInput (binary, too large, not UTF-8)."""
    if len(raw) > max_bytes:
        raise _too_large(name, len(raw), max_bytes)
    if b"\x00" in raw[:8192]:
        raise InvalidInput(f"{name} looks binary (contains NUL bytes); give text or markdown")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name} is not UTF-8 text (invalid byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    return text.lstrip("\ufeff").replace("\r\n", "\n")


def read_json_input(path: Path, max_bytes: int) -> Any:
    """A JSON input file (a conversation, an export) read, decoded and parsed, or a clear InvalidInput."""
    from ..base.nesting import parse_json

    try:
        raw = read_input(path, max_bytes)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    return parse_json(decode_input(raw, str(path), max_bytes), str(path))


def ops_from_text(text: str, *, now: datetime, source: str | None = None,
                  placer: Placer | None = None) -> list[dict[str, Any]]:
    """Free text -> entries of about 220 words in the day's notes folder, ``notes/<yyyy_mm_dd>/``.

    One folder per day, not one per note: five notes curated today share one folder, the way a
    notebook has pages per day, so the tree stays browsable by time; what a note is about is in
    its entry name, title and words, which search reads. The same text curated again, on any
    day, finds the entries it was given before and changes nothing.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the text to curate is empty")
    placer = placer or Placer()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    ref = source or "text:" + digest
    owner = Owner("text", (ref,))
    name = snake_case(_words(text, 5))[:40].strip("_") or f"note_{digest[:6]}"
    day = now.astimezone(timezone.utc)
    folder = placer.find("notes", name, owner) or f"notes/{day:%Y_%m_%d}"
    chunks = _chunks(paragraphs(text))
    ops = []
    for i, chunk in enumerate(chunks, 1):
        ops.append({
            "op": "UPSERT",
            "path": placer.entry(folder, name if i == 1 else f"{name}_part_{i}", owner),
            "title": _first_sentence(chunk, 90),
            "summary": _first_sentence(chunk),
            "content": {"narrative": chunk},
            "sources": [{"kind": "text", "ref": f"{ref}#p{i}", "at": _iso(now)}],
            "reason": f"verbatim curator: part {i} of {source or 'the given text'}",
        })
    ops[0]["context"] = {"domain": "Notes curated verbatim, one folder per day.",
                         "topic": f"Notes curated on {dates.day_label(day.date())}." if folder.endswith(
                             f"{day:%Y_%m_%d}") else ""}
    return ops


def file_ref(path: Path, root: Path | None = None) -> str:
    """How sources name a file: its path from ``root`` (the project) when inside it, else its
    absolute path; two files of one name in different folders are two inputs."""
    full = path.resolve()
    if root is not None:
        try:
            return full.relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return full.as_posix()


def ops_from_file(path: Path, *, max_bytes: int, now: datetime, root: Path | None = None,
                  placer: Placer | None = None) -> list[dict[str, Any]]:
    """A markdown file -> one entry per section; other text files -> ~220-word parts.

    ``root``: the project folder; sources name the file relative to it (see ``file_ref``).
    """
    try:
        raw = read_input(path, max_bytes)
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder; give files") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    text = decode_input(raw, str(path), max_bytes)
    if not text.strip():
        raise InvalidInput(f"{path} is empty")
    mtime = _iso(datetime.fromtimestamp(path.stat().st_mtime, timezone.utc))
    return ops_from_document(path.name, text, ref=file_ref(path, root), at=mtime, placer=placer)


def ops_from_document(name: str, text: str, *, ref: str, at: str,
                      placer: Placer | None = None) -> list[dict[str, Any]]:
    """A document's text (a file's content sent without the file, e.g. to the server) -> the
    entries ``ops_from_file`` makes of such a file; ``name`` is its file name (``.md`` decides
    sections or parts), ``ref`` what its sources name, ``at`` when it was written."""
    path = Path(name)
    if not text.strip():
        raise InvalidInput(f"{name} is empty")
    placer = placer or Placer()
    owner = Owner("file", (ref,))
    # a name without Latin letters or digits still gets a folder of its own, the same each time
    folder = placer.folder("files", snake_case(path.stem) or f"file_{_digest(path.stem)}", owner)
    ops = []
    if path.suffix.lower() in (".md", ".markdown"):
        ops = _markdown_ops(text, path, folder, owner, placer, ref, at)
    else:
        for i, chunk in enumerate(_chunks(paragraphs(text)), 1):
            ops.append(_file_op(placer.entry(folder, f"part_{i}", owner), f"part_{i}",
                                f"{path.stem}: {_first_sentence(chunk, 70)}", chunk, f"{ref}#p{i}", at))
    return ops


def _markdown_ops(text: str, path: Path, folder: str, owner: Owner, placer: Placer, ref: str,
                  at: str) -> list[dict[str, Any]]:
    """A markdown page's entries: one per section (``markdown_sections``), its front matter
    (``documents``) their metadata. Each is named after its own heading, as before headings had
    paths, so a page curated again finds the entries it was given."""
    # a document sent without its file (the server's ``documents``) is not decoded here: the same
    # text as a file's, front matter and headings found alike
    meta, body = split_front_matter(text.lstrip("\ufeff").replace("\r\n", "\n"))
    meta = meta or FrontMatter()
    page, sections = markdown_sections.split(body, markdown_sections.plain_heading(meta.title))
    page = page or path.stem
    at = meta.at or at
    # an alias that is a name (Obsidian's) is a word a search should match; one that is an old URL
    # (Hugo's "/docs/v1/x/") would give every page of a site the same words: kept, not searched
    keywords = list(dict.fromkeys(meta.keywords + [a for a in meta.aliases if "/" not in a]))
    shared_titles = sum(not s.headings for s in sections) > 1
    used: set[str] = set()
    next_n: dict[str, int] = {}   # per base name, so thousands of equal headings stay linear
    ops: list[dict[str, Any]] = []
    for section in sections:
        # text before the first heading is the page's own; "overview" tells it from the page's
        # heading's section when there are both
        heads = section.headings or (("overview",) if shared_titles and not section.name else ())
        for j, part in enumerate(markdown_sections.parts(section.text), 1):
            name = base = (snake_case(section.name) or "overview") + (f"_part_{j}" if j > 1 else "")
            n = next_n.get(base, 2)
            while name in used:
                name, n = f"{base}_{n}", n + 1
            next_n[base] = n
            used.add(name)
            op = _file_op(placer.entry(folder, name, owner), name, markdown_sections.title(page, heads, j),
                          part, f"{ref}#{name}", at)
            if meta.tags:
                op["tags"] = list(meta.tags)
            if keywords:
                op["keywords"] = keywords
            ops.append(op)
    if not ops:
        # front matter and nothing under it: the page is what its front matter says
        ops.append(_file_op(placer.entry(folder, "overview", owner), "overview", markdown_sections.title(page, ()),
                            "", f"{ref}#overview", at))
    # the page's description is what its author says it is about; the rest of its front matter
    # (dates as written, aliases, other keys) is kept once, on the page's first entry
    if meta.summary:
        ops[0]["summary"] = meta.summary
    if meta.record():
        ops[0]["extra"] = {DOCUMENT_KEY: meta.record()}
    return ops


def _prose(body: str) -> str:
    """A section's text without what is not a sentence to summarise it by: fenced code, tables
    (a table's header line is no summary: "| Flag | Default |"), HTML comments."""
    text = re.sub(r"<!--.*?-->|```.*?```", " ", body, flags=re.S)
    return "\n\n".join(b for b, is_table in markdown_sections.blocks(text)
                       if not is_table and not _FENCE.match(b))


def _file_op(path: str, name: str, title: str, body: str, ref: str, at: str) -> dict[str, Any]:
    return {
        "op": "UPSERT",
        "path": path,
        "title": title,
        "summary": _first_sentence(_prose(body)) or title,
        "content": {"narrative": body},
        "sources": [{"kind": "file", "ref": ref, "at": at}],
        "reason": f"verbatim curator: section {name} of {ref.rsplit('#', 1)[0]}",
    }

"""An entry: YAML frontmatter plus a markdown body of named sections.

    ---
    title: ...            fixed key order (FIELD_ORDER), unknown keys kept after
    ---
    # <title>
    <preamble>
    ## Raw Concept / ## Narrative / ## Facts / any other ## section

An entry that is prose alone (only a Narrative) is written without the
``## Narrative`` heading, and a body without ``##`` headings is its Narrative.
Parsing is tolerant of hand edits (no frontmatter, no heading, odd types);
what cannot be understood raises InvalidEntry with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import frontmatter
from ..base.errors import InvalidEntry
from .paths import link_problem

FIELD_ORDER = ("title", "summary", "tags", "keywords", "related", "createdAt", "updatedAt", "sources")
LIST_FIELDS = ("tags", "keywords", "related")
SECTION_ORDER = ("Raw Concept", "Narrative", "Facts")
RAW_CONCEPT_KEYS = ("task", "changes", "files", "flow", "timestamp", "author")
NARRATIVE_KEYS = ("structure", "dependencies", "highlights", "rules", "examples", "diagrams")

# ``seeAlso``: links found by the words two entries share (``memgrove dream``), for readers and
# agents to follow; the search does not lend score through them as it does through ``related``
SEE_ALSO = "seeAlso"
_FENCE = re.compile(r"^\s*(```|~~~)")
_LEGACY_LINK = re.compile(r"@([a-z0-9_]+(?:/[a-z0-9_]+){1,3}\.md)")


@dataclass
class Entry:
    """One knowledge entry. ``sections`` maps a ``##`` heading to its text
    (``""`` holds text between the title heading and the first section)."""

    title: str
    summary: str = ""
    tags: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    sources: list[dict[str, Any]] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def body(self) -> str:
        """The markdown after the title heading, as it is written to disk."""
        return render_sections(self.sections)

    @property
    def facts(self) -> list[str]:
        return fact_lines(self.sections.get("Facts", ""))

    def links(self) -> list[str]:
        """Forward links: ``related`` plus legacy ``@domain/topic/x.md`` body links; a link that
        could lead outside the tree (``/etc/passwd``, ``../x``) is left out (``link_problem``),
        so the catalog, search and the tools never see it."""
        out = [r for r in self.related if link_problem(r) is None]
        out += [m.group(1) for m in _LEGACY_LINK.finditer(self.body)]
        return list(dict.fromkeys(out))


def _str_list(key: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        if any(isinstance(v, (dict, list)) for v in value):
            raise InvalidEntry(f"frontmatter '{key}' must be a list of strings")
        return list(dict.fromkeys(s for s in (str(v).strip() for v in value) if s))
    raise InvalidEntry(f"frontmatter '{key}' must be a list of strings, not {type(value).__name__}")


def _sources(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidEntry("frontmatter 'sources' must be a list of {kind, ref, at} mappings")
    out = []
    for item in value:
        if isinstance(item, dict):
            out.append({str(k): ("" if v is None else str(v)) for k, v in item.items()})
        elif isinstance(item, str):
            out.append({"kind": "ref", "ref": item})
        else:
            raise InvalidEntry("frontmatter 'sources' items must be mappings like {kind, ref, at}")
    return out


def split_sections(body: str) -> dict[str, str]:
    """Split a markdown body on ``## `` headings that are outside code fences."""
    sections: dict[str, list[str]] = {"": []}
    next_n: dict[str, int] = {}  # heading -> the number its next duplicate tries first
    current = ""
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and line.startswith("## ") and line[3:].strip():
            current = base = line[3:].strip()
            # duplicate headings stay separate: "A", "A (2)", "A (3)"; counting on from the
            # last number tried keeps k duplicates linear (trying 2, 3, ... each time: k² steps)
            n = next_n.get(base, 2)
            while current in sections:
                current = f"{base} ({n})"
                n += 1
            next_n[base] = n
            sections[current] = []
            continue
        sections[current].append(line)
    out = {k: "\n".join(v).strip("\n") for k, v in sections.items()}
    if not out[""].strip():
        del out[""]
    return out


def body_sections(body: str) -> dict[str, str]:
    """The sections of a body; prose without any ``##`` heading is the Narrative."""
    secs = split_sections(body)
    return {"Narrative": secs[""]} if list(secs) == [""] else secs


def render_sections(sections: dict[str, str]) -> str:
    if list(sections) == ["Narrative"]:
        # prose alone is written without its heading: "## Narrative" would be two of the
        # thirty words a one-message entry gives a reader's context, and body_sections
        # reads a body without headings back as the Narrative
        return sections["Narrative"].strip("\n")
    parts = []
    if sections.get("", "").strip():
        parts.append(sections[""].strip("\n"))
    for name, text in sections.items():
        if name == "":
            continue
        parts.append(f"## {name}\n\n{text.strip(chr(10))}" if text.strip() else f"## {name}")
    return "\n\n".join(parts)


def fact_lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.split("\n") if ln.strip().startswith(("- ", "* "))]


_FRONTMATTER_END = re.compile(r"^(---|\.\.\.)[ \t]*$", flags=re.M)


def frontmatter_bytes(text: str) -> int:
    """UTF-8 size of the frontmatter block of an entry file's text, as ``parse`` finds it (0 if none)."""
    if not text.startswith("---\n"):
        return 0
    end = _FRONTMATTER_END.search(text, 4)
    return len(text[4 : end.start() if end else len(text)].encode("utf-8", "surrogatepass"))


def split_frontmatter(text: str, *, where: str = "entry") -> tuple[str | None, str]:
    """``(its frontmatter's YAML or None, its body)`` of an entry file's text, CRLF and a BOM read as
    ``parse`` reads them (the web page shows the body apart from the metadata)."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    if not (text.startswith("---\n") or text == "---"):
        return None, text
    end = _FRONTMATTER_END.search(text, 4)
    if end is None:
        raise InvalidEntry(f"{where}: frontmatter starts with '---' but is never closed")
    return text[4 : end.start()], text[end.end() :].lstrip("\n")


def parse(text: str, *, where: str = "entry") -> Entry:
    """Parse an entry file's text. Raises InvalidEntry saying why."""
    if "\x00" in text:
        raise InvalidEntry(f"{where}: contains NUL bytes (binary file?)")
    meta: dict[str, Any] = {}
    head, body = split_frontmatter(text, where=where)
    if head is not None:
        try:
            meta = frontmatter.load(head)
        except InvalidEntry as exc:
            raise InvalidEntry(f"{where}: {exc}") from None
    heading = None
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if line.startswith("# "):
            heading = line[2:].strip()
            body = "\n".join(lines[i + 1 :])
        break
    title = meta.pop("title", None)
    title = str(title).strip() if title not in (None, "") else (heading or "")
    try:
        entry = Entry(
            title=title,
            summary="" if meta.get("summary") is None else str(meta.pop("summary")).strip(),
            tags=_str_list("tags", meta.pop("tags", None)),
            keywords=_str_list("keywords", meta.pop("keywords", None)),
            related=_str_list("related", meta.pop("related", None)),
            created_at="" if meta.get("createdAt") is None else str(meta.pop("createdAt")),
            updated_at="" if meta.get("updatedAt") is None else str(meta.pop("updatedAt")),
            sources=_sources(meta.pop("sources", None)),
            sections=body_sections(body),
        )
    except InvalidEntry as exc:
        raise InvalidEntry(f"{where}: {exc}") from None
    meta.pop("summary", None), meta.pop("createdAt", None), meta.pop("updatedAt", None)
    entry.extra = meta
    return entry


def serialize(entry: Entry) -> str:
    """Render an entry to file text: fixed frontmatter order, ``# title`` heading."""
    meta: dict[str, Any] = {
        "title": entry.title,
        "summary": entry.summary,
        "tags": list(entry.tags),
        "keywords": list(entry.keywords),
        "related": list(entry.related),
        "createdAt": entry.created_at,
        "updatedAt": entry.updated_at,
        "sources": [dict(s) for s in entry.sources],
    }
    for k, v in entry.extra.items():
        if k not in meta:
            meta[k] = v
    body = entry.body
    title_line = " ".join(entry.title.split()) or "Untitled"
    text = f"---\n{frontmatter.dump(meta)}---\n# {title_line}\n"
    if body.strip():
        text += "\n" + body.strip("\n") + "\n"
    return text


def reader_text(entry: Entry) -> str:
    """An entry as a reader answering from it needs it: the title, where it came from and
    when (to resolve "yesterday" and to cite), when it was last updated (to prefer the newer
    of two facts), whether a newer entry superseded it, the summary if the body does not already hold it, and the body. Left out:
    what serves search and the tree (tags, keywords, related paths, createdAt), which made up
    most of a short entry's file."""
    lines = [f"# {' '.join(entry.title.split()) or 'Untitled'}"]
    sources = "; ".join(str(s.get("ref", "")) + (f" ({s['at']})" if s.get("at") else "")
                        for s in entry.sources if s.get("ref") or s.get("at"))
    if sources:
        lines.append(f"Sources: {sources}")
    if entry.updated_at:
        lines.append(f"Updated: {entry.updated_at}")
    closed_by = entry.extra.get("supersededBy")
    if isinstance(closed_by, str) and closed_by.strip():
        # a fact a newer entry replaced (tree/entries/validity.py): the reader must not take it for the current one
        until = entry.extra.get("validUntil")
        lines.append(f"Superseded: true until {until}, replaced by {closed_by.strip()}" if until
                     else f"Superseded: replaced by {closed_by.strip()}")
    body = entry.body.strip("\n")
    summary = " ".join(entry.summary.split())
    if summary and summary not in " ".join(body.split()):
        lines.append(f"Summary: {summary}")
    return "\n".join(lines) + (f"\n\n{body}\n" if body.strip() else "\n")


# -- content given by a curate operation ------------------------------------

def _subsections(value: Any, known: tuple[str, ...], bold: bool) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, dict):
        raise InvalidEntry("section content must be a string or a mapping of subsection names to text")
    lines = []
    keys = [k for k in known if k in value] + [k for k in value if k not in known]
    for k in keys:
        text = "" if value[k] is None else str(value[k]).strip()
        if not text:
            continue
        name = str(k).replace("_", " ").strip().capitalize()
        lines.append(f"**{name}:** {text}" if bold else f"### {name}\n\n{text}")
    return ("\n" if bold else "\n\n").join(lines)


def _facts(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, list):
        raise InvalidEntry("'facts' must be a list of strings or {subject, statement, category} mappings")
    lines = []
    for f in value:
        if isinstance(f, dict):
            subject = str(f.get("subject", "")).strip()
            statement = str(f.get("statement", f.get("fact", ""))).strip()
            category = str(f.get("category", "")).strip()
            line = f"- **{subject}**: {statement}" if subject else f"- {statement}"
            lines.append(line + (f" [{category}]" if category else ""))
        else:
            s = str(f).strip()
            lines.append(s if s.startswith("- ") else f"- {s}")
    return "\n".join(lines)


_SECTION_NAMES = {"raw_concept": "Raw Concept", "rawconcept": "Raw Concept", "narrative": "Narrative", "facts": "Facts"}


def sections_from_content(content: Any) -> dict[str, str]:
    """Turn an operation's ``content`` (markdown, or a dict of sections) into sections.

    A markdown string without ``##`` headings becomes the Narrative.
    """
    if content is None:
        return {}
    if isinstance(content, str):
        text = content.strip("\n")
        lines = text.split("\n")
        if lines and lines[0].startswith("# "):  # a leading title heading is not body
            text = "\n".join(lines[1:]).strip("\n")
        return body_sections(text)
    if not isinstance(content, dict):
        raise InvalidEntry("content must be a markdown string or a dict of sections")
    out: dict[str, str] = {}
    for key, value in content.items():
        norm = re.sub(r"[^a-z]", "", str(key).lower())
        name = _SECTION_NAMES.get(str(key).lower().replace(" ", "_"), _SECTION_NAMES.get(norm))
        if name == "Raw Concept":
            out[name] = _subsections(value, RAW_CONCEPT_KEYS, bold=True)
        elif name == "Narrative":
            out[name] = _subsections(value, NARRATIVE_KEYS, bold=False)
        elif name == "Facts":
            out[name] = _facts(value)
        else:
            out[str(key).replace("_", " ").strip().title()] = _subsections(value, (), bold=False)
    ordered = {k: out[k] for k in SECTION_ORDER if k in out}
    ordered.update({k: v for k, v in out.items() if k not in ordered})
    return ordered


def see_also(entry: Entry | dict[str, Any]) -> list[str]:
    """The paths an entry's ``seeAlso`` names (``entry``: the entry, or its extra frontmatter keys)."""
    value = (entry.extra if isinstance(entry, Entry) else entry).get(SEE_ALSO)
    value = [value] if isinstance(value, str) else value
    return [str(v).strip() for v in value or [] if str(v).strip()] if isinstance(value, (list, tuple)) else []

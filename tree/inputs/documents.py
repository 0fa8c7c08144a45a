"""A document's front matter read as what it is: the page's metadata, not its text.

A markdown page often opens with a YAML block (``---`` ... ``---``, Jekyll, Hugo, Docusaurus,
MkDocs, Obsidian) or a TOML one (``+++`` ... ``+++``, Hugo). Curated as text, ``title: npm-install``
and ``section: 1`` became the first words of the first entry and the page's name was lost, so
every section of a documentation site was titled "Synopsis" or "Description". Here the block is
taken off the body and read into a ``FrontMatter``: the page's title, its description (a summary
the author wrote), tags and keywords (both, and ``categories``, are words a search should match),
aliases (other names of the page), the dates the file states, and the other keys, kept apart.

The block is untrusted text: it is read with the loader entries use (no YAML aliases or anchors,
64 KiB at most, timestamps left as text), every value is bounded (a title of 200 characters, 20
tags, 20 other keys ...), control characters are dropped, and no value is ever used as a path.
A block that cannot be read is not lost and does not stop the curation: its ``key: value`` lines
are read one by one when every line is one, else the block stays in the body as the text it is.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..base.errors import InvalidEntry
from ..entries import frontmatter

MAX_BLOCK_BYTES = frontmatter.MAX_FRONTMATTER_BYTES
TITLE_CHARS = 200          # a page title; a section's title is bounded again (markdown_sections.TITLE_CHARS)
SUMMARY_CHARS = 500        # a description: a sentence or two
WORD_CHARS = 60            # one tag, keyword or alias
MAX_WORDS = 20             # tags, keywords, aliases: each at most this many
MAX_KEYS = 20              # other keys kept
VALUE_CHARS = 200          # the text of one other key's value
# the text of all other keys: with the rest, an entry's frontmatter stays far below the 64 KiB it
# may hold (a page's first entry is refused whole if it does not)
EXTRA_CHARS = 4000

TITLE_KEYS = ("title",)
SUMMARY_KEYS = ("description", "summary", "excerpt", "abstract")
TAG_KEYS = ("tags", "categories", "category")
KEYWORD_KEYS = ("keywords",)
ALIAS_KEYS = ("aliases", "alias")
# the dates a page states: when it was first written, and when it was changed last
CREATED_KEYS = ("date", "created", "created_at", "createdAt", "published", "publishDate", "pubDate")
UPDATED_KEYS = ("lastmod", "updated", "updated_at", "updatedAt", "modified", "last_modified", "lastModified")

_OPEN = {"---": re.compile(r"^(---|\.\.\.)[ \t]*$", re.M), "+++": re.compile(r"^\+\+\+[ \t]*$", re.M)}
_LINE = re.compile(r"^([A-Za-z_][\w.-]{0,63})[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_ITEM = re.compile(r"^[ \t]+-[ \t]+(.*?)[ \t]*$")


@dataclass
class FrontMatter:
    """What a page says about itself. ``extra``: the other keys, bounded; ``created``/``updated``:
    the dates as the file states them; ``at``: the newer of them in ISO 8601, when it reads as one."""

    title: str = ""
    summary: str = ""
    tags: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    created: str = ""
    updated: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def at(self) -> str:
        return iso_date(self.updated) or iso_date(self.created)

    def record(self) -> dict[str, Any]:
        """The page's metadata as one entry keeps it (its ``document`` frontmatter key): the
        dates, aliases and other keys the file gave, and nothing the entry already holds."""
        out: dict[str, Any] = {}
        if self.created:
            out["created"] = self.created
        if self.updated:
            out["updated"] = self.updated
        if self.aliases:
            out["aliases"] = list(self.aliases)
        return {**out, **{k: v for k, v in self.extra.items() if k not in out}}


def split_front_matter(text: str) -> tuple[FrontMatter | None, str]:
    """``(front matter, body)``: the block read and taken off the text; ``(None, text)`` when there
    is none, or it cannot be read and is kept as text (a malformed block never stops curation)."""
    fence = text[:3]
    if fence not in _OPEN or text[3:4] not in ("\n", "") or not text[3:].strip():
        return None, text
    end = _OPEN[fence].search(text, 4)
    if end is None:
        return None, text          # "---" and no close: a thematic break, not front matter
    block = text[4:end.start()]
    if len(block.encode("utf-8", "surrogatepass")) > MAX_BLOCK_BYTES:
        return None, text
    data = _parsed(block, toml=fence == "+++")
    if data is None:
        return None, text
    return read(data), text[end.end():].lstrip("\n")


def _parsed(block: str, *, toml: bool) -> dict[str, Any] | None:
    if toml:
        import tomllib
        try:
            return tomllib.loads(block)
        except (tomllib.TOMLDecodeError, RecursionError):
            return None
    try:
        data = frontmatter.load(block)
    except InvalidEntry:
        return _lines(block)
    # a block that is YAML but not a page's keys (a list, a sentence) is not front matter
    return data if data or not block.strip() else None


def _lines(block: str) -> dict[str, Any] | None:
    """A block YAML refuses, read as ``key: value`` lines (and ``- item`` lines under a key), the
    way its author meant it: ``title: npm: the package manager`` (a colon in a plain value) is an
    error to YAML. None unless every line is one of those, blank or a comment: then it is text."""
    out: dict[str, Any] = {}
    key = None
    for line in block.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and key is not None and isinstance(out.get(key), list):
            out[key].append(_unquote(item.group(1)))
            continue
        m = _LINE.match(line)
        if not m:
            return None
        key, value = m.group(1), m.group(2)
        out[key] = [] if value is None else _inline_list(value)
    return out or None


def _inline_list(value: str) -> Any:
    if value.startswith("[") and value.endswith("]"):
        return [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
    return _unquote(value)


def _unquote(value: str) -> str:
    v = value.strip()
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"" else v


def read(data: dict[str, Any]) -> FrontMatter:
    """A parsed block's keys as a page's metadata, every value bounded and made plain text."""
    fm = FrontMatter()
    keys = {str(k): v for k, v in data.items()}

    def first(names: tuple[str, ...]) -> Any:
        return next((keys[n] for n in names if keys.get(n) not in (None, "", [], {})), None)

    fm.title = _scalar(first(TITLE_KEYS), TITLE_CHARS)
    fm.summary = _scalar(first(SUMMARY_KEYS), SUMMARY_CHARS)
    fm.created = _scalar(first(CREATED_KEYS), 64)
    fm.updated = _scalar(first(UPDATED_KEYS), 64)
    # every key read into a field is left out of ``extra``, a second description too
    used = set(TAG_KEYS + KEYWORD_KEYS + ALIAS_KEYS + SUMMARY_KEYS + TITLE_KEYS + CREATED_KEYS + UPDATED_KEYS)
    fm.tags = _words([w for k in TAG_KEYS for w in _listed(keys.get(k))])
    fm.keywords = _words([w for k in KEYWORD_KEYS for w in _listed(keys.get(k))])
    fm.aliases = _words([w for k in ALIAS_KEYS for w in _listed(keys.get(k))])
    room = EXTRA_CHARS
    for k, v in keys.items():
        if k in used or len(fm.extra) >= MAX_KEYS:
            continue
        value = _kept(v)
        name = _scalar(k, 64)
        size = len(name) + sum(len(str(x)) for x in (value if isinstance(value, list) else [value]))
        if value not in (None, "", []) and name and size <= room:
            fm.extra[name] = value
            room -= size
    return fm


def _plain(text: str) -> str:
    """Text without control characters (a YAML "\\0" is a NUL, which no entry may hold) or
    unpaired surrogates, its whitespace folded to single spaces."""
    text = "".join(c for c in text if c in "\t\n" or unicodedata.category(c) not in ("Cc", "Cs"))
    return " ".join(text.split())


def _scalar(value: Any, limit: int) -> str:
    if value is None or isinstance(value, (dict, list, tuple)):
        return ""
    text = _plain(str(value))
    return text if len(text) <= limit else text[:limit - 1].rsplit(" ", 1)[0] + "…"


def _listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return value.split(",")
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if not isinstance(v, (dict, list, tuple))]
    return [] if value is None or isinstance(value, dict) else [str(value)]


def _words(values: list[str]) -> list[str]:
    out = [w for w in (_scalar(v, WORD_CHARS) for v in values) if w]
    return list(dict.fromkeys(out))[:MAX_WORDS]


def _kept(value: Any) -> Any:
    """Another key's value, kept if it is plain: a scalar, or a short list of scalars (a mapping,
    a theme's settings, says nothing a reader asks about)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if abs(value) < 1e15 else _scalar(value, VALUE_CHARS)
    if isinstance(value, (list, tuple)):
        items = [_scalar(v, VALUE_CHARS) for v in value[:MAX_WORDS] if not isinstance(v, (dict, list, tuple))]
        return [i for i in items if i] or None
    if isinstance(value, dict):
        return None
    return _scalar(value, VALUE_CHARS)


_ZONE = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?$", re.I)


def iso_date(stated: str) -> str:
    """A stated date in ISO 8601, as sources keep times: ``2024-03-01`` stays a day,
    ``2024-03-01 10:00:00 +0100`` becomes ``2024-03-01T09:00:00Z``; "" if it is not one."""
    s = stated.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        try:
            return datetime.strptime(s, "%Y-%m-%d").strftime("%Y-%m-%d")
        except ValueError:
            return ""
    m = _ZONE.match(s)
    if not m:
        return ""
    zone = m.group(3) or ""
    zone = "+00:00" if zone.upper() in ("Z", "") else zone if ":" in zone else f"{zone[:3]}:{zone[3:]}"
    hour, rest = m.group(2).split(":", 1)
    time = f"{int(hour):02d}:{rest}" + (":00" if len(rest) == 2 else "")
    try:
        when = datetime.fromisoformat(f"{m.group(1)}T{time}{zone}")
    except ValueError:
        return ""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

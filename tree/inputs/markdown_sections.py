"""A markdown page cut where its author cut it: at every heading, into sections a reader can take
in at once, each titled by where it stands in the page.

Every heading level splits (``#`` to ``######``, and setext ``===``/``---`` underlines): a
reference page puts one setting or one function under each ``####``, and a reader asking about
``fetch-timeout`` wants that setting's entry, not one 160-line chunk of thirty settings. Adjacent
small sections are not merged back: each heading names what a reader asks about, the title path
already says what the parent said, and a merged entry would answer for its neighbours. A heading
with nothing under it but sub-headings makes no entry of its own: it stands in its children's
titles. Lines inside fenced code (``` or ~~~, closed by the same fence) are never headings.

A section's title is its page title, then the headings down to it: "npm-install › Synopsis",
"Config › Config Settings › fetch-timeout", as plain text (no backticks, links or emphasis), at
most ``TITLE_CHARS`` characters (middle headings give way to "…" first). A section whose own
heading is longer than its title can show keeps the heading, as written, as its first line.

A section longer than ``SECTION_WORDS`` words (or ``PART_CHARS`` indexed characters) is cut
between paragraphs into parts of even size; a table is a unit of its own, kept whole when it
fits, and cut between rows when it does not, each piece repeating the header row and its
delimiter line, so a row is never read without what its columns mean.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..text.searchable import searchable
from .verbatim_parts import PART_CHARS, _paragraph_pieces, _split_chars, paragraphs

# words of one section before it is cut into parts: about a screen of prose. Split at every
# heading, two documentation sets (undici's, Node.js's API) have sections of a median 33 and 54
# words, 95th percentile 178 and 354, 99th 362 and 664: 400 cuts 1 in 25 sections at most, the
# long reference tables, long examples and pages of prose under one heading, and keeps whole the
# ordinary section a reader asks about
SECTION_WORDS = 400
TITLE_CHARS = 160     # a section's title: the page and the headings down to it
HEADING_CHARS = 60    # the page's or a parent heading's part of a title
OWN_CHARS = 90        # the section's own heading's: "How can I prevent my package from being published…" is asked by its end
_SCAN_CHARS = 500     # of a heading read for a title: the regular expressions below stay linear
SEPARATOR = " › "

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(={3,}|-{3,})[ \t]*$")
# at any indentation, as the curator always read fences: a fence in a list item is indented
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_NOT_PARAGRAPH = re.compile(r"^\s*(?:[-*+>|]\s|\d+[.)]\s|<|#|```|~~~|\s{4})|\|")
TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Section:
    """One heading's text: ``headings`` from the page's top down to its own (plain text, the page
    title's own heading left out), ``name`` its own heading ("" before the first), ``body``,
    ``written`` its heading as the page has it."""

    headings: tuple[str, ...]
    name: str
    body: str
    written: str = ""

    @property
    def text(self) -> str:
        """The body, after the heading as written when a title cannot show all of it: no word
        of the page is only in a title that cut it."""
        return f"{self.written}\n\n{self.body}" if len(self.name) > OWN_CHARS else self.body


class FenceTracker:
    """Whether a line is in fenced code: a fence closes only with its own character, at least
    as long (a ``` line inside a ~~~ block is code)."""

    def __init__(self) -> None:
        self.fence = ""

    def code(self, line: str) -> bool:
        """Feed one line; True when it is part of fenced code (its fences included)."""
        if self.fence:
            stripped = line.strip()
            if stripped and set(stripped) == {self.fence[0]} and len(stripped) >= len(self.fence):
                self.fence = ""
            return True
        m = _FENCE_OPEN.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            self.fence = m.group(1)
            return True
        return False


def plain_heading(text: str) -> str:
    """A heading's words as a title shows them: "`fetch-timeout`" -> "fetch-timeout",
    "[npm](/cli) **install** {#install}" -> "npm install"."""
    t = text[:_SCAN_CHARS]
    t = re.sub(r"\s*\{[#.][^}]*\}\s*$", "", t)                    # {#anchor .class}
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)              # links and images
    t = re.sub(r"!?\[([^\]]*)\]\[[^\]]*\]", r"\1", t)
    t = re.sub(r"<(https?://[^>]+)>", r"\1", t)
    t = re.sub(r"</?[A-Za-z][^>]*>", "", t)                       # inline HTML
    t = t.replace("`", "")
    t = re.sub(r"(\*\*|__)(.+?)\1", r"\2", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", t)
    t = re.sub(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", r"\1", t)
    t = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>])", r"\1", t)
    return " ".join(t.split())


def _headings(lines: list[str]) -> dict[int, tuple[int, str]]:
    """``{line index: (level, text)}`` of the headings outside fenced code; a setext heading is
    found at its underline, its text the single line above it (a line that starts a paragraph)."""
    found: dict[int, tuple[int, str]] = {}
    fences = FenceTracker()
    prev_code = True
    for i, line in enumerate(lines):
        code = fences.code(line)
        if not code:
            m = _ATX.match(line)
            if m and (m.group(2) or "").strip():
                found[i] = (len(m.group(1)), m.group(2).strip())
            elif (_SETEXT.match(line) and i >= 1 and not prev_code and lines[i - 1].strip()
                  and i - 1 not in found and not _NOT_PARAGRAPH.match(lines[i - 1])
                  and (i < 2 or not lines[i - 2].strip() or i - 2 in found)):
                found[i] = (1 if line.strip()[0] == "=" else 2, lines[i - 1].strip())
        prev_code = code
    return found


def split(text: str, page_title: str = "") -> tuple[str, list[Section]]:
    """``(page title, sections)`` of a page's body (its front matter already off). The page title is
    ``page_title`` when given, else the page's only ``#`` heading when it comes first, else "";
    that heading, when it names the page, is left out of its sections' headings."""
    lines = text.split("\n")
    found = _headings(lines)
    # a setext heading's text line belongs to the heading, not to the body above it
    taken = {i - 1 for i, (_, t) in found.items() if _SETEXT.match(lines[i])}
    levels = [level for level, _ in found.values()]
    first = next(iter(found.values()), None)
    page = page_title
    sole_top = first is not None and first[0] == 1 and levels.count(1) == 1
    if not page and sole_top:
        page = plain_heading(first[1])
    drop_first = sole_top and plain_heading(first[1]).casefold() == page.casefold()
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    name, written, body = "", "", []
    n_heading = 0

    def close() -> None:
        text_ = "\n".join(body).strip("\n")
        if text_.strip():
            out.append(Section(tuple(h for _, h in stack), name, text_, written))

    for i, line in enumerate(lines):
        if i in taken:
            continue
        if i in found:
            close()
            level, raw = found[i]
            heading = plain_heading(raw)
            while stack and stack[-1][0] >= level:
                stack.pop()
            n_heading += 1
            if not (n_heading == 1 and drop_first):
                stack.append((level, heading))
            name, written, body = heading, raw, []
        else:
            body.append(line)
    close()
    return page, out


def title(page: str, headings: tuple[str, ...], part: int = 1) -> str:
    """"page › heading › ... › heading", at most ``TITLE_CHARS`` characters: the page and each
    parent heading cut to ``HEADING_CHARS``, the section's own to ``OWN_CHARS``, then the headings
    between the page and the section's own give way to "…" from the top down; ``part`` > 1 adds
    " (part n)"."""
    suffix = f" (part {part})" if part > 1 else ""
    budget = TITLE_CHARS - len(suffix)
    given = [h for h in (page, *headings) if h]
    names = [_cut(h, OWN_CHARS if i == len(given) - 1 and headings else HEADING_CHARS) for i, h in enumerate(given)]
    out = SEPARATOR.join(names)
    for k in range(1, len(names) - 1):
        if len(out) <= budget:
            break
        out = SEPARATOR.join([names[0], "…", *names[k + 1:]])
    return _cut(out, budget) + suffix


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ›") + "…"


# -- a long section in parts ---------------------------------------------------

def _cells(line: str) -> int:
    return len(re.split(r"(?<!\\)\|", line.strip().strip("|")))


def _table_at(lines: list[str], i: int) -> bool:
    """A GFM table starts at line ``i``: a row with a ``|``, then a delimiter line of as many cells."""
    return i + 1 < len(lines) and "|" in lines[i] and TABLE_DELIMITER.match(lines[i + 1]) is not None \
        and _cells(lines[i]) == _cells(lines[i + 1])


def blocks(text: str) -> list[tuple[str, bool]]:
    """``[(block, is_table)]``: the paragraphs of ``text`` (fenced code whole), with each table
    (a header row, its delimiter line, the rows with a ``|``) a block of its own."""
    out: list[tuple[str, bool]] = []
    for par in paragraphs(text):
        lines = par.split("\n")
        if FenceTracker().code(lines[0]):
            out.append((par, False))
            continue
        cur: list[str] = []
        i = 0
        while i < len(lines):
            if _table_at(lines, i):
                if cur:
                    out.append(("\n".join(cur), False))
                    cur = []
                j = i + 2
                while j < len(lines) and "|" in lines[j] and lines[j].strip():
                    j += 1
                out.append(("\n".join(lines[i:j]), True))
                i = j
                continue
            cur.append(lines[i])
            i += 1
        if cur:
            out.append(("\n".join(cur), False))
    return out


def table_pieces(table: str, words: int = SECTION_WORDS, chars: int = PART_CHARS) -> list[str]:
    """A table in pieces of whole rows, each of at most about ``words`` words and ``chars``
    characters and each headed by the table's header row and delimiter line."""
    lines = table.split("\n")
    head, rows = lines[:2], lines[2:]
    head_words, head_chars = len(" ".join(head).split()), len("\n".join(head)) + 1
    pieces: list[list[str]] = []
    n = c = 0
    for row in rows:
        w, size = len(row.split()), len(searchable(row)) + 1
        if pieces and pieces[-1] and (n + w > words - head_words or c + size > chars - head_chars):
            pieces.append([])
            n = c = 0
        if not pieces:
            pieces.append([])
        pieces[-1].append(row)
        n, c = n + w, c + size
    if not pieces:
        return [table]
    # a single row longer than a part (a pasted blob) is cut as any text is, as a last resort
    return [cut for p in pieces for cut in _split_chars("\n".join(head + p), chars)]


def parts(body: str, words: int = SECTION_WORDS, chars: int = PART_CHARS) -> list[str]:
    """A section's body in parts of at most about ``words`` words and ``chars`` indexed
    characters, cut between paragraphs (a longer paragraph between lines or sentences, code
    re-fenced; a table between rows, its header repeated), the parts of about even size."""
    total = len(body.split())
    if total <= words and len(searchable(body)) <= chars:
        return [body]
    units: list[str] = []
    for block, is_table in blocks(body):
        if is_table:
            units += table_pieces(block, words, chars)
        else:
            units += [p for piece in _paragraph_pieces(block, words) for p in _split_chars(piece, chars)]
    target = total / max(1, math.ceil(total / words))
    out: list[str] = []
    cur: list[str] = []
    n = c = 0
    for u in units:
        w, size = len(u.split()), len(searchable(u)) + 2
        if cur and (n >= target or n + w > words or c + size > chars):
            out.append("\n\n".join(cur))
            cur, n, c = [], 0, 0
        cur.append(u)
        n, c = n + w, c + size
    if cur:
        out.append("\n\n".join(cur))
    return out

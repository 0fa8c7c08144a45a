"""An entry's text as the sentences an answer can quote: paragraphs split at their full stops, a
table as its rows, each row read with its header (no LLM).

A user reads one sentence first, so what can be one must stand alone. Headings, code (fenced or
indented), HTML comments (``<!-- YAML added: v6.0.0 -->`` of generated API pages) and link
definitions (``[Yarn]: https://yarnpkg.com``) are left out: they say nothing a question asks.
A table is data: each body row is quoted with its header, its first cell leading and every other
cell named by its column ("fetch-retries — Default: 2 · Type: Number"), and a header line or
a separator row is never a sentence of its own (an answer used to be
"| Flag | Default | Type | Description |"). GitHub's tables without the outer pipes
("Flag | Default" over "--- | ---") are tables too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from memgrove.tree.text.analysis import terms as analyzed_terms
from memgrove.tree.text.word_forms import BASE_OF, STEMS

# A sentence ends at . ! or ? followed by a space and what can start a sentence; "3.50",
# "e.g. the" and "staging.kestrel.dev" do not end one. Chinese and Japanese end one at 。！？
# (and their full-width ！？), with or without a space, after any closing quote or bracket. An
# initial does not end one ("J.K. Rowling", "John F. Kennedy").
_SPLIT = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)[\"')\]]*\s+(?=[\"'(\[*`_]*[A-Z0-9])"
                    r"|(?<=[。！？])(?![」』）】〕\"'”’])\s*|(?<=[。！？][」』）】〕\"'”’])\s*")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
# a separator row: "| --- | :-: |", "---|---", "|-|-|" (GitHub asks for one dash per column)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$|^\s*\|\s*:?-+:?\s*\|\s*$")
_SPEAKER = re.compile(r"^\*\*([^*\n]{1,60})\*\*:\s*")   # "**Ana**: ..." in a windowed conversation entry
_LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])?")   # [text](url), [text][ref], [text][]
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
# the cells of a row read: a table has a few columns; a line of 2,000 pipes is no table to quote
MAX_CELLS = 40
# what joins a row's first cell to the rest, and its other cells to each other
LEAD, JOIN = " — ", " · "


def cells(row: str) -> list[str]:
    """The cells of a table row, as plain text: links as their text, ``\\|`` as a pipe."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [_EMPHASIS.sub(r"\2", _LINK.sub(r"\1", c.strip())).replace("\\|", "|")
            for c in _CELL_SPLIT.split(inner, maxsplit=MAX_CELLS)[:MAX_CELLS]]


def row_text(header: list[str], row: list[str]) -> str:
    """A body row with its header: "fetch-retries — Default: 2 · Type: Number" (empty cells left out)."""
    first, rest = (row[0] if row else ""), row[1:]
    named = [f"{h}: {v}" if h else v for h, v in zip(header[1:] + [""] * len(rest), rest) if v]
    if not first:
        return JOIN.join(named)
    return f"{first}{LEAD}{JOIN.join(named)}" if named else first


def table_rows(lines: list[str]) -> list[tuple[str, str, str]]:
    """A markdown table as (shown, scored, header) triples, one per body row: the row with its
    header (``row_text``), scored by its own cells; the header's words name what the row's values
    are ("Default"). A table without a separator row has no header: each line is a row."""
    rows = [ln.strip() for ln in lines if ln.strip()]
    if len(rows) >= 2 and _TABLE_RULE.match(rows[1]):
        header = cells(rows[0])
        out = []
        for row in rows[2:]:
            if _TABLE_RULE.match(row):
                continue
            values = cells(row)
            shown = row_text(header, values)
            if shown:
                out.append((shown, " ".join(v for v in values if v), " ".join(header)))
        return out
    return [(" ".join(c for c in cells(r) if c), " ".join(c for c in cells(r) if c), "")
            for r in rows if not _TABLE_RULE.match(r)]


def _starts_table(line: str, nxt: str | None) -> bool:
    return "|" in line and nxt is not None and bool(_TABLE_RULE.match(nxt))


class Quote(NamedTuple):
    """A piece of an entry an answer can quote: ``shown`` as quoted, ``scored`` as matched against
    the question, ``block`` (paragraphs and list items numbered from 1, a table's rows and a code
    block's lines share one), ``about`` (what it is about beyond its words: a row's header, what
    introduced its list, table or code), ``kind``: ``TEXT``, ``ROW`` or ``CODE``."""
    shown: str
    scored: str
    block: int
    about: str = ""
    kind: str = "text"
    heading: str = ""   # the heading it is under within the entry ("#### `fetch-retries`")


TEXT, ROW, CODE = "text", "row", "code"
# Documentation sites' markup that is no text: Hugo shortcodes ("{{% note %}}"), the markers of
# MkDocs admonitions and tabs ("!!! tip", '=== "Unix"'), whose indented content is text, not code.
_SHORTCODE = re.compile(r"\{\{[<%].*?[%>]\}\}")
_ADMONITION = re.compile(r"^\s*(?:!!!|\?\?\?\+?|===)\s*(?:\w[\w-]*)?\s*(?:\"[^\"]*\")?\s*$")
_TAB = re.compile(r'^\s*===\s*"([^"]+)"\s*$')
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)(?:\{[^}]*\})?")
# a code block's lines: at most this many are quotable (an example, not a listing), and a shell
# prompt is not part of the command
CODE_LINES = 12
_PROMPT = re.compile(r"^(?:\$|>|PS>|#)\s+")
_OUTPUT = re.compile(r"^(?:\s|Traceback|error|warning|Resolved|Installed|Using|Creating)", re.I)


def _code_lines(lines: list[str], lang: str) -> list[str]:
    """The lines of a code block worth quoting: commands without their prompt ("$ uv run ..."),
    a shell session's output left out; comments and blank lines left out."""
    shell = lang in ("console", "shell-session") or any(_PROMPT.match(ln) and ln.startswith("$") for ln in lines)
    out = []
    for ln in lines:
        if not ln.strip() or ln.strip().startswith(("//", "# ")) and not ln.strip().startswith("#!"):
            continue
        if shell:
            if not ln.startswith(("$ ", "PS> ", "> ")):
                continue       # output of the command above it
            ln = _PROMPT.sub("", ln)
        out.append(ln.strip())
    return out[:CODE_LINES]


def quotable(text: str) -> list[Quote]:
    """The pieces of an entry's body an answer can quote (``Quote``), in order.

    Paragraphs and list items are split into sentences (line breaks inside a paragraph read as
    spaces); a table gives one per body row (``table_rows``), a fenced code block one per line
    (``_code_lines``), read with the sentence before it; headings, indented code, HTML comments,
    link definitions and site markup (shortcodes, admonition and tab markers) are left out.
    """
    out: list[Quote] = []
    para: list[str] = []
    blocks = [0]
    table: list[str] = []
    code: list[str] = []
    lang = ""
    intro = [""]          # the sentence ending in ":" that introduced the list or table being read
    heading = [""]        # the heading of the section being read: what its sentences are about
    comment = fenced = False
    indented_text = False  # inside an admonition or a tab: its indented lines are text

    def flush_para(item: bool = False) -> None:
        if para:
            joined = " ".join(" ".join(para).split())
            blocks[0] += 1
            said = [p.strip() for p in _SPLIT.split(joined) if p.strip()]
            about = intro[0] if item else ""
            out.extend(Quote(s, s, blocks[0], about, TEXT, heading[0]) for s in said)
            if said and said[-1].rstrip("*_`").endswith(":"):
                intro[0] = said[-1]
            elif not item:
                intro[0] = ""
            para.clear()

    def flush_table() -> None:
        if table:
            blocks[0] += 1
            out.extend(Quote(shown, scored, -blocks[0], f"{head} {intro[0]}".strip(), ROW, heading[0])
                       for shown, scored, head in table_rows(table))
            intro[0] = ""
            table.clear()

    def flush_code() -> None:
        # what a code block shows is introduced by the sentence before it ("To install PyPy:")
        before = next((q.shown for q in reversed(out) if q.kind == TEXT), "") if out and out[-1].kind == TEXT else ""
        blocks[0] += 1
        out.extend(Quote(f"`{ln}`", ln, -blocks[0], before, CODE, heading[0]) for ln in _code_lines(code, lang))
        intro[0] = ""
        code.clear()

    lines = text.splitlines()
    item = False          # the paragraph being read is a list item (or follows an introduction)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if fenced:
            if stripped.startswith(("```", "~~~")):
                fenced = False
                flush_code()
            else:
                code.append(line)
            continue
        if comment:
            comment = "-->" not in stripped
            continue
        if stripped.startswith("<!--"):
            flush_para(item)
            comment = "-->" not in stripped
            continue
        if stripped.startswith(("```", "~~~")):
            flush_para(item)
            flush_table()
            fenced = True
            lang = stripped.lstrip("`~").split(" ", 1)[0].lower()
            continue
        stripped = _IMAGE.sub("", _SHORTCODE.sub("", stripped)).strip()
        if _ADMONITION.match(line):
            flush_para(item)
            indented_text = True
            tab = _TAB.match(line)
            if tab:            # a tab's label says what its content is about: '=== "Unix"'
                intro[0] = f"{tab.group(1)}:"
            continue
        if line.startswith(("    ", "\t")) and not para and not (indented_text or item):
            continue           # indented code
        if not line.startswith((" ", "\t")) and stripped:
            indented_text = False
        if table and "|" in stripped or stripped.startswith("|") \
                or _starts_table(stripped, lines[i + 1].strip() if i + 1 < len(lines) else None):
            flush_para(item)
            table.append(stripped)
            continue
        flush_table()
        if not stripped or _LINK_DEFINITION.match(line):
            flush_para(item)
            continue
        if _HEADING.match(line):
            flush_para(item)
            intro[0] = ""
            heading[0] = stripped.lstrip("#").strip()
            continue
        if _BULLET.match(stripped):
            flush_para(item)
            item = True
            stripped = _BULLET.sub("", stripped).strip()
        elif not para:
            # a paragraph right after an introduction is what it introduced; any later one is not
            item = bool(intro[0] and out and out[-1].shown == intro[0])
        m = _SPEAKER.match(stripped)
        if m:
            flush_para(item)
            stripped = f"{m.group(1)}: {stripped[m.end():]}"
        para.append(stripped)
    flush_para(item)
    flush_table()
    if fenced:
        flush_code()
    return out


_CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def word_count(text: str) -> int:
    """Words of ``text``; Chinese, Japanese and Korean write no spaces: two of their characters
    count as a word (roughly their average word length)."""
    return len(text.split()) + (len(_CJK_CHAR.findall(text)) // 2 if not text.isascii() else 0)


# the longest question repeated in an answer that says no entry states it
QUOTED_CHARS = 120
# How an answer that the evidence does not give begins (``not_stated``).
NOT_STATED = "No entry states"
_WHAT_IS = re.compile(r"^\W*(?:what|which)(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+(.{3,120}?)\W*$", re.I)


def not_stated(question: str) -> str:
    """What an answer says when no sentence of the evidence answers ``question``: "No entry states
    the default timeout of an HTTPS request" for "What is the default timeout of an HTTPS
    request?", else 'No entry states an answer to "<question>"' (for a long question, "No entry
    states what was asked")."""
    m = _WHAT_IS.match(question.strip())
    asked = " ".join(question.split())
    if m:
        return f"{NOT_STATED} {m.group(1)}"
    # a long request, or one of several sentences, is not repeated: the user just wrote it
    if len(asked) > QUOTED_CHARS or len(_SPLIT.split(asked)) > 1:
        return f"{NOT_STATED} what was asked"
    return f'{NOT_STATED} an answer to "{asked}"'



@lru_cache(maxsize=1)
def _irregular() -> dict[str, frozenset[str]]:
    """A term -> the forms analyzed to it that do not start like it ("go" <- "went", "mother" <- "mom",
    and the word families word_forms.STEMS keeps apart)."""
    out: dict[str, set[str]] = {}
    for form in (*BASE_OF, *STEMS):
        for term in analyzed_terms(form):
            out.setdefault(term, set()).add(form)
    return {t: frozenset(forms) for t, forms in out.items()}


@lru_cache(maxsize=256)
def mentions(question_terms: frozenset[str]) -> re.Pattern[str] | None:
    """A sieve for the sentences worth analyzing: a lowercased ASCII text that this does not match
    holds none of ``question_terms`` (a stem is a word's start but for its last two letters: "happi"
    of "happy", "possibl" of "possibility"; the irregular forms that analyze to a term are listed).
    None when a term is not ASCII (CJK bigrams, folded letters): then every sentence is analyzed."""
    if not question_terms or not all(t.isascii() for t in question_terms):
        return None
    irregular = _irregular()
    starts = {t[:max(2, len(t) - 2)] for t in question_terms}
    starts |= {form for t in question_terms for form in irregular.get(t, ())}
    return re.compile("|".join(re.escape(x) for x in sorted(starts, key=len, reverse=True)))


__all__ = ["CODE", "CODE_LINES", "JOIN", "LEAD", "NOT_STATED", "Quote", "ROW", "TEXT", "cells", "mentions", "not_stated", "quotable",
           "row_text", "table_rows", "word_count"]

"""Shared pieces of the verbatim curator (``curator``): text cut into paragraphs, ~220-word
chunks and ~80-word message parts, first sentences for titles and summaries, ISO times.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ..text.searchable import searchable

_FENCE = re.compile(r"^\s*(```|~~~)")
CHUNK_WORDS = 220
# a message longer than this many words is curated as linked parts of at most about this size
# (about a paragraph): a reader's context budget (a few hundred words) then buys the paragraph
# that matched, not a whole long reply; a typical message (a user's question, a person's chat
# line: BEAM's user messages have a median of 38 words, LoCoMo's none over 87) stays whole.
# BEAM 100K, R@200w / R@500w / R@10 at 150, 110, 80, 60, 40 words: 44.0 / 56.0 / 59.5,
# 46.0 / 57.0 / 59.7, 47.9 / 58.2 / 59.3, 48.0 / 58.8 / 59.1, 50.4 / 59.3 / 58.1, for 15.0k,
# 20.0k, 27.5k, 36.3k, 53.7k entries of 5,094 messages: 80 keeps most of the gain at about a
# paragraph, before whole user messages are cut and the entries multiply
PART_WORDS = 80
# characters of one part, at most: half the default indexed span of an entry (content_cap, 8,000)
PART_CHARS = 4000


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def _first_sentence(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", flat)
    s = m.group(1) if m else flat
    return s if len(s) <= limit else s[: limit - 1].rsplit(" ", 1)[0] + "…"


def _chunks(paragraphs: list[str], words: int = CHUNK_WORDS, chars: int = PART_CHARS) -> list[str]:
    """Paragraphs packed into parts of about ``words`` words and at most ``chars`` characters: a
    part longer than the indexed span of an entry would be stored but partly unsearchable."""
    out, cur, n, c = [], [], 0, 0
    for p in (piece for par in paragraphs for piece in _split_chars(par, chars)):
        size = len(searchable(p))   # embedded base64 is kept but never indexed: it does not count
        w = len(p.split())
        if cur and (n + w > words or c + size + 2 > chars):
            out.append("\n\n".join(cur))
            cur, n, c = [], 0, 0
        cur.append(p)
        n += w
        c += size + 2
    if cur:
        out.append("\n\n".join(cur))
    return out


def _split_chars(text: str, chars: int) -> list[str]:
    """``text`` in pieces of at most ``chars`` characters, cut at the last line break or space
    before the limit where there is one (a run without either, e.g. base64, is cut anywhere)."""
    if len(searchable(text)) <= chars:
        return [text]
    pieces = []
    while len(text) > chars:
        cut = max(text.rfind("\n", chars // 2, chars), text.rfind(" ", chars // 2, chars))
        cut = cut if cut > 0 else chars
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return pieces + [text] if text else pieces


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs; a fenced code block stays whole."""
    paras, cur, in_fence = [], [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if cur:
                paras.append("\n".join(cur).strip("\n"))
                cur = []
            continue
        cur.append(line)
    if cur:
        paras.append("\n".join(cur).strip("\n"))
    return [p for p in paras if p.strip()]


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def message_parts(text: str, words: int = PART_WORDS) -> list[str]:
    """A message's text in parts of at most about ``words`` words, cut between paragraphs (and
    within a longer paragraph between lines, else sentences); every word is kept, in order. A
    message of at most ``words`` words is one part, its whitespace flattened as before."""
    if len(text.split()) <= words:
        return [" ".join(text.split())]
    pieces = [piece for par in paragraphs(text) for piece in _paragraph_pieces(par, words)]
    parts, cur, n = [], [], 0
    for piece in pieces:
        w = len(piece.split())
        if cur and n + w > words:
            parts.append("\n\n".join(cur))
            cur, n = [], 0
        cur.append(piece)
        n += w
    if cur:
        parts.append("\n\n".join(cur))
    return parts


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _paragraph_pieces(par: str, words: int) -> list[str]:
    """A paragraph of more than ``words`` words cut at lines (a list, code) or else at sentence
    ends into pieces of at most about ``words`` words; a cut code block is closed and reopened
    with its fence, so each piece still reads as code."""
    if len(par.split()) <= words:
        return [par]
    lines = par.split("\n")
    fence = lines[0].strip() if _FENCE.match(lines[0]) else None
    units = lines if len(lines) > 1 else _SENTENCE_END.split(par)
    joiner = "\n" if len(lines) > 1 else " "
    # a run-on line or sentence longer than a part is cut between words, as a last resort
    units = [piece for u in units for piece in _at_most(u, words)]
    pieces, cur, n = [], [], 0
    for u in units:
        w = len(u.split())
        if cur and n + w > words:
            pieces.append(cur)
            cur, n = [], 0
        cur.append(u)
        n += w
    if cur:
        pieces.append(cur)
    if fence:   # the first piece opens the block and the last closes it; the ones between need both
        mark = fence[:3]
        for i, piece in enumerate(pieces):
            if i > 0:
                piece.insert(0, fence)
            if i < len(pieces) - 1:
                piece.append(mark)
    return [joiner.join(piece) for piece in pieces]


def _at_most(unit: str, words: int) -> list[str]:
    ws = unit.split()
    return [unit] if len(ws) <= words else [" ".join(ws[i:i + words]) for i in range(0, len(ws), words)]

"""Long inputs cut into pieces an LLM curator can take one at a time.

Plain functions, no LLM. A chunk holds whole paragraphs (a fenced code block
is never split, even when it alone is larger than the chunk size) or whole
conversation messages, and starts with the tail of the previous chunk, marked
as context already curated, so a fact that spans the cut is not lost. Each
chunk carries the provenance of what it holds.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from . import conversation_formats, markdown_sections
from .curator import _FENCE, _session_of, message_source, paragraphs
from ..base.errors import InvalidInput


@dataclass(frozen=True)
class Chunk:
    text: str                              # what to curate
    label: str                             # e.g. "conversation c1, messages D1:1–D1:18"
    sources: list[dict[str, str]] = field(default_factory=list)
    context: str = ""                      # the end of the previous chunk, already curated


def check_sizes(size: int, overlap: int) -> None:
    if size < 200:
        raise InvalidInput(f"chunk size {size} is too small (at least 200 characters)")
    if not 0 <= overlap < size:
        raise InvalidInput(f"chunk overlap {overlap} must be at least 0 and smaller than the chunk size {size}")


def _split_long(par: str, size: int) -> list[str]:
    """A paragraph above ``size`` cut at sentence ends (words, if a sentence is longer); code stays
    whole; a table is cut between rows, each piece under the table's header row and delimiter."""
    if len(par) <= size or _FENCE.match(par.lstrip().split("\n", 1)[0]):
        return [par]
    found = markdown_sections.blocks(par)
    if any(is_table for _, is_table in found):
        return [piece for block, is_table in found for piece in (
            markdown_sections.table_pieces(block, words=len(block.split()) + 1, chars=size) if is_table
            else _split_long(block, size))]
    pieces, cur = [], ""
    for sent in re.split(r"(?<=[.!?])\s+", par):
        while len(sent) > size:
            cut = sent.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            if cur:
                pieces.append(cur)
                cur = ""
            pieces.append(sent[:cut])
            sent = sent[cut:].lstrip()
        if cur and len(cur) + 1 + len(sent) > size:
            pieces.append(cur)
            cur = sent
        else:
            cur = f"{cur} {sent}" if cur else sent
    if cur:
        pieces.append(cur)
    return pieces


def _pack(units: list[str], size: int, sep: str) -> list[list[int]]:
    """Indexes of ``units`` grouped greedily into chunks of at most ``size`` characters."""
    groups: list[list[int]] = []
    n = 0
    for i, u in enumerate(units):
        if groups and groups[-1] and n + len(sep) + len(u) <= size:
            groups[-1].append(i)
            n += len(sep) + len(u)
        else:
            groups.append([i])
            n = len(u)
    return groups


def _tail(units: list[str], before: int, overlap: int, sep: str) -> str:
    """The last units before index ``before`` that fit in ``overlap`` characters."""
    out: list[str] = []
    n = 0
    for u in reversed(units[:before]):
        if n + len(u) > overlap:
            break
        out.insert(0, u)
        n += len(u) + len(sep)
    return sep.join(out)


def text_chunks(text: str, *, size: int, overlap: int, source: str | None = None,
                kind: str = "text", at: str = "") -> list[Chunk]:
    """Free text or a file's text in chunks of about ``size`` characters."""
    check_sizes(size, overlap)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the text to curate is empty")
    ref = source or "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    units = [piece for par in paragraphs(text) for piece in _split_long(par, size)]
    groups = _pack(units, size, "\n\n")
    out = []
    for n, g in enumerate(groups, 1):
        src = {"kind": kind, "ref": f"{ref}#part{n}" if len(groups) > 1 else ref}
        if at:
            src["at"] = at
        out.append(Chunk(text="\n\n".join(units[i] for i in g), label=f"{ref}, part {n} of {len(groups)}",
                         sources=[src], context=_tail(units, g[0], overlap, "\n\n")))
    return out


def message_line(m: dict[str, Any]) -> str:
    """One message as the curator sees it: id, time, speaker, text (the time resolves 'yesterday')."""
    when = f" ({m['time']})" if m.get("time") else ""
    return f"[{m['id']}]{when} {m['speaker']}: {' '.join(str(m['text']).split())}"


def conversation_chunks(conv: Any, *, size: int, overlap: int) -> list[Chunk]:
    """A conversation (any shape ``conversation_formats`` reads) in chunks of whole messages;
    a chunk never spans two sessions."""
    check_sizes(size, overlap)
    read = conversation_formats.normalize(conv)
    cid, msgs = read.id, read.messages
    lines = [message_line(m) for m in msgs]
    sessions = [_session_of(m) for m in msgs]
    groups: list[list[int]] = []
    start = 0
    for i in range(1, len(msgs) + 1):
        if i == len(msgs) or sessions[i] != sessions[start]:
            groups += [[start + j for j in g] for g in _pack(lines[start:i], size, "\n")]
            start = i
    out = []
    for g in groups:
        first, last = msgs[g[0]], msgs[g[-1]]
        span = f"message {first['id']}" if len(g) == 1 else f"messages {first['id']}–{last['id']}"
        sources = [message_source(cid, msgs[i], id_generated=read.id_generated) for i in g]
        earlier = _tail(lines, g[0], overlap, "\n") if g[0] > 0 and sessions[g[0] - 1] == sessions[g[0]] else ""
        out.append(Chunk(text="\n".join(lines[i] for i in g),
                         label=f"conversation {cid}, {sessions[g[0]].replace('_', ' ')}, {span}",
                         sources=[{k: v for k, v in s.items() if v} for s in sources], context=earlier))
    return out

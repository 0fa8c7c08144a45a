"""The verbatim curator: deterministic, no LLM.

Turns free text, files and conversations into curate operations (UPSERTs, so
curating the same input twice changes nothing), each entry keeping the exact
words and its provenance. Placement is by source and session:

    conversations/<conversation id>/<session>/<first message id>.md
    files/<file stem>/<section>.md
    notes/<yyyy_mm_dd>/<first words>[_part_<n>].md

Conversations are read in any shape ``conversation_formats`` knows (memgrove's,
OpenAI-style messages, LangChain messages).

Each name is claimed through a ``placement.Placer``: where two different inputs
give one name (notes that open alike, two ``README.md``, ids ``m-1`` and ``m_1``,
names without Latin letters), the later one gets a short digest suffix instead
of replacing the other.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import conversation_formats, dates
from .errors import InvalidInput
from .paths import folder_of, snake_case
from .placement import Owner, Placer, digest as _digest
from .questions import question_words
from .searchable import searchable

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")
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


def _markdown_sections(text: str) -> list[tuple[str, str]]:
    """``[(heading, body)]``, split on #..### headings outside code fences."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            sections.append((m.group(2).strip(), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(b).strip("\n")) for h, b in sections if h or "\n".join(b).strip()]


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
    mtime = at
    ops = []
    if path.suffix.lower() in (".md", ".markdown"):
        sections = _markdown_sections(text)
        doc_title = next((h for h, _ in sections if h), path.stem)
        used: set[str] = set()
        next_n: dict[str, int] = {}   # per base name, so thousands of equal headings stay linear
        for heading, body in sections:
            if not body.strip():
                continue
            if heading and heading != doc_title:
                title = f"{doc_title}: {heading}"
            else:
                title = doc_title if heading else f"{doc_title}: overview"
            parts = _chunks(paragraphs(body), words=len(body.split()) + 1) if len(searchable(body)) > PART_CHARS \
                else [body]
            for j, part in enumerate(parts, 1):
                name = base = (snake_case(heading) or "overview") + (f"_part_{j}" if j > 1 else "")
                n = next_n.get(base, 2)
                while name in used:
                    name, n = f"{base}_{n}", n + 1
                next_n[base] = n
                used.add(name)
                ops.append(_file_op(placer.entry(folder, name, owner), name, title if j == 1 else f"{title} ({j})",
                                    part, f"{ref}#{name}", mtime))
    else:
        for i, chunk in enumerate(_chunks(paragraphs(text)), 1):
            ops.append(_file_op(placer.entry(folder, f"part_{i}", owner), f"part_{i}",
                                f"{path.stem}: {_first_sentence(chunk, 70)}", chunk, f"{ref}#p{i}", mtime))
    return ops


def _file_op(path: str, name: str, title: str, body: str, ref: str, at: str) -> dict[str, Any]:
    return {
        "op": "UPSERT",
        "path": path,
        "title": title,
        "summary": _first_sentence(re.sub(r"```.*?```", " ", body, flags=re.S)) or title,
        "content": {"narrative": body},
        "sources": [{"kind": "file", "ref": ref, "at": at}],
        "reason": f"verbatim curator: section {name} of {ref.rsplit('#', 1)[0]}",
    }


def _session_of(msg: dict[str, Any]) -> str:
    if msg.get("session"):
        return snake_case(str(msg["session"])) or f"session_{_digest(str(msg['session']))}"
    t = str(msg.get("time") or "")
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", t)
    return f"session_{m.group(1)}_{m.group(2)}_{m.group(3)}" if m else "session_1"


def day_of(when: str) -> str | None:
    """``"8 May 2023"`` for a time that names a whole date ("1:56 pm on 8 May, 2023",
    "2023-05-08T13:56:00Z", "May 8, 2023"); None if it names none."""
    d = dates.day_of(when)
    return dates.day_label(d) if d else None


def when_label(msg: dict[str, Any]) -> str:
    """How an entry's title and lines say when a message was written: its day when
    the time names one (the clock time stays in the entry's sources), else the
    time as given. Three words fewer per message: what a reader needs to place a
    message ("yesterday" = the day before) in less of a context budget."""
    when = str(msg.get("time") or "")
    return day_of(when) or when


def _span(started: str, updated: str) -> str:
    """", from 8 May 2023 to 2 June 2023" for an export's dates, "" without them."""
    a, b = (day_of(started) or started if started else ""), (day_of(updated) or updated if updated else "")
    if a and b and a != b:
        return f", from {a} to {b}"
    return f", {a or b}" if a or b else ""


def check_conversation(conv: Any) -> tuple[str, list[dict[str, Any]]]:
    """The id and messages of a conversation in any shape ``conversation_formats`` reads."""
    c = conversation_formats.normalize(conv)
    return c.id, c.messages


def message_source(cid: str, m: dict[str, Any], *, now: datetime | None = None,
                   id_generated: bool = False) -> dict[str, str]:
    """A message's provenance: where it is in its conversation, when it was written and by whom
    (``role``, when the input names one), and what memgrove made up (``generated``): an id the
    input did not give, or the time of curation for a message that had none."""
    src = {"kind": "conversation", "ref": f"{cid}#{m['id']}", "at": str(m.get("time") or "")}
    generated = (["conversation id"] if id_generated else []) + list(m.get("generated", []))
    if not src["at"] and now is not None:
        src["at"] = _iso(now)
        generated.append("time")
    if m.get("role"):
        src["role"] = str(m["role"])
    if generated:
        src["generated"] = ", ".join(generated)
    return src


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


def ops_from_conversation(conv: Any, *, window: int = 1, placer: Placer | None = None,
                          now: datetime | None = None, part_words: int = PART_WORDS) -> list[dict[str, Any]]:
    """Each message (or ``window`` consecutive messages of a session) -> one entry; with window
    1, a message longer than ``part_words`` words -> linked entries, one per group of its
    paragraphs (``message_parts``), each with the message's sources (id, role, time).

    ``conv``: any shape ``conversation_formats`` reads. ``now``: the time of curation, the
    source's ``at`` (marked generated) for messages that give no time.
    """
    read = conversation_formats.normalize(conv)
    cid, msgs = read.id, read.messages
    if window < 1:
        raise InvalidInput("window must be at least 1")
    if part_words < 1:
        raise InvalidInput("part_words must be at least 1")
    placer = placer or Placer()
    conv_folder = placer.folder("conversations", snake_case(cid) or f"conversation_{_digest(cid)}",
                                Owner("conversation", (cid,)))
    speakers = list(dict.fromkeys(str(m["speaker"]) for m in msgs))
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    for m in msgs:
        session = _session_of(m)
        if groups and groups[-1][0] == session and len(groups[-1][1]) < window:
            groups[-1][1].append(m)
        else:
            groups.append((session, [m]))
    ops, seen_sessions = [], set()
    before: dict[str, Any] | None = None        # the message before this group, if in the same session
    for session, group in groups:
        first = group[0]
        who = list(dict.fromkeys(str(m["speaker"]) for m in group))
        # compact on purpose: whoever reads an entry (a person, an LLM with a context budget)
        # gets the words said, the speaker and the time once, and nothing twice
        if len(group) == 1:
            narratives = message_parts(str(first["text"]), part_words)
        else:
            lines = []
            for m in group:
                text = " ".join(str(m["text"]).split())
                when = f" ({when_label(m)})" if m.get("time") and when_label(m) != when_label(first) else ""
                lines.append(f"**{m['speaker']}**{when}: {text}")
            narratives = ["\n\n".join(lines)]
        first_id = str(first["id"])
        owner = Owner("conversation", tuple(f"{cid}#{m['id']}" for m in group))
        name = snake_case(first_id) or f"message_{_digest(first_id)}"
        # the speaker, even when it is only a role ("user, 8 May 2023"): a title of the message's
        # first 8 words ("user: Our staging database moved to port...") repeats them in the boosted
        # title field; measured in one run on BEAM 100K (3 chats, 54 questions), R@10 / R@200w /
        # R@500w / R@1000w fell 65.6 / 40.3 / 62.5 / 71.9 -> 63.1 / 37.3 / 56.2 / 69.0. The words are
        # the entry's summary, which listings and search results show
        title = " and ".join(who) + (f", {when_label(first)}" if first.get("time") else "")
        sources = [message_source(cid, m, now=now, id_generated=read.id_generated) for m in group]
        parts: list[dict[str, Any]] = []
        for i, narrative in enumerate(narratives, 1):
            many = len(narratives) > 1
            parts.append({
                "op": "UPSERT",
                "path": placer.entry(f"{conv_folder}/{session}", name if i == 1 else f"{name}_part_{i}", owner),
                "title": title + (f" (part {i} of {len(narratives)})" if many else ""),
                "summary": _first_sentence(narrative if many else str(first["text"])),
                "tags": who,
                "content": {"narrative": narrative},
                "sources": [dict(src) for src in sources],
                "reason": f"verbatim curator: message {first['id']} of conversation {cid}"
                          + (f", part {i} of {len(narratives)}" if many else ""),
            })
        op = parts[0]
        # a reply is also found by what it answers (the question's words as keywords); not an AI
        # assistant's reply: it restates the question in its own words, and the echo let long
        # replies outrank what the user said (BEAM: R@500w 8.9 -> 15.2 without keywords). The
        # user's answer to the assistant's question keeps them (BEAM, without: R@10 -0.5, 2/10)
        if before is not None and _session_of(before) == session and str(before["speaker"]) != str(first["speaker"]) \
                and not all(m.get("role") == "assistant" for m in group):
            asked = question_words(str(before["text"]))
            if asked:
                op["keywords"] = asked
        before = group[-1]
        if session not in seen_sessions:
            seen_sessions.add(session)
            op["context"] = {
                "domain": "Conversations curated verbatim, one folder per conversation and session.",
                "topic": (f"{read.title} (conversation {cid})" if read.title else f"Conversation {cid}")
                         + f" between {', '.join(speakers)}" + _span(read.started, read.updated) + ".",
                "subtopic": f"{session.replace('_', ' ').capitalize()} of conversation {cid}"
                            + (f", starting {first['time']}." if first.get("time") else "."),
            }
        ops += parts
    # each message entry links to the next one of its session: the search lends a hit's
    # score to its neighbours (``link_weight``) and readers can follow the thread
    for a, b in zip(ops, ops[1:]):
        if folder_of(a["path"]) == folder_of(b["path"]):
            a["related"] = [b["path"]]
    return ops

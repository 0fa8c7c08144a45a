"""The verbatim curator's conversations (``curator``): one entry per message (or window of
messages), long messages as linked parts, placed by conversation and session.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from . import conversation_formats
from ..text import dates
from ..base.errors import InvalidInput
from ..entries.paths import folder_of, snake_case
from .placement import Owner, Placer, digest as _digest
from ..text.questions import question_words
from .verbatim_parts import PART_WORDS, _first_sentence, _iso, message_parts


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

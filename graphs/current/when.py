"""When a question asks about, and when a statement was made (no LLM).

"Which port does staging use?" asks what holds now; "which port did staging use before the
network change?", "originally", "in March", "last year" ask what held then (``asks_past``, with
the end of the time named by ``asked_time``); "what inspired Caroline's painting?" and "when did
Ana go?" ask what happened, not what holds (``asks_state`` is false): a newer statement about
painting is no newer value of it. ``time_of``: when an entry's statements were made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone

from memgrove.tree.entries import validity
from memgrove.tree.text import dates

# "in March", "back in May", "during April": a month without a year, placed when it is read
_MONTH_ASKED = re.compile(r"\b(?:in|during|back in|as of|by)\s+(?:early |mid-?|late )?("
                          + "|".join(m for m in dates.MONTHS if len(m) > 3) + r")\b(?!\s+\d)", re.I)
# "before April": what held until April began
_MONTH_BOUND = re.compile(r"\b(?:before|until|till|prior to)\s+(?:early |mid-?|late )?("
                          + "|".join(m for m in dates.MONTHS if len(m) > 3) + r")\b(?!\s+\d)", re.I)
_LAST = re.compile(r"\blast (year|month|week)\b|\b(a|one|two|three|\d+) (years?|months?|weeks?) ago\b", re.I)
ORIGINAL = re.compile(r"\b(?:originally|at first|initially|in the beginning|first (?:set|chose|picked|had|was|were))\b",
                       re.I)


def time_of(sources: Sequence[dict], extra: dict | None = None, created: str = "",
            said: str = "") -> datetime | None:
    """When an entry's statements were made: the latest time a conversation's message among its
    sources was written (``at``, in the order of the messages' ids within one time), else the day
    of its ``validFrom``, of its creation, or that its label names. A file's time is not when its
    facts were stated (a checkout dates every page alike, within seconds): pages of a documentation
    set, or entries curated on one day, are of one time, never ordered by seconds."""
    got = [t + _in_order(str(s.get("ref") or "")) for s in sources or ()
           if s.get("kind") == "conversation" and "time" not in str(s.get("generated", ""))
           for t in [_parse(str(s.get("at") or ""))] if t is not None]
    if got:
        return max(got)
    for raw in ((extra or {}).get("validFrom"), created, said):
        day = dates.day_of(str(raw or "")) or (_parse(str(raw)).date() if raw and _parse(str(raw)) else None)
        if day is not None:
            return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return None


_DIGITS = re.compile(r"\d+")


def _in_order(ref: str) -> timedelta:
    """Messages of one conversation and time (a chat export dating its sessions, not its messages: BEAM's 148 and 182
    both "25 April 2024") keep the order of their ids ("conv#148" before "conv#182", "D1:3" before
    "D1:12"): a few microseconds each, never a second, so they order nothing said at another time."""
    digits = _DIGITS.findall(ref.rpartition("#")[2])
    if not digits:
        return timedelta(0)
    seq = 0
    for d in digits[-2:]:
        seq = seq * 10_000 + min(int(d), 9_999)
    return timedelta(microseconds=min(seq, 999_999))


def _parse(raw: str) -> datetime | None:
    if not raw:
        return None
    try:
        t = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    except ValueError:
        day = dates.day_of(raw)
        return datetime(day.year, day.month, day.day, tzinfo=timezone.utc) if day else None


# -- what the question asks ---------------------------------------------------------

# "Have I ever met Kelly ...?", "Have I completed any coin toss problems before?", "Did we ...?": whether
# something happened at all, not a value then or now (BEAM's contradiction questions: the rule turned
# "I've never completed any coin toss problems before" into a later statement about coin tosses)
_EVER = re.compile(r"\bever\b|^\W*(?:have|has|had|did)\s+(?:i|we|you|he|she|they|it|my|our|your|the)\b", re.I)


def asks_ever(question: str) -> bool:
    """The question asks whether something ever happened."""
    return bool(_EVER.search(question))


def asks_past(question: str) -> bool:
    """The question asks how things were ("before", "originally", "used to", "in March", "last year")."""
    if asks_ever(question):
        return False
    return validity.asks_about_past(question) or bool(
        _MONTH_ASKED.search(question) or _MONTH_BOUND.search(question) or _LAST.search(question)
        or dates.dates_asked(question) or dates.bounds_asked(question) or ORIGINAL.search(question))


# a question about what holds: present tense ("which port does staging use", "who is on call", "how many
# ... so far", "what is my highest score"), or a word asking for the current value
_STATE = re.compile(r"\b(?:is|are|am|does|do|has|have|now|current(?:ly)?|latest|so far|still|these days|nowadays|"
                    r"at the moment|right now|today)\b|\b(?:what|who|where|which|how|that|it|there)'s\b", re.I)
# a question about an event: "did", "was", "were" ask what happened, "when" when it did
_EVENT = re.compile(r"\b(?:did|was|were|had)\b", re.I)


# "What inspired ...", "Who painted ...": a verb in the past after the question word
_PAST_VERB = re.compile(r"^\W*(?:who|what|which|where|how)(?:\s+\w+)?\s+\w+ed\b", re.I)
_PRESENT_VERB = re.compile(r"^\W*(?:who|what|which|where)\s+\w+s\b", re.I)   # "Who maintains ...", "Who supplies ..."


def asks_state(question: str) -> bool:
    """The question asks what holds (now, or at a time it names), not what happened: the rule
    applies to these ("what inspired Caroline's painting?" asks about an event, and a newer
    statement about painting is no newer value of it)."""
    if _EVENT.search(question) or _PAST_VERB.search(question) or asks_ever(question):
        return False
    return bool(_STATE.search(question) or _PRESENT_VERB.search(question))


def asked_time(question: str, now: datetime | None) -> datetime | None:
    """The end of the time a question about the past names, or None ("before" names none)."""
    bound = [d for kind, d in dates.bounds_asked(question) if kind == "before"]
    if bound:
        return datetime(bound[0].year, bound[0].month, bound[0].day, tzinfo=timezone.utc)
    asked = dates.dates_asked(question)
    if asked:
        kind, d = asked[-1]
        end = d + (timedelta(days=1) if kind == "day" else timedelta(days=32))
        if kind != "day":
            end = end.replace(day=1)
        return datetime(end.year, end.month, end.day, tzinfo=timezone.utc)
    m = _MONTH_BOUND.search(question)
    if m and now is not None:
        month = dates.MONTHS[m.group(1).lower()]
        year = now.year if month <= now.month else now.year - 1
        return datetime(year, month, 1, tzinfo=timezone.utc)
    m = _MONTH_ASKED.search(question)
    if m and now is not None:
        month = dates.MONTHS[m.group(1).lower()]
        year = now.year if month <= now.month else now.year - 1
        end = date(year + month // 12, month % 12 + 1, 1)
        return datetime(end.year, end.month, end.day, tzinfo=timezone.utc)
    m = _LAST.search(question)
    if m and now is not None:
        if m.group(1):   # "last year": before this one began; "last month", "last week": a month, a week ago
            unit = m.group(1).lower()
            return datetime(now.year, 1, 1, tzinfo=timezone.utc) if unit == "year" else \
                now - timedelta(days=30 if unit == "month" else 7)
        n = {"a": 1, "one": 1, "two": 2, "three": 3}.get(m.group(2).lower()) or int(m.group(2))
        return now - timedelta(days={"year": 365, "month": 30, "week": 7}[m.group(3).lower().rstrip("s")] * n)
    return None


__all__ = ["ORIGINAL", "asked_time", "asks_ever", "asks_past", "asks_state", "time_of"]

"""Temporal validity: an entry closed by a newer one, and what search does with it.

A fact that changed is not deleted: ``SUPERSEDE`` closes the old entry (frontmatter
``supersededBy: NEW``, ``validUntil: <date>``) and the new one lists it in ``supersedes``.
The keys live in ``Entry.extra``, camelCase as written. Search then ranks a closed entry right
below the entry that replaced it (``with_validity``), unless the question asks about the past
("before", "previously", "used to", a date before ``validUntil``): then the value that held then
goes first among its chain (``past_first``). A closed entry is quoted with a label:
``(until 2 March 2026; since then: Staging database port)``; an answer names the new value
instead (graphs/answer_current.py: ``(until 2 March 2026; since then: 6543)``).

    >>> e = Entry(title="Port", extra={"supersededBy": "ops/db/port_6543.md", "validUntil": "2026-03-02"})
    >>> superseded_by(e), valid_until(e), is_current(e)
    ('ops/db/port_6543.md', datetime.date(2026, 3, 2), False)
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Callable, Mapping

from ..text import dates
from .entry import Entry

SUPERSEDED_BY, VALID_UNTIL, SUPERSEDES = "supersededBy", "validUntil", "supersedes"
KEYS = (SUPERSEDED_BY, VALID_UNTIL, SUPERSEDES)
# statements of a still-current entry that a newer entry replaced (SUPERSEDE with a ``statement``):
# ``[{"statement", "value", "by", "newValue", "since"}]``
SUPERSEDED_STATEMENTS = "supersededStatements"
# a chain of replacements is followed at most this far (a hand edit may have made a loop)
MAX_CHAIN = 20


def superseded_by(entry: Entry | Mapping[str, Any]) -> str:
    """The path of the entry that replaced this one, or ``""`` while it is current."""
    extra = entry.extra if isinstance(entry, Entry) else entry
    value = extra.get(SUPERSEDED_BY)
    return value.strip() if isinstance(value, str) else ""


def valid_until(entry: Entry | Mapping[str, Any]) -> date | None:
    """The day the entry stopped holding (``validUntil``), or None."""
    extra = entry.extra if isinstance(entry, Entry) else entry
    value = extra.get(VALID_UNTIL)
    return dates.day_of(str(value)) if value else None


def supersedes(entry: Entry | Mapping[str, Any]) -> list[str]:
    """The paths of the entries this one replaced."""
    extra = entry.extra if isinstance(entry, Entry) else entry
    value = extra.get(SUPERSEDES)
    if isinstance(value, str):
        value = [value]
    return [str(v).strip() for v in value or [] if str(v).strip()] if isinstance(value, (list, tuple, str)) else []


def is_current(entry: Entry | Mapping[str, Any]) -> bool:
    """True unless a newer entry replaced this one."""
    return not superseded_by(entry)


def label(until: date | None, newer: str) -> str:
    """How a closed entry is quoted: ``(until 2 March 2026; since then: <newer>)``, ``newer`` the
    value that replaced it ("6543") where it is known, else the entry that did. A day as titles and
    questions write it, not ISO: the label is read, not parsed."""
    when = f"until {dates.day_label(until)}" if until else "superseded"
    return f"({when}; since then: {newer})"


# words that ask about a time before now: a closed entry keeps its rank for them. "old" alone,
# not "how old" (an age), and "was" only with a word placing it earlier. Not "no longer" or "any
# more": "does staging still use 5432 any more?" asks what holds now
_PAST = re.compile(
    r"\b(?:before|previous(?:ly)?|used to|did (?:\w+ ){1,4}use to|formerly|former|originally|at first|earlier|until|prior|"
    r"in the past|back then|(?<!how )old|(?:was|were) (?:\w+ ){0,6}(?:earlier|first|then|once))\b",
    re.I)


def asks_about_past(question: str) -> bool:
    """Whether a question asks how things were, not how they are ("which port did staging use
    before March?", "what was the port previously?")."""
    return bool(_PAST.search(question))


def keeps_rank(question: str, until: date | None, asked: list[tuple[str, date]] | None = None) -> bool:
    """A closed entry keeps its rank for a question about the past, or naming a date before it closed."""
    if asks_about_past(question):
        return True
    asked = dates.dates_asked(question) if asked is None else asked
    return until is not None and any(d < until for _, d in asked)


def current_of(path: str, closed_by: Callable[[list[str]], dict[str, str]]) -> str | None:
    """The end of ``path``'s chain of replacements (``closed_by`` maps paths to their
    ``supersededBy``); None when the chain loops."""
    seen = {path}
    cur = path
    for _ in range(MAX_CHAIN):
        nxt = closed_by([cur]).get(cur, "")
        if not nxt:
            return cur
        if nxt in seen:
            return None
        seen.add(nxt)
        cur = nxt
    return None


def with_validity(question: str, order: list[tuple[str, float]], closed: Mapping[str, tuple[str, date | None]],
                  closed_by: Callable[[list[str]], dict[str, str]]) -> list[tuple[str, float]]:
    """The ranking step: each closed entry of ``order`` (``closed``: path -> (supersededBy,
    validUntil)) goes right below the current entry of its chain, which takes its place if it
    ranked lower or not at all. For a question about the past it is the other way round
    (``past_first``). An order without a closed entry is returned as it is."""
    if not any(p in closed for p, _ in order):
        return order
    # "before 24 April" asks about the day before it; "since"/"after" a day, about what holds now
    asked = dates.dates_asked(question) + [("day", d - timedelta(days=1)) for kind, d in dates.bounds_asked(question)
                                           if kind == "before"]
    about_past = asks_about_past(question)
    if about_past or asked:
        past = past_first(order, closed, closed_by, asked, undated=about_past)
        if past is not None:
            return past
    out = list(order)
    for p, _s in order:
        if p not in closed or keeps_rank(question, closed[p][1], asked):
            continue
        cur = current_of(p, closed_by)
        if cur is None or cur == p:
            continue
        i = next(k for k, (q, _) in enumerate(out) if q == p)
        j = next((k for k, (q, _) in enumerate(out) if q == cur), None)
        if j is not None and j < i:
            continue
        if j is not None:
            del out[j]
        out.insert(i, (cur, out[i][1]))
    return out


def past_first(order: list[tuple[str, float]], closed: Mapping[str, tuple[str, date | None]],
               closed_by: Callable[[list[str]], dict[str, str]], asked: list[tuple[str, date]],
               *, undated: bool) -> list[tuple[str, float]] | None:
    """For a question about the past, the entry of each chain of replacements that answers it goes
    first among the chain's entries in ``order``: with a date asked, the entry that held on it (the
    earliest closed after it); without one ("before", "previously"), the last value before the
    current one. None when the question names a date no closed entry held at and does not otherwise
    ask about the past (the step then treats it as any question)."""
    days = [d for _, d in asked]
    chains: dict[str, list[str]] = {}
    for p, _s in order:
        end = current_of(p, closed_by) if p in closed else p
        if end is not None:
            chains.setdefault(end, []).append(p)
    out = list(order)
    moved = False
    for end, members in chains.items():
        olds = [p for p in members if p in closed]
        if days:
            held = [p for p in olds if closed[p][1] is not None and any(d < closed[p][1] for d in days)]
            answer = min(held, key=lambda p: closed[p][1]) if held else None
        else:
            answer = next((p for p in olds if closed[p][0] == end), None) if undated else None
        if answer is None:
            continue
        moved = True
        first = next(k for k, (q, _) in enumerate(out) if q in members)
        i = next(k for k, (q, _) in enumerate(out) if q == answer)
        if i > first:
            out.insert(first, out.pop(i))
    return out if moved or undated else None


def current_first(question: str, hits: list) -> list:
    """``hits`` (anything with ``path``, ``superseded_by`` and ``valid_until``) reordered as
    ``with_validity`` orders paths: a closed hit right below the hit that replaced it, unless the
    question asks about the past. For a caller that re-sorted the search's order (tier 2 sorts by
    confidence)."""
    closed = {h.path: (h.superseded_by, dates.day_of(h.valid_until) if h.valid_until else None)
              for h in hits if getattr(h, "superseded_by", "")}
    if not closed:
        return hits
    by_path = {h.path: h for h in hits}
    order = with_validity(question, [(h.path, 0.0) for h in hits], closed,
                          lambda paths: {p: closed[p][0] for p in paths if p in closed})
    return [by_path[p] for p, _ in order if p in by_path]

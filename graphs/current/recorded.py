"""What replaced a value, as an answer quotes it: "(until 2 May 2026; since then: 6543)".

A closed entry (``supersededBy``) is quoted with the value its statement has in the entry that
closed it (``closed_label``), not who said that entry; a statement an approved ``dream`` finding
recorded as replaced in an entry left open (``supersededStatements``) is left out of an answer
about now when the entry that replaced it is at hand, and quoted with its new value
(``Recorded``, ``recorded_of``, ``with_recorded``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from memgrove.tree.entries import validity
from memgrove.tree.hygiene.statement_values import proper_words, statements

from .statements import READ_CHARS, Dated, Plan, same_subject, value_as_written
from .when import asks_past, asks_state


def closed_label(old_text: str, new_text: str, until: date | None) -> str:
    """A closed entry's label naming what replaced it: ``(until 2 May 2026; since then: 6543)``,
    the value its statement gives in the entry that closed it (``new_text``); when no one value
    changed, the newer entry's statement sharing most of the closed one's subject words (what it
    says now, not who said it); "" when none shares any."""
    proper = proper_words([old_text[:READ_CHARS], new_text[:READ_CHARS]])
    olds = [Dated(0, s, None) for s in statements(old_text[:READ_CHARS], proper) if s.values and s.subject]
    news = [Dated(1, s, None) for s in statements(new_text[:READ_CHARS], proper) if s.values and s.subject]
    best: tuple[int, str] | None = None
    closest: tuple[int, str] | None = None
    for a in olds:
        for b in news:
            shared = len(a.statement.subject & b.statement.subject)
            got = same_subject(a, b, frozenset(), lambda t: 1.0)
            if got and (best is None or shared > best[0]):
                best = (shared, value_as_written(got[2], b.statement.sentence))
            if shared and (closest is None or shared > closest[0]):
                closest = (shared, b.statement.sentence.strip())
    if best is None and closest is not None and len(closest[1].split()) <= LABEL_WORDS:
        best = closest
    return validity.label(until, best[1]) if best else ""


# the longest statement a label quotes whole (a longer one: the newer entry's title)
LABEL_WORDS = 25


# a sentence longer than this is quoted by its clause that answers (a run-on chat sentence of ten
# clauses holds its answer in one)


@dataclass(frozen=True)
class Recorded:
    """A statement of a chosen entry that an approved ``dream`` finding recorded as replaced
    (``supersededStatements``: the entry stays open for what else it says)."""

    body: int
    sentence: str
    new_value: str
    since: date | None
    newer_here: bool     # the entry that replaced it is among those answered from


def recorded_of(extra: dict, body: int, paths: Sequence[str]) -> list[Recorded]:
    """The replaced statements an entry's ``supersededStatements`` records
    (``[{"statement", "value", "by", "newValue", "since"}]``, tree/hygiene/find_superseded.py)."""
    got = extra.get("supersededStatements") if isinstance(extra, dict) else None
    out = []
    for x in got if isinstance(got, list) else []:
        if isinstance(x, dict) and x.get("statement"):
            since = validity.valid_until({validity.VALID_UNTIL: x["since"]}) if x.get("since") else None
            out.append(Recorded(body, str(x["statement"]), str(x.get("newValue") or ""), since, x.get("by") in paths))
    return out


def with_recorded(p: Plan, question: str, recorded: Sequence[Recorded]) -> Plan:
    """``p`` with what dream recorded: for a question about now, a replaced statement whose newer entry
    is among those answered from is left out (as ``plan`` leaves out an older value); quoted, it says
    what replaced it ("(until 2 May 2026; since then: 6543)")."""
    past = asks_past(question)
    for r in recorded:
        if r.new_value:
            p.quoted_labels.setdefault(r.sentence, validity.label(r.since, r.new_value))
        if not past and r.newer_here and asks_state(question) and r.sentence in p.bodies[r.body]:
            p.bodies[r.body] = p.bodies[r.body].replace(r.sentence, " ", 1)
            p.masked.append(r.sentence)
            p.changed = True
    return p


__all__ = ["Recorded", "closed_label", "recorded_of", "with_recorded"]

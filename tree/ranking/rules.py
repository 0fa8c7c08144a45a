"""The last ranking steps: entries placed for what they are, not for how they match. A closed
entry goes below the entry that replaced it (``place_closed``, tree/entries/validity.py), and the user's
standing rules follow the best hits (``place_rules``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..text import standing
from ..entries import validity
from ..index.catalog import Traits
from ..settings import TreeSettings
from .table import Table


def place_closed(t: Table, st: TreeSettings) -> Table:
    """An entry a newer one superseded goes right below the entry that replaced it, which takes its
    place if it ranked lower or not at all, unless the question asks about the past ("before",
    "used to", a date before ``validUntil``). The chains of replacements were gathered
    (``closed_by``); an order without a closed entry is ranked as before. No setting: a closed fact
    is not a knob."""
    closed = {p: (tr.superseded_by, tr.valid_until) for p, tr in t.traits.items() if tr.superseded_by}
    chains = t.closed_by
    order = validity.with_validity(t.query, t.order or [], closed,
                                   lambda paths: {p: chains[p] for p in paths if p in chains})
    return replace(t, order=order)


def place_rules(t: Table, st: TreeSettings) -> Table:
    """``standing_rules``: the user's rules after the best ``RULES_AFTER`` hits, matched or not,
    while they are at most ``standing_rules``; beyond, those the search found and, with meaning
    (``cosines``), the one closest in meaning to the question."""
    order = t.order or []
    return replace(t, order=with_rules(order, rules_for(order, t.traits, t.rules, st.standing_rules, t.cosines)))


# the user's standing rules follow this many of the best hits: the best matches still lead (a
# tier that reads the top hit reads the best match), and a budget of a few hundred words still
# reaches the rules. BEAM 100K, simulated on the hits without rules (R@200w 48.0, R@5 52.7): all
# rules after 2 / 3 / 5 hits, R@200w 51.9 / 50.0 / 45.6, R@5 45.3 / 49.7 / 49.8; run after 3: 49.3, 50.1
RULES_AFTER = 3


def with_rules(order: list[tuple[str, float]], rules: list[str], after: int = RULES_AFTER) -> list[tuple[str, float]]:
    """``order`` with the ``rules`` that are not among its first ``after`` entries placed
    right after them, each with the score of the entry before it: the ones the search found
    first, best first, then the others in the rules' order. A rule the user set for every
    request is part of every answer's context, whatever its words."""
    cut = min(after, len(order))
    head = {p for p, _ in order[:cut]}
    found = {p: sc for p, sc in order[cut:]}
    moved = sorted((p for p in rules if p not in head), key=lambda p: -found.get(p, -1.0))
    if not moved or not order:      # a search that found nothing finds no rules either
        return order
    score = order[cut - 1][1] if cut else 0.0
    placed = set(moved)
    rest = [x for x in order[cut:] if x[0] not in placed]
    return order[:cut] + [(p, score) for p in moved] + rest


def rules_for(order: list[tuple[str, float]], traits: Mapping[str, Traits], rules: list[str], limit: int,
              near: Mapping[str, float] | None = None) -> list[str]:
    """The user's rules a search brings, of ``rules`` (``Catalog.standing_rules``, the latest
    first): all of them while they are at most ``limit``, as custom instructions; beyond that the
    ones it found, best first (up to ``limit``), because which unmatched ones to bring would be a
    guess. BEAM 500K (10 rules a chat, 4 chats), the latest five unmatched ones brought too: R@10
    51.8 against 58.8 without rules. With the question's meaning (``near``: cosines, when
    ``semantic_weight`` is set) it is less of a guess: a rule says when it holds ("when I ask
    about eccentricity concepts") in words the later question rarely repeats ("the shape of an
    ellipse"), and the rule closest in meaning comes too, in the last place. Among BEAM 500K's
    rules it was the one an instruction-following question is about for 54 of 70."""
    if limit < 1:
        return []
    if len(rules) <= limit:
        return rules
    found = [p for p, _ in order if (t := traits.get(p)) is not None and t.standing == standing.RULE][:limit]
    near = near or {}
    close = max((p for p in rules if near.get(p, 0.0) > 0), key=lambda p: near[p], default=None)
    if close is None or close in found:
        return found
    return found[:limit - 1] + [close]

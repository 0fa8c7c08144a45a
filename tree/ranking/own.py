"""The first ranking steps: each candidate's own match, weighed by whose words it holds, and the
gap filter's floor, which judges that match before any lift.

Each step is ``step(table, settings) -> table`` (pipeline.py's ``STEPS``), reading only the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..text import roles
from ..index.catalog import Traits
from ..settings import TreeSettings
from .table import Row, Table, coverage, normalize, with_factor, with_lift


def weigh_roles(t: Table, st: TreeSettings) -> Table:
    """``assistant_weight``: in a chat with an AI assistant, what the user said outweighs the
    assistant's reply that repeats its words: the assistant's entries keep ``assistant_weight`` of
    their score, unless the question asks what the assistant said (tree/text/roles.py). Entries without
    roles are untouched. Every later lift an entry gets is weighed the same (``factors``), and its
    matched words cover the question for no other entry (the reply repeats the question's words:
    lifting by them undid the weight). Before the gap filter, so a user's message close behind the
    assistant's long reply stays.

    Measured with the widened cut (gather.py's ``with_full_weight``; R@10 / R@200w / R@500w; flat
    BM25 over the user's messages 51.5 / 41.3 / 50.8 on BEAM 100K, 49.3 / 38.4 / 49.1 on 500K): 100K
    62.5 / 49.4 / 64.1 at 0.15, 63.0 / 50.0 / 64.1 at 0.3, 62.8 / 49.8 / 64.2 at 0.5, 61.0 / 47.7 /
    62.3 at 0.7; 500K 55.6 / 45.0 / 55.5 at 0.15, 55.8 / 45.5 / 55.9 at 0.3, 56.2 / 45.5 / 56.4 at 0.5.
    At 0.5 the assistant's words keep a place at larger budgets (500K: 3.6% of the assistant's
    evidence within 1,000 words, 0.5% at 0.15). Before the cut was widened, a lower weight did
    better (R@500w 51.3 at 0.15, 46.1 at 0.5). LoCoMo, two people: unchanged."""
    found = {p: tr.role for p, _s, _m in t.rows if (tr := t.traits.get(p)) is not None}
    factors = roles.role_factors(t.query, found, st.assistant_weight)
    return replace(t, factors=factors, rows=with_factor(t.rows, factors))


def gap_filter(scored: list[tuple[str, float]], ratio: float) -> list[tuple[str, float]]:
    """Drop results scoring below ``ratio`` × the top score (input sorted best first)."""
    if not scored:
        return []
    floor = scored[0][1] * ratio
    return [(p, s) for p, s in scored if s >= floor]


def mark_gap(t: Table, st: TreeSettings) -> Table:
    """``gap_ratio``: the candidates whose own match (weighed by role) is below ``gap_ratio`` of the
    best are marked to leave (``kept``); they leave at ``cut_gap`` (lifts.py), after the lifts
    that weigh every candidate. The lifts only reorder what passed."""
    kept = frozenset(p for p, _ in gap_filter([(p, normalize(s)) for p, s, _ in t.rows], st.gap_ratio))
    return replace(t, kept=kept)


def standing_lift(raw: list[Row], traits: Mapping[str, Traits], idf: Mapping[str, float],
                  weight: float) -> dict[str, float]:
    """``{path: lift}`` for the candidates that state a standing instruction or preference
    (tree/text/standing.py): ``weight`` × the share of the query they match. They are kept past the
    gap filter: "which libraries does this project use?" shares one word with "Always include
    version numbers when I ask about libraries"."""
    if weight <= 0:
        return {}
    return {p: weight * coverage(m, idf) for p, _s, m in raw if (t := traits.get(p)) is not None and t.standing}


def lift_standing(t: Table, st: TreeSettings) -> Table:
    """``standing_weight``: an entry stating the user's standing instruction or preference passes
    the gap filter and gains ``standing_weight`` × its coverage of the question."""
    held = standing_lift(t.rows, t.traits, t.idf, st.standing_weight)
    kept = t.kept | frozenset(held) if t.kept is not None else None
    return replace(t, kept=kept, rows=with_lift(t.rows, held))

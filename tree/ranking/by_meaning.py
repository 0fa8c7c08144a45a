"""Ranking by meaning: the best of the order re-sorted by the closeness of the question's meaning
and each entry's (``semantic_weight``; the encoder and the vectors are tree/meaning/tree_meaning.py's).

Its cosines are the one thing ranking reads after ``gather``: ``read_cosines`` runs just before
the step (pipeline.py's ``Step.reads``), for the best ``MEANING_POOL`` of the order so far. A search
computes the few vectors still missing itself, the best-ranked first (``SEARCH_EMBEDS``,
tree/meaning/vector_claims.py), and hands the rest to the background embedder: which ones depends on that
order, and asking for every candidate's would read three times the entries a search reads now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..settings import TreeSettings
from ..meaning.vector_claims import NO_VECTOR  # noqa: F401 - an entry without its vector yet, see with_meaning
from .table import Table

if TYPE_CHECKING:
    from .gather import RankingInputs

# how many of the best hits ranking by meaning re-sorts: what was measured (benchmarks/HISTORY.md), and a
# search's cold cost (each entry's vector is computed once, tens of milliseconds)
MEANING_POOL = 50


def read_cosines(t: Table, st: TreeSettings, inputs: RankingInputs) -> Table:
    """The cosines of the best ``MEANING_POOL`` of the order, best first, and of the user's rules
    when they are more than ``standing_rules`` (``rules_for`` weighs them all by meaning); nothing
    without ``semantic_weight``, an encoder, or two hits to reorder."""
    if st.semantic_weight <= 0 or inputs.cosines is None or t.order is None or len(t.order) <= 1:
        return t
    pool = [p for p, _ in t.order[:MEANING_POOL]]
    if len(t.rules) > st.standing_rules:
        seen = set(pool)
        pool += [p for p in t.rules if p not in seen]
    return replace(t, cosines=inputs.cosines(t.query, pool))


def by_meaning(t: Table, st: TreeSettings) -> Table:
    """``semantic_weight``: the order's best re-sorted by score + ``semantic_weight`` × the top score
    × the cosine (``with_meaning``); an order whose cosines were not read stays as it is."""
    if t.cosines is None or t.order is None:
        return t
    return replace(t, order=with_meaning(t.order, t.cosines, st.semantic_weight))


def with_meaning(order: list[tuple[str, float]], cosines: Mapping[str, float], weight: float,
                 pool: int | None = None) -> list[tuple[str, float]]:
    """The best ``pool`` (``MEANING_POOL``) of ``order`` re-sorted by their score + ``weight`` × their
    top score × the cosine between the question's and the entry's sentence embeddings (below 0
    counts as 0), divided by 1 + ``weight`` to stay on the scores' scale; the rest follow, scaled
    alike. Ties keep ``order``'s order.

    BM25 and its lifts know the question's words; an embedding knows what they mean: "what did I
    decide about the database?" and "we'll go with Postgres" share no word. As a re-sort of the
    lexical best, it only reorders what the words found (the cosine alone ranks far worse: LoCoMo
    R@200w 49.7 against 70.1). At 0.5 (benchmarks/HISTORY.md, R@10 / R@200w / R@500w): LoCoMo 77.8 /
    70.1 / 80.1 -> 78.3 / 71.4 / 80.7, BEAM 100K 62.5 / 50.4 / 63.9 -> 63.5 / 51.4 / 66.0, BEAM 500K
    56.5 / 46.3 / 56.8 -> 58.6 / 47.3 / 58.9. The user's rules stay after the best three hits: re-sorted
    with the rest, those far in meaning from the question sank (BEAM 100K instruction following R@10
    90.8 -> 85.8), which is why it runs before ``with_rules``.

    An entry whose vector is not computed yet (``NO_VECTOR``) gains the mean lift of the pool's
    entries that have one: it keeps its place by its words among them, neither favoured (as it
    would be by its own score unscaled) nor punished (as by a cosine of 0, below every related
    entry's). When every entry has its vector, nothing changes."""
    if weight <= 0 or not order:
        return order
    pool = MEANING_POOL if pool is None else pool
    top = max(s for _p, s in order[:pool]) or 1.0
    known = [max(0.0, c) for p, _s in order[:pool] if p in cosines and (c := cosines[p]) == c]   # NaN != NaN
    unknown = sum(known) / len(known) if known else 0.0

    def cos(p: str) -> float:
        c = cosines.get(p, 0.0)
        return max(0.0, c) if c == c else unknown

    fused = [(p, (s + weight * top * cos(p) * (i < pool)) / (1.0 + weight)) for i, (p, s) in enumerate(order)]
    return sorted(fused, key=lambda x: -x[1])

"""The dense leg: candidates by meaning from every entry, fused with the word search's, before the
gather (pipeline.py runs it as the first step's ``Step.leg``).

The engine finds the entries that share the question's words; ranking by meaning (by_meaning.py)
only re-sorts the best of those. "what did we decide about the database?" and "we'll go with
Postgres" share no word: the second is found only by comparing meanings. Here the question's
vector meets every entry's (one matrix product, tree/meaning/matrix.py) and the ``dense_k``
closest join the engine's candidates, each as a row of the table like any other: the same traits,
roles, rules, validity and steps apply to it, whichever leg found it. Archived entries are in no
leg (the index and the matrix hold the tree's entries only); folder context files leave both legs
unless ``include_context_hits``. An entry without its vector yet is in the word leg only.

Two fusions (``dense_fusion``), on BM25's scale, since every later step is:

- ``score``: a candidate's score is its BM25 score (0 when only the dense leg found it) +
  ``dense_weight`` × the top BM25 score × its cosine (below 0 counts as 0). Every candidate of
  either leg has its cosine (the matrix holds them all).
- ``insert``: the engine's candidates keep their scores; an entry only the dense leg found comes in
  at ``dense_weight`` × the top BM25 score × its cosine (meaning then re-sorts the best, by_meaning.py).
- ``rrf``: reciprocal rank fusion, Σ over the legs of 1 / (``RRF_K`` + rank), the dense leg's weighed
  by ``dense_weight``, scaled so the best has the top BM25 score.

Without a top BM25 score (no word matched) the scale is 1. ``dense_k = 0``: no leg (the ranking of
before, exactly), and so is meaning off (``semantic_weight = 0``): the leg needs the encoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..settings import TreeSettings
from .cut import drop_context_hits
from .table import Candidates

if TYPE_CHECKING:
    from .gather import RankingInputs

RRF_K = 60          # the usual constant of reciprocal rank fusion (Cormack et al. 2009)
NO_TERMS: frozenset = frozenset()


def with_dense(query: str, raw: Candidates, st: TreeSettings, inputs: RankingInputs) -> Candidates:
    """The engine's candidates ``raw`` fused with the dense leg's ``dense_k`` nearest entries, best
    first; ``raw`` as it is when the leg is off, or meaning is (no encoder: ``inputs.dense`` None)."""
    if st.dense_k <= 0 or st.semantic_weight <= 0 or inputs.dense is None or inputs.cosines is None:
        return raw
    near = [(p, c) for p, c in inputs.dense(query, st.dense_k)]
    near = [(p, c) for (p, c, _m) in drop_context_hits([(p, c, NO_TERMS) for p, c in near], st)]
    if not near:
        return raw
    if st.dense_fusion == "rrf":
        return rrf(raw, near, st.dense_weight)
    if st.dense_fusion == "insert":
        return by_score(raw, near, {p: c for p, c in near if p not in {r[0] for r in raw}}, st.dense_weight)
    known = dict(near)
    left = [p for p, _s, _m in raw if p not in known]
    if left:
        known.update(inputs.cosines(query, left))
    return by_score(raw, near, known, st.dense_weight)


def by_score(raw: Candidates, near: list[tuple[str, float]], cosines: dict[str, float],
             weight: float) -> Candidates:
    """``score`` fusion: BM25 + ``weight`` × top × cosine, over both legs' candidates (a cosine
    not known, NaN or missing, counts as 0: the entry keeps its words' score)."""
    top = max((s for _p, s, _m in raw), default=0.0) or 1.0
    rows = {p: (s, m) for p, s, m in raw}
    for p, _c in near:
        rows.setdefault(p, (0.0, NO_TERMS))

    def cos(p: str) -> float:
        c = cosines.get(p, 0.0)
        return max(0.0, c) if c == c else 0.0
    return sorted(((p, s + weight * top * cos(p), m) for p, (s, m) in rows.items()), key=lambda r: -r[1])


def rrf(raw: Candidates, near: list[tuple[str, float]], weight: float) -> Candidates:
    """Reciprocal rank fusion of the two legs, on BM25's scale (the best fused gets the top score)."""
    top = max((s for _p, s, _m in raw), default=0.0) or 1.0
    fused: dict[str, float] = {}
    terms = {p: m for p, _s, m in raw}
    for i, (p, _s, _m) in enumerate(raw):
        fused[p] = 1.0 / (RRF_K + i + 1)
    for i, (p, _c) in enumerate(near):
        fused[p] = fused.get(p, 0.0) + weight / (RRF_K + i + 1)
    best = max(fused.values())
    return sorted(((p, top * f / best, terms.get(p, NO_TERMS)) for p, f in fused.items()), key=lambda r: -r[1])


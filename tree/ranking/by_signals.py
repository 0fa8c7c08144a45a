"""Signals, and the one scale every later step ranks on.

``weigh_signals`` scales each candidate's own relevance by the profile's importance, recency and
maturity (tree/entries/lifecycle.py; ``signals`` and ``days`` were gathered); ``one_scale`` turns the
candidates into the final order: own relevance (relative to the best match) plus the folder's lift,
divided back to 0..1. The steps after it reorder that order.
"""

from __future__ import annotations

from dataclasses import replace

from ..entries.lifecycle import rank_score
from ..settings import TreeSettings
from .table import Table, neutral


def _unlifted(t: Table) -> dict[str, float]:
    return dict(t.unlifted) if t.unlifted is not None else {p: s for p, s, _m in t.rows}


def weigh_signals(t: Table, st: TreeSettings) -> Table:
    """``profile``: each candidate's own relevance (its score before the folder's lift, relative to
    the best) scaled by its importance, recency and maturity. Its folder's lift is added after, so
    the ±10% of importance reorders near-ties of relevance, not of relevance plus lift (measured on
    LoCoMo: R@200w 65.7 -> 66.1)."""
    if not t.rows or neutral(t.profile):
        return t
    unlifted = _unlifted(t)
    top = max(unlifted[p] for p, _s, _m in t.rows) or 1.0
    own = {}
    for p, _s, _m in t.rows:
        sig = t.signals[p]
        own[p] = rank_score(unlifted[p] / top, sig.importance, t.days[p], sig.maturity, t.profile)
    return replace(t, own=own)


def one_scale(t: Table, st: TreeSettings) -> Table:
    """The final order: each candidate's own relevance (``own``, or its score relative to the best)
    plus its lift, divided by ``1 + lift_weight`` to stay on 0..1; best first (ties keep their
    order). ``lifted`` keeps each one's score after the lifts and its matched terms.

    Every profile leaves the scores on this linear scale (relevance relative to the best match),
    one without signals too: ranking by meaning adds to them, and on ``normalize``'s s/(1+s),
    where the best matches all sit near 1, a cosine outweighed the words (LoCoMo test conv-30,
    benchmark profile with meaning: R@5 76.5 -> 50.6)."""
    lifted = {p: (s, m) for p, s, m in t.rows}
    if not t.rows:
        return replace(t, lifted=lifted, order=[])
    unlifted = _unlifted(t)
    top = max(unlifted[p] for p, _s, _m in t.rows) or 1.0
    ranked = []
    for p, _s, _m in t.rows:
        lift = (lifted[p][0] - unlifted[p]) / top
        own = unlifted[p] / top if t.own is None else t.own[p]
        ranked.append((p, (own + lift) / (1.0 + t.lift_weight)))
    return replace(t, lifted=lifted, order=sorted(ranked, key=lambda x: -x[1]))

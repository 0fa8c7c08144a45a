"""The places among the best: one per source (``one_per_source``), then the coverage of the
question by the top of the ranking (``with_coverage``): two ranking steps of pipeline.py's ``STEPS``.

A question whose answer needs several pieces ("how many days between the move and the first
client meeting?", "which came first, the hike or the road trip?", "what did I say about the budget
across our chats?") needs *each* piece among the best hits, not the best-matching piece and its
near copies. Scored one entry at a time, the messages that say "move" fill the top and the one
that says "client meeting" waits below them.

``with_coverage`` re-picks the best ``COVER_POOL`` hits greedily, like maximal marginal relevance
(Carbonell and Goldstein) with coverage of the question's terms as the novelty (xQuAD-like): each
next place goes to the hit with the most

    its score / the top score  +  weight × (the IDF-weighted share of the question's terms it
                                            matches that no hit placed above it matched
                                            + SESSION_SHARE if its folder holds no hit above it)

A hit that adds nothing new competes on its score alone; one that adds a term or another session
(folder: a conversation's session, a topic) of the story gains up to ``weight`` of the top score;
a new session counts only with a new term (a hit only a link brought, matching nothing, gains nothing).
An AI assistant's entry (``muted``) gains that times its role factor, as every other lift. The
best hit keeps the first place (the tiers read it as the best match); the hits below the pool
follow in their order. 0 turns it off.

Off by default (``cover_weight`` 0.0): on the held-out halves (benchmarks/results/heldout.md) no
variant helped. BEAM 100K dev at 0.5 −0.4 / −0.8 / +0.1 points (R@10 / R@200w / R@500w), test −0.5 /
−1.7 / +0.0, LoCoMo test ±0.0. BEAM's multi-evidence questions are vague ("the order in which I
brought up different aspects of X"): every piece matches the same few words, so the terms give
nothing to choose by, and a new session's best match is more often not evidence. It helps where
a question names its pieces ("the hike or the road trip"), and a user can turn it on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from ..index.catalog import Traits
from ..entries.paths import folder_of
from ..settings import TreeSettings
from .table import Table


def one_per_source(order: list[tuple[str, float]], traits: Mapping[str, Traits]) -> list[tuple[str, float]]:
    """The order with each source's first entry where it ranked and the source's later entries
    (the other parts of one long message) after every first one, in their order: a message
    takes one place among the best, and a budget buys another message before more of it."""
    seen: set[str] = set()
    first, later = [], []
    for p, sc in order:
        src = traits[p].source if p in traits else ""
        (later if src and src in seen else first).append((p, sc))
        if src:
            seen.add(src)
    return first + later


def place_sources(t: Table, st: TreeSettings) -> Table:
    """One place per source among the best (no setting: the pipeline without it is its arm)."""
    return replace(t, order=one_per_source(t.order or [], t.traits))


def cover(t: Table, st: TreeSettings) -> Table:
    """``cover_weight``: the best ``COVER_POOL`` re-picked one place at a time for their score and
    what each adds to the question's coverage (only for questions asking for several pieces while
    ``ONLY_ASKING_SEVERAL``)."""
    if st.cover_weight > 0 and (not ONLY_ASKING_SEVERAL or asks_several(t.query)):
        order = with_coverage(t.order or [], {p: m for p, (_s, m) in t.lifted.items()}, t.idf, st.cover_weight,
                              t.factors)
        return replace(t, order=order)
    return t

# the hits re-picked, and how many places the greedy choice fills (the rest of the pool follows in
# its order): about the 500-word budgets agents give memory, and the best 10
COVER_POOL = 30
COVER_HEAD = 15
# what a hit from a session (folder) no hit above it came from counts, beside a new term's share:
# "across our chats" asks for every session, in the same words each time
SESSION_SHARE = 0.25
# whether a hit from a new session must also add a new term to count it (else any term will do: a
# question asking "across our chats" repeats its words in every session)
SESSION_NEEDS_NEW_TERM = True


# a question that asks for several pieces: their order, the time between them, what was said across
# the chats, a comparison. Other questions (most: one fact) are ranked as before when ``ONLY_ASKING_SEVERAL``.
_SEVERAL = re.compile(
    r"\b(?:across|throughout|between|in (?:what|which) order|order in which|the order|sequence|came first|"
    r"first or|before or after|earlier|both|compare|comparison|differen(?:t|ce)s?|how many (?:days|weeks|months|"
    r"years|times|hours)|how long (?:after|before|between)|over time|(?:our|my|these|the) (?:conversations|chats|"
    r"sessions)|each time|every time|all the)\b", re.I)
ONLY_ASKING_SEVERAL = False


def asks_several(question: str) -> bool:
    """Whether ``question`` asks for several pieces of evidence (an order, a span of time, what was
    said across chats, a comparison), by its words."""
    return bool(_SEVERAL.search(question))


def with_coverage(order: list[tuple[str, float]], matched: Mapping[str, frozenset], idf: Mapping[str, float],
                  weight: float, muted: Mapping[str, float] | None = None,
                  folder: Callable[[str], str] = folder_of, pool: int | None = None,
                  head: int | None = None, session_share: float | None = None) -> list[tuple[str, float]]:
    """``order`` (path, score; best first) with its top ``head`` places picked greedily from its
    best ``pool`` for what each adds to the question's coverage (see the module's docstring);
    each hit keeps its own score. ``matched``: the analyzed question terms each hit matched."""
    pool = COVER_POOL if pool is None else pool
    head = COVER_HEAD if head is None else head
    share = SESSION_SHARE if session_share is None else session_share
    total = sum(idf.values())
    if weight <= 0 or len(order) < 3 or total <= 0 or head < 2:
        return order
    muted = muted or {}
    cand = order[:pool]
    top = max(s for _p, s in cand) or 1.0
    picked = [cand[0]]
    covered = set(matched.get(cand[0][0], ()))
    folders = {folder(cand[0][0])}
    left = cand[1:]
    while left and len(picked) < head:
        best_i, best_v = 0, float("-inf")
        for i, (p, s) in enumerate(left):
            new = sum(idf.get(t, 0.0) for t in matched.get(p, ()) if t not in covered) / total
            fresh = folder(p) not in folders and (new > 0 or not SESSION_NEEDS_NEW_TERM) and matched.get(p)
            gain = new + (share if fresh else 0.0)
            v = s / top + weight * gain * muted.get(p, 1.0)
            if v > best_v:
                best_i, best_v = i, v
        p, s = left.pop(best_i)
        picked.append((p, s))
        covered.update(matched.get(p, ()))
        folders.add(folder(p))
    return picked + left + order[pool:]

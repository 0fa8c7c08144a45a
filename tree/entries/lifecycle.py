"""Adaptive Knowledge Lifecycle: importance, recency, maturity and ranking.

Pure functions of numbers (no I/O), with ByteRover's constants as defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_IMPORTANCE = 50.0
RETRIEVAL_BONUS = 3.0
UPDATE_BONUS = 5.0
DAILY_DECAY = 0.995
RECENCY_DAYS = 30.0

MATURITY_LEVELS = ("draft", "validated", "core")


@dataclass(frozen=True)
class RankingProfile:
    """How signals adjust relevance: ``relevance × (1 + w_i·imp + w_t·rec) × boost[maturity]``.

    ``imp`` and ``rec`` are centred on a new entry (importance 50, recency 0.5) and
    scaled to −1..1, so ``w_i``/``w_t`` are the most they can move an entry's score.
    ``access_bonus``: entries delivered as evidence gain importance.
    """

    name: str
    w_importance: float
    w_recency: float
    boosts: dict[str, float]
    access_bonus: bool


# ByteRover added signals to relevance (0.6·bm25 + 0.2·importance + 0.2·recency) and gave +3
# importance to every search result. With a saturated relevance (s/(1+s) ≈ 0.9+ for every
# reasonable match) that let importance outrank relevance, and each search raised the same
# entries again: on LoCoMo, evidence recall@10 fell from 50.9 to 14.8 after a few hundred
# questions. Signals here only reorder near-ties (at most ±10% importance, ±5% recency,
# ±5% maturity), and only entries an answer delivered gain importance.
PROFILES = {
    # what ByteRover benchmarked: pure relevance, no bonus for being retrieved
    "benchmark": RankingProfile("benchmark", 0.0, 0.0, {"draft": 1.0, "validated": 1.0, "core": 1.0}, False),
    "product": RankingProfile("product", 0.10, 0.05, {"draft": 0.95, "validated": 1.0, "core": 1.05}, True),
}


def decayed_importance(importance: float, days_since_update: float) -> float:
    return importance * DAILY_DECAY ** max(0.0, days_since_update)


def recency(days_since_update: float) -> float:
    return math.exp(-max(0.0, days_since_update) / RECENCY_DAYS)


def clamp_importance(value: float) -> float:
    return max(0.0, min(100.0, value))


def next_maturity(current: str, importance: float) -> str:
    """Maturity with hysteresis: promote at 65/85, demote only below 60/35."""
    if importance >= 85:
        return "core"
    if current == "core":
        return "core" if importance >= 60 else ("validated" if importance >= 35 else "draft")
    if current == "validated":
        return "validated" if importance >= 35 else "draft"
    return "validated" if importance >= 65 else "draft"


def rank_score(relevance: float, importance: float, days_since_update: float, maturity: str,
               profile: RankingProfile) -> float:
    """``relevance`` (the BM25 score relative to the query's best, 0..1) adjusted by the signals."""
    imp = (decayed_importance(importance, days_since_update) - DEFAULT_IMPORTANCE) / DEFAULT_IMPORTANCE
    rec = 2.0 * recency(days_since_update) - 1.0
    return relevance * (1.0 + profile.w_importance * imp + profile.w_recency * rec) * profile.boosts.get(maturity, 1.0)

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
    name: str
    w_relevance: float
    w_importance: float
    w_recency: float
    boosts: dict[str, float]
    access_bonus: bool


PROFILES = {
    # what ByteRover benchmarked: pure relevance, no bonus for being retrieved
    "benchmark": RankingProfile("benchmark", 1.0, 0.0, 0.0, {"draft": 1.0, "validated": 1.0, "core": 1.0}, False),
    "product": RankingProfile("product", 0.6, 0.2, 0.2, {"draft": 0.85, "validated": 1.0, "core": 1.15}, True),
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


def rank_score(bm25_norm: float, importance: float, days_since_update: float, maturity: str,
               profile: RankingProfile) -> float:
    base = (
        profile.w_relevance * bm25_norm
        + profile.w_importance * decayed_importance(importance, days_since_update) / 100.0
        + profile.w_recency * recency(days_since_update)
    )
    return base * profile.boosts.get(maturity, 1.0)

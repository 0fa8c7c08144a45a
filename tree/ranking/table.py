"""The table ranking runs over: the candidates, what the steps read about them, what they decided.

``gather`` (gather.py) fills it once per search; each step of ``STEPS`` (pipeline.py) takes it with
the tree's settings and returns a new one (``dataclasses.replace``), reading nothing else. A step
never changes a column in place: the table it was given stays as it was.

Two scales and two ways of changing scores are here, because most steps share them: ``normalize``
(a BM25 score on 0..1) and ``coverage`` (the share of the question a set of terms covers); a lift
(``with_lift``: a share of the top score) and a factor (``with_factor``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..index.catalog import Traits
from ..entries.lifecycle import RankingProfile as Profile
from .signals import Signal

Row = tuple[str, float, frozenset]      # path, score, the analyzed question terms it matched
Candidates = list[Row]                  # the engine's, best first


@dataclass(frozen=True)
class Table:
    """One search's candidates and everything ranking knows about them, as columns keyed by path."""

    # the question
    query: str
    idf: Mapping[str, float]                      # the question's analyzed terms and their IDF
    limit: int                                    # the hits asked for
    profile: Profile                              # how signals weigh relevance (tree/entries/lifecycle.py)
    # the candidates, best first: their engine's BM25 score when gathered, each lifting step's after
    rows: list[Row]
    # what the steps read, gathered once (gather.py); each column holds the candidates and the
    # entries their links reach, or nothing when no step that reads it is on
    traits: Mapping[str, Traits] = field(default_factory=dict)        # day, role, source, standing, closed
    links: Mapping[str, list[str]] = field(default_factory=dict)      # one hop of links, either way
    reach: Mapping[str, set[str]] = field(default_factory=dict)       # entries within near_hops links
    fields: Mapping[str, list[list[str]]] = field(default_factory=dict)   # title and text, analyzed
    signals: Mapping[str, Signal] = field(default_factory=dict)       # importance, maturity
    days: Mapping[str, float] = field(default_factory=dict)           # days since its file changed
    closed_by: Mapping[str, str] = field(default_factory=dict)        # the chains of replacements
    rules: list[str] = field(default_factory=list)                    # the user's rules, latest first
    # the cosines of the question's and entries' meaning: read just before the step that uses them,
    # for the best of the order so far (by_meaning.py says why); None: not read
    cosines: Mapping[str, float] | None = None
    # what the steps decided
    factors: Mapping[str, float] | None = None    # role factors (an AI assistant's entries); None: not weighed
    kept: frozenset[str] | None = None            # passed the gap filter; None: every candidate
    unlifted: Mapping[str, float] | None = None   # scores before the folder's lift; None: no such lift
    lift_weight: float = 0.0                      # the folder lift's weight (the scale's divisor)
    own: Mapping[str, float] | None = None        # own relevance scaled by the signals; None: unscaled
    lifted: Mapping[str, tuple[float, frozenset]] = field(default_factory=dict)   # score after the lifts, terms
    order: list[tuple[str, float]] | None = None  # the final order and scores, from ``one_scale`` on


def neutral(prof: Profile) -> bool:
    """Whether a profile leaves relevance as it is (no importance, recency or maturity boost)."""
    return not (prof.w_importance or prof.w_recency or any(v != 1.0 for v in prof.boosts.values()))


def normalize(raw: float) -> float:
    """ByteRover's saturation: s / (1 + s)."""
    return raw / (1.0 + raw) if raw > 0 else 0.0


def coverage(matched, idf: Mapping[str, float]) -> float:
    """IDF-weighted fraction of the query terms a document matched: 1.0 = all of them.

    ByteRover's s/(1+s) saturates (every decent BM25F match scores above 0.9),
    so it cannot tell a document that answers every part of a question from one
    that shares a single common word with it; coverage can.
    """
    total = sum(idf.values())
    return sum(idf.get(t, 0.0) for t in matched) / total if total > 0 else 0.0


def with_lift(raw: list[Row], lift: Mapping[str, float], muted: Mapping[str, float] | None = None) -> list[Row]:
    """Each candidate gains ``lift[path]`` × the top score (a share of the best match), best
    first again; a ``muted`` entry (an AI assistant's, tree/text/roles.py) gains that times its
    factor, as its own match was. The folder, neighbourhood and time lifts are all of this form."""
    if not raw or not any(lift.values()):
        return raw
    muted = muted or {}
    top = max(s for _p, s, _m in raw)
    return sorted(((p, s + lift.get(p, 0.0) * muted.get(p, 1.0) * top, m) for p, s, m in raw),
                  key=lambda r: -r[1])


def with_factor(raw: list[Row], factor: Mapping[str, float]) -> list[Row]:
    """Each candidate's score times ``factor[path]`` (1 if absent), best first again."""
    if not factor:
        return raw
    return sorted(((p, s * factor.get(p, 1.0), m) for p, s, m in raw), key=lambda r: -r[1])

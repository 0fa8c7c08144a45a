"""Ranking's one read: everything the steps read about the candidates (``gather``), into one
``Table``, before the first step.

``gather`` reads, for the candidates and the entries their links reach, only what a step that
is on will read: traits (one catalog query), links and neighbourhoods, the indexed words (for
proximity), signals and file times (a profile with signals), the chains of replacements (closed
entries), the user's rules. Each step (pipeline.py) reads the table and nothing else; the one
exception, meaning's cosines, is by_meaning.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..text import analysis
from ..entries import validity
from ..index.catalog import Catalog
from ..entries.lifecycle import RankingProfile as Profile
from ..settings import TreeSettings
from .signals import Signals
from .table import Candidates, Table, neutral

# how many of the user's rules, the latest first, are read when ``rules_for`` weighs them by meaning
RULES_BY_MEANING = 100


@dataclass
class RankingInputs:
    """Where ``gather`` reads: the tree's settings and derived stores."""
    settings: TreeSettings
    catalog: Catalog
    signals: Signals
    root: Path
    clock: Callable[[], datetime]
    terms_of: Callable[[list[str]], dict[str, list[list[str]]]]   # entries' indexed fields, analyzed
    # the cosine between the question's and each entry's sentence embedding (semantic_weight > 0)
    cosines: Callable[[str, list[str]], dict[str, float]] | None = None
    # the dense leg: the entries nearest the question's meaning, (path, cosine) best first (dense_k > 0)
    dense: Callable[[str, int], list[tuple[str, float]]] | None = None


def neighbourhoods(catalog: Catalog, paths: list[str], hops: int,
                   known: Mapping[str, list[str]] | None = None) -> dict[str, set[str]]:
    """For each path, the entries within ``hops`` links of it (either direction), found one
    hop at a time for all paths together (``known``: the links already read)."""
    reach: dict[str, set[str]] = {p: set() for p in paths}
    frontier: dict[str, set[str]] = {p: {p} for p in paths}
    known = dict(known or {})
    for _ in range(hops):
        todo = sorted({q for f in frontier.values() for q in f} - known.keys())
        known.update(catalog.neighbours(todo) if todo else {})
        nxt: dict[str, set[str]] = {}
        for p, f in frontier.items():
            step = {n for q in f for n in known.get(q, ())} - reach[p] - {p}
            if step:
                reach[p] |= step
                nxt[p] = step
        if not nxt:
            break
        frontier = nxt
    return reach


def days_since_update(root: Path, rel: str, now: datetime) -> float:
    try:
        mtime = (root / rel).stat().st_mtime
    except FileNotFoundError:
        return 0.0
    return max(0.0, (now.timestamp() - mtime) / 86400.0)


def chains(catalog: Catalog, closed: Mapping[str, str], indexed: set[str]) -> dict[str, str]:
    """``closed`` (path -> the entry that replaced it, for the closed entries among ``indexed``)
    with the rest of each chain of replacements, read one link at a time for all chains together,
    as far as ``with_validity`` follows one (``validity.MAX_CHAIN``)."""
    by = dict(closed)
    asked = set(indexed)
    frontier = set(by.values()) - asked
    for _ in range(validity.MAX_CHAIN):
        if not frontier:
            break
        asked |= frontier
        got = catalog.closed_by(sorted(frontier))
        by.update(got)
        frontier = set(got.values()) - asked
    return by


def gather(query: str, raw: Candidates, idf: dict[str, float], limit: int, prof: Profile,
           inputs: RankingInputs) -> Table:
    """The table of ``raw`` (the engine's candidates after the cut) and what the steps read about
    them and about the entries their links reach, read once, and only for the steps that are on."""
    st, catalog = inputs.settings, inputs.catalog
    paths = [p for p, _, _ in raw]
    links = catalog.neighbours(paths) if raw and st.link_weight > 0 else {}
    reach = {}
    if len(raw) >= 2 and st.near_weight > 0 and st.near_hops > 0:
        reach = neighbourhoods(catalog, paths, st.near_hops, links)
    linked = sorted({q for qs in links.values() for q in qs} - set(paths))
    known = paths + linked
    traits = catalog.traits_of(known)
    fields = {}
    if len(raw) >= 2 and st.proximity_weight > 0:
        terms = analysis.terms(query)
        pairs = list(zip(terms, terms[1:]))
        todo = [p for p, _s, m in raw if any(a in m and b in m for a, b in pairs)]
        fields = inputs.terms_of(todo) if todo else {}
    signals, days = {}, {}
    if raw and not neutral(prof):
        signals = inputs.signals.get_many(known)
        now = inputs.clock()
        days = {p: days_since_update(inputs.root, p, now) for p in known}
    closed = {p: t.superseded_by for p, t in traits.items() if t.superseded_by}
    meaning = st.semantic_weight > 0 and inputs.cosines is not None
    return Table(query, idf, limit, prof, list(raw), traits=traits, links=links, reach=reach, fields=fields,
                 signals=signals, days=days, closed_by=chains(catalog, closed, set(traits)) if closed else {},
                 rules=catalog.standing_rules(RULES_BY_MEANING if meaning else st.standing_rules + 1))

"""Scoring of search results: BM25 normalization, gap filter, ranking, excerpts.

Plain functions: the tree calls them with the engine's raw hits, the query
pipeline's tiers call them too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .entries.paths import folder_of


@dataclass(frozen=True)
class Hit:
    """One search result. ``score`` is the normalized, ranked score in [0, 1+)."""

    path: str
    title: str
    score: float
    excerpt: str
    sources: list[dict[str, Any]] = field(default_factory=list)
    kind: str = "entry"
    bm25: float = 0.0
    summary: str = ""
    relevance: float = 0.0               # s/(1+s) of the raw BM25 score, before the ranking profile
    matched: tuple[str, ...] = ()        # analyzed query terms this entry matched
    coverage: float = 0.0                # IDF-weighted share of the query's terms it matched, 0..1
    label: str = ""                      # a closed entry's "(until 2026-03-02; since then: …)" (tree/entries/validity.py)
    superseded_by: str = ""              # a closed entry's replacement (frontmatter supersededBy)
    valid_until: str = ""                # the day it stopped holding (frontmatter validUntil)
    archived: bool = False               # found in .memgrove/archive/ (search with include_archived)

    def to_dict(self) -> dict[str, Any]:
        d = {"path": self.path, "title": self.title, "score": round(self.score, 4), "bm25": round(self.bm25, 4),
             "relevance": round(self.relevance, 4), "matched": list(self.matched),
             "coverage": round(self.coverage, 4),
             "kind": self.kind, "summary": self.summary, "excerpt": self.excerpt, "sources": self.sources}
        if self.label:
            d.update(label=self.label, superseded_by=self.superseded_by, valid_until=self.valid_until)
        if self.archived:
            d["archived"] = True
        return d


def hit_from_dict(d: dict[str, Any]) -> Hit:
    """The inverse of ``Hit.to_dict`` (graph state holds plain dicts)."""
    names = Hit.__dataclass_fields__
    values = {k: v for k, v in d.items() if k in names}
    values["matched"] = tuple(values.get("matched", ()))
    return Hit(**values)


def coverage(matched, idf: dict[str, float]) -> float:
    """IDF-weighted fraction of the query terms a document matched: 1.0 = all of them.

    ByteRover's s/(1+s) saturates (every decent BM25F match scores above 0.9),
    so it cannot tell a document that answers every part of a question from one
    that shares a single common word with it; coverage can.
    """
    total = sum(idf.values())
    return sum(idf.get(t, 0.0) for t in matched) / total if total > 0 else 0.0


def normalize(raw: float) -> float:
    """ByteRover's saturation: s / (1 + s)."""
    return raw / (1.0 + raw) if raw > 0 else 0.0


def gap_filter(scored: list[tuple[str, float]], ratio: float) -> list[tuple[str, float]]:
    """Drop results scoring below ``ratio`` × the top score (input sorted best first)."""
    if not scored:
        return []
    floor = scored[0][1] * ratio
    return [(p, s) for p, s in scored if s >= floor]


# a folder's coverage counts the matched terms of its best this many candidates (not muted): "the
# hike after the road trip" needs two messages, one per word. Counting every candidate let a long
# session cover any question by chance (a 40-message session matches each of its words somewhere)
# and lift all its entries over the one session that held the answer. R@10 / R@200w / R@500w with
# every candidate, the best 2, the best 3: BEAM 500K (629 questions) 56.2 / 45.5 / 56.4, 56.5 /
# 46.6 / 56.9, 56.5 / 46.3 / 56.8; LoCoMo R@200w / R@500w 69.9 / 80.0, 69.8 / 80.2, 70.1 / 80.1
# (R@100w 57.0, 56.1, 56.7): 3 keeps the folders of a few entries whole
FOLDER_BEST = 3


def with_folder_coverage(raw: list[tuple[str, float, frozenset]], idf: dict[str, float],
                         weight: float, muted: Mapping[str, float] | None = None,
                         best: int | None = None) -> list[tuple[str, float, frozenset]]:
    """Each candidate gains ``weight`` × the top score × its folder's coverage of the query.

    A folder's coverage is the IDF-weighted share of the query's terms that its
    ``best`` (``FOLDER_BEST``) candidates match between them: the session (or topic) where one
    message names the hike and another the road trip is the likely place for "the
    hike after the road trip", even when no single entry holds both words. The
    tree's folders are its topics, so this ranks by where an entry sits, not only
    by what it says. ``raw`` is ``(path, score, matched terms)``, best first; a
    ``muted`` entry (an AI assistant's) lends its folder no terms.
    """
    if not raw or weight <= 0:
        return raw
    muted = muted or {}
    best = FOLDER_BEST if best is None else best
    matched: dict[str, set[str]] = {}
    counted: dict[str, int] = {}
    for p, _s, m in raw:
        f = folder_of(p)
        matched.setdefault(f, set())
        if p not in muted and counted.get(f, 0) < best:
            counted[f] = counted.get(f, 0) + 1
            matched[f].update(m)
    cover = {f: coverage(m, idf) for f, m in matched.items()}
    return with_lift(raw, {p: weight * cover[folder_of(p)] for p, _s, _m in raw}, muted)


def with_neighbourhood_coverage(raw: list[tuple[str, float, frozenset]], idf: dict[str, float], weight: float,
                                near: dict[str, set[str]], muted: Mapping[str, float] | None = None,
                                ) -> list[tuple[str, float, frozenset]]:
    """Each candidate gains ``weight`` × the top score × the coverage of the query by
    the terms it and the candidates in its neighbourhood (``near[path]``: entries a
    few links away) match between them.

    Folder coverage finds the session where the question's words meet; this finds
    the place in it: "Why did Maria sit with the little girl at the shelter event?"
    is answered by the message about the girl, two messages after the one about
    the shelter, not by a message about the shelter in another part of the session.
    On LoCoMo, evidence recall at 500 words 77.6 without it, 78.9 with it (query graph).
    """
    if not raw or weight <= 0:
        return raw
    muted = muted or {}
    matched = {p: m for p, _s, m in raw if p not in muted}
    lift = {}
    for p, _s, m in raw:
        terms = set(m)
        for q in near.get(p, ()):
            terms.update(matched.get(q, ()))
        lift[p] = weight * coverage(terms, idf)
    return with_lift(raw, lift, muted)


# how many terms apart (stop words aside, either order) two of the question's neighbouring words may
# stand in an entry to count as said together: "initial deployment" in "the initial Vercel deployment"
PROXIMITY_WINDOW = 4


def proximity(terms: list[str], idf: Mapping[str, float], fields: list[list[str]], window: int | None = None) -> float:
    """The IDF-weighted share of the question's neighbouring term pairs (``terms`` in the
    question's order, stop words out) that stand within ``window`` (``PROXIMITY_WINDOW``) terms of
    each other in one of ``fields`` (an entry's title and text, each analyzed), each pair weighed
    by the IDF of its commoner word. A pair never spans two fields: the end of a title ("Mel,
    27 June") is not next to the first words of the text.

    BM25 scores each word alone: among twenty messages about deploying, the one that says when
    the *initial deployment* is due and the one that mentions an initial plan and a deployment
    elsewhere score alike. Words of a question that stand together in a text mean what they mean
    together (term dependence; Metzler and Croft's sequential dependence model)."""
    window = PROXIMITY_WINDOW if window is None else window
    pairs = [(a, b) for a, b in zip(terms, terms[1:]) if idf.get(a, 0.0) > 0 and idf.get(b, 0.0) > 0]
    total = sum(min(idf[a], idf[b]) for a, b in pairs)
    if total <= 0:
        return 0.0
    ats = []
    for tokens in fields:
        at: dict[str, list[int]] = {}
        for i, t in enumerate(tokens):
            at.setdefault(t, []).append(i)
        ats.append(at)
    got = sum(min(idf[a], idf[b]) for a, b in pairs
              if any(a in at and b in at and _within(at[a], at[b], window) for at in ats))
    return got / total


def _within(xs: list[int], ys: list[int], window: int) -> bool:
    """Whether some position of ``xs`` and some of ``ys`` (each ascending) are 1..``window`` apart."""
    i = j = 0
    while i < len(xs) and j < len(ys):
        if 0 < abs(xs[i] - ys[j]) <= window:
            return True
        if xs[i] < ys[j]:
            i += 1
        else:
            j += 1
    return False


def with_lift(raw: list[tuple[str, float, frozenset]], lift: dict[str, float],
              muted: Mapping[str, float] | None = None) -> list[tuple[str, float, frozenset]]:
    """Each candidate gains ``lift[path]`` × the top score (a share of the best match), best
    first again; a ``muted`` entry (an AI assistant's, tree/text/roles.py) gains that times its
    factor, as its own match was. The folder, neighbourhood and time lifts are all of this form."""
    if not raw or not any(lift.values()):
        return raw
    muted = muted or {}
    top = max(s for _p, s, _m in raw)
    return sorted(((p, s + lift.get(p, 0.0) * muted.get(p, 1.0) * top, m) for p, s, m in raw),
                  key=lambda r: -r[1])


def with_factor(raw: list[tuple[str, float, frozenset]], factor: dict[str, float]) -> list[tuple[str, float, frozenset]]:
    """Each candidate's score times ``factor[path]`` (1 if absent), best first again."""
    if not factor:
        return raw
    return sorted(((p, s * factor.get(p, 1.0), m) for p, s, m in raw), key=lambda r: -r[1])


# how many of the best hits ranking by meaning re-sorts: what was measured (benchmarks/HISTORY.md), and a
# search's cold cost (each entry's vector is computed once, tens of milliseconds)
MEANING_POOL = 50
# the cosine of an entry whose vector is not computed yet (tree/meaning/vector_claims.py): ``with_meaning``
# gives it the mean lift of the pool's entries that have one
NO_VECTOR = float("nan")


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


EXCERPT_SCAN = 65_536   # characters of an entry looked through for the excerpt (the index holds fewer)


def excerpt(text: str, terms: list[str], width: int) -> str:
    """A window of ``width`` characters around the first place a query term occurs within the
    first ``EXCERPT_SCAN`` characters: a 12 MB hand-placed file took 12 s per search scanned whole."""
    flat = " ".join(text[:EXCERPT_SCAN].split())
    if len(flat) <= width and len(text) <= EXCERPT_SCAN:
        return flat
    low = flat.lower()
    best = -1
    for t in terms:
        m = re.search(r"\b" + re.escape(t.lower()), low)
        if m and (best < 0 or m.start() < best):
            best = m.start()
    if best < 0:
        return flat[:width].rsplit(" ", 1)[0] + " …"
    start = max(0, best - width // 3)
    if start:
        start = flat.find(" ", start) + 1 or start
    chunk = flat[start:start + width]
    if start + width < len(flat) or len(text) > EXCERPT_SCAN:
        chunk = chunk.rsplit(" ", 1)[0] + " …"
    return ("… " if start else "") + chunk

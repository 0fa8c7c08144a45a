"""The lifts: ranking steps that move a candidate by where it sits, when it is about, and what
stands near it, each a share of the top score (``with_lift``) or a factor of the candidate's own.

In pipeline order (pipeline.py's ``STEPS``): the neighbourhood's coverage of the question, closeness
to a date the question names and saying when, the penalty of an entry that mostly asks, then the
gap filter's cut (the lifts before it read every candidate), word pairs kept together, what links
lend, and the folder's coverage. Each step is ``step(table, settings) -> table``: what it reads was
gathered (gather.py), a step reads nothing else. An AI assistant's entry (``factors``) gains each
lift times its role factor, as its own match was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Callable

from ..text import analysis, dates, roles
from ..entries.paths import folder_of, is_context
from ..settings import TreeSettings
from .table import Row, Table, coverage, with_factor, with_lift


def with_neighbourhood_coverage(raw: list[Row], idf: dict[str, float], weight: float,
                                near: dict[str, set[str]], muted: Mapping[str, float] | None = None,
                                ) -> list[Row]:
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


def lift_neighbourhood(t: Table, st: TreeSettings) -> Table:
    """``near_weight``: each candidate gains its neighbourhood's coverage of the question
    (``reach``: the entries within ``near_hops`` links)."""
    if len(t.rows) < 2 or st.near_weight <= 0 or st.near_hops <= 0:
        return t
    return replace(t, rows=with_neighbourhood_coverage(t.rows, t.idf, st.near_weight, t.reach, t.factors))


def lift_dates(t: Table, st: TreeSettings) -> Table:
    """``date_weight``, ``when_weight``: closeness to a date the question names and, for a question
    asking when, an entry whose text says when: one lift, both shares of the top score."""
    if len(t.rows) < 2:
        return t
    asked = dates.dates_asked(t.query) if st.date_weight > 0 else []
    when = st.when_weight > 0 and dates.asks_when(t.query)
    if not (asked or when):
        return t
    lift = {}
    for p, _s, _m in t.rows:
        if (tr := t.traits.get(p)) is not None:
            lift[p] = st.date_weight * dates.date_closeness(asked, tr.day) + (st.when_weight if when and tr.timely else 0.0)
    return replace(t, rows=with_lift(t.rows, lift, t.factors))


def weigh_asking(t: Table, st: TreeSettings) -> Table:
    """``ask_penalty``: an entry that mostly asks keeps ``1 - ask_penalty`` of its score, unless it is
    the user's question to an AI assistant. The question's words are in the question, its answer in
    the reply (which the question's links lend to): on LoCoMo, R@500w 79.5 -> 79.7 with 0.1. The
    user's question to an assistant holds the user's facts, the reply the penalty favours is the
    assistant's: BEAM R@200w 41.6 -> 43.2 without the penalty there."""
    if len(t.rows) < 2 or st.ask_penalty <= 0:
        return t
    factor = {p: 1.0 - st.ask_penalty for p, _s, _m in t.rows
              if (tr := t.traits.get(p)) is not None and tr.asks and tr.role != "user"}
    return replace(t, rows=with_factor(t.rows, factor))


def cut_gap(t: Table, st: TreeSettings) -> Table:
    """The gap filter's cut: the candidates it did not keep (``kept``) leave. After the lifts above,
    which weigh every candidate's words and place; before the ones below, which only reorder."""
    if t.kept is None:
        return t
    return replace(t, rows=[r for r in t.rows if r[0] in t.kept])


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


def with_proximity(query: str, raw: list[Row], idf: dict[str, float], weight: float,
                   terms_of: Callable[[list[str]], dict[str, list[list[str]]]],
                   muted: dict[str, float] | None = None) -> list[Row]:
    """Each candidate gains ``weight`` × the top score × its ``proximity``: the share of the
    question's neighbouring word pairs that stand close together in its text. Only the
    candidates that matched both words of some pair are read (``terms_of``); a ``muted`` entry
    gains the lift times its factor."""
    if weight <= 0 or len(raw) < 2:
        return raw
    terms = analysis.terms(query)
    pairs = list(zip(terms, terms[1:]))
    todo = [p for p, _s, m in raw if any(a in m and b in m for a, b in pairs)]
    if not todo:
        return raw
    tokens = terms_of(todo)
    return with_lift(raw, {p: weight * proximity(terms, idf, t) for p, t in tokens.items()}, muted)


def lift_proximity(t: Table, st: TreeSettings) -> Table:
    """``proximity_weight``: the share of the question's neighbouring word pairs that stand close
    together in the entry's text (``fields``)."""
    if st.proximity_weight <= 0:
        return t
    fields = t.fields
    rows = with_proximity(t.query, t.rows, t.idf, st.proximity_weight,
                          lambda paths: {p: fields[p] for p in paths if p in fields}, t.factors)
    return replace(t, rows=rows)


def linking(rows: list[Row], limit: int) -> list[str]:
    """The hits that lend to their links: the best ``limit``, context files aside."""
    return [p for p, _, _ in rows[:limit] if not is_context(p)]


def with_linked(raw: list[Row], limit: int, weight: float, links: Mapping[str, list[str]],
                muted: Mapping[str, float] | None = None) -> list[Row]:
    """Each of the best hits lends ``weight`` × its score to the entries it links to or
    from (one hop of ``related``, ``links``): the reply next to a matching question, the entry a
    matching one points to. An entry keeps its own matched terms; one found only
    through a link has none (coverage 0), so it never decides a tier on its own.
    A ``muted`` entry (an AI assistant's) receives that times its factor."""
    own = {p: (s, m) for p, s, m in raw}
    lent: dict[str, float] = {}
    for p in linking(raw, limit):
        for q in links.get(p, ()):
            lent[q] = max(lent.get(q, 0.0), weight * own[p][0] * (muted or {}).get(q, 1.0))
    scored = {p: own.get(p, (0.0, frozenset()))[0] + lent.get(p, 0.0) for p in own.keys() | lent.keys()}
    order = sorted(scored, key=lambda p: (-scored[p], p))
    return [(p, scored[p], own.get(p, (0.0, frozenset()))[1]) for p in order]


def lend_links(t: Table, st: TreeSettings) -> Table:
    """``link_weight``: the best hits lend a share of their score to the entries they link, which
    need not have passed the gap filter. A linked entry that is not a candidate is weighed by its
    role like the candidates (when role weights are on)."""
    if st.link_weight <= 0 or not t.rows:
        return t
    factors = t.factors
    if factors is not None:
        own = {p for p, _s, _m in t.rows}
        linked = sorted({q for p in linking(t.rows, t.limit) for q in t.links.get(p, ())} - own)
        found = {q: t.traits[q].role for q in linked if q in t.traits}
        factors = {**factors, **roles.role_factors(t.query, found, st.assistant_weight)}
    return replace(t, rows=with_linked(t.rows, t.limit, st.link_weight, t.links, factors), factors=factors)


# a folder's coverage counts the matched terms of its best this many candidates (not muted): "the
# hike after the road trip" needs two messages, one per word. Counting every candidate let a long
# session cover any question by chance (a 40-message session matches each of its words somewhere)
# and lift all its entries over the one session that held the answer. R@10 / R@200w / R@500w with
# every candidate, the best 2, the best 3: BEAM 500K (629 questions) 56.2 / 45.5 / 56.4, 56.5 /
# 46.6 / 56.9, 56.5 / 46.3 / 56.8; LoCoMo R@200w / R@500w 69.9 / 80.0, 69.8 / 80.2, 70.1 / 80.1
# (R@100w 57.0, 56.1, 56.7): 3 keeps the folders of a few entries whole
FOLDER_BEST = 3


def with_folder_coverage(raw: list[Row], idf: dict[str, float],
                         weight: float, muted: Mapping[str, float] | None = None,
                         best: int | None = None) -> list[Row]:
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


def lift_folders(t: Table, st: TreeSettings) -> Table:
    """``folder_weight``: each candidate gains its folder's coverage of the question. The scores
    before it are kept (``unlifted``): the signals scale an entry's own relevance, and this lift
    is added after them (by_signals.py)."""
    if st.folder_weight <= 0 or len(t.rows) <= 1:
        return t
    unlifted = {p: sc for p, sc, _ in t.rows}
    return replace(t, rows=with_folder_coverage(t.rows, t.idf, st.folder_weight, t.factors),
                   unlifted=unlifted, lift_weight=st.folder_weight)

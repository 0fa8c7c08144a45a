"""The ranking pipeline of ``ContextTree.search``: what happens to the engine's candidates.

The engine returns ``(path, BM25 score, matched terms)`` candidates: the best ``3 × limit +
10`` by their words' match. In a tree holding an AI assistant's entries (``may_mute``) it is
searched ``POOL_WIDEN`` times deeper, and ``with_full_weight`` adds to that cut, for each
assistant's entry in it, the next entry below it that the role weight will not mute. The steps
below run in this order, each a plain function of the candidates with the setting that weighs it
(0 turns it off):

1. ``drop_context_hits``: folder context files out, unless ``include_context_hits``.
2. ``role_weights``: an AI assistant's entry keeps ``assistant_weight`` of its score, unless
   the question asks what the assistant said (tree/text/roles.py); before the gap filter, so a
   user's message close behind the assistant's long reply stays. Every later lift it gets is
   weighed the same, and its matched words cover the query for no other entry (the reply
   repeats the question's words: lifting by them undid the weight).
3. ``gap_filter`` (search.py): the candidates whose own match is below ``gap_ratio`` of the
   best are dropped at the end of step 5; the lifts only reorder what passed.
4. ``standing_lift``: an entry stating the user's standing instruction or preference
   (tree/text/standing.py) passes the gap filter and gains ``standing_weight`` × its coverage.
5. ``where_and_when``: lifts by the neighbourhood's coverage of the query (``near_weight``,
   ``near_hops``), closeness to a date the question names (``date_weight``), saying when for
   a question asking when (``when_weight``); an entry that mostly asks keeps
   ``1 - ask_penalty`` of its score, unless it is the user's question to an AI assistant.
   Then ``with_proximity``: a lift by the share of the question's neighbouring word pairs that
   stand close together in the entry's text (``proximity_weight``, off by default: it helps where
   questions reuse the user's own words, BEAM 500K R@10 +0.8 and R@500w +1.3 at 0.6, and costs two
   people's dialogue, LoCoMo R@200w -0.4, and a read of the hits; benchmarks/HISTORY.md).
6. ``with_linked``: the best hits lend ``link_weight`` of their score to the entries they link.
7. ``with_folder_coverage`` (search.py): a hit gains ``folder_weight`` × its folder's coverage
   (of its best ``FOLDER_BEST`` candidates: a long session covers any question by chance).
8. ``by_signals``: the profile's importance and recency scale each entry's own relevance.
9. ``with_meaning`` (search.py): the best ``MEANING_POOL`` re-sorted by their score +
   ``semantic_weight`` × the top score × the cosine of the question's and the entry's sentence
   embeddings (off by default; it needs the embedding model, tree/meaning/embedding.py).
10. ``one_per_source``: the later entries of one source (the other parts of a long message)
    move after every source's first.
11. ``with_coverage`` (tree/coverage.py): the best ``COVER_POOL`` re-picked one place at a time for
    their score and what each adds to the question's coverage (its terms, and a session) beyond
    the hits above it (``cover_weight``): a question needing several pieces gets each.
12. ``with_validity`` (tree/entries/validity.py): an entry a newer one superseded goes right below the
    entry that replaced it, which takes its place if it ranked lower or not at all, unless the
    question asks about the past ("before", "used to", a date before ``validUntil``). A tree
    without superseded entries is ranked as before (no setting: a closed fact is not a knob).
13. ``with_rules``: the user's standing rules ("always …") follow the best ``RULES_AFTER``
    hits, matched or not, while there are at most ``standing_rules``; beyond, those it found
    and, with ``semantic_weight`` set, the one closest in meaning to the question.

``rank`` runs them and returns the order with each candidate's lifted score and matched terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable

from .text import analysis, dates, roles, standing
from .entries import validity
from . import coverage as coverage_step
from .coverage import with_coverage
from .index.catalog import Catalog, Traits
from .entries.lifecycle import RankingProfile as Profile, rank_score
from .entries.paths import CONTEXT_FILE
from .search import (MEANING_POOL, coverage, gap_filter, normalize, proximity, with_factor, with_folder_coverage,
                     with_lift, with_meaning, with_neighbourhood_coverage)
from .settings import TreeSettings
from .signals import Signals

Candidates = list[tuple[str, float, frozenset]]


@dataclass
class RankingInputs:
    """What the steps read besides the candidates: the tree's settings and derived stores."""
    settings: TreeSettings
    catalog: Catalog
    signals: Signals
    root: Path
    clock: Callable[[], datetime]
    terms_of: Callable[[list[str]], dict[str, list[list[str]]]]   # entries' indexed fields, analyzed
    # the cosine between the question's and each entry's sentence embedding (semantic_weight > 0)
    cosines: Callable[[str, list[str]], dict[str, float]] | None = None


@dataclass
class Ranked:
    order: list[tuple[str, float]]                 # path and final score, best first
    lifted: dict[str, tuple[float, frozenset]]    # path -> (score after the lifts, matched terms)


def is_context(path: str) -> bool:
    return path.endswith("/" + CONTEXT_FILE)


def drop_context_hits(raw: Candidates, settings: TreeSettings) -> Candidates:
    return raw if settings.include_context_hits else [r for r in raw if not is_context(r[0])]


def neighbourhoods(catalog: Catalog, paths: list[str], hops: int) -> dict[str, set[str]]:
    """For each path, the entries within ``hops`` links of it (either direction), found one
    hop at a time for all paths together."""
    reach: dict[str, set[str]] = {p: set() for p in paths}
    frontier: dict[str, set[str]] = {p: {p} for p in paths}
    known: dict[str, list[str]] = {}
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


def where_and_when(query: str, raw: Candidates, idf: dict[str, float], st: TreeSettings,
                   catalog: Catalog, muted: dict[str, float] | None = None) -> Candidates:
    """The candidates re-scored by what sits near them, by time and by what they say:
    the coverage of the query by each one's neighbourhood (``near_weight``), closeness
    to a date the question names (``date_weight``), for a question asking when,
    whether the entry's text says when (``when_weight``) (each lift a share of the top
    score), and an entry that mostly asks keeps ``1 - ask_penalty`` of its score."""
    if len(raw) < 2:
        return raw
    if st.near_weight > 0 and st.near_hops > 0:
        raw = with_neighbourhood_coverage(raw, idf, st.near_weight,
                                          neighbourhoods(catalog, [p for p, _, _ in raw], st.near_hops), muted)
    asked = dates.dates_asked(query) if st.date_weight > 0 else []
    when = st.when_weight > 0 and dates.asks_when(query)
    if not (asked or when or st.ask_penalty > 0):
        return raw
    traits = catalog.traits_of([p for p, _, _ in raw])
    if asked or when:
        lift = {}
        for p, t in traits.items():
            lift[p] = st.date_weight * dates.date_closeness(asked, t.day) + (st.when_weight if when and t.timely else 0.0)
        raw = with_lift(raw, lift, muted)
    if st.ask_penalty > 0:
        # the question's words are in the question, its answer in the reply (which the
        # question's links lend to): on LoCoMo, R@500w 79.5 -> 79.7 with 0.1
        # the user's question to an AI assistant holds the user's facts, the reply the penalty
        # favours is the assistant's: BEAM R@200w 41.6 -> 43.2 without the penalty there
        raw = with_factor(raw, {p: 1.0 - st.ask_penalty for p, t in traits.items() if t.asks and t.role != "user"})
    return raw


def with_proximity(query: str, raw: Candidates, idf: dict[str, float], weight: float,
                   terms_of: Callable[[list[str]], dict[str, list[list[str]]]],
                   muted: dict[str, float] | None = None) -> Candidates:
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


def with_linked(raw: Candidates, limit: int, weight: float, catalog: Catalog,
                muted: dict[str, float] | None = None,
                weigh: Callable[[list[str]], dict[str, float]] | None = None) -> Candidates:
    """Each of the best hits lends ``weight`` × its score to the entries it links to or
    from (one hop of ``related``): the reply next to a matching question, the entry a
    matching one points to. An entry keeps its own matched terms; one found only
    through a link has none (coverage 0), so it never decides a tier on its own.
    A ``muted`` entry (an AI assistant's) receives that times its factor; ``weigh`` gives
    the factors of linked entries that are not candidates, and ``muted`` gains them."""
    own = {p: (s, m) for p, s, m in raw}
    lent: dict[str, float] = {}
    top = [p for p, _, _ in raw[:limit] if not is_context(p)]
    links = catalog.neighbours(top)
    if muted is not None and weigh is not None:
        muted.update(weigh(sorted({q for qs in links.values() for q in qs} - own.keys())))
    for p, linked in links.items():
        for q in linked:
            lent[q] = max(lent.get(q, 0.0), weight * own[p][0] * (muted or {}).get(q, 1.0))
    scored = {p: own.get(p, (0.0, frozenset()))[0] + lent.get(p, 0.0) for p in own.keys() | lent.keys()}
    order = sorted(scored, key=lambda p: (-scored[p], p))
    return [(p, scored[p], own.get(p, (0.0, frozenset()))[1]) for p in order]


def days_since_update(root: Path, rel: str, now: datetime) -> float:
    try:
        mtime = (root / rel).stat().st_mtime
    except FileNotFoundError:
        return 0.0
    return max(0.0, (now.timestamp() - mtime) / 86400.0)


def by_signals(scored: list[tuple[str, float]], lifted: dict[str, tuple[float, frozenset]],
               unlifted: dict[str, float], lift_weight: float, prof: Profile,
               inputs: RankingInputs) -> list[tuple[str, float]]:
    """Signals scale the entry's own relevance; its folder's lift is added after, so the
    ±10% of importance reorders near-ties of relevance, not of relevance plus lift
    (measured on LoCoMo: R@200w 65.7 -> 66.1); divided back to the 0..1 scale.

    Every profile leaves the scores on this linear scale (relevance relative to the best match),
    one without signals too: ranking by meaning adds to them, and on ``normalize``'s s/(1+s),
    where the best matches all sit near 1, a cosine outweighed the words (LoCoMo test conv-30,
    benchmark profile with meaning: R@5 76.5 -> 50.6)."""
    if not scored:
        return scored
    neutral = not (prof.w_importance or prof.w_recency or any(v != 1.0 for v in prof.boosts.values()))
    sig = {} if neutral else inputs.signals.get_many([p for p, _ in scored])
    now = inputs.clock()
    top = max(unlifted[p] for p, _ in scored) or 1.0
    ranked = []
    for p, _s in scored:
        lift = (lifted[p][0] - unlifted[p]) / top
        own = unlifted[p] / top if neutral else rank_score(unlifted[p] / top, sig[p].importance,
                                                            days_since_update(inputs.root, p, now),
                                                            sig[p].maturity, prof)
        ranked.append((p, (own + lift) / (1.0 + lift_weight)))
    return sorted(ranked, key=lambda x: -x[1])


def standing_lift(raw: Candidates, traits: dict[str, Traits], idf: dict[str, float], weight: float) -> dict[str, float]:
    """``{path: lift}`` for the candidates that state a standing instruction or preference
    (tree/text/standing.py): ``weight`` × the share of the query they match. They are kept past the
    gap filter: "which libraries does this project use?" shares one word with "Always include
    version numbers when I ask about libraries"."""
    if weight <= 0:
        return {}
    return {p: weight * coverage(m, idf) for p, _s, m in raw if (t := traits.get(p)) is not None and t.standing}


def one_per_source(order: list[tuple[str, float]], traits: dict[str, Traits]) -> list[tuple[str, float]]:
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


# the user's standing rules follow this many of the best hits: the best matches still lead (a
# tier that reads the top hit reads the best match), and a budget of a few hundred words still
# reaches the rules. BEAM 100K, simulated on the hits without rules (R@200w 48.0, R@5 52.7): all
# rules after 2 / 3 / 5 hits, R@200w 51.9 / 50.0 / 45.6, R@5 45.3 / 49.7 / 49.8; run after 3: 49.3, 50.1
RULES_AFTER = 3


def with_rules(order: list[tuple[str, float]], rules: list[str], after: int = RULES_AFTER) -> list[tuple[str, float]]:
    """``order`` with the ``rules`` that are not among its first ``after`` entries placed
    right after them, each with the score of the entry before it: the ones the search found
    first, best first, then the others in the rules' order. A rule the user set for every
    request is part of every answer's context, whatever its words."""
    cut = min(after, len(order))
    head = {p for p, _ in order[:cut]}
    found = {p: sc for p, sc in order[cut:]}
    moved = sorted((p for p in rules if p not in head), key=lambda p: -found.get(p, -1.0))
    if not moved or not order:      # a search that found nothing finds no rules either
        return order
    score = order[cut - 1][1] if cut else 0.0
    placed = set(moved)
    rest = [x for x in order[cut:] if x[0] not in placed]
    return order[:cut] + [(p, score) for p in moved] + rest


# how many of the user's rules, the latest first, ``rules_for`` weighs by meaning
RULES_BY_MEANING = 100


def rules_for(order: list[tuple[str, float]], traits: dict[str, Traits], rules: list[str], limit: int,
              near: Mapping[str, float] | None = None) -> list[str]:
    """The user's rules a search brings, of ``rules`` (``Catalog.standing_rules``, the latest
    first): all of them while they are at most ``limit``, as custom instructions; beyond that the
    ones it found, best first (up to ``limit``), because which unmatched ones to bring would be a
    guess. BEAM 500K (10 rules a chat, 4 chats), the latest five unmatched ones brought too: R@10
    51.8 against 58.8 without rules. With the question's meaning (``near``: cosines, when
    ``semantic_weight`` is set) it is less of a guess: a rule says when it holds ("when I ask
    about eccentricity concepts") in words the later question rarely repeats ("the shape of an
    ellipse"), and the rule closest in meaning comes too, in the last place. Among BEAM 500K's
    rules it was the one an instruction-following question is about for 54 of 70."""
    if limit < 1:
        return []
    if len(rules) <= limit:
        return rules
    found = [p for p, _ in order if (t := traits.get(p)) is not None and t.standing == standing.RULE][:limit]
    near = near or {}
    close = max((p for p in rules if near.get(p, 0.0) > 0), key=lambda p: near[p], default=None)
    if close is None or close in found:
        return found
    return found[:limit - 1] + [close]


def role_weights(query: str, traits: dict[str, Traits], settings: TreeSettings) -> dict[str, float]:
    """In a chat with an AI assistant, what the user said outweighs the assistant's reply that
    repeats its words: the assistant's entries keep ``assistant_weight`` of their score, unless
    the question asks what the assistant said. Entries without roles are untouched. Measured with
    ``with_full_weight`` (R@10 / R@200w / R@500w; flat BM25 over the user's messages 51.5 / 41.3 /
    50.8 on BEAM 100K, 49.3 / 38.4 / 49.1 on 500K): 100K 62.5 / 49.4 / 64.1 at 0.15, 63.0 / 50.0 /
    64.1 at 0.3, 62.8 / 49.8 / 64.2 at 0.5, 61.0 / 47.7 / 62.3 at 0.7; 500K 55.6 / 45.0 / 55.5 at
    0.15, 55.8 / 45.5 / 55.9 at 0.3, 56.2 / 45.5 / 56.4 at 0.5. At 0.5 the assistant's words keep a
    place at larger budgets (500K: 3.6% of the assistant's evidence within 1,000 words, 0.5% at
    0.15). Before the cut was widened, a lower weight did better (R@500w 51.3 at 0.15, 46.1 at
    0.5). LoCoMo, two people: unchanged."""
    if settings.assistant_weight >= 1.0 or not traits:
        return {}
    return roles.role_factors(query, {p: t.role for p, t in traits.items()}, settings.assistant_weight)


# how much deeper than its usual cut the engine is searched when the tree holds an AI assistant's
# entries, for the user's messages ranked below a cut the assistant's replies filled
POOL_WIDEN = 8


def may_mute(query: str, settings: TreeSettings) -> bool:
    """Whether ``role_weights`` can mute an entry for this question (else a deeper cut adds nothing)."""
    return roles.mutes(query, settings.assistant_weight)


def with_full_weight(query: str, raw: Candidates, below: Candidates, catalog: Catalog,
                     settings: TreeSettings) -> Candidates:
    """The engine's cut ``raw`` and, for each entry in it that ``role_weights`` will mute, the
    next entry of ``below`` (the engine's candidates past the cut, best first) that keeps its
    whole score. The cut is taken by the words' match alone, before the role weight: in a long
    chat the assistant's replies, which repeat the question's words, fill it, and the user's
    message that holds the fact, ranked below them, never competes. BEAM 500K (35 chats, 629
    questions), limit 50, ``assistant_weight`` 0.15: R@10 53.5 -> 55.6, R@500w 52.8 -> 55.5,
    R@1000w 57.9 -> 61.7 (R@100w 32.7 -> 31.9); BEAM 100K: R@500w 63.9 -> 64.1. A tree without
    roles is searched as before."""
    if not below:
        return raw
    muted = role_weights(query, catalog.traits_of([p for p, _, _ in raw]), settings)
    if not muted:
        return raw
    past = role_weights(query, catalog.traits_of([p for p, _, _ in below]), settings)
    return raw + [r for r in below if r[0] not in past][:len(muted)]


def rank(query: str, raw: Candidates, idf: dict[str, float], limit: int, prof: Profile,
         inputs: RankingInputs) -> Ranked:
    """The steps of the module's docstring, in order, over the engine's candidates."""
    st = inputs.settings
    traits = inputs.catalog.traits_of([p for p, _, _ in raw])
    muted = role_weights(query, traits, st)
    raw = with_factor(raw, muted)
    # the gap filter judges each entry's own match (weighed by role); the lifts only reorder what passed
    kept = {p for p, _ in gap_filter([(p, normalize(s)) for p, s, _ in raw], st.gap_ratio)}
    held = standing_lift(raw, traits, idf, st.standing_weight)
    kept |= held.keys()
    raw = with_lift(raw, held)
    raw = [r for r in where_and_when(query, raw, idf, st, inputs.catalog, muted) if r[0] in kept]
    raw = with_proximity(query, raw, idf, st.proximity_weight, inputs.terms_of, muted)
    scored = [(p, normalize(s)) for p, s, _ in raw]
    if st.link_weight > 0 and scored:
        # hits that passed the gap filter lend to their links, which need not pass it themselves
        raw = with_linked(raw, limit, st.link_weight, inputs.catalog, muted,
                          lambda paths: role_weights(query, inputs.catalog.traits_of(paths), st))
        scored = [(p, normalize(sc)) for p, sc, _ in raw]
    unlifted = {p: sc for p, sc, _ in raw}   # before folder coverage: what the signals weigh
    lift_weight = 0.0
    if st.folder_weight > 0 and len(scored) > 1:
        lift_weight = st.folder_weight
        raw = with_folder_coverage(raw, idf, lift_weight, muted)
        scored = [(p, normalize(sc)) for p, sc, _ in raw]
    lifted = {p: (s, m) for p, s, m in raw}
    order = by_signals(scored, lifted, unlifted, lift_weight, prof, inputs)
    meaning = st.semantic_weight > 0 and inputs.cosines is not None and len(order) > 1
    rules = inputs.catalog.standing_rules(RULES_BY_MEANING if meaning else st.standing_rules + 1)
    near: dict[str, float] = {}
    if meaning:
        pool = [p for p, _ in order[:MEANING_POOL]]
        if len(rules) > st.standing_rules:          # rules_for weighs them all by meaning
            seen = set(pool)
            pool += [p for p in rules if p not in seen]
        near = inputs.cosines(query, pool)
        order = with_meaning(order, near, st.semantic_weight)
    traits.update(inputs.catalog.traits_of([p for p, _ in order if p not in traits]))
    order = one_per_source(order, traits)
    if st.cover_weight > 0 and (not coverage_step.ONLY_ASKING_SEVERAL or coverage_step.asks_several(query)):
        order = with_coverage(order, {p: m for p, (_s, m) in lifted.items()}, idf, st.cover_weight, muted)
    order = validity.with_validity(query, order, {p: (t.superseded_by, t.valid_until) for p, t in traits.items()
                                                  if t.superseded_by}, inputs.catalog.closed_by)
    order = with_rules(order, rules_for(order, traits, rules, st.standing_rules, near))
    for p, _ in order:
        lifted.setdefault(p, (0.0, frozenset()))   # a rule that matched nothing: no score of its own
    return Ranked(order, lifted)

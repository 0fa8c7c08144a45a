"""Duplicates: the same words twice (exact), or nearly the same (near).

Exact: the same text after normalization (case, punctuation, spacing), across folders and
conversations. A first-person statement ("I moved to Berlin") is only the same fact from the
same speaker; any other text is the same whoever said it. Entries saying fewer than
``dream_min_terms`` subject words are left alone: "Thanks!" and "Sounds good" are said in every
chat, each time about something else, and merging them would join unrelated threads through the
merged entry's links while saving nothing worth a review.

Near: most subject words shared (Jaccard of content terms, each weighed by its rarity, at least
``dream_near_similarity``, and neither with a rarer word of its own than the shared words' mean),
or with ``semantic_weight`` on, the same meaning (cosine at least ``dream_semantic_similarity``)
and some words shared; at least ``NEAR_SHARED`` words in common; from two speakers, only with a
value in common (a port, a name, a date: the same fact restated, not a phrase echoed back); never
two statements giving one subject different values (that is a superseded fact, not a repeat).
Pairs are only compared when they share a rare word (``scan_corpus.blocked_pairs``), so the work
grows with the entries, not their square.

Each group of duplicates is one candidate: ``paths`` start with the entry kept (the oldest, then
the most linked to), and each other entry is MERGEd into it (MERGE unions sources, tags, links).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable

from .findings import Candidate
from ..entries.paths import natural_key
from .scan_corpus import Corpus, ScanItem, blocked_pairs, each_has_its_own
from ..settings import TreeSettings
from .statement_values import proper_words, replaced_values, statements

Cosines = Callable[[list[tuple[str, str]]], list[float]]
NEAR_FLOOR = 0.3   # words a semantic near duplicate must share at least (Jaccard)
NEAR_SHARED = 4   # subject words near duplicates share at least: fewer is a shared phrase, not a shared fact
NEAR_CONFIDENCE = 0.95   # the most a near duplicate is sure of: only the same text is certain


def _kept_order(corpus: Corpus) -> Callable[[ScanItem], Any]:
    return lambda it: (it.moment == "", it.moment, -corpus.backlinks[it.path], natural_key(it.path))


def _same_speaker_needed(a: ScanItem, b: ScanItem) -> bool:
    return (a.first_person or b.first_person) and bool(a.speakers or b.speakers)


def _merge_candidate(kind: str, group: list[ScanItem], corpus: Corpus, confidence: float, reason: str,
                     evidence: dict[str, Any]) -> Candidate:
    group = sorted(group, key=_kept_order(corpus))
    kept = group[0].path
    ops = tuple({"op": "MERGE", "path": it.path, "merge_into": kept, "reason": reason} for it in group[1:])
    return Candidate(kind=kind, paths=tuple(it.path for it in group), action="MERGE", ops=ops, reason=reason,
                     confidence=confidence, evidence=evidence)


def eligible(it: ScanItem, settings: TreeSettings) -> bool:
    """Takes part in duplicates: says enough, and is not a closed (superseded) fact."""
    return not it.closed and len(it.term_set) >= settings.dream_min_terms


def exact_groups(corpus: Corpus, settings: TreeSettings) -> list[list[ScanItem]]:
    by_text: dict[tuple, list[ScanItem]] = defaultdict(list)
    for it in corpus.items:
        if eligible(it, settings):
            who = it.speakers if it.first_person else frozenset()
            by_text[(it.norm, who)].append(it)
    return [g for g in by_text.values() if len(g) > 1]


def find_exact(corpus: Corpus, settings: TreeSettings) -> list[Candidate]:
    out = []
    for group in exact_groups(corpus, settings):
        words = group[0].text if len(group[0].text) <= 120 else group[0].text[:117] + "..."
        reason = f"the same text in {len(group)} entries: {' '.join(words.split())!r}"
        out.append(_merge_candidate("duplicate", group, corpus, 1.0, reason,
                                    {"normalized": group[0].norm[:200], "entries": len(group)}))
    return out


def jaccard(a: frozenset[str], b: frozenset[str], weight: dict[str, float] | None = None) -> float:
    """Shared terms over all terms; with ``weight``, each term counts its weight (its rarity), so that
    "Priya owns the inventory rota" and "Priya owns the recommendations rota" are not alike."""
    if not a and not b:
        return 0.0
    if weight is None:
        return len(a & b) / len(a | b)
    return sum(weight[t] for t in a & b) / sum(weight[t] for t in a | b)


def _say_other_things(va: list[tuple[str, str]], vb: list[tuple[str, str]]) -> bool:
    """A value replaced ("port 5432" / "port 6543"), or a number, date or address one of them gives
    and the other does not ("moved to 80 Garden Street" / "moved from 80 Garden Street to 135 Elm Road")."""
    if replaced_values(va, vb):
        return True
    a, b = dict(va), dict(vb)
    return any(k != "name" for v, k in {**a, **b}.items() if (v in a) != (v in b))


def find_near(corpus: Corpus, settings: TreeSettings,
              cosines: Cosines | None = None) -> list[Candidate]:
    """``cosines([(path_a, path_b), ...])``: how close each pair's meanings are, when
    ``semantic_weight`` is on (asked once, for the pairs whose words alone do not decide)."""
    items = corpus.items
    # an exact duplicate that will be merged into its group's kept entry takes part through that entry
    merged_away = {it.path for g in exact_groups(corpus, settings) for it in sorted(g, key=_kept_order(corpus))[1:]}
    proper = proper_words(it.text for it in items)
    n = len(items)
    weight = {t: math.log(1 + n / d) for t, d in corpus.df.items()}
    values: dict[str, list[tuple[str, str]]] = {}

    def values_of(it: ScanItem) -> list[tuple[str, str]]:
        if it.path not in values:
            values[it.path] = [v for s in statements(it.text, proper, corpus.names) for v in s.values]
        return values[it.path]

    edges: dict[tuple[int, int], float] = {}
    ask: list[tuple[int, int, float]] = []
    takes_part = lambda it: eligible(it, settings) and it.path not in merged_away  # noqa: E731
    for i, j in sorted(blocked_pairs(items, corpus.df, keep=takes_part)):
        a, b = items[i], items[j]
        if _same_speaker_needed(a, b) and a.speakers != b.speakers:
            continue
        if len(a.term_set & b.term_set) < NEAR_SHARED:
            continue
        # two speakers echoing each other ("keep spreading positivity!") say no fact twice; a fact
        # one restates after the other carries its value (a port, a name, a date)
        if a.speakers != b.speakers and not {v for v, _ in values_of(a)} & {v for v, _ in values_of(b)}:
            continue
        if _say_other_things(values_of(a), values_of(b)):
            continue
        sim = jaccard(a.term_set, b.term_set, weight)
        if sim < settings.dream_near_similarity or each_has_its_own(a.term_set, b.term_set, weight, strict=False):
            # the words differ too much: the meaning may still be the same (asked below, all at once)
            if cosines is not None and sim >= NEAR_FLOOR:
                ask.append((i, j, sim))
            continue
        edges[(i, j)] = sim
    if ask and cosines is not None:
        for (i, j, sim), cos in zip(ask, cosines([(items[i].path, items[j].path) for i, j, _ in ask])):
            if cos >= settings.dream_semantic_similarity:
                edges[(i, j)] = max(sim, cos)
    return _components(corpus, edges)


def _components(corpus: Corpus, edges: dict[tuple[int, int], float]) -> list[Candidate]:
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.get(x, x) != x:
            x = parent[x] = parent.get(parent[x], parent[x])
        return x

    for i, j in sorted(edges):
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    group_sims: dict[int, list[float]] = defaultdict(list)
    for i in sorted({x for e in edges for x in e}):
        groups[root(i)].append(i)
    for (i, _), s in edges.items():
        group_sims[root(i)].append(s)
    out = []
    for r, ids in groups.items():
        sims = group_sims[r]
        group = [corpus.items[i] for i in ids]
        shared = frozenset.intersection(*(it.term_set for it in group))
        conf = round(min(min(sims), NEAR_CONFIDENCE), 3)
        reason = (f"{len(group)} entries say nearly the same (similarity {min(sims):.2f}; "
                  f"shared: {', '.join(sorted(shared)[:8])})")
        out.append(_merge_candidate("near_duplicate", group, corpus, min(1.0, conf), reason,
                                    {"similarity": round(min(sims), 3), "shared_terms": sorted(shared)[:20]}))
    return out


def find_duplicates(corpus: Corpus, settings: TreeSettings,
                    cosines: Cosines | None = None,
                    kinds: frozenset[str] = frozenset({"duplicate", "near_duplicate"})) -> list[Candidate]:
    out = find_exact(corpus, settings) if "duplicate" in kinds else []
    if "near_duplicate" in kinds:
        out += find_near(corpus, settings, cosines)
    return out

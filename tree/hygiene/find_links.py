"""Links: closely related entries that do not link each other.

Two entries are related when the subject words they share weigh much of what each says: the
cosine of their content terms weighted by idf (rare words count most) reaches
``dream_link_similarity``, and they share at least two rare words (in at most one entry in 300,
or 8): "aerial yoga" relates two messages, "favorite part" does not. Speakers' names and small
talk are not content (``scan_corpus``): two messages are not related for being between the same
people or both saying "thanks". Pairs that are duplicates or one fact's old and new value are
left to those findings; entries already linked either way, parts of one message, and closed
(superseded) facts are left alone. Each entry gets at most ``dream_links_per_entry`` proposals,
the closest first.

A candidate links both ways: one UPDATE per direction, adding to ``seeAlso`` (UPDATE unions it).
``seeAlso``, not ``related``: a link found by the words two entries share is for a reader or an
agent to follow, while the search lends a hit's score through ``related`` (``link_weight``, the
neighbourhood), and lending it through such a link counts the shared words twice: on two LoCoMo
conversations, dream's links in ``related`` cost R@200w 72.3 -> 69.8 and R@500w 83.2 -> 81.6;
in ``seeAlso`` both are unchanged (R@5 73.2 -> 73.6).
"""

from __future__ import annotations

import math
from collections import Counter

from ..entries.entry import SEE_ALSO
from .findings import Candidate
from .scan_corpus import Corpus, ScanItem, blocked_pairs
from ..settings import TreeSettings

MIN_SHARED = 2          # rare words two related entries share at least
RARE_SHARE = 1 / 300    # a rare word: in at most this share of the entries ...
RARE_FLOOR = 8          # ... or this many


def _idf(corpus: Corpus) -> dict[str, float]:
    n = len(corpus.items)
    # log(1 + N/df): positive for every term, so a small tree's shared words still count
    return {t: math.log(1 + n / d) for t, d in corpus.df.items()}


def find_links(corpus: Corpus, settings: TreeSettings,
               exclude: frozenset[frozenset[str]] = frozenset(), skip: frozenset[str] = frozenset()) -> list[Candidate]:
    """``exclude``: pairs of paths another finding already covers (duplicates, superseded);
    ``skip``: entries to leave out (exact duplicates merged into their group's kept entry)."""
    cap = settings.dream_links_per_entry
    if cap == 0:
        return []
    items = corpus.items
    idf = _idf(corpus)
    norms = {it.path: math.sqrt(sum(idf[t] ** 2 for t in it.term_set)) for it in items}
    rare = max(RARE_FLOOR, len(items) * RARE_SHARE)

    def takes_part(it: ScanItem) -> bool:
        return not it.closed and it.path not in skip and len(it.term_set) >= settings.dream_min_terms

    scored: list[tuple[float, str, str, list[str]]] = []
    for i, j in blocked_pairs(items, corpus.df, k=6, keep=takes_part):
        a, b = items[i], items[j]
        shared = a.term_set & b.term_set
        if sum(corpus.df[t] <= rare for t in shared) < MIN_SHARED or corpus.linked(a.path, b.path) \
                or (a.messages & b.messages):
            continue
        if frozenset((a.path, b.path)) in exclude:
            continue
        sim = sum(idf[t] ** 2 for t in shared) / (norms[a.path] * norms[b.path] or 1.0)
        if sim < settings.dream_link_similarity:
            continue
        x, y = sorted((a.path, b.path))
        scored.append((sim, x, y, sorted(shared, key=lambda t: (-idf[t], t))))
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    count: Counter = Counter()
    out = []
    for sim, x, y, shared in scored:
        if count[x] >= cap or count[y] >= cap:
            continue
        count[x] += 1
        count[y] += 1
        reason = f"related (similarity {sim:.2f}) and not linked: both speak of {', '.join(shared[:5])}"
        ops = ({"op": "UPDATE", "path": x, "extra": {SEE_ALSO: [y]}, "reason": reason},
               {"op": "UPDATE", "path": y, "extra": {SEE_ALSO: [x]}, "reason": reason})
        out.append(Candidate(kind="link", paths=(x, y), action="LINK", ops=ops, reason=reason,
                             confidence=round(min(1.0, sim), 3),
                             evidence={"similarity": round(sim, 3), "shared_terms": shared[:10]}))
    return out

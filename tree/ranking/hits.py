"""What a search returns: ``Hit`` (one result, and its plain-dict form for graph state) and the
excerpt of an entry a hit shows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


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

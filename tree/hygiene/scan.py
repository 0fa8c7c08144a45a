"""The deterministic scan of a tree (no LLM): what ``memgrove dream`` applies, asks a model about or
queues for review.

    >>> [c.kind for c in scan(tree)]                  # doctest: +SKIP
    ['duplicate', 'superseded', 'link', 'link', 'archive']

Every entry is read once (``scan_corpus``); each kind of finding is a plain function over what
was read: ``find_duplicates`` (duplicate, near_duplicate), ``find_superseded``, ``find_links``,
``find_archive``. An entry in a duplicate or superseded candidate is not also proposed for a
link with its partner nor for the archive: one finding per fact; an exact duplicate that its
group's kept entry absorbs takes part in no other finding (dream merges it on its own).
Scanning writes nothing to the tree or its journal (with ``semantic_weight`` on, entries' missing
vectors are computed and kept in ``vectors.db``, as a search would). Candidates come sorted by
kind, then paths: the same tree scanned twice gives the same list.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterable

from .find_archive import find_archive
from .find_duplicates import find_duplicates
from .find_links import find_links
from .find_superseded import find_superseded
from .findings import KINDS, Candidate
from ..meaning.tree_meaning import MEANING_CHARS
from .scan_corpus import Corpus, read_corpus
from ..settings import TreeSettings


def _kinds(kinds: Iterable[str] | str | None) -> frozenset[str]:
    if kinds is None:
        return frozenset(KINDS)
    chosen = frozenset([kinds] if isinstance(kinds, str) else kinds)
    unknown = sorted(chosen - set(KINDS))
    if unknown:
        raise ValueError(f"unknown finding kind(s) {', '.join(map(repr, unknown))} (one of {', '.join(KINDS)})")
    return chosen


def _cosines(tree: Any, corpus: Corpus) -> Callable[[list[tuple[str, str]]], list[float]]:
    """Pairs' closeness of meaning from their entries' sentence embeddings: the vectors kept in
    ``vectors.db`` (``memgrove reindex`` computes them ahead), the missing ones computed in one go."""
    from ..meaning.vectors import vectors_of

    def cosines(pairs: list[tuple[str, str]]) -> list[float]:
        paths = sorted({p for pair in pairs for p in pair})
        texts = [(corpus.by_path[p].entry.title + "\n" + corpus.by_path[p].text)[:MEANING_CHARS] for p in paths]
        rows = vectors_of(texts, tree.meaning_encoder(), tree.vectors)
        at = {p: i for i, p in enumerate(paths)}
        return [float(rows[at[a]] @ rows[at[b]]) for a, b in pairs]

    return cosines


def scan(tree: Any, settings: TreeSettings | None = None, *, kinds: Iterable[str] | str | None = None,
         now: datetime | None = None) -> list[Candidate]:
    """The candidates found in ``tree`` (a ``ContextTree``), of ``kinds`` (all by default).

    ``settings``: the thresholds (``dream_*``, ``archive_*``; the tree's own by default);
    ``now``: the time archive ages are measured to (the tree's clock by default).
    """
    settings = settings or tree.settings
    wanted = _kinds(kinds)
    corpus = read_corpus(tree, now or tree._clock())
    cosines = _cosines(tree, corpus) if settings.semantic_weight > 0 and wanted - {"duplicate", "superseded"} else None
    found: list[Candidate] = []
    # exact duplicates are always found (cheap): every other finding is about the entry each group keeps,
    # since dream merges the rest away on its own; near duplicates and superseded pairs are found
    # whenever a later kind must not repeat them
    found += find_duplicates(corpus, settings, cosines, kinds=frozenset({"duplicate"}))
    merged_away = frozenset(p for c in found for p in c.paths[1:])
    if wanted & {"near_duplicate", "link", "archive"}:
        found += find_duplicates(corpus, settings, cosines, kinds=frozenset({"near_duplicate"}))
    if wanted & {"superseded", "link", "archive"}:
        found += find_superseded(corpus, settings, skip=merged_away)
    covered = frozenset(frozenset((a, b)) for c in found for a in c.paths for b in c.paths if a != b)
    if "link" in wanted:
        found += find_links(corpus, settings, exclude=covered, skip=merged_away)
    if "archive" in wanted:
        busy = frozenset(p for c in found if c.kind != "link" for p in c.paths)
        found += find_archive(corpus, settings, busy=busy)
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted((c for c in found if c.kind in wanted), key=lambda c: (order[c.kind], c.paths, c.key))

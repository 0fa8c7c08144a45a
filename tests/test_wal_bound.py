"""The tree's SQLite files keep their WAL small: a WAL keeps the largest size it ever reached
until something truncates it, and the catalog's once refilled a disk that had just been freed.
``benchmarks/wal_size.py`` measures it over 2,000 curated entries."""

from __future__ import annotations

from pathlib import Path

from memgrove import Memory
from memgrove.tree.index.cache import QueryCache
from memgrove.tree.ranking.signals import Signals
from memgrove.tree.base.sqlite import WAL_LIMIT


def wal_size(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_the_catalog_wal_is_truncated_after_a_large_batch_and_a_rebuild(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        catalog = mem.home / "index" / "catalog.db"
        # one transaction of well over WAL_LIMIT: the catalog keeps each entry's summary
        mem.curate([{"op": "ADD", "path": f"ops/area{i % 20}/note{i}.md", "title": f"Note {i}",
                     "summary": f"Note {i} " + "about draining the ingest queue " * 60, "content": f"Note {i}.",
                     "reason": "wal"} for i in range(600)])
        assert catalog.stat().st_size + wal_size(catalog) > WAL_LIMIT     # it was that large
        assert wal_size(catalog) <= WAL_LIMIT
        mem.reindex()
        assert wal_size(catalog) <= WAL_LIMIT
        assert len(mem.search("ingest queue", limit=5)) == 5


def test_small_writes_keep_a_wal_near_its_limit(tmp_path):
    """Many small transactions (accesses recorded by searches, answers cached by queries):
    SQLite's own checkpoint every 1,000 pages let each WAL grow to about 4 MB."""
    signals = Signals(tmp_path / "signals.db")
    cache = QueryCache(tmp_path / "cache")
    try:
        for i in range(1500):
            signals.record_access([f"ops/runbooks/r{i}.md", f"ops/runbooks/r{i // 2}.md"])
        for i in range(400):
            cache.put(f"how do I restart worker {i}?", "fp", {"answer": "drain it first " * 20})
        assert wal_size(tmp_path / "signals.db") <= WAL_LIMIT + 64 * 1024
        # a put rewrites the fuzzy index (up to 2,000 questions): a transaction past the limit at most
        assert wal_size(tmp_path / "cache" / "cache.db") <= 2 * WAL_LIMIT
    finally:
        signals.close()
        cache.close()

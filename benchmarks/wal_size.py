"""How large the tree's SQLite WAL files grow: 2,000 entries curated in batches, with readers.

A WAL keeps the largest size it ever reached until something truncates it, and a full disk
was refilled by the catalog's. Side by side in one run: memgrove as it is (``tree/base/sqlite.py``:
``journal_size_limit``, an automatic checkpoint every 256 pages, a truncating checkpoint after a
large transaction) and the baseline without them (SQLite's defaults: no size limit, a checkpoint
every 1,000 pages, none after a transaction). Each row curates ``--entries`` entries in batches of
``--batch`` while a second ``Memory`` on the same tree (a server's, say) searches and queries
after every batch, then rebuilds the index (the largest transaction there is). Reported per
file: the largest WAL seen after a batch, after the rebuild, and at the end. Sizes are
deterministic for a given ``--seed``; no timing is measured.

    .venv/bin/python benchmarks/wal_size.py --entries 2000 --batch 20
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import tempfile
from pathlib import Path

from harness.report import RESULTS, publish, table
import harness.words_only  # noqa: F401 - ranks by words alone (see there)

FILES = {"catalog": "index/catalog.db-wal", "signals": "signals.db-wal", "query cache": "cache/cache.db-wal"}
WORDS = ("ingest worker queue drain restart deploy rollback token refresh cache index shard replica "
         "backup restore alert pager latency budget schema migration release canary").split()


def _unbounded() -> None:
    """The baseline: what the files did before their WAL was bounded."""
    from memgrove.tree.index import cache, catalog
    from memgrove.tree.base import sqlite

    sqlite.WAL_LIMIT = cache.WAL_LIMIT = -1   # journal_size_limit=-1: SQLite's default, no limit
    sqlite.WAL_PAGES = cache.WAL_PAGES = 1000  # SQLite's default
    sqlite.checkpoint = catalog.checkpoint = lambda db, file: None


def _sizes(home: Path) -> dict[str, int]:
    return {name: (home / rel).stat().st_size if (home / rel).exists() else 0 for name, rel in FILES.items()}


def _run(mode: str, entries: int, batch: int, seed: int, out) -> None:
    if mode == "unbounded":
        _unbounded()
    from memgrove import Memory

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        writer = Memory.open(tmp, create=True, durable=False)
        reader = Memory.open(tmp)
        home = writer.home
        peak = dict.fromkeys(FILES, 0)
        for start in range(0, entries, batch):
            ops = []
            for i in range(start, min(start + batch, entries)):
                words = " ".join(rng.choice(WORDS) for _ in range(60))
                ops.append({"op": "ADD", "path": f"ops/area{i % 40}/note{i}.md", "title": f"Note {i}",
                            "content": f"Note {i}: {words}.", "reason": "wal size"})
            writer.curate(ops)
            q = " ".join(rng.sample(WORDS, 3))
            reader.tree.search(q, record_access=True)
            reader.query(f"what about {q} {start}?")
            for name, size in _sizes(home).items():
                peak[name] = max(peak[name], size)
        writer.reindex()
        rebuilt = _sizes(home)
        reader.query("what about the ingest worker?")
        final = _sizes(home)
        reader.close()
        writer.close()
    out.put({"mode": mode, "peak": peak, "after_rebuild": rebuilt, "final": final})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--modes", default="unbounded,bounded")
    ap.add_argument("--out", type=Path, default=RESULTS / "wal_size", help="writes OUT.md and OUT.json")
    args = ap.parse_args()
    ctx = mp.get_context("spawn")   # each mode patches its own process
    rows = []
    for mode in args.modes.split(","):
        q = ctx.Queue()
        p = ctx.Process(target=_run, args=(mode, args.entries, args.batch, args.seed, q))
        p.start()
        rows.append(q.get())
        p.join()
    kib = lambda n: f"{n / 1024:,.0f} KiB"   # noqa: E731
    lines = ["# WAL size", "", f"{args.entries} entries curated in batches of {args.batch} (seed {args.seed}); "
             "after each batch a second memory searches (recording access) and queries; then a rebuild.", ""]
    lines += table(["mode", "file", "largest after a batch", "after the rebuild", "at the end"],
                   [[r["mode"], name, kib(r["peak"][name]), kib(r["after_rebuild"][name]), kib(r["final"][name])]
                    for r in rows for name in FILES])
    saved = {k: v for k, v in vars(args).items() if k != "out"}   # the report's args, as before --out
    publish({"args": saved, "rows": rows}, "\n".join(lines), args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Where a build's time goes, batch by batch: is a batch O(batch) or O(tree)?

    python benchmarks/build_profile.py 5000             # durable=False, batches of 250
    python benchmarks/build_profile.py 1000 --durable   # with fsyncs

Builds the scale benchmark's corpus (benchmarks/scale.py, seed 0) through ``mem.curate`` in a
temp dir and charges each batch's time to buckets (exclusive time, scale.py's ``Profiler``):
planning, file writes, fsync, journal, context rendering, index documents, the index write and
commit, Whoosh segment merges, the catalog. Prints the mean per batch for each fifth of the
build (a bucket that grows from row to row grows with the tree), the segment count, and the
first write of a fresh process after the build.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # noqa: E402


def profile(n: int, *, durable: bool = False, batch: int = 250) -> dict:
    import whoosh.writing as ww

    from memgrove import Memory
    from memgrove.tree import contexts, fsio, index_sync, store

    corpus = scale.Corpus(0)
    tmp = tempfile.mkdtemp(prefix="memgrove-build-profile-")
    try:
        mem = Memory.open(tmp, create=True, durable=durable)
        tree = mem.tree
        prof = scale.Profiler()
        for obj, attr, bucket in [
            (index_sync, "scan", "scan"), (store, "plan_batch", "plan"),
            (tree.journal, "write_pending", "journal"), (tree.journal, "append", "journal"),
            (tree.journal, "clear_pending", "journal"), (tree, "_write_file", "write files"),
            (os, "fsync", "fsync"), (contexts, "render", "contexts"), (tree, "_doc_for", "index doc"),
            (tree.engine, "write", "index write"), (ww.SegmentWriter, "_merge_segments", "index merge"),
            (tree.catalog, "apply", "catalog"), (tree.catalog, "stats_of", "catalog"),
            (tree.catalog, "doc_hashes_of", "catalog"), (tree.catalog, "digest", "catalog"),
        ]:
            prof.wrap(obj, attr, bucket)
        if hasattr(fsio, "Pending"):
            prof.wrap(fsio.Pending, "sync_all", "sync pass")
        rows = []
        try:
            for i in range(0, n, batch):
                ops = [corpus.op(j) for j in range(i, min(n, i + batch))]
                prof.reset()
                t = time.perf_counter()
                res = mem.curate(ops)
                rows.append((i + len(ops), time.perf_counter() - t, dict(prof.totals)))
                assert all(r.status == "added" for r in res)
        finally:
            prof.restore()
        segments = len(tree.engine._index()._segments())
        mem.close()
        again = Memory.open(tmp, durable=durable)
        t = time.perf_counter()
        again.curate([corpus.op(n)])
        first = time.perf_counter() - t
        again.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"n": n, "durable": durable, "rows": rows, "segments": segments, "first_write_s": first,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "load": os.getloadavg()[0]}


def render(r: dict) -> str:
    rows = r["rows"]
    build = sum(x[1] for x in rows)
    keys = sorted({k for x in rows for k in x[2]})
    out = [f"N={r['n']:,} durable={r['durable']}: build {build:.1f} s ({r['n'] / build:.0f} ops/s), peak RSS "
           f"{r['maxrss_mb']:.0f} MB, {r['segments']} segments, first write of a fresh process "
           f"{r['first_write_s']:.2f} s, load {r['load']:.1f}", "",
           "| up to | batch s | " + " | ".join(keys) + " | other |", "|---" * (len(keys) + 3) + "|"]
    step = max(1, len(rows) // 5)
    for j in range(0, len(rows), step):
        part = rows[j:j + step]
        tot = sum(x[1] for x in part) / len(part)
        vals = [sum(x[2].get(k, 0.0) for x in part) / len(part) for k in keys]
        out.append(f"| {part[-1][0]:,} | {tot:.2f} | " + " | ".join(f"{v:.3f}" for v in vals)
                   + f" | {tot - sum(vals):.3f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("size", type=int)
    ap.add_argument("--durable", action="store_true")
    ap.add_argument("--batch", type=int, default=250)
    a = ap.parse_args(argv)
    r = profile(a.size, durable=a.durable, batch=a.batch)
    print(render(r))
    return r


if __name__ == "__main__":
    main()

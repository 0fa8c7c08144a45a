#!/usr/bin/env python
"""Where a build's time goes, batch by batch: is a batch O(batch) or O(tree)?

    python benchmarks/build_profile.py 5000             # durable=False, batches of 250
    python benchmarks/build_profile.py 1000 --durable   # with fsyncs
    python benchmarks/build_profile.py 25000 --marginal 8   # 8 batches on a 25k tree made by reindex

Builds the scale benchmark's corpus (benchmarks/scale.py, seed 0) through ``mem.curate`` in a
temp dir and charges each batch's time to buckets (exclusive time, harness/stats.py's ``Profiler``):
planning, file writes, fsync, journal, context rendering, index documents, the index write and
commit, Whoosh segment merges, the catalog. Prints the mean per batch for each fifth of the
build (a bucket that grows from row to row grows with the tree), the segment count, and the
first write of a fresh process after the build. Always on Whoosh (the engine whose merges it charges).
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
from harness import stats, synthetic  # noqa: E402


def profile(n: int, *, durable: bool = False, batch: int = 250) -> dict:
    import whoosh.writing as ww

    from memgrove import Memory
    from memgrove.tree import contexts, fsio, index_sync, store

    corpus = synthetic.Corpus(0)
    tmp = tempfile.mkdtemp(prefix="memgrove-build-profile-")
    try:
        mem = Memory.open(tmp, create=True, durable=durable, engine="whoosh")
        tree = mem.tree
        prof = stats.Profiler()
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
        again = Memory.open(tmp, durable=durable, engine="whoosh")
        t = time.perf_counter()
        again.curate([corpus.op(n)])
        first = time.perf_counter() - t
        again.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"n": n, "durable": durable, "rows": rows, "segments": segments, "first_write_s": first,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "load": os.getloadavg()[0]}


def marginal(n: int, batches: int, *, durable: bool = False, batch: int = 250) -> dict:
    """Time ``batches`` more batches on a tree of ``n`` entries made without ``curate``'s per-batch
    costs: the entries written as ``curate`` plans them, each folder's context.md rendered once,
    then ``mem.reindex()`` (the bulk build). What a batch costs at N, without building up to N."""
    from datetime import datetime, timezone

    from memgrove import Memory
    from memgrove.tree import contexts
    from memgrove.tree.operations import Overlay, plan_batch

    corpus = synthetic.Corpus(0)
    tmp = tempfile.mkdtemp(prefix="memgrove-build-marginal-")
    try:
        with Memory.open(tmp, create=True, durable=False, engine="whoosh") as mem:
            root = mem.tree.root
        now = datetime.now(timezone.utc)
        folders: set[str] = set()
        for i in range(0, n, 500):
            overlay = Overlay(lambda p: None, lambda f: [], lambda t: [])  # ADDs to new paths only
            for p in plan_batch([corpus.op(j) for j in range(i, min(n, i + 500))], overlay, now):
                for ch in p.record.changes():
                    f = root / ch.path
                    f.parent.mkdir(parents=True, exist_ok=True)
                    f.write_text(ch.after or "", encoding="utf-8")
                    parts = ch.path.split("/")[:-1]
                    folders.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        for f in sorted(folders, key=lambda f: -f.count("/")):
            (root / f / "context.md").write_text(contexts.render(root / f, f, None, stamp) or "", encoding="utf-8")
        mem = Memory.open(tmp, durable=durable, engine="whoosh")
        t = time.perf_counter()
        mem.reindex()
        reindex_s = time.perf_counter() - t
        times = []
        for b in range(batches):
            ops = [corpus.op(n + b * batch + j) for j in range(batch)]
            t = time.perf_counter()
            res = mem.curate(ops)
            times.append(time.perf_counter() - t)
            assert all(r.status == "added" for r in res)
        mem.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"n": n, "durable": durable, "reindex_s": reindex_s, "batch_s": times, "load": os.getloadavg()[0]}


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
    ap.add_argument("--marginal", type=int, default=0, metavar="K",
                    help="instead: write SIZE entries as files, reindex, then time K more batches")
    a = ap.parse_args(argv)
    if a.marginal:
        r = marginal(a.size, a.marginal, durable=a.durable, batch=a.batch)
        ts = sorted(r["batch_s"])
        print(f"N={a.size:,} durable={a.durable}: reindex {r['reindex_s']:.1f} s; batch of {a.batch} median "
              f"{ts[len(ts) // 2]:.2f} s (min {ts[0]:.2f}, max {ts[-1]:.2f}); load {r['load']:.1f}")
        return r
    r = profile(a.size, durable=a.durable, batch=a.batch)
    print(render(r))
    return r


if __name__ == "__main__":
    main()

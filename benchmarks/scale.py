#!/usr/bin/env python
"""Scale benchmark: synthetic Context Trees of N entries, built through the public API.

    python benchmarks/scale.py                       # sizes 1000 10000, seed 0
    python benchmarks/scale.py --sizes 1000          # smoke run (well under a minute)
    python benchmarks/scale.py --quick --out /tmp/s  # 300 entries, few queries (for tests)
    python benchmarks/scale.py --curve               # scale curve, 1k 5k 25k 100k: ~40 min (scale_curve.py)
    python benchmarks/scale.py --curve --sizes 1000 5000   # quick curve (`make bench`): ~1.5-2 min

For every size N, in a fresh child process (so peak memory is per size) and a fresh temp dir, it:
1. builds the tree with ``Memory.open(tmp, create=True, durable=False)`` and ``mem.curate([...])`` in
   batches of ``--batch`` ADDs (curate throughput);
2. applies ``--single-adds`` more ADDs one op per ``curate`` call, with a breakdown of where that time goes;
3. times ``mem.fingerprint()``;
4. runs ``--queries`` searches (2-4 vocabulary words) three ways, interleaved query by query: the engine
   alone (the baseline), ``mem.search`` with ``scan_interval=0`` and with ``scan_interval=1.0``; then a
   breakdown of the strict search (scan, digest, engine, file reads, signals, the rest);
5. times a full ``mem.reindex()`` and the engine alone on the rebuilt index;
6. times a cold one-shot process searching (``python -c pass`` and ``import memgrove`` as baselines);
7. records peak RSS and the disk size of ``.memgrove/`` (tree/, index/, journal/, rest).

The corpus is seeded (``--seed``, harness/synthetic.py). Results: ``benchmarks/results/scale.{json,md}``.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent

from harness.machine import loadavg  # noqa: E402
from harness.report import RESULTS, log, publish  # noqa: E402
from harness.workers import measure_sizes, size_options, worker  # noqa: E402
from scale_report import TARGET_SIZE, TARGETS, render_markdown  # noqa: E402
from harness.resources import RssSampler, disk_usage, maxrss_mb, scratch_dir  # noqa: E402
from harness.stats import Profiler, breakdown as _breakdown, growth_exponent, pct, summary_ms, timed  # noqa: E402,F401  (the tests read growth_exponent here)
from harness.synthetic import Corpus, curate_batches  # noqa: E402
from harness.tier_runs import child, create_memory  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)
from scale_curve import CURVE_METRICS, curve_main, curve_summary, run_curve_size  # noqa: E402,F401


# -- the index's internals (informational) ----------------------------------------


def _has_setting(name: str) -> bool:
    from memgrove import TreeSettings
    return name in {f.name for f in __import__("dataclasses").fields(TreeSettings)}


def _whoosh(mem: Any) -> tuple[int | None, int | None]:
    """The number of Whoosh segments and the deleted documents they still hold (private API; informational only)."""
    try:
        ix = mem.tree.engine._index()
        return len(ix._segments()), ix.doc_count_all() - ix.doc_count()
    except Exception:  # noqa: BLE001 - another engine or another Whoosh version
        return None, None


# -- one size, in a child process --------------------------------------------------

def run_size(n: int, cfg: dict[str, Any]) -> dict[str, Any]:
    from memgrove import Memory
    from memgrove.tree.index import contexts as contexts_mod
    from memgrove.tree.index import sync as sync_mod
    from memgrove.tree import store as store_mod
    from memgrove.tree.ranking import gather as ranking_mod
    from memgrove.tree.index.catalog import digest_of, scan

    corpus = Corpus(cfg["seed"])
    out: dict[str, Any] = {"size": n, "loadavg_start": loadavg()}
    with scratch_dir(f"memgrove-scale-{n}-", cfg, out) as tmp:
        phases: dict[str, float] = {}
        mark = [time.perf_counter()]

        def phase(name: str) -> None:
            now = time.perf_counter()
            phases[name] = round(now - mark[0], 2)
            mark[0] = now

        # 1. build -----------------------------------------------------------------
        ops, generate_s = timed(lambda: [corpus.op(i) for i in range(n)])
        out["generate_s"] = round(generate_s, 3)
        words = [len(o["content"].split()) for o in ops]
        out["corpus"] = {"entries": n, "words_p50": pct(words, 50), "words_total": sum(words),
                         "domains": len({o["path"].split("/")[0] for o in ops}),
                         "topics": len({"/".join(o["path"].split("/")[:2]) for o in ops})}
        mem = create_memory(tmp, cfg, out)
        out["build"] = curate_batches(mem, ops, cfg["batch"], f"[{n}]")
        out["maxrss_after_build_mb"] = maxrss_mb()
        log(f"  [{n}] build {out['build']['seconds']:.1f} s ({out['build']['ops_per_s']:.0f} ops/s)")

        phase("build")
        # 2. single-op batches, with a breakdown of the time ----------------------------
        tree = mem.tree
        prof = Profiler()
        prof.wrap(sync_mod, "scan", "scan (os.scandir + stat)")
        prof.wrap(sync_mod, "digest_of", "digest (blake2b per file)")
        prof.wrap(store_mod, "plan_batch", "plan (validate + render entry)")
        prof.wrap(tree.journal, "write_pending append clear_pending", "journal")
        prof.wrap(tree, "_write_file", "write files")
        prof.wrap(contexts_mod, "render", "context.md render (parse siblings)")
        prof.wrap(tree, "_read_disk", "read files")
        prof.wrap(tree, "_doc_for", "index doc (read + parse)")
        prof.wrap(tree.engine, "write", "whoosh write + commit")
        prof.wrap(tree.catalog, "apply stats_of digest backlinks", "catalog (sqlite)")
        prof.wrap(tree, "_bump_generation", "generation file")
        prof.wrap(tree.signals, "forget", "signals (sqlite)")
        single_ops = [corpus.op(n + j) for j in range(cfg["single_adds"])]
        single_b, single_t = prof.each(functools.partial(mem.curate, [o]) for o in single_ops)
        out["single_add"] = {"latency_ms": summary_ms(single_t),
                             "ops_per_s": round(len(single_t) / sum(single_t), 1),
                             "breakdown": _breakdown(single_b, single_t)}
        log(f"  [{n}] single ADD p50 {pct(single_t, 50) * 1000:.1f} ms")

        mem.close()

        # Three readers on the built tree. "default" is Memory.open's default settings
        # (an inotify watcher in a long-lived process, if the library has one); "strict"
        # scans the file stats before every search (watch off, scan_interval=0); "interval"
        # scans at most once a second (watch off, scan_interval=1.0).
        no_watch = {"watch": False} if _has_setting("watch") else {}
        readers = {
            "default": Memory.open(tmp, durable=False),
            "strict": Memory.open(tmp, durable=False, scan_interval=0.0, **no_watch),
            "interval_1s": Memory.open(tmp, durable=False, scan_interval=1.0, **no_watch),
        }
        out["reader_settings"] = {k: {"watch": getattr(m.tree.settings, "watch", None),
                                      "scan_interval": m.tree.settings.scan_interval} for k, m in readers.items()}

        phase("single_adds")
        # 3. fingerprint ----------------------------------------------------------------
        out["fingerprint_ms"] = {}
        for name in ("default", "strict"):
            m = readers[name]
            m.fingerprint(), m.fingerprint()  # the second check is where a watcher starts
            out["fingerprint_ms"][name] = summary_ms([timed(m.fingerprint)[1] for _ in range(cfg["fingerprints"])])
        scan_t, dig_t = [], []
        for _ in range(cfg["fingerprints"]):
            cur, seconds = timed(lambda: scan(tree.root))
            scan_t.append(seconds)
            dig_t.append(timed(lambda: digest_of(cur))[1])
        out["scan_ms"] = summary_ms(scan_t)
        out["digest_ms"] = summary_ms(dig_t)
        out["files_scanned"] = len(cur)
        out["folders"] = sum(1 for _ in os.walk(tree.root))

        phase("fingerprint")
        # 4. search: engine and the three readers, interleaved query by query ---------------
        base = readers["strict"]
        boosts = base.tree.settings.boosts()
        qrng = random.Random(f"memgrove-scale-queries-{cfg['seed']}")
        warm = [corpus.query(qrng) for _ in range(cfg["warmup"])]
        queries = [corpus.query(qrng) for _ in range(cfg["queries"])]
        limit = 10
        eng_limit = limit * 3 + 10  # what ContextTree.search asks the engine for

        def engine(q: str):
            return base.tree.engine.search(q, boosts=boosts, limit=eng_limit)

        modes: dict[str, Callable[[str], Any]] = {"engine": engine, **{k: m.search for k, m in readers.items()}}
        for q in warm:
            for f in modes.values():
                f(q)
        out["watcher_active"] = getattr(readers["default"].tree, "_watcher", None) is not None
        times: dict[str, list[float]] = {m: [] for m in modes}
        empty = 0
        hits_n = []
        names = list(modes)
        for k, q in enumerate(queries):
            r = k % len(names)
            for m in names[r:] + names[:r]:  # rotate the order so noise hits every mode alike
                ts = time.perf_counter()
                res = modes[m](q)
                times[m].append(time.perf_counter() - ts)
                if m == "strict":
                    hits_n.append(len(res))
                    empty += not res
        base50 = pct(times["engine"], 50)
        base95 = pct(times["engine"], 95)
        out["search"] = {m: summary_ms(v) for m, v in times.items()}
        for m in readers:
            out["search"][m]["x_engine_p50"] = round(pct(times[m], 50) / base50, 2)
            out["search"][m]["x_engine_p95"] = round(pct(times[m], 95) / base95, 2)
        out["search"]["queries"] = len(queries)
        out["search"]["warmup"] = len(warm)
        out["search"]["empty_results"] = empty
        out["search"]["hits_p50"] = pct(hits_n, 50)
        out["search"]["examples"] = queries[:5]
        out["whoosh_segments"], out["whoosh_deleted_docs"] = _whoosh(base)
        log(f"  [{n}] search p50 ms: " + ", ".join(f"{m} {pct(v, 50) * 1000:.1f}" for m, v in times.items()))

        # where a search's time goes (exclusive time per part), strict and default
        out["search_breakdown"] = {}
        for name in ("strict", "default"):
            t2 = readers[name].tree
            prof = Profiler()
            prof.wrap(sync_mod, "scan", "scan (os.scandir + stat)")
            prof.wrap(sync_mod, "digest_of", "digest (blake2b per file)")
            prof.wrap(t2, "_index_usable", "index check (exists + sqlite)")
            prof.wrap(t2.catalog, "digest", "index check (exists + sqlite)")
            prof.wrap(t2, "_generation", "generation file")
            if getattr(t2, "_watcher", None) is not None:
                prof.wrap(t2._watcher, "changed", "watcher check (inotify)")
            prof.wrap(t2, "_engine_search", "engine search")
            prof.wrap(t2.engine, "terms", "analyze query terms")
            prof.wrap(t2, "_read_disk", "read hit files")
            prof.wrap(store_mod.entry_mod, "parse", "parse hit entries (YAML + sections)")
            prof.wrap(store_mod, "excerpt", "excerpts")
            prof.wrap(t2.signals, "get_many", "signals read (sqlite)")
            prof.wrap(t2.signals, "record_access", "signals write (sqlite)")
            prof.wrap(ranking_mod, "days_since_update", "stat hits (recency)")
            sb, st_ = prof.each(functools.partial(readers[name].search, q) for q in queries[: cfg["breakdown_queries"]])
            out["search_breakdown"][name] = _breakdown(sb, st_)
        for m in readers.values():
            m.close()

        phase("search")
        # 5. full reindex -----------------------------------------------------------------
        mem = Memory.open(tmp, durable=False)
        with RssSampler() as sampler:
            docs, reindex_s = timed(mem.reindex)
        out["reindex"] = {"seconds": round(reindex_s, 3), "docs": docs, "docs_per_s": round(docs / reindex_s, 1),
                          "procs": mem.tree.settings.index_procs if out["files_scanned"] >= 2000 else 1,
                          "peak_rss_mb": sampler.peak_mb, "peak_workers": sampler.peak_children}
        log(f"  [{n}] reindex {reindex_s:.1f} s ({docs} docs)")
        for q in warm:
            mem.tree.engine.search(q, boosts=boosts, limit=eng_limit)
        out["search"]["engine_after_reindex"] = summary_ms([
            timed(lambda q=q: mem.tree.engine.search(q, boosts=boosts, limit=eng_limit))[1]
            for q in queries[: cfg["breakdown_queries"]]])
        out["whoosh_segments_after_reindex"], out["whoosh_deleted_docs_after_reindex"] = _whoosh(mem)
        mem.close()
        out["maxrss_mb"] = maxrss_mb()

        phase("reindex")
        # 6. cold one-shot process ------------------------------------------------------------
        py = sys.executable
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
        env.pop("MEMGROVE_HOME", None)

        def wall(code: str) -> float:
            return child([py, "-c", code], env)[1]

        cold, base_py, base_imp, inner = [], [], [], []
        crng = random.Random(f"memgrove-scale-cold-{cfg['seed']}")
        for k in range(cfg["cold_runs"]):
            q = corpus.query(crng)
            if k % 2 == 0:  # the baselines vary less: every other run is enough
                base_py.append(wall("pass"))
                base_imp.append(wall("import memgrove"))
            cold.append(wall(f"from memgrove import Memory; Memory.open({str(tmp)!r}).search({q!r})"))
        probe = ("import time; t0 = time.perf_counter(); from memgrove import Memory; t1 = time.perf_counter(); "
                 "m = Memory.open({p!r}); t2 = time.perf_counter(); m.search({q!r}); t3 = time.perf_counter(); "
                 "print(t1 - t0, t2 - t1, t3 - t2)")
        for k in range(min(3, cfg["cold_runs"])):
            q = corpus.query(crng)
            inner.append([float(x) for x in child([py, "-c", probe.format(p=str(tmp), q=q)], env)[0].split()])
        out["cold"] = {
            "runs": len(cold),
            "query_process_ms": summary_ms(cold),
            "python_pass_ms": summary_ms(base_py),
            "import_memgrove_ms": summary_ms(base_imp),
            "inside_p50_ms": {
                "import": round(pct([x[0] for x in inner], 50) * 1000, 1),
                "open": round(pct([x[1] for x in inner], 50) * 1000, 2),
                "first_search": round(pct([x[2] for x in inner], 50) * 1000, 1),
            },
        }
        log(f"  [{n}] cold query process p50 {pct(cold, 50) * 1000:.0f} ms")

        phase("cold")
        # 7. disk ----------------------------------------------------------------------------
        home = tmp / ".memgrove"
        parts = {name: disk_usage(home / name) for name in ("tree", "index", "journal")}
        total = disk_usage(home)
        parts["other"] = {k: total[k] - sum(p[k] for p in parts.values()) for k in total}
        parts["total"] = total
        out["disk"] = parts
        phase("disk")
        out["phase_s"] = phases
        out["loadavg_end"] = loadavg()
        return out


# -- the command line -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="tree sizes (default 1000 10000; with --curve 1000 5000 25000 100000)")
    ap.add_argument("--curve", action="store_true",
                    help="scale curve: build time, disk, peak RSS, warm latency per query tier, cold CLI latency, "
                         "growth exponents and a log-log plot (writes scale_curve*.{json,md,png})")
    ap.add_argument("--per-tier", type=int, default=None,
                    help="--curve: fresh tier-2 questions, each repeated (tier 0) and reworded (tier 1) (default 200)")
    ap.add_argument("--lag", type=int, default=None, help="--curve: rounds between a question and its repeat (10)")
    ap.add_argument("--no-plot", action="store_true", help="--curve: no PNG")
    ap.add_argument("--size-batch", nargs="+", default=None, metavar="SIZE=BATCH",
                    help="--curve: build this size in batches of BATCH instead of --batch (still `mem.curate`; "
                         "e.g. 100000=1000 builds 100k about twice as fast, but its build time is then not on the "
                         "same curve)")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="--curve: re-render OUT.md and OUT.png from a curve JSON (no measuring)")
    ap.add_argument("--quick", action="store_true",
                    help="size 300, few queries (for tests); with --curve sizes 200 400, 20 rounds, 2 cold runs")
    ap.add_argument("--queries", type=int, default=None, help="measured queries per mode (default 300)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up queries (default 20; --curve: rounds, 10)")
    ap.add_argument("--single-adds", type=int, default=None, help="single-op curate calls (default 100)")
    ap.add_argument("--breakdown-queries", type=int, default=None,
                    help="queries per search-breakdown pass and after the reindex (default 50)")
    ap.add_argument("--cold-runs", type=int, default=None, help="cold one-shot processes (default 10)")
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default=None,
                    help="the trees' full-text engine (default: the product default); its name ends the file names")
    ap.add_argument("--out", type=Path, default=None,
                    help="write OUT.json and OUT.md (default benchmarks/results/scale, or scale_quick with --quick; "
                         "--curve: scale_curve for the default sizes, else scale_curve_<sizes>, plus OUT.png)")
    ap.add_argument("--in-process", action="store_true", help="run sizes in this process (peak RSS then accumulates)")
    size_options(ap)
    a = ap.parse_args(argv)

    if a.worker:  # child: one size, JSON on stdout
        return worker(a.worker, lambda cfg: (run_curve_size if cfg.get("mode") == "curve" else run_size)(cfg["size"], cfg))

    if a.curve:
        return curve_main(a, argv)
    quick = a.quick
    cfg = {
        "seed": a.seed,
        "batch": a.batch,
        "queries": a.queries or (60 if quick else 300),
        "warmup": a.warmup if a.warmup is not None else (10 if quick else 20),
        "single_adds": a.single_adds or (20 if quick else 100),
        "cold_runs": a.cold_runs or (3 if quick else 10),
        "fingerprints": 20 if quick else 50,
        "breakdown_queries": a.breakdown_queries or (30 if quick else 50),  # also the engine-after-reindex pass
        "keep": a.keep, "engine": a.engine,
    }
    sizes = a.sizes or ([300] if quick else [1000, 10000])
    out = a.out or (RESULTS / (("scale_quick" if quick else "scale") + (f"_{a.engine}" if a.engine else "")))
    report = measure_sizes("scale benchmark", HERE / "scale.py", sizes, cfg, argv, a.seed,
                           in_process=run_size if a.in_process else None)
    report["targets"] = {**TARGETS, "size": TARGET_SIZE}
    return publish(report, render_markdown(report), None if a.no_write else out)


if __name__ == "__main__":
    main()

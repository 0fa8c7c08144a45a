#!/usr/bin/env python
"""Query-tier benchmark (issue 3): the 5-tier pipeline on synthetic trees of N entries.

    python benchmarks/tiers.py                        # sizes 1000 10000 25000, seed 0
    python benchmarks/tiers.py --sizes 1000           # smoke run
    python benchmarks/tiers.py --quick --out /tmp/t   # 300 entries, few queries (< 30 s)

The corpus is scale.py's (``Corpus``, harness/synthetic.py): seeded,
entry i the same in every run and size. For every size N, in a fresh child
process and temp dir, with no LLM configured (``MEMGROVE_MODEL`` removed from
the environment), it:

1. builds the tree with ``Memory.open(tmp, create=True, durable=False)`` and
   ``mem.curate`` in batches of ``--batch`` ADDs;
2. opens it again (``Memory.open(tmp, durable=False)``, default settings) and
   asks ``Memory.query``, interleaved round by round, after warm-up rounds:
   - *tier-2 questions*: 2-3 of an entry's rarest title words (by document
     frequency in the corpus) in a stopword-only template ("what do we know
     about W1 W2?"), each asked once;
   - *repeats* of the tier-2 questions ``--lag`` rounds later (tier 0 expected);
   - *rewordings* of them, same content words in the same order (tier 1 expected):
     "what's W1 W2?", a different stopword template, or "also" inserted (a stop
     word for the engine, a filler word for the cache);
   - *out-of-domain* questions: 3 English words absent from the corpus vocabulary;
   - *vocabulary* questions: the corpus's 2-4-word query generator (mostly tiers 3-4,
     answered extractively as no LLM is configured);
   and reports the tier each answer actually carried, the latency per realized
   tier (wall time of ``mem.query``, which includes the cache write and the
   query-log append, and the answer's own ``latency_ms``), and whether a tier-2
   answer's first source is the entry its question was built from;
3. builds ``mem.graph()`` and times ``graph.invoke({"question": q})`` beside
   ``mem.query(q)``, interleaved: a cached (tier-0) question, and fresh tier-2
   questions (two disjoint sets of the same kind: a question asked once is cached);
4. times cold processes: ``.venv/bin/memgrove --root TMP query Q --json`` for a
   cached question (tier 0) and for fresh questions checked in-process to route
   to tier 2 (``pipeline.retrieve``, which caches nothing), with ``python -c pass``
   and ``python -c 'import memgrove.cli'`` as baselines in the same rounds; then
   profiles the cold path in-process (imports, open, stat scan, digest, watcher,
   searcher open, search, answer, cache, log) and lists the heaviest imports
   (``python -X importtime``).

Results: ``benchmarks/results/tiers.{json,md}`` (``--quick`` writes
``tiers_quick.*`` unless ``--out`` says otherwise) and a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

from harness.machine import loadavg, versions  # noqa: E402
from harness.report import RESULTS, log, publish  # noqa: E402
from harness.workers import measure_sizes, size_options, worker  # noqa: E402
from harness.resources import maxrss_mb, scratch_dir  # noqa: E402
from harness.stats import Profiler, breakdown, summary_ms, timed, timed_ms  # noqa: E402
from harness.synthetic import Corpus, Questions, curate_batches  # noqa: E402
from harness.tier_runs import (create_memory, cold_runs, label_of, record, rounds, summarize,  # noqa: E402
                               timed_query)
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)
from tiers_cold import cold_profile, import_times  # noqa: E402
from tiers_report import BYTEROVER_DOCS, BYTEROVER_MS, TARGET_SIZE, TARGETS_MS, render_markdown  # noqa: E402


# -- one size, in a child process ---------------------------------------------------

def run_size(n: int, cfg: dict[str, Any]) -> dict[str, Any]:
    os.environ.pop("MEMGROVE_MODEL", None)
    from memgrove import Memory

    corpus = Corpus(cfg["seed"])
    out: dict[str, Any] = {"size": n, "loadavg_start": loadavg()}
    with scratch_dir(f"memgrove-tiers-{n}-", cfg, out) as tmp:
        # 1. build ------------------------------------------------------------------------
        ops = [corpus.op(i) for i in range(n)]
        mem = create_memory(tmp, cfg, out)
        out["build"] = curate_batches(mem, ops, cfg["batch"], f"[{n}]")
        mem.close()
        log(f"  [{n}] build {out['build']['seconds']:.1f} s")

        # 2. Memory.query, warm, in-process ------------------------------------------------------
        qs = Questions(corpus, ops, cfg["seed"])
        per, lag, warm = cfg["per_tier"], cfg["lag"], cfg["warmup"]
        g_runs, c_runs, p_runs = cfg["graph_runs"], cfg["cold_runs"], cfg["probe_runs"]
        f_runs = cfg["full_rounds"]
        b_runs = cfg["breakdown_runs"]
        pool = qs.tier2(warm + per + f_runs + 2 * b_runs + 2 * g_runs + 3 * (c_runs + p_runs) + 10)
        warm_t2, meas_t2 = pool[:warm], pool[warm:warm + per]
        rest = pool[warm + per:]
        full_t2, rest = rest[:f_runs], rest[f_runs:]
        bd_t2, bd_t2_full, rest = rest[:b_runs], rest[b_runs:2 * b_runs], rest[2 * b_runs:]
        graph_a, graph_b, rest = rest[:g_runs], rest[g_runs:2 * g_runs], rest[2 * g_runs:]
        oods = qs.ood(warm + cfg["ood"] + b_runs)
        oods, bd_ood = oods[:len(oods) - b_runs], oods[len(oods) - b_runs:]
        vocab = qs.vocabulary(warm + cfg["vocabulary"])
        out["questions"] = {"tier2_examples": [p["q"] for p in meas_t2[:4]],
                            "reword_examples": [qs.reword(p, j)[0] for j, p in enumerate(meas_t2[:3])],
                            "ood_examples": oods[warm:warm + 3], "vocabulary_examples": vocab[warm:warm + 3],
                            "ood_words_available": len(qs.ood_words)}

        mem = Memory.open(tmp, durable=False)
        out["first_query_ms"] = round(timed_ms(lambda: mem.query(warm_t2[0]["q"])), 1)

        ask = functools.partial(timed_query, mem)

        # warm-up: the same kinds of calls, not recorded
        for k, p in enumerate(warm_t2[1:], 1):
            ask(p["q"])
        for k, p in enumerate(warm_t2):
            ask(p["q"])
            ask(qs.reword(p, k)[0])
        for q in oods[:warm] + vocab[:warm]:
            ask(q)

        records: list[dict[str, Any]] = []
        ood_meas, voc_meas = oods[warm:], vocab[warm:]
        ood_spent = 0.0

        def extra(i: int) -> list[tuple[str, str, None]]:
            ood = [("ood", ood_meas[i], None)] if i < len(ood_meas) and ood_spent < cfg["ood_budget_s"] else []
            return ood + ([("vocabulary", voc_meas[i], None)] if i < len(voc_meas) else [])

        t_loop = time.perf_counter()
        for i, calls in rounds(qs, meas_t2, per, lag, extra):
            for kind, q, src in calls:
                a, wall = ask(q)
                if kind == "ood":
                    ood_spent += wall
                records.append(record(kind, a, wall, src))
            if i % 50 == 49:
                log(f"  [{n}] round {i + 1}/{per + lag}")
        out["query_loop_s"] = round(time.perf_counter() - t_loop, 1)
        out["ood_time_budget_hit"] = ood_spent >= cfg["ood_budget_s"]
        out.update(summarize(records))
        out["maxrss_mb_after_queries"] = maxrss_mb()
        log(f"  [{n}] tiers p50 ms: " + ", ".join(f"{k} {v['wall_ms']['p50']:.2f} (n={v['wall_ms']['n']})"
                                                  for k, v in out["by_tier"].items()))

        # where a warm Memory.query spends its time (exclusive time per part)
        out["warm_breakdown"] = {"tier2": warm_breakdown(mem, [p["q"] for p in bd_t2], "2"),
                                 "ood": warm_breakdown(mem, bd_ood, "ood")}

        # 2b. the same with the fuzzy index full (a week of questions): tier 1 scans all of it
        out["full_cache"] = full_cache(mem, qs, full_t2, cfg)
        fc = out["full_cache"]
        out["warm_breakdown"]["tier2_full"] = warm_breakdown(mem, [p["q"] for p in bd_t2_full], "2")
        log(f"  [{n}] full cache ({fc['fill']['entries']} questions): " + ", ".join(
            f"{k} {v['wall_ms']['p50']:.2f}" for k, v in fc["by_tier"].items()) + " ms p50")

        # 3. the graph beside Memory.query -------------------------------------------------------
        out["graph"] = graph_compare(mem, meas_t2[0]["q"], graph_a, graph_b)
        log(f"  [{n}] graph ÷ query p50: tier 0 {out['graph']['tier0']['ratio_p50']:.2f}×, "
            f"tier 2 {out['graph']['tier2']['ratio_p50']:.2f}×")

        # 4. cold processes -------------------------------------------------------------------------
        fresh = []
        for p in rest:  # checked to route to tier 2 without answering (nothing cached)
            hits, route = mem.pipeline.retrieve(p["q"])
            if route == "direct":
                fresh.append(p["q"])
        cached_q = meas_t2[1]["q"]
        assert mem.query(cached_q).tier == 0
        mem.close()
        out["cold"] = cold_runs(tmp, cached_q, fresh[:c_runs], c_runs)
        out["cold_profile"] = {
            "tier0": cold_profile(tmp, [cached_q] * p_runs),
            "tier2": cold_profile(tmp, fresh[c_runs:c_runs + p_runs]),
        }
        out["importtime"] = import_times()
        c = out["cold"]
        log(f"  [{n}] cold p50 ms: pass {c['python_pass']['p50']:.0f}, import {c['import_cli']['p50']:.0f}, "
            f"tier 0 {c['cli_tier0']['p50']:.0f}, tier 2 {c['cli_tier2']['p50']:.0f}")
        out["loadavg_end"] = loadavg()
        return out


def full_cache(mem: Any, qs: Questions, fresh: list[dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    """Fill the fuzzy index to its cap with other questions, then ask fresh tier-2 questions and,
    after all of them, their repeats and rewordings (interleaved)."""
    cache = mem.pipeline.cache
    cap = cfg["fill"] or cache.fuzzy_entries
    fp = mem.fingerprint()
    model = mem.query(fresh[0]["q"]).to_dict()  # any real answer, as the cached value
    fillers = qs.vocabulary(cap)
    puts = []
    for q in fillers:
        puts.append(timed(lambda: cache.put(q, fp, {**model, "question": q}))[1])
    fill = {"entries": len(fillers), "fuzzy_cap": cache.fuzzy_entries, "seconds": round(sum(puts), 2),
            "put_first100_ms": summary_ms(puts[:100]), "put_last100_ms": summary_ms(puts[-100:])}
    records: list[dict[str, Any]] = []

    def ask(kind: str, q: str, src: dict | None = None) -> None:
        records.append(record(kind, *timed_query(mem, q), src))

    for p in fresh[1:]:
        ask("tier2", p["q"], p)
    for j, p in enumerate(fresh[1:]):
        rq, how = qs.reword(p, j)
        calls = [("repeat", p["q"]), ("reword:" + how, rq)]
        for kind, q in (calls if j % 2 else calls[::-1]):
            ask(kind, q)
    return {"fill": fill, **summarize(records)}


def warm_breakdown(mem: Any, questions: list[str], want: str) -> dict[str, Any]:
    """Exclusive time per part of warm ``mem.query`` calls; only answers at tier ``want`` count."""
    from memgrove.graphs import tiers as tiers_mod
    from memgrove.tree.index import sync as sync_mod
    from memgrove.tree import store as store_mod
    from memgrove.tree.ranking import gather as ranking_mod

    tree, pipe = mem.tree, mem.pipeline
    prof = Profiler()
    prof.wrap(tree, "ensure_fresh", "freshness check (watcher)")
    prof.wrap(sync_mod, "scan", "stat scan")
    prof.wrap(pipe.cache, "get_exact", "tier 0 lookup")
    prof.wrap(pipe.cache, "get_fuzzy", "tier 1 lookup (scan of the fuzzy index)")
    prof.wrap(tree.engine, "search", lambda *a, **kw: f"BM25 search, expand={kw.get('expand', 'none')}")
    prof.wrap(tree.engine, "idf terms", "idf + terms")
    prof.wrap(tree, "_read_disk", "read entry files")
    prof.wrap(store_mod.entry_mod, "parse", "parse entries (YAML + sections)")
    prof.wrap(store_mod, "excerpt", "excerpts")
    prof.wrap(tree.signals, "get_many record_access", "signals (sqlite)")
    prof.wrap(ranking_mod, "days_since_update", "stat hits (recency)")
    prof.wrap(tree.catalog, "count", "entry count (sqlite)")
    prof.wrap(tiers_mod, "direct_answer out_of_domain_answer", "compose answer")
    prof.wrap(pipe.cache, "put", "cache write (put)")
    prof.wrap(tiers_mod, "log_query", "query log append")
    seen: collections.Counter = collections.Counter()

    def wanted(a: Any) -> bool:
        seen[label_of(a)] += 1
        return label_of(a) == want

    samples, totals = prof.each((functools.partial(mem.query, q) for q in questions), wanted)
    return {"n": len(totals), "tiers": dict(seen), "parts": breakdown(samples, totals) if totals else {}}


# -- graph ----------------------------------------------------------------------------------

def graph_compare(mem: Any, cached_q: str, fresh_a: list[dict], fresh_b: list[dict]) -> dict[str, Any]:
    g, build_s = timed(mem.graph)
    rebuild_s = timed(mem.graph)[1]

    def gcall(q: str) -> tuple[str, float]:
        ts = time.perf_counter()
        res = g.invoke({"question": q})
        wall = time.perf_counter() - ts
        a = res["answer"]
        return ("ood" if a.get("out_of_domain") else str(a["tier"])), wall

    def qcall(q: str) -> tuple[str, float]:
        a, wall = timed_query(mem, q)
        return label_of(a), wall

    first_s = timed(lambda: gcall(cached_q))[1]
    for _ in range(3):
        gcall(cached_q)
        qcall(cached_q)
    times: dict[str, list[float]] = {k: [] for k in ("graph_t0", "query_t0", "graph_t2", "query_t2")}
    tiers_seen: dict[str, collections.Counter] = {k: collections.Counter() for k in times}
    for j in range(min(len(fresh_a), len(fresh_b))):
        calls = [("graph_t0", gcall, cached_q, "0"), ("query_t0", qcall, cached_q, "0"),
                 ("graph_t2", gcall, fresh_a[j]["q"], "2"), ("query_t2", qcall, fresh_b[j]["q"], "2")]
        r = j % len(calls)
        for key, fn, q, want in calls[r:] + calls[:r]:
            tier, wall = fn(q)
            tiers_seen[key][tier] += 1
            if tier == want:
                times[key].append(wall)
    out: dict[str, Any] = {"build_ms": round(build_s * 1000, 1), "rebuild_ms": round(rebuild_s * 1000, 1),
                           "first_invoke_ms": round(first_s * 1000, 1)}
    for t in ("0", "2"):
        gk, qk = f"graph_t{t}", f"query_t{t}"
        gs, qs = summary_ms(times[gk]), summary_ms(times[qk])
        out[f"tier{t}"] = {"graph_ms": gs, "query_ms": qs,
                           "ratio_p50": round(gs["p50"] / qs["p50"], 2) if qs["n"] and gs["n"] else float("nan"),
                           "graph_tiers": dict(tiers_seen[gk]), "query_tiers": dict(tiers_seen[qk])}
    return out


# -- reporting ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="tree sizes (default 1000 10000 25000)")
    ap.add_argument("--quick", action="store_true", help="size 300, few queries (< 30 s)")
    ap.add_argument("--per-tier", type=int, default=None, help="fresh tier-2 questions, repeats, rewordings (220)")
    ap.add_argument("--ood", type=int, default=None, help="out-of-domain questions (220)")
    ap.add_argument("--ood-budget", type=float, default=None, help="stop asking out-of-domain after this many s (240)")
    ap.add_argument("--vocabulary", type=int, default=None, help="scale.py vocabulary questions (100)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up rounds (20)")
    ap.add_argument("--lag", type=int, default=None, help="rounds between a question and its repeat (10)")
    ap.add_argument("--graph-runs", type=int, default=None, help="graph/query comparison rounds (60)")
    ap.add_argument("--cold-runs", type=int, default=None, help="cold process rounds (12)")
    ap.add_argument("--probe-runs", type=int, default=None, help="cold profile processes per tier (5)")
    ap.add_argument("--full-rounds", type=int, default=None,
                    help="fresh tier-2 questions (and their repeats, rewordings) asked with the fuzzy index full (80)")
    ap.add_argument("--fill", type=int, default=None,
                    help="questions put in the cache before those rounds (default: the fuzzy index cap, 2000)")
    ap.add_argument("--breakdown-runs", type=int, default=None,
                    help="questions per warm breakdown (tier 2, out of domain, tier 2 with the index full) (40)")
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default=None,
                    help="the tree's full-text engine (default: the product default; results tiers_<engine>)")
    ap.add_argument("--out", type=Path, default=None,
                    help="write OUT.json and OUT.md (default benchmarks/results/tiers, or tiers_quick with --quick)")
    size_options(ap)
    a = ap.parse_args(argv)

    if a.worker:  # child: one size, JSON on stdout
        return worker(a.worker, lambda cfg: run_size(cfg["size"], cfg))

    q = a.quick
    pick = lambda v, quick, full: v if v is not None else (quick if q else full)  # noqa: E731
    cfg = {
        "seed": a.seed, "batch": a.batch, "keep": a.keep,
        "per_tier": pick(a.per_tier, 40, 220), "ood": pick(a.ood, 30, 220),
        "ood_budget_s": pick(a.ood_budget, 10.0, 240.0), "vocabulary": pick(a.vocabulary, 20, 100),
        "warmup": pick(a.warmup, 5, 20), "lag": pick(a.lag, 5, 10), "graph_runs": pick(a.graph_runs, 8, 60),
        "cold_runs": pick(a.cold_runs, 3, 12), "probe_runs": pick(a.probe_runs, 1, 5),
        "full_rounds": pick(a.full_rounds, 10, 80), "fill": pick(a.fill, 300, 0),
        "breakdown_runs": pick(a.breakdown_runs, 8, 40), "engine": a.engine,
    }
    sizes = a.sizes or ([300] if q else [1000, 10000, 25000])
    out = a.out or (RESULTS / (("tiers_quick" if q else "tiers") + (f"_{a.engine}" if a.engine else "")))
    report = measure_sizes("tiers benchmark", HERE / "tiers.py", sizes, cfg, argv, a.seed)
    report.update(versions=versions("langgraph", "langchain-core", "diskcache", "click"),
                  targets_ms={**TARGETS_MS, "size": TARGET_SIZE}, byterover_ms={**BYTEROVER_MS, "docs": BYTEROVER_DOCS})
    return publish(report, render_markdown(report), None if a.no_write else out)


if __name__ == "__main__":
    main()

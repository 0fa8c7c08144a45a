"""The scale curve (``python benchmarks/scale.py --curve``): per tree size N, in a child process, build time
of ``mem.curate`` in batches, the disk size of ``.memgrove/``, peak RSS, warm ``Memory.query`` latency per
realized tier (0 exact cache, 1 fuzzy cache, 2 BM25 direct answer) and cold ``memgrove query`` processes;
then the growth exponent of every metric (least-squares slope of log(metric) against log(N)) and a log-log
plot. Results: ``benchmarks/results/scale_curve.{json,md,png}``."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable

from harness.machine import commit as _commit, loadavg as _loadavg, machine_line, uncommitted
from harness.report import RESULTS, log, publish, table
from harness.plots import _batch_note, plot_curve
from harness.resources import RssSampler, disk_usage, maxrss_mb, scratch_dir
from harness.stats import growth_exponent
from harness.synthetic import Corpus, LazyOps, Questions, curate_batches
from harness.workers import measure_sizes
from harness.tier_runs import create_memory, cold_runs, record, rounds, summarize, timed_query
import harness.words_only  # noqa: F401 - ranks by words alone (see there)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "scale.py"   # the worker of one size


CURVE_SIZES = [1000, 5000, 25000, 100000]


def run_curve_size(n: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """Build time, disk, peak RSS, warm latency per realized tier (``Memory.query``) and cold
    ``memgrove query`` processes for one tree of ``n`` entries."""
    os.environ.pop("MEMGROVE_MODEL", None)  # no LLM: tiers 0-2 never need one
    from memgrove import Memory
    importlib.import_module("memgrove.graphs.pipeline")  # now, not at the first query: one version of the code

    out: dict[str, Any] = {"size": n, "loadavg": {"start": _loadavg()}, "commit": _commit(),
                           "uncommitted": uncommitted(skip_results=False)}
    corpus = Corpus(cfg["seed"])
    ops = LazyOps(corpus, n)
    out["rss_baseline_mb"] = maxrss_mb()  # interpreter + imports + the corpus's vocabulary
    with scratch_dir(f"memgrove-curve-{n}-", cfg, out) as tmp:
        # 1. build: curate in batches, generation of the ops not timed ------------------------------
        mem = create_memory(tmp, cfg, out)
        batch = int(cfg.get("size_batch", {}).get(str(n), cfg["batch"]))
        with RssSampler(every=0.1) as sampler:
            out["build"] = curate_batches(mem, ops, batch, f"[{n}]")
            mem.close()
        out["build"].update(peak_rss_with_children_mb=sampler.peak_mb,
                            peak_rss_anon_mb_sampled=round(sampler.peak_anon_kb / 1024, 1))
        out["rss_after_build_mb"] = maxrss_mb()
        out["loadavg"]["after_build"] = _loadavg()
        log(f"  [{n}] build {out['build']['seconds']:.1f} s ({out['build']['ops_per_s']:.0f} ops/s)")

        # 2. disk, before any query writes the cache or the query log ----------------------------------
        home = tmp / ".memgrove"
        disk = {name: disk_usage(home / name) for name in ("tree", "index", "journal")}
        disk["total"] = disk_usage(home)
        out["disk"] = disk

        # 3. warm Memory.query in a fresh reader (default settings), interleaved rounds -----------------
        tq = time.perf_counter()
        qs = Questions(corpus, ops, cfg["seed"])  # document frequencies: one pass over the corpus
        per, lag, warm, cold_n = cfg["per_tier"], cfg["lag"], cfg["warmup"], cfg["cold_runs"]
        pool = qs.tier2(warm + per + 3 * cold_n + 5)
        warm_t2, meas, rest = pool[:warm], pool[warm:warm + per], pool[warm + per:]
        out["questions"] = {"generate_s": round(time.perf_counter() - tq, 1),
                            "tier2_examples": [p["q"] for p in meas[:3]],
                            "reword_examples": [qs.reword(p, j)[0] for j, p in enumerate(meas[:3])]}
        mem = Memory.open(tmp, durable=False)

        ask = functools.partial(timed_query, mem)
        t_first = time.perf_counter()
        _, first = ask(warm_t2[0]["q"])
        out["first_query_ms"] = round(first * 1000, 1)
        for k, p in enumerate(warm_t2):  # warm-up: every kind of call, not recorded
            ask(p["q"])
            ask(qs.reword(p, k)[0])
        # A reader becomes "long-lived" (inotify watcher instead of a stat scan per query) once it
        # has been checking for `watch_after` seconds; a short warm-up must not end before that.
        wait = mem.tree.settings.watch_after + 0.1 - (time.perf_counter() - t_first)
        if wait > 0:
            time.sleep(wait)
        ask(warm_t2[0]["q"])
        out["watcher_active"] = getattr(mem.tree, "_watcher", None) is not None  # private: informational
        records: list[dict[str, Any]] = []
        t_loop = time.perf_counter()
        for _, calls in rounds(qs, meas, per, lag):
            for kind, q, src in calls:
                records.append(record(kind, *ask(q), src))
        out["query_loop_s"] = round(time.perf_counter() - t_loop, 1)
        out.update(summarize(records))
        out["loadavg"]["after_queries"] = _loadavg()
        log(f"  [{n}] warm p50 ms: " + ", ".join(f"tier {k} {v['wall_ms']['p50']:.2f} (n={v['wall_ms']['n']})"
                                                 for k, v in out["by_tier"].items()))

        # 4. cold `memgrove query` processes: a cached question (tier 0), fresh ones routed to tier 2 -----
        fresh = [p["q"] for p in rest if mem.pipeline.retrieve(p["q"])[1] == "direct"]  # caches nothing
        cached_q = next(p["q"] for p in meas if mem.query(p["q"]).tier == 0)  # asked before: cached
        mem.close()
        out["rss_peak_mb"] = maxrss_mb()  # before the cold processes (children, not counted here)
        out["cold"] = cold_runs(tmp, cached_q, fresh[:cold_n], cold_n)
        c = out["cold"]
        log(f"  [{n}] cold p50 ms: tier 0 {c['cli_tier0']['p50']:.0f}, tier 2 {c['cli_tier2']['p50']:.0f}")
        out["loadavg"]["end"] = _loadavg()
        return out


_MB = 1024 * 1024


def _tier_p(r: dict[str, Any], tier: str, p: str = "p50") -> float | None:
    v = r.get("by_tier", {}).get(tier, {}).get("wall_ms", {})
    return v.get(p) if v.get("n") else None


def _cold_p(r: dict[str, Any], key: str, p: str = "p50") -> float | None:
    v = r.get("cold", {}).get(key, {})
    return v.get(p) if v.get("n") else None


# key -> (label, unit, getter); the order of the table and of the plot's legends
CURVE_METRICS: dict[str, tuple[str, str, Callable[[dict[str, Any]], float | None]]] = {
    "build_s": ("build (curate, batches)", "s", lambda r: r["build"]["seconds"]),
    "build_ops_per_s": ("build throughput", "ops/s", lambda r: r["build"]["ops_per_s"]),
    "disk_mb": (".memgrove/ on disk", "MB", lambda r: r["disk"]["total"]["allocated"] / _MB),
    "peak_rss_mb": ("peak RSS (build + warm queries)", "MB", lambda r: r["rss_peak_mb"]),
    "tier0_p50_ms": ("tier 0 exact cache p50", "ms", lambda r: _tier_p(r, "0")),
    "tier1_p50_ms": ("tier 1 fuzzy cache p50", "ms", lambda r: _tier_p(r, "1")),
    "tier2_p50_ms": ("tier 2 BM25 direct p50", "ms", lambda r: _tier_p(r, "2")),
    "tier2_p95_ms": ("tier 2 BM25 direct p95", "ms", lambda r: _tier_p(r, "2", "p95")),
    "cold_tier2_p50_ms": ("cold `memgrove query`, tier 2, p50", "ms", lambda r: _cold_p(r, "cli_tier2")),
    "cold_tier0_p50_ms": ("cold `memgrove query`, tier 0, p50", "ms", lambda r: _cold_p(r, "cli_tier0")),
}


def curve_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    sizes = [r["size"] for r in runs]
    metrics, exps = {}, {}
    for key, (label, unit, get) in CURVE_METRICS.items():
        vals = []
        for r in runs:
            v = get(r)
            vals.append(round(v, 3) if isinstance(v, (int, float)) and math.isfinite(v) else None)
        metrics[key] = {"label": label, "unit": unit, "values": vals}
        exps[key] = growth_exponent(sizes, vals)
    return {"sizes": sizes, "metrics": metrics, "exponents": exps}


def _f(v: float | None, fmt: str = "{:.2f}") -> str:
    return "—" if v is None else fmt.format(v)


def _k(e: dict[str, Any]) -> str:
    return "—" if e["slope"] is None else f"{e['slope']:.2f}"


def render_curve_markdown(report: dict[str, Any], png: str | None) -> str:
    m, c, runs, cv = report["machine"], report["config"], report["runs"], report["curve"]
    M, E = cv["metrics"], cv["exponents"]
    L = ["# memgrove scale curve", ""]
    L.append(machine_line(m, load=False))   # the load has a line of its own below
    L.append("")
    commits = {r["size"]: r.get("commit") for r in runs}
    if any(c_ and c_ != m["commit"] for c_ in commits.values()):
        L.append("**The code changed during the run** (commit per size: "
                 + ", ".join(f"{s:,} @ {c_}" for s, c_ in commits.items()) + ").")
        L.append("")
    L.append(f"Load average (1/5/15 min): {m['loadavg']} at the start, {m['loadavg_end']} at the end; per size "
             "below. The machine is shared (other benchmarks may run beside this one): read medians, and "
             "exponents over the whole range rather than one step.")
    L.append("")
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s "
             f"({report['wall_s'] / 60:.1f} min)")
    L.append("")
    L.append(f"Each size in its own child process and temp dir. Build: `Memory.open(tmp, create=True, "
             f"durable=False)` + `mem.curate` in batches of {c['batch']} ADDs{_batch_note(runs, c)} (seeded "
             f"synthetic corpus, entry *i* "
             f"the same at every size; generating the ops is not timed). Warm: a fresh `Memory.open(tmp, "
             f"durable=False)` (default settings, no LLM) answers `Memory.query` in {c['per_tier']} interleaved "
             f"rounds after {c['warmup']} warm-up rounds: a fresh question from an entry's rarest title words "
             f"(tier 2 expected), the same question {c['lag']} rounds later (tier 0) and a rewording (tier 1); "
             f"latency = wall time of `mem.query`, grouped by the tier the answer reported (benchmarks/tiers.py's "
             f"generators). Cold: `memgrove --root T query Q --json` as a fresh process, {c['cold_runs']} rounds "
             f"(a cached question, and a fresh one checked to route to tier 2). Peak RSS = the worker's "
             f"`ru_maxrss` over build + warm queries (baseline before the build ≈ "
             f"{runs[0]['rss_baseline_mb']:.0f} MB: interpreter, imports, the corpus vocabulary). Disk = "
             f"allocated size of `.memgrove/` after the build. Times in ms unless noted.")
    L.append("")
    cols = (("build_s", "{:.1f}"), ("build_ops_per_s", "{:.0f}"), ("disk_mb", "{:.1f}"), ("peak_rss_mb", "{:.0f}"),
            ("tier0_p50_ms", "{:.2f}"), ("tier1_p50_ms", "{:.2f}"))
    L += table(["size", "build s", "build ops/s", "disk MB", "peak RSS MB", "tier0 p50", "tier1 p50",
                "tier2 p50 / p95", "cold CLI p50 (tier 2)"],
               [[f"{r['size']:,}", *(_f(v[k], f) for k, f in cols),
                 f"{_f(v['tier2_p50_ms'], '{:.1f}')} / {_f(v['tier2_p95_ms'], '{:.1f}')}",
                 _f(v["cold_tier2_p50_ms"], "{:.0f}")]
                for j, r in enumerate(runs) if (v := {k: M[k]["values"][j] for k in M})]
               + [["**growth exponent**", *(f"**{_k(E[k])}**" for k, _ in cols),
                   f"**{_k(E['tier2_p50_ms'])} / {_k(E['tier2_p95_ms'])}**", f"**{_k(E['cold_tier2_p50_ms'])}**"]])
    L.append("")
    L.append("Growth exponent: least-squares slope of log(metric) against log(size) over the sizes measured "
             "(1.0 = linear, 0 = flat, 0.5 = ×√N); with two sizes it is the slope between them.")
    L.append("")
    if png:
        L.append(f"![latency, build time and resources against tree size, log-log]({png})")
        L.append("")
    # every exponent, with its fit and the slope between consecutive sizes
    pairs = [f"{a:,}→{b:,}" for a, b in zip(cv["sizes"], cv["sizes"][1:])]
    L += table(["metric", *(f"{s:,}" for s in cv["sizes"]), "exponent (R²)", *(f"slope {p}" for p in pairs)], [])
    for key, mm in M.items():
        e = E[key]
        fmt = "{:.0f}" if mm["unit"] in ("ops/s",) or key.startswith("cold") else (
            "{:.1f}" if mm["unit"] in ("s", "MB") or key.startswith("tier2") else "{:.2f}")
        local = e["local"] + [None] * (len(pairs) - len(e["local"]))
        L.append(f"| {mm['label']}, {mm['unit']} | " + " | ".join(_f(v, fmt) for v in mm["values"])
                 + f" | {_k(e)}" + (f" ({e['r2']:.2f})" if e["r2"] is not None and e["points"] > 2 else "") + " | "
                 + " | ".join(_f(x) for x in local) + " |")
    L.append("")
    # per size: the realized tiers, baselines, load
    L += table(["size", "warm answers by reported tier (n)", "tier 2: question's entry first",
                "cold runs: reported tiers (cached / fresh question)", "cold CLI tier 0 p50",
                "`python -c pass` / `import memgrove.cli` p50", "peak anon. RSS in the build (sampled) MB",
                "first query ms", "load avg (1 min) start → after build → end", "wall s"], [])

    def tiers_seen(d: dict[str, int]) -> str:
        return ", ".join(f"tier {t}×{k}" for t, k in d.items()) or "—"

    for r in runs:
        mix = ", ".join(f"{('tier ' + t) if t != 'ood' else 'ood'}: {v['wall_ms']['n']}"
                        for t, v in r["by_tier"].items())
        cold, t2, la = r["cold"], r["by_kind"].get("tier2", {}), r["loadavg"]
        right = (f"{t2['right_entry_first']} of {t2['answered_at_tier2']}" if t2.get("answered_at_tier2") else "—")
        L.append(f"| {r['size']:,} | {mix} | {right} | {tiers_seen(cold['cli_tier0']['tiers'])} / "
                 f"{tiers_seen(cold['cli_tier2']['tiers'])} | {_f(_cold_p(r, 'cli_tier0'), '{:.0f}')} | "
                 f"{cold['python_pass']['p50']:.0f} / {cold['import_cli']['p50']:.0f} | "
                 f"{_f(r['build'].get('peak_rss_anon_mb_sampled'), '{:.0f}')} | {r['first_query_ms']:.0f} | "
                 f"{la['start'][0]:.2f} → {la['after_build'][0]:.2f} → {la['end'][0]:.2f} | {r.get('wall_s', 0):.0f} |")
    L.append("")
    mix_kind = []
    for k in ("tier2", "repeat", "reword (all)"):
        cells = []
        for r in runs:
            v = r["by_kind"].get(k)
            cells.append(f"{r['size']:,}: " + ("—" if not v else ", ".join(f"{t}×{n_}" for t, n_ in v["mix"].items())))
        mix_kind.append(f"*{k}* → " + "; ".join(cells))
    L.append("Realized tier per question kind (tier×count): " + " · ".join(mix_kind) + ".")
    L.append("")
    return "\n".join(L)


def _size_tag(sizes: list[int]) -> str:
    def short(s: int) -> str:
        return f"{s // 1000}k" if s % 1000 == 0 else str(s)
    return "-".join(short(s) for s in sizes)


def _write_curve(report: dict[str, Any], out: Path, *, write: bool, plot: bool) -> None:
    png = out.with_suffix(".png") if (plot and write) else None
    if png:
        try:
            plot_curve(report, png)
        except ImportError as exc:  # matplotlib is in the `bench` extra
            log(f"no plot ({exc}); install it with: .venv/bin/pip install -e '.[bench]'")
            png = None
    publish(report, render_curve_markdown(report, png.name if png else None), out.with_suffix("") if write else None)


def curve_main(a: argparse.Namespace, argv: list[str] | None) -> dict[str, Any]:
    if a.from_json:  # re-render only; the measurements (and the exponents) are recomputed from the runs
        report = json.loads(a.from_json.read_text(encoding="utf-8"))
        report["curve"] = curve_summary(report["runs"])
        _write_curve(report, a.out or a.from_json.with_suffix(""), write=not a.no_write, plot=not a.no_plot)
        return report
    q = a.quick
    pick = lambda v, quick, full: v if v is not None else (quick if q else full)  # noqa: E731
    size_batch = {}
    for spec in a.size_batch or []:
        size, _, b = spec.partition("=")
        if not (size.isdigit() and b.isdigit() and int(b) > 0):
            raise SystemExit(f"--size-batch wants SIZE=BATCH, e.g. 100000=1000, not {spec!r}")
        size_batch[size] = int(b)
    cfg = {"mode": "curve", "seed": a.seed, "batch": a.batch, "size_batch": size_batch, "keep": a.keep,
           "per_tier": pick(a.per_tier, 20, 200), "lag": pick(a.lag, 3, 10), "warmup": pick(a.warmup, 3, 10),
           "cold_runs": pick(a.cold_runs, 2, 10), "engine": a.engine}
    sizes = a.sizes or ([200, 400] if q else CURVE_SIZES)
    out = a.out or (RESULTS / (("scale_curve" if sizes == CURVE_SIZES else f"scale_curve_{_size_tag(sizes)}")
                               + (f"_{a.engine}" if a.engine else "")))
    report = {"mode": "curve", **measure_sizes("scale curve", SCRIPT, sizes, cfg, argv, a.seed,
                                                in_process=run_curve_size if a.in_process else None)}
    report["curve"] = curve_summary(report["runs"])
    _write_curve(report, out, write=not a.no_write, plot=not a.no_plot)
    return report

"""Where the time of a cold ``memgrove query`` process goes: a probe run in fresh processes (exclusive time
per part of the query) and Python's own import times (``-X importtime``)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.stats import breakdown, import_nodes, pct, summary_ms
from harness.tier_runs import _env, child

BENCHMARKS = Path(__file__).resolve().parent

PROBE = r"""
import contextlib, io, json, sys, time
t0 = time.perf_counter()
import memgrove.cli as cli_mod
t_import = time.perf_counter() - t0
sys.path.insert(0, BENCHMARKS)      # after the import timed above: the probe's profiler is the harness's
from harness.stats import Profiler
import memgrove.memory as memory_mod
import memgrove.tree.store as store_mod
import memgrove.tree.index.sync as sync_mod
import memgrove.tree.index.catalog as catalog_mod
import memgrove.tree.ranking.signals as signals_mod
import memgrove.tree.index.cache as cache_mod
import memgrove.tree.index.whoosh_engine as we
import memgrove.graphs.pipeline as pipe_mod
import memgrove.graphs.tiers as tiers_mod
P = Profiler()
CT = store_mod.ContextTree
P.wrap(CT, "open", "Memory.open (settings, sqlite, lock, recover)")
P.wrap(pipe_mod, "load_query_settings", "query settings (config.toml)")
P.wrap(sync_mod, "scan", "stat scan of the tree")
P.wrap(sync_mod, "digest_of", "digest of the scan")
P.wrap(CT, "_index_usable", "index check (exists + catalog)")
P.wrap(catalog_mod.Catalog, "digest", "index check (exists + catalog)")
P.wrap(CT, "_generation", "generation file")
P.wrap(sync_mod, "TreeWatcher", "inotify watcher setup")
P.wrap(cache_mod.QueryCache, "_c", "diskcache import + open")
P.wrap(cache_mod.QueryCache, "get_exact", "tier 0 lookup")
P.wrap(cache_mod.QueryCache, "get_fuzzy", "tier 1 lookup")
P.wrap(cache_mod.QueryCache, "put", "cache write")
P.wrap(we.WhooshEngine, "_index", "whoosh open_dir (TOC)")
P.wrap(we.WhooshEngine, "_get_searcher", "searcher open")
P.wrap(we.WhooshEngine, "search", "BM25 search")
P.wrap(we.WhooshEngine, "idf terms", "idf + terms")
P.wrap(CT, "_read_disk", "read entry files")
P.wrap(store_mod.entry_mod, "parse", "parse entries (YAML + sections)")
P.wrap(store_mod, "excerpt", "excerpts")
P.wrap(signals_mod.Signals, "get_many record_access", "signals (sqlite)")
P.wrap(catalog_mod.Catalog, "count", "entry count (sqlite)")
P.wrap(tiers_mod, "direct_answer", "compose answer")
P.wrap(tiers_mod, "log_query", "query log append")
sys.argv = ["memgrove", "--root", ROOT, "query", QUESTION, "--json"]
buf = io.StringIO()
t1 = time.perf_counter()
with contextlib.redirect_stdout(buf):
    try:
        cli_mod.main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
t_run = time.perf_counter() - t1
a = json.loads(buf.getvalue())
P.restore()
print(json.dumps({"import_s": t_import, "run_s": t_run, "parts": P.totals, "tier": a["tier"],
                  "out_of_domain": a["out_of_domain"]}))
"""


def cold_profile(tmp: Path, questions: list[str]) -> dict[str, Any]:
    """Where a cold `memgrove query` spends its time: imports, then exclusive time per part."""
    env, py = _env(), sys.executable
    samples, runs, walls, tiers_ = [], [], [], []
    for q in questions:
        code = f"ROOT = {str(tmp)!r}; QUESTION = {q!r}; BENCHMARKS = {str(BENCHMARKS)!r}\n" + PROBE
        stdout, wall = child([py, "-c", code], env)
        walls.append(wall)
        d = json.loads(stdout.strip().splitlines()[-1])
        tiers_.append("ood" if d["out_of_domain"] else str(d["tier"]))
        samples.append({"imports (memgrove.cli and what it pulls in)": d["import_s"], **d["parts"]})
        runs.append(d["import_s"] + d["run_s"])
    parts = breakdown(samples, runs)
    return {"runs": len(questions), "tiers": dict(collections.Counter(tiers_)), "parts": parts,
            "process_wall_ms": summary_ms(walls),
            "outside_ms_p50": round((pct(walls, 50) - pct(runs, 50)) * 1000, 1)}


def import_times(top: int = 14) -> dict[str, Any]:
    """`python -X importtime -c 'import memgrove.cli'`, as self time summed per top-level package.

    Self times do not overlap, so the rows add up to the total; ``via`` names the
    module that first imported each package (its parent in the import tree)."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import memgrove.cli"], env=_env(),
                       cwd=tempfile.gettempdir(), capture_output=True, text=True)
    nodes = import_nodes(r.stderr)
    per: dict[str, float] = collections.defaultdict(float)
    via: dict[str, str] = {}
    cumulative: dict[str, float] = {}
    for k, (depth, name, self_us, cum_us) in enumerate(nodes):
        root = name.split(".")[0]
        per[root] += self_us / 1000
        parent = next((nodes[j][1] for j in range(k + 1, len(nodes)) if nodes[j][0] < depth), None)
        if (parent is None or parent.split(".")[0] != root) and cum_us / 1000 > cumulative.get(root, -1.0):
            via[root] = f"{parent or '-'} → {name}"  # where most of the package came in
            cumulative[root] = cum_us / 1000
    total = sum(per.values())
    rows = sorted(per.items(), key=lambda kv: -kv[1])[:top]
    heavy = sorted(k for k in per if k.startswith(("langchain", "langgraph", "openai", "pydantic", "rich")))
    return {"total_ms": round(total, 1),
            "self_by_package": [[k, round(v, 1), via.get(k, "-"), round(cumulative.get(k, 0.0), 1)] for k, v in rows],
            "heavy_imported": heavy}

#!/usr/bin/env python
"""``memgrove serve`` under load, beside the same work in-process, and cold ``memgrove query``
through the server against in-process.

    python benchmarks/serve_load.py                          # sizes 1000 25000, 20 s per level: ~12-15 min
    python benchmarks/serve_load.py --sizes 1000 --duration 3 --cold-runs 3 --out /tmp/s   # smoke (~1 min)

Per size (a seeded tree built like benchmarks/scale.py's: ``Memory.open(tmp, create=True,
durable=False)`` and ``mem.curate`` in batches of ADDs, the same corpus):

1. **cold ``memgrove query``**: fresh processes ``python -m memgrove --root T query Q`` with a
   server running for T (it answers) and with ``--no-server`` (the process opens the tree),
   interleaved round by round: a novel question each time (tier 2), and one asked before
   (tier 0). Baseline: ``python -c pass``.
2. **load** (the largest size only): 1, 8 and 32 concurrent clients for ``--duration`` seconds
   each, every client looping over a mix of 90% queries (half repeats from a pool of 20
   questions, half novel) and 10% curations (one ADD of a new entry each); over HTTP against
   ``memgrove serve`` (one keep-alive connection per client), then the same mix in-process
   (one ``Memory`` shared by the client threads, curations one at a time, as the server's
   per-project writer queue does). Throughput, p50/p95/p99 per operation, errors, and the
   acknowledged curations missing from the tree afterwards (each is read back from its file).

Results: ``benchmarks/results/serve_load.{json,md}`` (``--out PREFIX`` writes elsewhere).
The machine is shared and has 2 cores: the load generator's threads, the server and (for
in-process) the memory all share them; compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from harness import machine, synthetic  # noqa: E402
from harness.report import RESULTS, log, publish, table  # noqa: E402
from harness.served import Served, env_for_children  # noqa: E402
from harness.stats import pct  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)

TARGET_COLD_P50_MS = 80.0
REPEAT_POOL = 20
CURATE_SHARE = 0.10
OPS = ("query_repeat", "query_novel", "curate")


# -- cold processes ------------------------------------------------------------------------------

def timed(cmd: list[str], cwd: Path) -> tuple[float, str, int]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env_for_children(), capture_output=True, text=True, timeout=300)
    return (time.perf_counter() - t0) * 1000, out.stdout, out.returncode


def cold_runs(project: Path, corpus: Any, runs: int, rng: random.Random) -> dict[str, Any]:
    base = [sys.executable, "-m", "memgrove", "--root", str(project)]
    cached_q = corpus.query(rng)
    for words in (["query", cached_q], ["--no-server", "query", cached_q]):   # the repeat is cached
        timed(base + words, project)
    ms: dict[str, list[float]] = {k: [] for k in ("server_novel", "local_novel", "server_cached", "local_cached",
                                                  "python_pass")}
    tiers: dict[str, list[int]] = {k: [] for k in ms}
    failures = 0
    for i in range(runs):
        for key, words in (("server_novel", ["query", corpus.query(rng), "--json"]),
                           ("local_novel", ["--no-server", "query", corpus.query(rng), "--json"]),
                           ("server_cached", ["query", cached_q, "--json"]),
                           ("local_cached", ["--no-server", "query", cached_q, "--json"])):
            t, out, code = timed(base + words, project)
            if code != 0:
                failures += 1
                continue
            ms[key].append(t)
            tiers[key].append(json.loads(out)["tier"])
        ms["python_pass"].append(timed([sys.executable, "-c", "pass"], project)[0])
    res: dict[str, Any] = {k: {"p50": pct(v, 50, 2), "p95": pct(v, 95, 2), "n": len(v)} for k, v in ms.items()}
    res["tiers"] = {k: sorted(set(v)) for k, v in tiers.items() if v}
    res["failures"] = failures
    res["ratio_novel"] = round(res["local_novel"]["p50"] / res["server_novel"]["p50"], 2)
    res["ratio_cached"] = round(res["local_cached"]["p50"] / res["server_cached"]["p50"], 2)
    return res


# -- load ----------------------------------------------------------------------------------------

class Mix:
    """Each client's next operation: 10% curations, else a query (half repeats, half novel)."""

    def __init__(self, corpus: Any, seed: int, tag: str):
        self.corpus = corpus
        rng = random.Random(f"pool-{seed}")
        self.pool = [corpus.query(rng) for _ in range(REPEAT_POOL)]
        self.tag = tag

    def next(self, rng: random.Random, client: int, i: int) -> tuple[str, Any]:
        r = rng.random()
        if r < CURATE_SHARE:
            words = " ".join(rng.choice(self.corpus.q_words) for _ in range(12))
            key = f"{self.tag}_c{client}_{i}"
            return "curate", {"op": "ADD", "path": f"load/{self.tag}/{key}.md", "title": f"Load entry {key}",
                              "content": f"Marker {key}. {words}.", "reason": "serve_load benchmark"}
        if r < CURATE_SHARE + (1 - CURATE_SHARE) / 2:
            return "query_repeat", rng.choice(self.pool)
        return "query_novel", self.corpus.query(rng)


def run_level(clients: int, duration: float, make_client: Callable[[], Any],
              do: Callable[[Any, str, Any], bool], mix: Mix, seed: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {k: [] for k in OPS}
    acked: list[tuple[str, str]] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + duration
    start_evt = threading.Barrier(clients + 1)

    def worker(c: int) -> None:
        rng = random.Random(f"{seed}-{clients}-{c}")
        client = make_client()
        start_evt.wait()
        i = 0
        local: dict[str, list[float]] = {k: [] for k in samples}
        mine: list[tuple[str, str]] = []
        errs: list[str] = []
        while time.perf_counter() < deadline:
            kind, arg = mix.next(rng, c, i)
            i += 1
            t0 = time.perf_counter()
            try:
                ok = do(client, kind, arg)
            except Exception as exc:  # noqa: BLE001 - counted and reported
                ok, errs = False, errs + [f"{kind}: {type(exc).__name__}: {exc}"[:300]]
            dt = (time.perf_counter() - t0) * 1000
            if ok:
                local[kind].append(dt)
                if kind == "curate":
                    mine.append((arg["path"], arg["content"]))
            elif not errs or not errs[-1].startswith(kind):
                errs.append(f"{kind}: refused")
        close = getattr(client, "close", None)
        if close:
            close()
        with lock:
            for k, v in local.items():
                samples[k] += v
            acked.extend(mine)
            errors.extend(errs)

    threads = [threading.Thread(target=worker, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    start_evt.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    total = sum(len(v) for v in samples.values())
    return {"clients": clients, "seconds": round(wall, 2), "ops": total, "ops_per_s": round(total / wall, 1),
            "per_op": {k: {"n": len(v), "p50": pct(v, 50, 2), "p95": pct(v, 95, 2), "p99": pct(v, 99, 2)}
                       for k, v in samples.items()},
            "errors": len(errors), "error_samples": errors[:5], "_acked": acked}


def missing_after(project: Path, acked: list[tuple[str, str]]) -> int:
    root = project / ".memgrove" / "tree"
    missing = 0
    for path, content in acked:
        try:
            if content.split(".")[0] not in (root / path).read_text(encoding="utf-8"):
                missing += 1
        except OSError:
            missing += 1
    return missing


def load(project: Path, corpus: Any, levels: list[int], duration: float, seed: int) -> dict[str, Any]:
    import httpx

    out: dict[str, Any] = {"http": [], "in_process": []}
    srv = Served(project)
    log(f"  server up in {srv.started_s:.1f} s")
    headers = {"Authorization": f"Bearer {srv.token}"}
    try:
        httpx.post(f"{srv.url}/api/query", json={"question": corpus.query(random.Random(1))}, headers=headers,
                   timeout=300, trust_env=False)        # the resident server's searcher, warm

        def http_do(c: Any, kind: str, arg: Any) -> bool:
            if kind == "curate":
                r = c.post("/api/curate", json={"operations": [arg]})
                return r.status_code == 200 and r.json()["results"][0]["status"] == "added"
            r = c.post("/api/query", json={"question": arg})
            return r.status_code == 200 and "tier" in r.json()

        for n in levels:
            mix = Mix(corpus, seed, f"http{n}")
            res = run_level(n, duration, lambda: httpx.Client(base_url=srv.url, headers=headers, timeout=300,
                                                              trust_env=False), http_do, mix, seed)
            acked = res.pop("_acked")
            res["acked_curations"] = len(acked)
            res["_acked_list"] = acked
            out["http"].append(res)
            log(f"  http {n:>2} clients: {res['ops_per_s']} ops/s, errors {res['errors']}")
    finally:
        out["server_exit"] = srv.stop()
    for res in out["http"]:
        res["missing_after"] = missing_after(project, res.pop("_acked_list"))

    from memgrove import Memory

    with Memory.open(project) as mem:
        mem.query(corpus.query(random.Random(2)))    # warm, as the server was
        writer = threading.Lock()                    # one writer at a time, as the server's queue

        def local_do(_c: Any, kind: str, arg: Any) -> bool:
            if kind == "curate":
                with writer:
                    return mem.curate([arg])[0].status == "added"
            return mem.query(arg).tier is not None

        for n in levels:
            mix = Mix(corpus, seed, f"local{n}")
            res = run_level(n, duration, lambda: None, local_do, mix, seed)
            acked = res.pop("_acked")
            res["acked_curations"] = len(acked)
            res["missing_after"] = missing_after(project, acked)
            out["in_process"].append(res)
            log(f"  in-process {n:>2} clients: {res['ops_per_s']} ops/s, errors {res['errors']}")
    return out


# -- report --------------------------------------------------------------------------------------

def render(report: dict[str, Any]) -> str:
    cfg = report["config"]
    lines = ["# serve_load: memgrove serve under load, and cold `memgrove query` through it", "",
             f"Run {report['date']} on {report['machine']['cpus']} CPUs ({report['machine']['platform']}), "
             f"commit {report['commit']}; load average at start {report['loadavg_start']}, at end "
             f"{report['loadavg_end']}. Command: `{report['command']}`.", "",
             "## Cold `memgrove query` (fresh process): through the server vs in-process", "",
             f"Each round: a novel question (tier 2) and a question asked before (tier 0), with the server "
             f"running (`memgrove query`) and with `--no-server`; {cfg['cold_runs']} rounds, interleaved. "
             f"Target through the server: p50 ≤ {TARGET_COLD_P50_MS:.0f} ms, flat in tree size. Times in ms.", "",
             *table(["entries", "build s", "server start s", "through server p50 (novel / cached)",
                     "in-process p50 (novel / cached)", "ratio (novel / cached)", "`python -c pass` p50", "failures"],
                    [[f"{s['size']:,}", f"{s['build_s']:.0f}", f"{s['server_start_s']:.1f}",
                      f"{c['server_novel']['p50']:.0f} / {c['server_cached']['p50']:.0f}",
                      f"{c['local_novel']['p50']:.0f} / {c['local_cached']['p50']:.0f}",
                      f"{c['ratio_novel']}× / {c['ratio_cached']}×", f"{c['python_pass']['p50']:.0f}", c["failures"]]
                     for s in report["sizes"] if (c := s["cold"])])]
    ld = report.get("load")
    if ld:
        def cell(po: dict[str, Any], k: str) -> str:
            return f"{po[k]['p50']:.1f} / {po[k]['p95']:.1f} / {po[k]['p99']:.1f}"

        lines += ["", f"## Load at {ld['size']:,} entries: {cfg['duration']:.0f} s per level, 90% queries "
                      "(half repeats of 20, half novel), 10% curations (one ADD each)", ""]
        lines += table(["mode", "clients", "ops/s", "query repeat p50 / p95 / p99", "query novel p50 / p95 / p99",
                        "curate p50 / p95 / p99", "errors", "acked curations", "missing after"],
                       [[label, r["clients"], r["ops_per_s"], *(cell(r["per_op"], k) for k in OPS), r["errors"],
                         r["acked_curations"], r["missing_after"]]
                        for mode, label in (("http", "HTTP (serve)"), ("in_process", "in-process")) for r in ld[mode]])
        lines += ["", f"Server exit status after SIGTERM: {ld['server_exit']}."]
        errs = [e for mode in ("http", "in_process") for r in ld[mode] for e in r["error_samples"]]
        if errs:
            lines += ["", "Errors (samples):", *[f"- `{e}`" for e in errs]]
    lines += ["", "Notes: the load generator's threads run in one Python process beside the server on the same "
                  "2 cores (and, in-process, beside the memory itself); in-process curations are serialized by a "
                  "lock as the server's per-project writer queue serializes them. Latencies are wall time seen by "
                  "the client, in ms.", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 25000])
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--duration", type=float, default=20.0, help="seconds per load level and mode")
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "serve_load"), help="prefix of the .json and .md written")
    ap.add_argument("--keep", action="store_true", help="keep the temp trees")
    args = ap.parse_args()

    corpus = synthetic.Corpus(args.seed)
    rng = random.Random(f"serve-load-{args.seed}")
    report: dict[str, Any] = {
        **machine.brief("serve_load.py"),
        "config": {"sizes": args.sizes, "clients": args.clients, "duration": args.duration,
                   "cold_runs": args.cold_runs, "batch": args.batch, "seed": args.seed},
        "sizes": []}
    t_all = time.perf_counter()
    for n in sorted(args.sizes):
        tmp = Path(tempfile.mkdtemp(prefix=f"memgrove-serve-load-{n}-"))
        try:
            project = tmp / "p"
            log(f"[{n}] building")
            build_s = synthetic.build_tree(project, n, corpus, args.batch)
            log(f"[{n}] built in {build_s:.0f} s; cold runs")
            srv = Served(project)
            try:
                cold = cold_runs(project, corpus, args.cold_runs, rng)
            finally:
                code = srv.stop()
            report["sizes"].append({"size": n, "build_s": round(build_s, 1), "server_start_s": round(srv.started_s, 2),
                                    "cold": cold, "server_exit": code})
            log(f"[{n}] cold p50 through server {cold['server_novel']['p50']} ms, in-process "
                f"{cold['local_novel']['p50']} ms")
            if n == max(args.sizes):
                log(f"[{n}] load")
                report["load"] = {"size": n, **load(project, corpus, args.clients, args.duration, args.seed)}
        finally:
            if not args.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    report["loadavg_end"] = machine.loadavg()
    report["wall_s"] = round(time.perf_counter() - t_all, 1)
    publish(report, render(report).rstrip("\n"), Path(args.out).with_suffix(""))


if __name__ == "__main__":
    main()

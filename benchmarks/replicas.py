#!/usr/bin/env python
"""A primary alone, with one and with two read replicas, under the same load, in one run.

    python benchmarks/replicas.py                                  # 5,000 entries, 8 and 32 clients, 20 s each
    python benchmarks/replicas.py --entries 500 --duration 4 --clients 8 --out /tmp/r   # smoke (~2 min)

A seeded tree (benchmarks/scale.py's corpus, built by harness/synthetic.py's ``build_tree``) is
served by a primary with ``[replication]`` on a bare git repository in a temporary folder
(``push_interval`` 1 s); two replicas (``memgrove serve --replica-of``) clone and follow it.
Each topology gets each client count for ``--duration`` seconds, every client looping over
serve_load's mix (90% ``POST /api/query``, half repeats and half novel; 10% curations of a new
entry): ``primary`` sends everything to the primary; ``+1`` and ``+2`` send it to the replicas
(clients spread over them, as a load balancer would), which answer queries and forward the
curations. Reported per level: throughput, p50/p95 per operation, errors; replication lag (a
prober curates a marker on the primary every second and times until each replica serves it:
p50/p95/max, in every level); and, once every replica serves the primary's commit, the acknowledged curations
missing on any replica (each one read back from each replica).

The machine has 2 cores shared with other work: the clients, the primary and the replicas all
share them, so a replica cannot add read capacity here; compare the topologies of one run, and
read the scaling argument in docs/replication.md ("What a replica adds"), not in these numbers.
Results: ``benchmarks/results/replicas.{json,md}`` (``--out PREFIX`` writes elsewhere).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness.report import RESULTS, log, publish  # noqa: E402
from harness.served import Served, until  # noqa: E402
from harness.stats import pct, timed_ms  # noqa: E402
from harness.synthetic import Corpus, build_tree  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)
import serve_load  # noqa: E402  (the load mix, the level runner)

TOKEN = "replicas-benchmark-token"


def serve(folder: Path, *args: str) -> Served:
    """``memgrove serve`` of the primary, or of a replica with ``--replica-of``."""
    folder.mkdir(parents=True, exist_ok=True)
    return Served(folder, *args, token=TOKEN, log=folder.parent / f"serve-{folder.name}.log", timeout=600.0)


class LagProber:
    """Every second: curate a marker on the primary, then time until each replica serves it."""

    def __init__(self, primary: Served, replicas: list[Served]):
        self.primary, self.replicas = primary, replicas
        self.lags: list[float] = []
        self.unseen = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(headers=headers, timeout=60.0, trust_env=False) as c:
            i = 0
            while not self._stop.is_set():
                i += 1
                path = f"lag/probe/m{os.getpid()}_{time.time_ns()}_{i}.md"
                r = c.post(f"{self.primary.url}/api/curate", json={"operations": [
                    {"op": "ADD", "path": path, "title": f"Probe {i}", "content": f"lag probe {i}", "reason": "lag"}]})
                if r.status_code != 200:
                    continue
                acked = time.perf_counter()
                for rep in self.replicas:
                    deadline = acked + 60.0
                    while time.perf_counter() < deadline:
                        if c.get(f"{rep.url}/api/entries/{path}").status_code == 200:
                            self.lags.append((time.perf_counter() - acked) * 1000)
                            break
                        time.sleep(0.02)
                    else:
                        self.unseen += 1
                self._stop.wait(max(0.0, 1.0 - (time.perf_counter() - acked)))

    def __enter__(self) -> "LagProber":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(90)

    def summary(self) -> dict[str, Any]:
        xs = self.lags
        return {"n": len(xs), "p50_ms": pct(xs, 50, 2), "p95_ms": pct(xs, 95, 2),
                "max_ms": round(max(xs), 1) if xs else None, "unseen_60s": self.unseen}


def missing_on_replicas(primary: Served, replicas: list[Served], acked: list[tuple[str, str]]) -> dict[str, Any]:
    """Wait until every replica serves the primary's pushed commit, then read every acknowledged
    curation back from every replica."""
    import httpx

    t0 = time.perf_counter()
    head = until(lambda: (h := primary.health())["replication"]["unpushed"] == 0 and h["commit"])
    for rep in replicas:
        until(lambda r=rep: r.health()["commit"] == head)
    caught_up = round(time.perf_counter() - t0, 2)
    missing = 0
    with httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30.0, trust_env=False) as c:
        for rep in replicas:
            for path, _content in acked:
                if c.get(f"{rep.url}/api/entries/{path}").status_code != 200:
                    missing += 1
    return {"caught_up_s": caught_up, "missing": missing, "checked": len(acked) * len(replicas)}


def run(entries: int, clients: list[int], duration: float, seed: int, folder: Path) -> dict[str, Any]:
    import httpx

    corpus = Corpus(seed)
    remote = folder / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    log(f"building a {entries}-entry tree")
    built_s = build_tree(folder / "primary", entries, corpus, 250)
    (folder / "primary" / ".memgrove" / "config.toml").write_text(
        f'[replication]\nremote = "{remote}"\npush_interval = 1.0\npull_interval = 2.0\n', encoding="utf-8")
    primary = serve(folder / "primary")
    procs = [primary]
    report: dict[str, Any] = {"entries": entries, "build_s": round(built_s, 1),
                              "primary_start_s": round(primary.started_s, 2)}
    try:
        report["first_push_s"] = round(timed_ms(lambda: until(lambda: primary.health()["replication"]["unpushed"] == 0
                                                               and primary.health()["commit"])) / 1000, 2)
        replicas = []
        for name in ("replica1", "replica2"):
            rep = serve(folder / name, "--replica-of", primary.url)
            procs.append(rep)
            replicas.append(rep)
            report[f"{name}_clone_s"] = round(rep.started_s, 2)
        headers = {"Authorization": f"Bearer {TOKEN}"}

        def do(c: Any, kind: str, arg: Any) -> bool:
            if kind == "curate":
                return c.post("/api/curate", json={"operations": [arg]}).status_code == 200
            return c.post("/api/query", json={"question": arg}).status_code == 200

        levels = []
        for topology, targets in (("primary", [primary]), ("+1 replica", replicas[:1]), ("+2 replicas", replicas)):
            for n in clients:
                log(f"{topology}, {n} clients, {duration:g} s")
                mix = serve_load.Mix(corpus, seed, f"{topology.split()[0].strip('+')}r{n}")
                made = iter(range(10_000))

                def make_client(targets: list[Served] = targets) -> Any:
                    return httpx.Client(base_url=targets[next(made) % len(targets)].url, headers=headers,
                                        timeout=120.0, trust_env=False)

                with LagProber(primary, replicas) as prober:     # both replicas follow, whoever gets the load
                    res = serve_load.run_level(n, duration, make_client, do, mix, seed)
                acked = res.pop("_acked")
                res["topology"] = topology
                res["lag"] = prober.summary()
                res["acked_writes"] = len(acked)
                res["replicas"] = missing_on_replicas(primary, replicas, acked)
                levels.append(res)
                log(f"  {res['ops_per_s']} ops/s, errors {res['errors']}, lag {res['lag']}, {res['replicas']}")
        report["levels"] = levels
    finally:
        report["exit_codes"] = [p.stop() for p in reversed(procs)]
    return report


def render(report: dict[str, Any]) -> str:
    lines = [f"# Read replicas: {report['entries']} entries, {report['machine']}", "",
             f"Tree built in {report['build_s']} s; primary up in {report['primary_start_s']} s, first push "
             f"{report['first_push_s']} s; replicas cloned and answering in {report['replica1_clone_s']} s and "
             f"{report['replica2_clone_s']} s.", "",
             "| topology | clients | ops/s | query p50 / p95 ms | curate p50 / p95 ms | errors | lag p50 / p95 / max ms "
             "| acked writes | missing on replicas | caught up in |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for lv in report["levels"]:
        q = [x for k in ("query_repeat", "query_novel") for x in [lv["per_op"][k]]]
        qp50 = round(sum(x["p50"] * x["n"] for x in q) / max(1, sum(x["n"] for x in q)), 1)
        qp95 = max(x["p95"] for x in q)
        c = lv["per_op"]["curate"]
        lag = lv["lag"]
        lag_s = f"{lag['p50_ms']} / {lag['p95_ms']} / {lag['max_ms']}" if lag else "-"
        lines.append(f"| {lv['topology']} | {lv['clients']} | {lv['ops_per_s']} | {qp50} / {qp95} | {c['p50']} / "
                     f"{c['p95']} | {lv['errors']} | {lag_s} | {lv['acked_writes']} | "
                     f"{lv['replicas']['missing']} of {lv['replicas']['checked']} | {lv['replicas']['caught_up_s']} s |")
    lines += ["", "Query p50 is the mean of the repeat and novel queries' p50 weighted by count; p95 the larger. "
              "Lag: a marker curated on the primary until each replica serves it (GET /api/entries), one a second "
              "during the level. Two shared cores: the replicas compete with the primary and the clients for them."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=5000)
    ap.add_argument("--clients", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(RESULTS / "replicas"))
    args = ap.parse_args()
    random.seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="memgrove-replicas-") as tmp:
        report = run(args.entries, args.clients, args.duration, args.seed, Path(tmp))
    report["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    report["args"] = vars(args)
    publish(report, render(report).rstrip("\n"), Path(args.out), indent=1)


if __name__ == "__main__":
    main()

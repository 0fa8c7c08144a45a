#!/usr/bin/env python
"""Cold in-process ``memgrove query``: two checkouts side by side on one tree, same run.

    python benchmarks/cold_query.py --tree /tmp/t25 --python OLD/.venv/bin/python --python .venv/bin/python

Each round runs ``python -m memgrove.cli --root TREE --no-server query Q --json`` once per
interpreter (a checkout's venv: a baseline commit and the change), alternating which goes
first. Every question is new to the tree's cache (an entry's title, "what do we know about
T?"), so each run searches (tier 2, reported). The tree must be one both checkouts read
without rebuilding (the same index format). Build one with ``benchmarks/scale.py``'s corpus:
``--build N`` creates it at ``--tree`` first. Prints p50/p95 per interpreter and their ratio,
with the load average, and writes ``--out`` JSON when given.

``--server`` compares the three ways a cold command reaches the same tree, in one run with one
interpreter (the first ``--python``): in-process (``--no-server``), the click CLI through a
running ``memgrove serve`` (``python -m memgrove.cli``), and the console script's fast path
(``memgrove``, memgrove/cli/fastpath.py), beside ``python -c pass``; for each ``--command`` (query,
search), with each path's imports measured once with ``-X importtime``. Each run's wall time
and the client process's own CPU time (user + system: what the command costs whatever else the
machine runs; the server's share is not in it). ``--semantic W`` sets
``semantic_weight = W`` in the tree's config.toml for the run (and embeds every entry first, so
the runs pay the encoder, not the vectors), then restores the file: the cold cost of ranking by
meaning in-process against a server that keeps the model loaded.

    python benchmarks/cold_query.py --tree /tmp/t2k --build 2000 --python .venv/bin/python --server \
        --command query --command search --out benchmarks/results/cold_query.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import tempfile
import time
from pathlib import Path

from harness.served import Served  # noqa: E402
from harness.stats import import_nodes, pct  # noqa: E402
from harness.tier_runs import child  # noqa: E402
from harness.synthetic import Corpus, build_tree, titles  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--python", action="append", required=True, help="an interpreter (give two: baseline, change)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--build", type=int, default=0, help="first build a tree of this many entries at --tree")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--server", action="store_true",
                    help="in-process vs the click CLI through memgrove serve vs the fast path (first --python)")
    ap.add_argument("--command", action="append", choices=("query", "search"),
                    help="with --server: the commands measured (default query)")
    ap.add_argument("--semantic", type=float, default=0.0, help="with --server: semantic_weight for the run")
    a = ap.parse_args(argv)
    if a.build:
        build_tree(a.tree, a.build, Corpus(a.seed), 500)
    report = served(a) if a.server else interpreters(a)
    print(json.dumps(report, indent=2))
    if a.out:
        a.out.write_text(json.dumps(report, indent=2) + "\n")
    return report


def interpreters(a: argparse.Namespace) -> dict:
    """The interpreters side by side, in-process (``--no-server``), a fresh question each run."""
    pool = titles(a.tree)
    rng = random.Random(a.seed)
    times: dict[str, list[float]] = {p: [] for p in a.python}
    tiers: dict[str, dict[str, int]] = {p: {} for p in a.python}
    load = [os.getloadavg()]
    for r in range(a.rounds):
        for p in (a.python if r % 2 == 0 else a.python[::-1]):
            q = f"what do we know about {rng.choice(pool)}?"
            out, el = child([p, "-m", "memgrove.cli", "--root", str(a.tree), "--no-server", "query", q, "--json"])
            tier = str(json.loads(out)["tier"])
            tiers[p][tier] = tiers[p].get(tier, 0) + 1
            times[p].append(el)
    load.append(os.getloadavg())
    report = {"tree": str(a.tree), "entries": len(pool), "rounds": a.rounds, "loadavg": load,
              "python": {p: {"p50_ms": round(pct(times[p], 50) * 1000, 1), "p95_ms": round(pct(times[p], 95) * 1000, 1),
                             "tiers": tiers[p]} for p in a.python}}
    if len(a.python) == 2:
        base, new = (report["python"][p]["p50_ms"] for p in a.python)
        report["ratio_p50"] = round(new / base, 3)
    return report


# -- --server: in-process, through the server, the fast path -----------------------------------
PATHS = ("in_process", "server_click", "fast_path")


def served(a: argparse.Namespace) -> dict:
    py = os.path.abspath(a.python[0])   # not resolved: a venv's python is a link out of it
    script = Path(py).parent / "memgrove"
    fast = [str(script)] if script.exists() else [py, "-m", "memgrove"]
    commands = a.command or ["query"]
    config = a.tree / ".memgrove" / "config.toml"
    saved = config.read_text(encoding="utf-8") if config.exists() else None
    try:
        if a.semantic:
            _set_semantic(config, saved, a.semantic)
            child([py, "-m", "memgrove.cli", "--root", str(a.tree), "--no-server", "reindex"])
        return _served_runs(a, py, fast, commands)
    finally:
        if saved is not None:
            config.write_text(saved, encoding="utf-8")
        elif config.exists() and a.semantic:
            config.unlink()


def _served_runs(a: argparse.Namespace, py: str, fast: list[str], commands: list[str]) -> dict:
    words = {"in_process": [py, "-m", "memgrove.cli", "--root", str(a.tree), "--no-server"],
             "server_click": [py, "-m", "memgrove.cli", "--root", str(a.tree)],
             "fast_path": [*fast, "--root", str(a.tree)]}
    pool = titles(a.tree)
    rng = random.Random(a.seed)
    server = Served(a.tree, python=py, env=dict(os.environ),
                    log=Path(tempfile.gettempdir()) / f"cold_query_serve_{os.getpid()}.log")
    try:
        for cmd in commands:       # each path once before timing: the server's first search opens its searcher
            for path in PATHS:
                child(words[path] + [cmd, f"what do we know about {rng.choice(pool)}?", "--json"])
        imports = {path: _importtime(py, words[path], cmd=commands[0], q="warm up imports")
                   for path in PATHS}
        times: dict[str, list[float]] = {f"{c}/{p}": [] for c in commands for p in PATHS}
        times["python -c pass"] = []
        cpu: dict[str, list[float]] = {k: [] for k in times}    # the client process's own CPU: load-proof
        load = [os.getloadavg()]
        for r in range(a.rounds):
            order = list(times) if r % 2 == 0 else list(times)[::-1]
            for key in order:
                c0, t0 = _child_cpu(), time.perf_counter()
                if key == "python -c pass":
                    subprocess.run([py, "-c", "pass"], check=True)
                    times[key].append(time.perf_counter() - t0)
                    cpu[key].append(_child_cpu() - c0)
                    continue
                cmd, path = key.split("/")
                q = f"what do we know about {rng.choice(pool)}?"
                out = child(words[path] + [cmd, q, "--json"])[0]
                times[key].append(time.perf_counter() - t0)
                cpu[key].append(_child_cpu() - c0)
                data = json.loads(out)
                if cmd == "search" and not data["hits"]:
                    raise SystemExit(f"{key}: no hits for {q!r}")
        load.append(os.getloadavg())
    finally:
        server.stop()
    med = {k: round(pct(v, 50) * 1000, 1) for k, v in times.items()}
    report = {"tree": str(a.tree), "entries": len(pool), "rounds": a.rounds, "semantic_weight": a.semantic,
              "loadavg": load, "p50_ms": med,
              "p95_ms": {k: round(pct(v, 95) * 1000, 1) for k, v in times.items()},
              "client_cpu_p50_ms": {k: round(pct(v, 50) * 1000, 1) for k, v in cpu.items()},
              "imports_ms": imports,
              "fast_vs_server_click_p50": {c: round(med[f"{c}/fast_path"] / med[f"{c}/server_click"], 3)
                                           for c in commands},
              "fast_vs_in_process_p50": {c: round(med[f"{c}/fast_path"] / med[f"{c}/in_process"], 3)
                                         for c in commands}}
    return report


def _child_cpu() -> float:
    """User + system seconds of the children waited for so far (the server is not waited for)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _set_semantic(config: Path, saved: str | None, weight: float) -> None:
    text = saved or "[tree]\n"
    if not re.search(r"^\[tree\]\s*$", text, re.M):
        text = "[tree]\n" + text
    config.write_text(re.sub(r"^\[tree\]\s*$", f"[tree]\nsemantic_weight = {weight}", text, count=1, flags=re.M),
                      encoding="utf-8")


def _importtime(py: str, words: list[str], *, cmd: str, q: str) -> dict:
    """One run with ``-X importtime``: the imports' total and the heaviest top-level ones (ms)."""
    argv = [py, "-X", "importtime", *(words[1:] if words[0] == py else words)]   # the script is Python too
    out = subprocess.run(argv + [cmd, q, "--json"], capture_output=True, text=True, cwd=tempfile.gettempdir())
    nodes = import_nodes(out.stderr)
    top = sorted(((name, cum) for depth, name, _, cum in nodes if depth == 1), key=lambda t: -t[1])
    return {"total_ms": round(sum(us for _, us in top) / 1000, 1),
            "heaviest": {name: round(us / 1000, 1) for name, us in top[:6]}, "modules": len(nodes)}


if __name__ == "__main__":
    main()

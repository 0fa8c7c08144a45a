"""One tree size per child process (so peak memory is per size): the parent runs ``SCRIPT --worker CFG``
for each size and reads the result, a JSON line, from the child's stdout; the options and the report's head
that the benchmarks run this way (scale, its curve, tiers) share."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from harness.machine import loadavg, start
from harness.report import log


def size_options(ap: argparse.ArgumentParser) -> None:
    """--seed, --batch, --no-write, --keep and the child's --worker."""
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=250, help="ops per curate call while building")
    ap.add_argument("--no-write", action="store_true", help="only print the table")
    ap.add_argument("--keep", action="store_true", help="keep the temp trees (prints where)")
    ap.add_argument("--worker", type=str, default=None, help=argparse.SUPPRESS)


def measure_sizes(title: str, script: Path, sizes: list[int], cfg: dict[str, Any], argv: list[str] | None,
                  seed: int, *, in_process: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None
                  ) -> dict[str, Any]:
    """Every size's run (:func:`run_sizes`) under the report's head: the machine (the files changed since the
    last commit, the load at the end), config, sizes, command, wall time."""
    command, machine = start(script.name, argv, seed, skip_results=False)
    log(f"memgrove {title}: sizes {sizes}, seed {seed}, {machine['cores']} cores, load avg {machine['loadavg']}")
    t0 = time.perf_counter()
    runs = run_sizes(script, sizes, cfg, in_process=in_process)
    machine["loadavg_end"] = loadavg()
    return {"machine": machine, "config": cfg, "sizes": sizes, "command": command,
            "wall_s": round(time.perf_counter() - t0, 1), "runs": runs}


def run_sizes(script: Path, sizes: list[int], cfg: dict[str, Any], *,
              in_process: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The result of every size, each with its ``wall_s``; ``in_process`` runs them here instead (peak RSS
    then accumulates). The children run without ``MEMGROVE_MODEL``: no tier they measure needs an LLM."""
    env = {k: v for k, v in os.environ.items() if k != "MEMGROVE_MODEL"}
    runs = []
    for n in sizes:
        ts = time.perf_counter()
        log(f"size {n:,}:")
        if in_process is not None:
            res = in_process(n, {**cfg, "size": n})
        else:
            proc = subprocess.run([sys.executable, str(script), "--worker", json.dumps({**cfg, "size": n})],
                                  stdout=subprocess.PIPE, text=True, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"size {n}: worker failed with exit code {proc.returncode}")
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["wall_s"] = round(time.perf_counter() - ts, 1)
        log(f"  [{n}] took {res['wall_s']:.0f} s")
        runs.append(res)
    return runs


def worker(arg: str, run: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """In the child: run one size (``run(cfg)``) and write its result as one JSON line on stdout. SIGTERM
    exits through the ``finally`` blocks (the temp tree is removed)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    res = run(json.loads(arg))
    sys.stdout.write(json.dumps(res) + "\n")
    return res

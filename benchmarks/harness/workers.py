"""One tree size per child process (so peak memory is per size): the parent runs ``SCRIPT --worker CFG``
for each size and reads the result, a JSON line, from the child's stdout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from harness.report import log


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

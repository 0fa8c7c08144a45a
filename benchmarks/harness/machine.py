"""The machine line every report opens with: date, seed, cores, CPU, RAM, Python, versions, commit, load."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent


def versions(*dists: str) -> dict[str, str | None]:
    """Installed version of each distribution (None if it is not installed); every report records them."""
    out: dict[str, str | None] = {}
    for d in dists:
        try:
            out[d] = importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            out[d] = None
    return out


def commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def uncommitted(skip_results: bool = True) -> list[str] | None:
    """Tracked files changed since the last commit (the report says so), or None without git. Earlier
    reports in ``benchmarks/results/`` do not count (unless ``skip_results`` is false): a run rewrites them."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                             capture_output=True, text=True, timeout=5).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None
    return [ln[3:] for ln in out if ln.strip() and not (skip_results and ln[3:].startswith("benchmarks/results/"))]


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def brief(script: str, argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The short head of the server benchmarks' reports: date, commit, command, cores, platform and Python,
    the load at the start."""
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
            "command": f"python benchmarks/{script} " + " ".join(sys.argv[1:] if argv is None else argv),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
            "loadavg_start": loadavg()}


def machine_info(seed: int) -> dict[str, Any]:
    cpu = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_total = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_total = round(int(line.split()[1]) / 1024 / 1024, 1)
    v = versions("Whoosh-Reloaded", "whoosh", "memgrove")
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "ram_gb": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "whoosh": v["Whoosh-Reloaded"] or v["whoosh"],
        "memgrove": v["memgrove"],
        "commit": commit(),
        "loadavg": loadavg(),
    }


def start(script: str, argv: Sequence[str] | None, seed: int = 0, *, quote: bool = False,
          skip_results: bool = True) -> tuple[str, dict[str, Any]]:
    """The run's command line (as typed) and its machine info, the files changed since the last commit included
    (:func:`uncommitted`)."""
    args = list(argv if argv is not None else sys.argv[1:])
    command = f"python benchmarks/{script} " + (shlex.join(args) if quote else " ".join(args))
    machine = machine_info(seed)
    machine["uncommitted"] = uncommitted(skip_results)
    return command.strip(), machine


def machine_line(m: dict[str, Any], extra: str = "", *, load: bool = True) -> str:
    """One line: date · seed · cores (CPU) · RAM · Python · whoosh · memgrove @ commit (+ uncommitted) · load at the
    start (and at the end, when the report has it; no load with ``load=False``). ``extra`` (e.g. other versions)
    goes before the commit."""
    end = f", at the end {m['loadavg_end']}" if "loadavg_end" in m else ""
    return (f"{m['date']} · seed {m['seed']} · {m['cores']} cores ({m['cpu']}) · {m['ram_gb']} GB RAM · "
            f"Python {m['python']} · whoosh-reloaded {m['whoosh']}{extra} · memgrove {m['memgrove']} @ {m['commit']}"
            + (f" + uncommitted changes to {', '.join(m['uncommitted'])}" if m.get("uncommitted") else "")
            + (f" · load average at start {m['loadavg']}{end}" if load else ""))

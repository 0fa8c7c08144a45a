"""benchmarks/cold_query.py on a tiny run: two interpreters, every run a fresh question at tier 2."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("cold_query")


def test_cold_query_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    report = bench.main(["--tree", str(tmp_path / "t"), "--build", "60", "--rounds", "1",
                         "--python", sys.executable, "--python", sys.executable, "--out", str(out)])
    assert report["entries"] == 60
    (row,) = report["python"].values()          # the same interpreter twice: one row, two runs
    assert sum(row["tiers"].values()) == 2 and row["tiers"].get("2", 0) >= 1   # fresh questions, searched
    assert all(math.isfinite(row[k]) and row[k] > 0 for k in ("p50_ms", "p95_ms"))
    assert json.loads(out.read_text())["entries"] == 60


def test_cold_query_benchmark_server_paths(tmp_path: Path) -> None:
    """--server: in-process, the click CLI through memgrove serve and the fast path, same run."""
    report = bench.main(["--tree", str(tmp_path / "t"), "--build", "30", "--rounds", "1", "--server",
                         "--command", "query", "--command", "search", "--python", sys.executable])
    keys = {f"{c}/{p}" for c in ("query", "search") for p in ("in_process", "server_click", "fast_path")}
    assert set(report["p50_ms"]) == keys | {"python -c pass"} == set(report["client_cpu_p50_ms"])
    assert all(v > 0 for v in report["p50_ms"].values())
    imports = report["imports_ms"]
    # the fast path loads a fraction of the modules the click CLI does, and no click
    assert imports["fast_path"]["modules"] < imports["server_click"]["modules"] < imports["in_process"]["modules"]
    assert "click" not in imports["fast_path"]["heaviest"]
    assert not (tmp_path / "t" / ".memgrove" / "server.json").exists()     # the server it started is gone

"""benchmarks/cold_query.py on a tiny run: two interpreters, every run a fresh question at tier 2."""

from __future__ import annotations

import json
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
    assert 0 < row["p50_ms"] <= row["p95_ms"]
    assert json.loads(out.read_text())["entries"] == 60

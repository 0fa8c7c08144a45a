"""benchmarks/freshness.py on a tiny tree: every mode answers, with the same hits (the script checks)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("freshness")


def test_freshness_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "fresh.json"
    report = bench.main(["--size", "200", "--searches", "6", "--warmup", "3", "--scan-repeats", "2",
                         "--engines", "whoosh", "--out", str(out)])
    (run,) = report["runs"]
    assert run["engine"] == "whoosh" and run["watcher_active"]
    assert set(run["search_ms"]) == {"watcher", "full scan", "fallback", "engine"}
    assert all(s["n"] == 6 and s["p50"] > 0 for s in run["search_ms"].values())
    counted = run["checks_ms"]       # besides the two checks' times, how many files and folders they look at
    assert counted["files"] > 200 and counted["folders"] > 1   # entries and context.md files (counts, not times)
    assert json.loads(out.read_text())["config"]["size"] == 200
    assert "| fallback |" in out.with_suffix(".md").read_text()

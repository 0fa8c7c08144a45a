"""benchmarks/remote.py on a tiny run: both modes timed side by side, medians and ratios written."""

from __future__ import annotations

import json
import math
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("remote")


def test_remote_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "remote"
    report = bench.main(["--sizes", "60", "--rounds", "3", "--batch", "60", "--out", str(out)])
    (size,) = report["sizes"]
    assert size["size"] == 60 and size["server_exit"] == 0 and size["same_hits_last_round"] is True
    for op in ("search", "curate"):
        row = size[op]
        for mode in ("connect", "open"):
            # the percentiles are reported, finite and positive (their sizes are the benchmark's business)
            assert all(math.isfinite(row[mode][k]) and row[mode][k] > 0 for k in ("p50_ms", "p95_ms")), (op, mode)
        assert row["ratio_p50"] > 0
    assert json.loads(out.with_suffix(".json").read_text())["sizes"][0]["search"] == size["search"]
    assert "| 60 | curate |" in out.with_suffix(".md").read_text()

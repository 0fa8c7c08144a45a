"""benchmarks/dream.py on a tiny run: the generated work is found and done, and undone exactly."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("dream")


def test_dream_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "dream"
    report = bench.main(["--sizes", "60", "--candidates", "generated", "--out", str(out)])
    [row] = report["rows"]
    assert row["entries"] == 60 and row["duplicates"] == 6 and row["links"] == 3
    assert row["counts"]["duplicate"] == {"found": 6, "applied": 6, "queued": 0}
    assert row["counts"]["link"]["applied"] == 3
    assert row["applied_ops"] == 6 + 2 * 3 and row["undo_ops"] == row["applied_ops"]
    assert row["undo_exact"] is True
    assert "baseline_batch_per_candidate_s" in row
    assert json.loads(out.with_suffix(".json").read_text())["rows"][0]["entries"] == 60
    assert "| 60 | generated |" in out.with_suffix(".md").read_text()

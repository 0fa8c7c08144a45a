"""benchmarks/engines_curve.py: two engines' curve reports side by side, in a table and one figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.benchmarks import load_benchmark

bench = load_benchmark("engines_curve")
CURVE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "evidence" / "scale_curve_1k-5k.json"


def _as_engine(tmp_path: Path, engine: str, scale: float) -> Path:
    report = json.loads(CURVE.read_text())
    for run in report["runs"]:
        run["engine"] = engine
        run["build"]["seconds"] *= scale
    path = tmp_path / f"{engine}.json"
    path.write_text(json.dumps(report))
    return path


def test_both_engines_side_by_side_with_ratios(tmp_path: Path) -> None:
    md = bench.main([str(_as_engine(tmp_path, "whoosh", 1.0)), str(_as_engine(tmp_path, "tantivy", 0.25)),
                     "--out", str(tmp_path / "both"), "--no-plot"])
    assert "| metric | size | whoosh | tantivy | tantivy ÷ whoosh |" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| build (curate in batches), s | 1,000 |"))
    assert row.endswith("| 0.25× |")
    assert (tmp_path / "both.md").read_text().strip() == md.strip()


def test_a_report_must_name_one_engine(tmp_path: Path) -> None:
    report = json.loads(CURVE.read_text())
    path = tmp_path / "unnamed.json"
    path.write_text(json.dumps(report))
    with pytest.raises(SystemExit, match="one engine"):
        bench.main([str(path), str(path), "--out", str(tmp_path / "x"), "--no-plot"])

"""benchmarks/hygiene.py on a tiny stream: the report's shape, exact duplicates all found, and the
generator's questions for the after-dream comparison."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("hygiene")


def test_the_stream_is_seeded_and_carries_its_truth() -> None:
    a, b = bench.generate(300, seed=3), bench.generate(300, seed=3)
    assert a.conversations == b.conversations and a.questions == b.questions
    assert a.conversations != bench.generate(300, seed=4).conversations
    assert a.messages() >= 300
    kinds = {t["kind"] for t in a.truth.values()}
    assert {"first", "repeat", "change", "filler"} <= kinds
    refs = {f"{c['id']}#{m['id']}" for c in a.conversations for m in c["messages"]}
    assert refs == set(a.truth)
    current = [q for q in a.questions if q["type"] == "current"]
    before = [q for q in a.questions if q["type"] == "before"]
    assert current and before and all(q["expected"] not in q["old"] for q in current)
    # a "before" question's answer is the value said before the day it names
    for q in before:
        assert q["before"] in q["question"] and q["expected"] in a.facts[q["fact"]].values


def test_hygiene_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "hygiene.json"
    report = bench.main(["--sizes", "300", "--seed", "1", "--locomo", "0", "--out", str(out)])
    (run,) = report["runs"]
    assert run["messages"] >= 300 and run["entries"] >= run["messages"] and run["scan_s"] >= 0
    assert set(run["kinds"]) == {"duplicate", "near_duplicate", "superseded", "link", "archive"}
    dup = run["kinds"]["duplicate"]
    assert dup["truth"] > 0 and dup["recall"] == 1.0 and dup["precision"] == 1.0
    assert run["kinds"]["superseded"]["proposed"] > 0
    assert set(run["before_dream"]) >= {"current_first_hit", "before_in_top5"}
    assert json.loads(out.read_text())["config"]["sizes"] == [300]
    assert "| duplicate |" in out.with_suffix(".md").read_text()

"""benchmarks/store.py on a tiny run: every store measured (the remote one against a real
``memgrove serve`` on 127.0.0.1), medians and ratios written."""

from __future__ import annotations

import json
import math
from pathlib import Path

from helpers.benchmarks import load_benchmark

bench = load_benchmark("store")


def test_store_benchmark_tiny_run(tmp_path: Path) -> None:
    out = tmp_path / "store"
    report = bench.main(["--sizes", "40", "--calls", "3", "--batch", "40", "--out", str(out)])
    assert [(r["store"], r["size"]) for r in report["rows"]] == [(s, 40) for s in bench.STORES]
    for r in report["rows"]:
        assert r["check"]["get_found"], r
        for op in ("put", "get", "search", "list"):
            # measured and reported (finite, not negative); how they compare is the benchmark's, not a test's
            timings = [r[op][k] for k in ("median_ms", "p90_ms")]
            assert r[op]["n"] == 3 and all(math.isfinite(t) and t >= 0 for t in timings), (r["store"], op)
    tree = report["rows"][0]
    assert tree["search"]["mean_hits"] > 0                     # the queries' words are in the corpus
    assert set(report["ratios"]["40"]) == {"InMemoryStore", "SqliteStore"}
    remote = report["rows"][1]
    assert remote["store"] == "RemoteContextTreeStore" and remote["search"]["mean_hits"] == tree["search"]["mean_hits"]
    assert set(report["remote_ratios"]["40"]) == {"put", "get", "search", "list"}
    assert json.loads(out.with_suffix(".json").read_text())["rows"] == json.loads(json.dumps(report["rows"]))
    md = out.with_suffix(".md").read_text()
    assert "| size | store | fill s | fill items/s | put | get | search | list |" in md
    assert "| 40 | SqliteStore |" in md and "| 40 | RemoteContextTreeStore |" in md


def test_items_are_seeded_and_independent_of_size() -> None:
    vocab = bench.vocabulary(0)
    assert vocab == bench.vocabulary(0) and len(set(vocab)) == len(vocab) == 2000
    assert bench.item(7, vocab, 0) == bench.item(7, vocab, 0)
    assert bench.item(7, vocab, 0) != bench.item(7, vocab, 1)
    assert bench.item(7, vocab, 0)[0] == ("bench", "user_7")

"""benchmarks/curate_cost.py on a tiny LoCoMo-format sample: the report's numbers agree with each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.benchmarks import load_benchmark, tiny_locomo_conversation

def _sample() -> list[dict]:
    return [{"sample_id": "conv-t1", "conversation": tiny_locomo_conversation(4), "qa": []}]


def test_curate_cost_report_is_consistent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("curate_cost")
    data = tmp_path / "locomo_tiny.json"
    data.write_text(json.dumps(_sample()), encoding="utf-8")
    out = tmp_path / "out"
    report = bench.main(["--data", str(data), "--out", str(out)])

    assert (out / "curate_cost.json").exists() and (out / "curate_cost.md").exists()
    assert json.loads((out / "curate_cost.json").read_text())["summary"] == json.loads(json.dumps(report["summary"]))
    (row,) = report["rows"]
    ours, closing, br = row["ours"], row["ours_closing"], row["byterover"]
    assert (row["sessions"], row["messages"], row["image_turns"]) == (2, 8, 1)
    assert (ours["finish_on_curate"], closing["finish_on_curate"]) == (True, False)
    assert ours["chunks"] == closing["chunks"] == 2             # a chunk never spans two sessions
    # default (finish_on_curate): the loop ends on the curate call, no closing line is asked for
    assert ours["calls"] == ours["chunks"]
    assert ours["calls_by_kind"] == {"curate": 2, "final": 0, "other": 0}
    # finish_on_curate=False: curate, then the echo curator's closing line
    assert closing["calls"] == 2 * closing["chunks"]
    assert closing["calls_by_kind"] == {"curate": 2, "final": 2, "other": 0}
    assert row["same_curate_calls"] and report["same_curate_calls"]
    assert closing["prompt_tokens"] == ours["prompt_tokens"] + closing["prompt_tokens_by_kind"]["final"]
    assert closing["completion_tokens"] == ours["completion_tokens"] + closing["completion_tokens_by_kind"]["final"]
    assert ours["prompt_tokens_by_part"].get("tool_results", 0) == 0 < closing["prompt_tokens_by_part"]["tool_results"]
    for o in (ours, closing):
        assert o["consistent"] and not o["errors"] and not o["stopped"] and not o["model_errors"]
        assert o["prompt_tokens"] > 0 and o["completion_tokens"] > 0
        assert o["prompt_tokens"] == sum(o["prompt_tokens_by_part"].values())
        assert o["prompt_tokens_by_part"]["tool_schemas"] > 0 and o["prompt_tokens_by_part"]["chunk_material"] > 0
        assert set(o["tool_schema_tokens"]) == {"search_knowledge", "read_entry", "list_tree", "curate"}
        assert o["applied"] == o["operations_sent"]
        assert 2 <= o["applied"] <= 4                           # 3-4 messages per entry, 4 messages per session
        assert o["count"] > 0 and o["search"]["hits"] > 0 and o["search"]["message_in_top5"]
    assert br["calls"] == row["sessions"] == 2
    assert 0 < br["prompt_tokens"] < ours["prompt_tokens"] < closing["prompt_tokens"]
    assert br["completion_tokens"] == ours["completion_tokens_by_kind"]["curate"]
    assert row["ratio_calls"] == pytest.approx(ours["calls"] / br["calls"], abs=1e-3)
    assert row["ratio_calls_closing"] == pytest.approx(closing["calls"] / br["calls"], abs=1e-3)
    assert row["ratio_prompt_tokens"] == pytest.approx(ours["prompt_tokens"] / br["prompt_tokens"], abs=1e-3)
    assert row["ratio_prompt_tokens_closing"] == pytest.approx(closing["prompt_tokens"] / br["prompt_tokens"], abs=1e-3)
    total = report["summary"]["total"]
    assert (total["calls"], total["calls_closing"], total["br_calls"]) == (2, 4, 2)
    md = (out / "curate_cost.md").read_text()
    assert "| conv-t1 | 2 | 8 |" in md and "finish_on_curate" in md

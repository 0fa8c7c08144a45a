"""The fixed dev/test halves of the benchmarks (benchmarks/splits.json): disjoint, covering every
conversation and chat, and what --split selects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.benchmarks import load_benchmark, tiny_locomo_conversation

splits = load_benchmark("splits")

# the data sets' conversations and chats (their READMEs: LoCoMo 10 conversations, BEAM 20 and 35 chats)
LOCOMO = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49",
          "conv-50"]
BEAM = {"100K": 20, "500K": 35}


@pytest.mark.parametrize("dataset,tier,everything", [("locomo", None, LOCOMO)] + [
    ("beam", tier, [str(n) for n in range(1, n + 1)]) for tier, n in BEAM.items()])
def test_halves_are_disjoint_and_cover_everything(dataset, tier, everything):
    h = splits.halves(dataset, tier)
    assert not set(h["dev"]) & set(h["test"])
    assert sorted(h["dev"] + h["test"]) == sorted(everything)
    assert len(h["dev"]) + len(h["test"]) == len(set(h["dev"] + h["test"]))     # no name twice
    assert abs(len(h["dev"]) - len(h["test"])) <= 1
    assert sorted(splits.members(dataset, "all", tier)) == sorted(everything)


def test_beam_halves_are_odd_and_even_chats():
    for tier in BEAM:
        h = splits.halves("beam", tier)
        assert all(int(n) % 2 == 1 for n in h["dev"]) and all(int(n) % 2 == 0 for n in h["test"])


def test_in_split_selects_one_half_and_all_selects_everything():
    assert splits.in_split("locomo", "conv-30", "test") and not splits.in_split("locomo", "conv-30", "dev")
    assert splits.in_split("beam", "3", "dev", "100K") and not splits.in_split("beam", "3", "test", "100K")
    assert splits.in_split("locomo", "conv-unknown", "all")


def test_bad_names_get_specific_errors():
    with pytest.raises(ValueError, match="unknown split"):
        splits.members("locomo", "train")
    with pytest.raises(ValueError, match="no split of BEAM tier"):
        splits.halves("beam", "1M")
    with pytest.raises(ValueError, match="unknown data set"):
        splits.halves("longmemeval")


def test_the_split_file_says_why():
    data = json.loads(Path(splits.SPLITS_FILE).read_text(encoding="utf-8"))
    assert "dev" in data["why"] and "test" in data["why"]


def test_locomo_split_flag_runs_only_that_half(tmp_path, monkeypatch):
    """--split test over a two-conversation file keeps the one the split file puts in test."""
    pytest.importorskip("bm25s")
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    locomo = load_benchmark("locomo")
    conv = tiny_locomo_conversation()
    qa = [{"question": "What is the name of the greyhound Ana adopted?", "answer": "Pepper", "evidence": ["D1:1"],
           "category": c} for c in (1, 2, 3, 4, 5)]
    data = [{"sample_id": sid, "conversation": conv, "qa": qa} for sid in ("conv-26", "conv-30")]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = locomo.main(["--data", str(path), "--split", "test", "--out", str(tmp_path / "out")])
    assert report["config"]["conversations"] == ["conv-30"]
    assert (tmp_path / "out" / "locomo_test.json").exists()

"""benchmarks/ablation.py on a tiny LoCoMo file: every arm scored per question, paired against the
default, curation settings curated apart, stand-ins undone afterwards."""

from __future__ import annotations

import json

import pytest
from helpers.benchmarks import load_benchmark, tiny_locomo_conversation

pytest.importorskip("bm25s", reason="the ablation's references need bm25s (the bench extra)")
ablation = load_benchmark("ablation")


def test_arms_are_paired_question_by_question(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    qa = [{"question": "What is the name of the greyhound Ana adopted?", "answer": "Pepper", "evidence": ["D1:1"],
           "category": 4},
          {"question": "Where is Ben's cello recital?", "answer": "community hall", "evidence": ["D2:1"], "category": 1},
          {"question": "What did Ben paint?", "adversarial_answer": "a lake", "evidence": [], "category": 5}]
    data = tmp_path / "locomo10.json"
    data.write_text(json.dumps([{"sample_id": "conv-30", "conversation": tiny_locomo_conversation(), "qa": qa}]))
    monkeypatch.setenv("LOCOMO_PATH", str(data))
    from memgrove.tree.text import analysis
    before = analysis.BASE_OF
    out = tmp_path / "abl.json"
    report = ablation.main(["locomo", "--split", "test", "--arms",
                            "default,link_weight=0,stem_exceptions=off,part_words=100000,cover_weight=0.5+cover_several",
                            "--out", str(out)])
    assert analysis.BASE_OF is before                          # the stand-in is undone
    assert report["conversations"] == ["conv-30"]
    assert [q["index"] for q in report["questions"]] == [0, 1]  # the adversarial question is not asked
    names = [a["name"] for a in report["arms"]]
    assert names[0] == "default"
    for q in report["questions"]:
        assert set(q["arms"]) == set(names) | {"bm25-turns", "bm25-sessions"}
    paired = report["summary"]["paired"]
    assert set(paired) == set(names[1:])
    row = paired["link_weight=0"]["overall"]["R@10"]
    assert row["gained"] + row["lost"] <= 2
    assert json.loads(out.read_text())["summary"] == json.loads(json.dumps(report["summary"]))


def test_arm_names_are_checked():
    assert ablation.parse_arm("cover_weight=0.5+cover_several").patch == "cover_several"
    assert ablation.parse_arm("near_weight=0").tree == {"near_weight": 0}
    with pytest.raises(SystemExit, match="unknown"):
        ablation.parse_arm("no_such_setting=1")
    assert ablation.curation_key(ablation.parse_arm("part_words=100000")) != \
        ablation.curation_key(ablation.parse_arm("near_weight=0"))


def test_meaning_in_the_base_warms_every_memory_and_pairs_meaning_off(tmp_path, monkeypatch):
    """--base semantic_weight: every entry's vector is computed after each curation (the real model),
    a conversation's second curation encodes only its new texts, and meaning off is an arm."""
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    qa = [{"question": "What is the name of the greyhound Ana adopted?", "answer": "Pepper", "evidence": ["D1:1"],
           "category": 4}]
    data = tmp_path / "locomo10.json"
    data.write_text(json.dumps([{"sample_id": "conv-30", "conversation": tiny_locomo_conversation(), "qa": qa}]))
    monkeypatch.setenv("LOCOMO_PATH", str(data))
    out = tmp_path / "abl.json"
    report = ablation.main(["locomo", "--split", "test", "--base", "semantic_weight=0.5", "--arms",
                            "default,semantic_weight=0,stem_exceptions=off", "--out", str(out)])
    assert [a["name"] for a in report["arms"]] == ["default", "semantic_weight=0", "stem_exceptions=off"]
    entries = report["embedded"]["entries"]
    assert entries > 0 and report["embedded"]["ms_per_entry"] > 0
    assert "semantic_weight=0" in report["summary"]["paired"]
    assert "Warm-up" in out.with_suffix(".md").read_text()
    alone = ablation.main(["locomo", "--split", "test", "--base", "semantic_weight=0.5", "--arms", "default",
                           "--out", str(tmp_path / "alone.json")])
    assert alone["embedded"]["entries"] == entries           # the second curation's texts were all reused
    assert alone["summary"]["means"]["default"] == report["summary"]["means"]["default"]

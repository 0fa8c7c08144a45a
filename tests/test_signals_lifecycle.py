"""Adaptive Knowledge Lifecycle: the pure math, ranking profiles, and runtime
signals that live in signals.db and never in the markdown."""

from __future__ import annotations

import math
import os
import time
from typing import Any

import pytest

from memgrove import Memory
from memgrove.tree.entries import lifecycle
from memgrove.tree.entries.lifecycle import (
    PROFILES,
    clamp_importance,
    decayed_importance,
    next_maturity,
    rank_score,
    recency,
)


def op(kind: str, path: str, **fields: Any) -> dict[str, Any]:
    return {"op": kind, "path": path, "reason": fields.pop("reason", "test"), **fields}


# -- pure functions -----------------------------------------------------------------

def test_constants() -> None:
    assert lifecycle.DEFAULT_IMPORTANCE == 50
    assert lifecycle.RETRIEVAL_BONUS == 3
    assert lifecycle.UPDATE_BONUS == 5
    assert lifecycle.DAILY_DECAY == 0.995
    assert lifecycle.RECENCY_DAYS == 30


def test_decay() -> None:
    assert decayed_importance(80, 0) == 80
    assert decayed_importance(100, 1) == pytest.approx(99.5)
    assert decayed_importance(100, 10) == pytest.approx(100 * 0.995 ** 10)
    assert decayed_importance(100, 0.5) == pytest.approx(100 * 0.995 ** 0.5)
    assert decayed_importance(100, -5) == 100          # a clock skew never raises importance


def test_recency() -> None:
    assert recency(0) == 1.0
    assert recency(30) == pytest.approx(math.exp(-1))
    assert recency(90) == pytest.approx(math.exp(-3))
    assert recency(-1) == 1.0
    assert recency(1) > recency(2) > recency(100) > 0


def test_clamp() -> None:
    assert clamp_importance(-3) == 0
    assert clamp_importance(103) == 100
    assert clamp_importance(42.5) == 42.5


@pytest.mark.parametrize(
    ("current", "importance", "expected"),
    [
        # promotion
        ("draft", 64.9, "draft"),
        ("draft", 65, "validated"),
        ("draft", 84.9, "validated"),
        ("draft", 85, "core"),
        ("validated", 85, "core"),
        ("validated", 70, "validated"),
        # hysteresis: core holds down to 60, validated down to 35
        ("core", 84, "core"),
        ("core", 60, "core"),
        ("core", 59.9, "validated"),
        ("core", 34.9, "draft"),
        ("validated", 64, "validated"),
        ("validated", 35, "validated"),
        ("validated", 34.9, "draft"),
        ("draft", 50, "draft"),
    ],
)
def test_maturity_thresholds_with_hysteresis(current: str, importance: float, expected: str) -> None:
    assert next_maturity(current, importance) == expected


def test_benchmark_profile_is_pure_relevance() -> None:
    prof = PROFILES["benchmark"]
    assert (prof.w_importance, prof.w_recency) == (0.0, 0.0)
    assert prof.boosts == {"draft": 1.0, "validated": 1.0, "core": 1.0}
    assert prof.access_bonus is False
    for imp, days, mat in [(0, 0, "draft"), (100, 400, "core"), (50, 3, "validated")]:
        assert rank_score(0.7, imp, days, mat, prof) == pytest.approx(0.7)


def test_product_profile_only_reorders_near_ties() -> None:
    prof = PROFILES["product"]
    assert (prof.w_importance, prof.w_recency) == (0.10, 0.05)
    assert prof.boosts == {"draft": 0.95, "validated": 1.0, "core": 1.05}
    assert prof.access_bonus is True
    # a new entry (importance 50, updated half a recency-constant ago) keeps its relevance
    half = -30 * math.log(0.5)
    assert rank_score(0.5, 50 / 0.995 ** half, half, "validated", prof) == pytest.approx(0.5)
    imp = 80 * 0.995 ** 10
    expected = 0.5 * (1 + 0.10 * (imp - 50) / 50 + 0.05 * (2 * math.exp(-10 / 30) - 1))
    assert rank_score(0.5, 80, 10, "validated", prof) == pytest.approx(expected)
    assert rank_score(0.5, 80, 10, "core", prof) == pytest.approx(expected * 1.05)
    # importance and recency matter, but never by more than 20% together with maturity
    assert rank_score(0.5, 90, 0, "validated", prof) > rank_score(0.5, 10, 0, "validated", prof)
    assert rank_score(0.5, 50, 0, "validated", prof) > rank_score(0.5, 50, 60, "validated", prof)
    best = rank_score(0.80, 100, 0, "core", prof)
    worst = rank_score(1.0, 0, 3650, "draft", prof)
    assert best < worst * 1.45 and rank_score(0.70, 100, 0, "core", prof) < worst * 1.0 + 0.2


# -- signals in use ---------------------------------------------------------------------

def test_only_delivered_entries_gain_importance_in_the_product_profile(tmp_path) -> None:
    ops = [op("ADD", "a/b/x.md", title="Armadillo facts", content="armadillo shells"),
           op("ADD", "a/b/y.md", title="Armadillo habitat", content="armadillo burrows in grassland")]
    with Memory.open(tmp_path / "p", create=True, durable=False, profile="product") as m:
        m.curate(ops)
        m.search("armadillo")
        m.search("armadillo")                       # a search delivers nothing
        assert m.tree.signals.get("a/b/x.md").access_count == 0
        a = m.query("armadillo shells")              # an answer delivers its sources
        assert a.sources and a.sources[0] == "a/b/x.md"
        s = m.tree.signals.get("a/b/x.md")
        assert (s.importance, s.access_count, s.update_count) == (53.0, 1, 0)
        m.query("armadillo shells")                  # a cached answer is not a second delivery
        assert m.tree.signals.get("a/b/x.md").access_count == 1
        m.tree.search("armadillo", record_access=True)   # an explicit delivery of search hits
        assert m.tree.signals.get("a/b/x.md").access_count == 2
        # context files are not entries and get no signals
        assert m.tree.signals.get("a/b/context.md").access_count == 0
    with Memory.open(tmp_path / "p", durable=False, profile="benchmark") as m:
        m.tree.search("armadillo", record_access=True)
        assert m.tree.signals.get("a/b/x.md").access_count == 2


def test_reading_an_entry_through_the_tool_delivers_it(mem) -> None:
    from memgrove.tools import memory_tools

    mem.curate([op("ADD", "a/b/x.md", title="X", content="x")])
    read = {t.name: t for t in memory_tools(mem)}["read_entry"]
    read.invoke({"path": "a/b/x.md"})
    assert mem.tree.signals.get("a/b/x.md").access_count == 1


def test_repeated_questions_do_not_drift_the_ranking(tmp_path) -> None:
    # every question used to raise every hit's importance, until popular entries outranked
    # relevant ones; now a popular entry cannot beat a clearly better match
    with Memory.open(tmp_path / "d", create=True, durable=False, profile="product") as m:
        m.curate([op("ADD", "zoo/cats/popular.md", title="Lion pride", content="a snow leopard was seen near the lions"),
                  op("ADD", "zoo/cats/rare.md", title="Snow leopard range",
                     content="snow leopards range over the high mountains of central asia")])
        for _ in range(40):
            m.tree.record_delivery(["zoo/cats/popular.md"])
        assert m.tree.signals.get("zoo/cats/popular.md").maturity == "core"
        hits = m.search("snow leopard mountains")
        assert [h.path for h in hits] == ["zoo/cats/rare.md", "zoo/cats/popular.md"]


def test_update_bumps_importance(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="X", content="x")])
    sig = mem.tree.signals
    assert sig.get("a/b/x.md").importance == 50          # ADD does not bump
    mem.curate([op("UPDATE", "a/b/x.md", content="x2")])
    assert (sig.get("a/b/x.md").importance, sig.get("a/b/x.md").update_count) == (55, 1)
    mem.curate([op("UPSERT", "a/b/x.md", content="x3")])  # an UPSERT that updates counts too
    assert (sig.get("a/b/x.md").importance, sig.get("a/b/x.md").update_count) == (60, 2)
    mem.curate([op("UPSERT", "a/b/y.md", title="Y", content="y")])  # an UPSERT that adds does not
    assert sig.get("a/b/y.md").update_count == 0


def test_maturity_follows_importance(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="X", content="x")])
    sig = mem.tree.signals
    for i in range(7):
        mem.curate([op("UPDATE", "a/b/x.md", content=f"version {i}")])
        expected = "core" if 50 + 5 * (i + 1) >= 85 else "validated" if 50 + 5 * (i + 1) >= 65 else "draft"
        assert sig.get("a/b/x.md").maturity == expected
    assert sig.get("a/b/x.md").importance == 85
    for _ in range(10):
        sig.record_update(["a/b/x.md"])
    assert sig.get("a/b/x.md").importance == 100           # clamped


def test_signals_are_forgotten_on_delete(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="X", content="x")])
    mem.curate([op("UPDATE", "a/b/x.md", content="x2")])
    mem.curate([op("DELETE", "a/b/x.md")])
    s = mem.tree.signals.get("a/b/x.md")
    assert (s.importance, s.update_count) == (50, 0)
    mem.curate([op("ADD", "a/b/x.md", title="X", content="x")])
    assert mem.tree.signals.get("a/b/x.md").update_count == 0


def test_product_ranking_prefers_important_entries(tmp_path) -> None:
    same = "Numbat habitat in the eucalyptus woodland."
    ops = [op("ADD", "wild/life/first.md", title="Notes one", content=same),
           op("ADD", "wild/life/second.md", title="Notes two", content=same)]
    with Memory.open(tmp_path / "r", create=True, durable=False, profile="benchmark") as m:
        m.curate(ops)
        for _ in range(7):
            m.tree.signals.record_update(["wild/life/second.md"])   # core
        hits = m.search("numbat habitat")
        assert len(hits) == 2 and hits[0].score == pytest.approx(hits[1].score)
    with Memory.open(tmp_path / "r", durable=False, profile="product") as m:
        hits = m.search("numbat habitat")
        assert [h.path for h in hits] == ["wild/life/second.md", "wild/life/first.md"]
        assert hits[0].score > hits[1].score


def test_product_ranking_prefers_recent_entries(tmp_path) -> None:
    same = "Pangolin scales are made of keratin."
    with Memory.open(tmp_path / "t", create=True, durable=False, profile="product") as m:
        m.curate([op("ADD", "wild/life/old.md", title="Notes one", content=same),
                  op("ADD", "wild/life/new.md", title="Notes two", content=same)])
        old = m.home / "tree/wild/life/old.md"
        sixty_days = time.time() - 60 * 86400
        os.utime(old, (sixty_days, sixty_days))
        hits = m.tree.search("pangolin keratin", record_access=False)
        assert [h.path for h in hits] == ["wild/life/new.md", "wild/life/old.md"]


def test_search_never_rewrites_markdown(mem) -> None:
    mem.curate([op("ADD", "a/b/x.md", title="Quokka", content="quokka smiles"),
                op("ADD", "a/c/y.md", title="Other quokka", content="more quokka")])
    root = mem.home / "tree"

    def stats() -> dict[str, tuple[int, bytes]]:
        return {str(p): (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*.md")}

    before = stats()
    time.sleep(0.01)
    for _ in range(5):
        assert mem.search("quokka")
        assert mem.query("quokka").sources          # an answer delivers entries: signals change
    assert stats() == before
    assert mem.tree.signals.get("a/b/x.md").access_count >= 1
    assert (mem.home / "signals.db").is_file()
    assert "importance" not in (root / "a/b/x.md").read_text()

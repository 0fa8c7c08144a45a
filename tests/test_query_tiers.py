"""Routing of the query pipeline at each threshold edge, and the settings behind it.

``tiers.route`` is a pure function of the hits, the query terms and the entry
count, so these tests hand-build ``Hit``s just below and exactly at every
threshold. Confidence is ``relevance × coverage``; most hits here have
coverage 1.0 so that confidence equals the relevance given.
"""

from __future__ import annotations

import dataclasses

import pytest

from memgrove import Memory
from memgrove.graphs import tiers
from memgrove.graphs.settings import QuerySettings, load_query_settings
from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.ranking.hits import Hit

S = QuerySettings()
SMALL = S.ood_min_entries - 1     # too few entries for out-of-domain detection
BIG = S.ood_min_entries
EPS = 1e-4


def hit(relevance: float, coverage: float = 1.0, matched: tuple[str, ...] = ("rotat",), kind: str = "entry",
        path: str = "auth/jwt/rotation.md") -> Hit:
    return Hit(path=path, title="t", score=relevance, excerpt="e", kind=kind, relevance=relevance,
               matched=matched, coverage=coverage)


def two(top: float, second: float) -> list[Hit]:
    return [hit(top), hit(second, path="auth/jwt/other.md")]


# -- the documented defaults ---------------------------------------------------------

DOCUMENTED = {
    "fuzzy_threshold": 1.0, "fuzzy_min_tokens": 2,
    "direct_score": 0.85, "direct_strong": 0.93, "direct_gap": 0.08, "direct_max_entries": 5,
    "direct_max_chars": 5000,
    "llm_score": 0.7,
    "ood_min_entries": 50, "ood_score": 0.6, "ood_term_chars": 4, "ood_term_score": 0.85,
}


@pytest.mark.parametrize("name,default", sorted(DOCUMENTED.items()))
def test_every_threshold_is_a_setting_with_the_documented_default(name, default):
    fields = {f.name: f for f in dataclasses.fields(QuerySettings)}
    assert name in fields
    assert getattr(QuerySettings(), name) == default


def test_settings_are_frozen_and_replaceable():
    s = QuerySettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.direct_score = 0.5  # type: ignore[misc]
    assert s.replace(direct_score=0.5).direct_score == 0.5
    assert s.direct_score == 0.85


def test_query_table_of_config_toml_overrides_defaults(tmp_path):
    home = tmp_path / ".memgrove"
    home.mkdir()
    (home / "config.toml").write_text("[query]\ndirect_score = 0.9\nood_min_entries = 10\n")
    s = load_query_settings(home, llm_timeout=3.0)
    assert (s.direct_score, s.ood_min_entries, s.llm_timeout) == (0.9, 10, 3.0)
    assert s.direct_gap == 0.08


@pytest.mark.parametrize("toml,needle", [("[query]\ndirect_scor = 0.9\n", "direct_scor"),
                                         ("[query\n", "invalid TOML")])
def test_bad_query_settings_are_one_clear_error(tmp_path, toml, needle):
    home = tmp_path / ".memgrove"
    home.mkdir()
    (home / "config.toml").write_text(toml)
    with pytest.raises(MemgroveError, match=needle):
        load_query_settings(home)


def test_memory_pipeline_reads_the_query_table(tmp_path):
    m = Memory.open(tmp_path, create=True, durable=False)
    try:
        (m.home / "config.toml").write_text("[query]\nllm_timeout = 1.5\nllm_retries = 0\n")
        m2 = Memory.open(tmp_path, durable=False)
        try:
            assert (m2.pipeline.settings.llm_timeout, m2.pipeline.settings.llm_retries) == (1.5, 0)
        finally:
            m2.close()
    finally:
        m.close()


# -- out of domain ---------------------------------------------------------------------

def test_no_hits_is_out_of_domain_only_with_enough_entries():
    assert tiers.route([], ["quantum"], BIG, S) == "out_of_domain"
    assert tiers.route([], ["quantum"], SMALL, S) == "agent"


def test_ood_min_entries_edge():
    weak = [hit(S.ood_score - EPS)]
    assert tiers.route(weak, ["rotat"], BIG, S) == "out_of_domain"
    # one entry fewer: no out-of-domain rule at all; a weak match goes to the agent
    assert tiers.route(weak, ["rotat"], BIG - 1, S) == "agent"


def test_ood_score_edge():
    assert tiers.route([hit(S.ood_score - EPS)], ["rotat"], BIG, S) == "out_of_domain"
    assert tiers.route([hit(S.ood_score)], ["rotat"], BIG, S) == "agent"   # 0.6 < llm_score 0.7


def test_ood_uses_relevance_not_confidence():
    # relevance above the bar but poor coverage: in domain (just not a direct answer)
    h = [hit(0.9, coverage=0.5)]
    assert tiers.route(h, ["rotat"], BIG, S) == "agent"


def test_ood_term_chars_edge():
    """With no matched query term of ≥ 4 characters and ŝ < 0.85: out of domain."""
    rel = S.ood_term_score - EPS   # strong enough for tier 3, not for the term rule
    short = "a" * (S.ood_term_chars - 1)
    exact = "b" * S.ood_term_chars
    # only a 3-letter term matched
    assert tiers.route([hit(rel, matched=(short,))], [short, "zzzzz"], BIG, S) == "out_of_domain"
    # a 4-letter term matched: in domain, routed by confidence
    assert tiers.route([hit(rel, matched=(exact,))], [exact, "zzzzz"], BIG, S) == "llm"
    # matching a long word that is not a query term does not count
    assert tiers.route([hit(rel, matched=("other",))], [short], BIG, S) == "out_of_domain"


def test_ood_term_score_edge():
    short = ("jwt",)
    assert tiers.route([hit(S.ood_term_score - EPS, matched=short)], ["jwt"], BIG, S) == "out_of_domain"
    # at 0.85 the term rule no longer applies; one result at 0.85 answers directly
    assert tiers.route([hit(S.ood_term_score, matched=short)], ["jwt"], BIG, S) == "direct"


def test_ood_term_rule_looks_at_every_hit():
    hits = [hit(0.8, matched=("jwt",)), hit(0.75, matched=("rotat",), path="auth/jwt/b.md")]
    assert tiers.route(hits, ["jwt", "rotat"], BIG, S) == "llm"


# -- tier 2: direct -------------------------------------------------------------------

def test_direct_score_edge_single_result():
    assert tiers.route([hit(S.direct_score)], ["rotat"], SMALL, S) == "direct"
    assert tiers.route([hit(S.direct_score - EPS)], ["rotat"], SMALL, S) == "llm"


def test_single_result_rule():
    # one result at 0.86 is direct; the same top with a close second is not (gap 0.01, below strong)
    assert tiers.route([hit(0.86)], ["rotat"], SMALL, S) == "direct"
    assert tiers.route(two(0.86, 0.85), ["rotat"], SMALL, S) == "llm"


def test_direct_strong_edge():
    second = S.direct_strong - 0.01          # close second: the gap rule cannot apply
    assert tiers.route(two(S.direct_strong, second), ["rotat"], SMALL, S) == "direct"
    assert tiers.route(two(S.direct_strong - EPS, second), ["rotat"], SMALL, S) == "llm"


def test_direct_gap_edge():
    top, at_gap = 0.9, 0.82                                  # gap 0.08 (as floats see it: 0.0800…07)
    assert top - at_gap >= S.direct_gap
    assert tiers.route(two(top, at_gap), ["rotat"], SMALL, S) == "direct"
    below = top - S.direct_gap + EPS
    assert top - below < S.direct_gap
    assert tiers.route(two(top, below), ["rotat"], SMALL, S) == "llm"


def test_direct_needs_direct_score_even_with_a_gap():
    assert tiers.route(two(S.direct_score - EPS, 0.1), ["rotat"], SMALL, S) == "llm"


def test_direct_ranks_by_confidence_not_by_order():
    hits = [hit(0.95, coverage=0.5, path="a/b/weak.md"), hit(0.9, coverage=1.0)]
    assert tiers.top_scores(hits) == (0.9, 0.475)
    assert tiers.route(hits, ["rotat"], SMALL, S) == "direct"


# -- tiers 3 and 4 ---------------------------------------------------------------------

def test_llm_score_edge():
    assert tiers.route([hit(S.llm_score), hit(S.llm_score, path="a/b/c.md")], ["rotat"], SMALL, S) == "llm"
    assert tiers.route([hit(S.llm_score - EPS)], ["rotat"], SMALL, S) == "agent"


def test_confidence_is_relevance_times_coverage():
    # BM25 relevance saturates; a hit that matches a third of the question is not a direct answer
    assert tiers.route([hit(0.99, coverage=0.7)], ["rotat"], SMALL, S) == "agent"
    assert tiers.route([hit(0.99, coverage=0.75)], ["rotat"], SMALL, S) == "llm"
    assert tiers.route([hit(0.99, coverage=0.9)], ["rotat"], SMALL, S) == "direct"


def test_route_follows_changed_settings():
    s = S.replace(direct_score=0.5, llm_score=0.3, ood_min_entries=1, ood_score=0.2)
    assert tiers.route([hit(0.55)], ["rotat"], SMALL, s) == "direct"
    assert tiers.route([hit(0.35)], ["rotat"], SMALL, s) == "llm"
    assert tiers.route([hit(0.25)], ["rotat"], SMALL, s) == "agent"
    assert tiers.route([hit(0.15)], ["rotat"], SMALL, s) == "out_of_domain"


# -- the same routes through the pipeline ---------------------------------------------------

def test_pipeline_routes_seeded_questions(qmem):
    from conftest import QUESTIONS

    expected = {"direct": 2, "llm": 3, "agent": 4}
    for route, q in QUESTIONS.items():
        hits, got = qmem.pipeline.retrieve(q)
        assert got == route, (q, [(h.path, h.relevance, h.coverage) for h in hits])
        assert qmem.query(q).tier == expected[route]


def test_direct_answer_is_grounded_and_formatted(qmem):
    a = qmem.query("How do refresh tokens rotate?")
    assert a.tier == 2 and not a.llm and not a.cached and a.error is None
    assert a.sources[0] == "auth/jwt/rotation.md"
    for heading in ("## Summary", "## Details", "## Sources", "## Gaps"):
        assert heading in a.text
    assert "`auth/jwt/rotation.md`" in a.text and "- auth/jwt/rotation.md" in a.text
    assert "revoked after a 30 second grace period" in a.text       # quoted from the entry
    assert a.top_score >= S.direct_score and a.latency_ms is not None   # the latency is recorded


def test_direct_answer_is_bounded(tmp_path):
    m = Memory.open(tmp_path, create=True, durable=False)
    try:
        long_body = "Zebra crossing rules apply here. " * 400          # ~13k characters
        m.curate([{"op": "ADD", "path": f"road/rules/zebra_{i}.md", "title": f"Zebra crossing rules {i}",
                   "content": long_body, "reason": "seed"} for i in range(8)])
        s = QuerySettings()
        hits = m.search("zebra crossing rules", 10)
        a = tiers.direct_answer(m.tree, "zebra crossing rules", hits, s, 0.0)
        assert len(a.sources) == s.direct_max_entries
        details = a.text.split("## Details")[1].split("## Sources")[0]
        bodies = [chunk.split("\n\n", 1)[1].strip() for chunk in details.split("### ")[1:]]
        assert len(bodies) == s.direct_max_entries
        assert all(s.direct_max_chars - 100 < len(b) <= s.direct_max_chars for b in bodies)
    finally:
        m.close()


def test_out_of_domain_needs_no_llm_and_is_fast(tmp_path):
    m = Memory.open(tmp_path, create=True, durable=False)
    try:
        m.curate([{"op": "ADD", "path": f"garden/plants/plant_{i}.md", "title": f"Plant {i} watering",
                   "content": f"Plant number {i} needs water every {i % 7 + 1} days in summer.", "reason": "seed"}
                  for i in range(S.ood_min_entries)])
        a = m.query("quantum chromodynamics lattice simulation")
        assert a.tier == 2 and a.out_of_domain and a.sources == [] and not a.llm
        assert tiers.NOT_IN_MEMORY in a.text
        b = m.query("how often does plant 3 need water")
        assert not b.out_of_domain and b.sources
    finally:
        m.close()

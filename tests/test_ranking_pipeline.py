"""Ranking as one declared pipeline (tree/ranking/pipeline.py): the search runs ``STEPS`` in order,
each step once; a step left out is the step switched off by its setting; ablation's arms and the
docs' table come from the same list."""

from __future__ import annotations

import dataclasses
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.benchmarks import load_benchmark

from memgrove import Memory
from memgrove.tree.entries.lifecycle import PROFILES
from memgrove.tree.ranking import docs, pipeline
from memgrove.tree.ranking.gather import RankingInputs
from memgrove.tree.ranking.pipeline import STEPS, WITHOUT, rank, step_named, without

QUESTIONS = ["Which database did I pick for the analytics service?",
             "When did I move the analytics service to ClickHouse?",
             "What did you recommend for backups on 15 March 2024?",
             "Which version of ClickHouse runs the analytics service?",
             "What did I say about the dashboard before the migration?"]


def _chat() -> list[dict]:
    """A user and an AI assistant over three days: questions, replies repeating their words, a
    standing rule and a preference, a long message that is curated in parts, dates."""
    long = " ".join(["The migration plan for the analytics service covers the ClickHouse cluster, the"
                     " dashboard queries and the nightly backups, step by step."] * 12)
    said = [("user", "I picked ClickHouse as the database for my analytics service.", "2024-03-15"),
            ("assistant", "ClickHouse is a good database for an analytics service; back it up nightly.", "2024-03-15"),
            ("user", "Always include version numbers when I ask about databases.", "2024-03-15"),
            ("assistant", "Noted: I will include version numbers for every database.", "2024-03-15"),
            ("user", "When should I run the backups for the analytics database?", "2024-03-16"),
            ("assistant", "Shall I schedule the nightly backups of the analytics database? Which night suits you?",
             "2024-03-16"),
            ("assistant", "Run the backups of the analytics database at night, before the dashboard refresh.",
             "2024-03-16"),
            ("user", long, "2024-03-16"),
            ("user", "I prefer short answers about the dashboard.", "2024-03-17"),
            ("user", "We moved the analytics service to ClickHouse 24.3 on 17 March.", "2024-03-17"),
            ("assistant", "Great: ClickHouse 24.3 now serves the analytics service and its dashboard.",
             "2024-03-17")]
    return [{"id": str(i), "speaker": role, "role": role, "text": text, "session": f"session_{day[-1]}",
             "time": day} for i, (role, text, day) in enumerate(said, 1)]


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory, suite_engine: str):   # one tree per engine
    with Memory.open(tmp_path_factory.mktemp("pipeline") / "m", create=True, durable=False,
                     semantic_weight=0.0, proximity_weight=0.6, cover_weight=0.5) as m:
        m.ingest(conversation={"id": "c1", "messages": _chat()})
        now = datetime.now(timezone.utc)
        m.tree._clock = lambda: now         # recency reads the clock: one now for every ranking compared
        yield m


def _rank(tree, question: str, steps, settings) -> list[tuple[str, float]]:
    """The pipeline over the engine's candidates for ``question``, as the search runs it."""
    raw = tree._engine_search(question, 40)
    idf = tree.engine.idf(tree.engine.terms(question))
    inputs = RankingInputs(settings, tree.catalog, tree.signals, tree.root, tree._clock,
                           lambda paths: tree._indexed_terms(paths, {}), None)
    return rank(question, raw, idf, 10, PROFILES[settings.profile], inputs, steps).order


def test_the_search_runs_each_step_of_the_list_once_in_order(mem: Memory) -> None:
    ran: list[str] = []

    def recorded(step):
        def run(t, st):
            ran.append(step.name)
            return step.run(t, st)
        return dataclasses.replace(step, run=run)

    tree = mem.tree
    plain = [(h.path, h.score) for h in tree.search(QUESTIONS[0])]
    tree.ranking_steps = tuple(recorded(s) for s in STEPS)
    try:
        assert [(h.path, h.score) for h in tree.search(QUESTIONS[0])] == plain
    finally:
        del tree.ranking_steps
    assert ran == [s.name for s in STEPS]


def test_a_question_visits_each_file_of_ranking_once_in_order(mem: Memory) -> None:
    """The files of tree/ranking/ a search's calls enter, in order, each once: the runner
    (pipeline.py), the table's arithmetic (table.py) and the signals' store aside."""
    here = Path(pipeline.__file__).parent
    entered: list[str] = []

    def profile(frame, event, arg):
        f = Path(frame.f_code.co_filename)
        if event == "call" and f.parent == here and f.name not in ("pipeline.py", "table.py", "signals.py"):
            if not entered or entered[-1] != f.name:
                entered.append(f.name)

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        mem.tree.search(QUESTIONS[0])
    finally:
        sys.setprofile(old)
    assert entered == ["cut.py", "dense.py", "gather.py", "own.py", "lifts.py", "by_signals.py", "by_meaning.py",
                       "coverage.py", "rules.py", "hits.py"]
    modules = [s.run.__module__ for s in STEPS]
    assert modules == sorted(modules, key=modules.index)         # a module's steps stand together


@pytest.mark.parametrize("step", [s for s in STEPS if s.off and WITHOUT not in s.off], ids=lambda s: s.name)
def test_a_step_left_out_is_the_step_switched_off(mem: Memory, step) -> None:
    """The pipeline without a step ranks as the whole pipeline with the step's settings at their
    neutral values: no other step depends on it, and its setting switches nothing else."""
    tree = mem.tree
    base = tree.settings
    neutral = base.replace(**{k: v for off in step.off for k, v in off.items()})
    moved = 0
    for q in QUESTIONS:
        left_out = _rank(tree, q, without(step.name), base)
        assert left_out == _rank(tree, q, STEPS, neutral), q
        moved += left_out != _rank(tree, q, STEPS, base)
    if step.name not in ("meaning", "dense_leg"):       # no model needed here: meaning is off
        assert moved, f"{step.name} moves nothing here: the test does not exercise it"


def test_one_line_removes_a_step_without_a_setting(mem: Memory) -> None:
    tree = mem.tree
    q = QUESTIONS[4]
    whole, less = _rank(tree, q, STEPS, tree.settings), _rank(tree, q, without("one_per_source"), tree.settings)
    assert sorted(whole) == sorted(less)                        # the same hits and scores, in another order
    with pytest.raises(KeyError, match="no ranking step"):
        without("no_such_step")
    assert step_named("one_per_source").off == (WITHOUT,)


def test_the_docs_show_the_list() -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "ranking.md"
    text = doc.read_text(encoding="utf-8")
    assert docs.render(text) == text, "docs/ranking.md: run python -m memgrove.tree.ranking.docs --write"
    for s in STEPS:
        assert f"| `{s.name}` |" in text
        assert (doc.parent.parent / s.measured).exists(), s.measured


def test_ablation_iterates_the_same_list() -> None:
    ablation = load_benchmark("ablation")
    arms = {a.name: a for a in ablation.ARMS}
    for s in STEPS:
        for arm in ablation.step_arms(s):
            on = s.name not in ablation.OWN_RUNS and ablation._on_by_default(arm)
            assert (arm.name in arms) == on, arm.name
    assert arms["one_per_source=off"].without == "one_per_source"
    assert ablation.parse_arm("validity=off").without == "validity"
    assert ablation.NO_MEANING.tree == {"semantic_weight": 0.0}

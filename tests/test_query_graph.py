"""The query pipeline as a LangGraph graph: its shape, its parity with ``Memory.query``, the cold path.

The snapshot in tests/snapshots/query_graph.mmd is the graph's mermaid
drawing. After an intended change of the graph's shape, regenerate it with

    MEMGROVE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_query_graph.py -k snapshot

and review the diff.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import QUERY_SEED, QUESTIONS
from helpers.openai_server import text
from helpers.scripted_model import ScriptedChatModel, tool_call

from memgrove import Memory
from memgrove.graphs import build_query_graph, tiers

SNAPSHOT = Path(__file__).parent / "snapshots" / "query_graph.mmd"


def seeded(path: Path, model=None) -> Memory:
    m = Memory.open(path, create=True, durable=False, model=model)
    m.curate(QUERY_SEED)
    return m


def run(graph, question: str) -> tiers.Answer:
    return tiers.Answer.from_dict(graph.invoke({"question": question})["answer"])


# -- shape ----------------------------------------------------------------------------

def test_graph_shape_matches_snapshot(mem):
    drawn = build_query_graph(mem).get_graph().draw_mermaid()
    if os.environ.get("MEMGROVE_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(drawn)
    assert drawn == SNAPSHOT.read_text()


def test_search_and_fingerprint_both_start_from_start(mem):
    g = build_query_graph(mem).get_graph()
    from_start = {(e.target, e.conditional) for e in g.edges if e.source == "__start__"}
    assert from_start == {("fingerprint", False), ("search", False)}
    into_exact = {e.source for e in g.edges if e.target == "exact_cache"}
    assert into_exact == {"fingerprint", "search"}
    # every tier node ends in finish, and finish in END
    for node in ("out_of_domain", "direct_answer", "llm_answer", "agent_answer", "exact_cache", "fuzzy_cache"):
        assert any(e.source == node and e.target == "finish" for e in g.edges), node
    assert [e.target for e in g.edges if e.source == "finish"] == ["__end__"]


def test_agent_is_a_bounded_subgraph(mem):
    g = build_query_graph(mem).get_graph(xray=True)
    names = set(g.nodes)
    assert {"agent:model", "agent:tools"} <= names


def test_both_branches_run_in_the_first_step(qmem):
    steps = list(build_query_graph(qmem).stream({"question": QUESTIONS["direct"]}, stream_mode="updates"))
    assert {next(iter(s)) for s in steps[:2]} == {"fingerprint", "search"}
    assert [next(iter(s)) for s in steps[2:]] == ["exact_cache", "fuzzy_cache", "classify", "direct_answer", "finish"]


def test_graph_over_a_context_tree_and_async(qmem):
    g = build_query_graph(qmem.tree)
    a = tiers.Answer.from_dict(asyncio.run(g.ainvoke({"question": QUESTIONS["direct"]}))["answer"])
    assert (a.tier, a.sources[0]) == (2, "auth/jwt/rotation.md")


def test_graph_empty_question_raises_clearly(qmem):
    from memgrove.tree.base.errors import MemgroveError

    with pytest.raises(MemgroveError, match="empty"):
        build_query_graph(qmem).invoke({"question": "   "})


# -- the graph and Memory.query agree -------------------------------------------------------

SEQUENCE = [QUESTIONS["direct"], "how do REFRESH tokens   rotate?", "how do the refresh tokens rotate now",
            QUESTIONS["llm"], QUESTIONS["agent"], QUESTIONS["llm"], "Ben leads the payments team?",
            "quantum chromodynamics lattice"]


def _script():
    return [tool_call("read_entry", path="team/people/ana.md"), "## Summary\nAna (team/people/ana.md)"]


@pytest.mark.parametrize("with_model", [False, True], ids=["no-model", "scripted-model"])
def test_graph_and_memory_query_agree(tmp_path, monkeypatch, with_model):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    replies = ["## Summary\nAna owns billing (team/people/ana.md)"] + _script()

    def model():
        return ScriptedChatModel(replies=list(replies)) if with_model else None

    via_graph = seeded(tmp_path / "g", model=model())
    via_query = seeded(tmp_path / "q", model=model())
    try:
        g = via_graph.graph()
        for q in SEQUENCE:
            a, b = run(g, q), via_query.query(q)
            assert (a.tier, a.sources, a.cached, a.llm, a.out_of_domain, a.text) == \
                   (b.tier, b.sources, b.cached, b.llm, b.out_of_domain, b.text), q
            assert a.top_score == pytest.approx(b.top_score)
        tiers_seen = [run(g, q).tier for q in SEQUENCE[:3]]
        assert tiers_seen == [0, 0, 1]          # a tier-1 hit is not re-cached under its own wording
    finally:
        via_graph.close()
        via_query.close()


def test_graph_and_memory_query_share_cache_and_log(qmem):
    a = run(build_query_graph(qmem), QUESTIONS["direct"])
    b = qmem.query(QUESTIONS["direct"])
    assert (a.tier, b.tier, b.cached, b.sources) == (2, 0, True, a.sources)
    rows = [json.loads(x) for x in (qmem.home / "query-log.jsonl").read_text().splitlines()]
    assert [(r["tier"], r["cached"]) for r in rows] == [(2, False), (0, True)]


# -- the cold path: no LangChain for tiers 0-2 -------------------------------------------------

PROBE = textwrap.dedent("""
    import json, sys
    from memgrove.cli import cli
    try:
        cli.main(args=sys.argv[1:], prog_name="memgrove", standalone_mode=False)
    finally:
        heavy = sorted({m.split(".")[0] for m in sys.modules if m.startswith(("langchain", "langgraph"))})
        print("HEAVY=" + json.dumps(heavy))
""")


def cli_probe(root: Path, question: str, env_extra: dict | None = None) -> tuple[dict, list[str]]:
    """``memgrove --root ROOT query QUESTION --json`` in a fresh process: (answer, heavy modules imported)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMGROVE_HOME", "MEMGROVE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", PROBE, "--root", str(root), "query", question, "--json"],
                       capture_output=True, text=True, env=env, timeout=60, cwd=str(root))
    assert p.returncode == 0, p.stderr
    body, _, last = p.stdout.rstrip("\n").rpartition("\n")
    assert last.startswith("HEAVY="), p.stdout
    return json.loads(body), json.loads(last[len("HEAVY="):])


def test_cold_cli_tiers_0_to_2_import_no_langchain(tmp_path):
    seeded(tmp_path).close()
    for question, tier in [(QUESTIONS["direct"], 2), (QUESTIONS["direct"].upper(), 0),
                           ("how do the refresh tokens rotate now", 1), (QUESTIONS["llm"], 3)]:
        answer, heavy = cli_probe(tmp_path, question)
        assert answer["tier"] == tier, (question, answer)
        assert heavy == [], (question, heavy)        # no model configured: tier 3 stays extractive and light


def test_cold_cli_escalation_with_a_model_imports_langchain(tmp_path, openai_server):
    seeded(tmp_path).close()
    env = {"MEMGROVE_MODEL": "test-model", "OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "x"}
    # a model is configured, but a tier-2 answer still needs no LangChain
    answer, heavy = cli_probe(tmp_path, QUESTIONS["direct"], env)
    assert (answer["tier"], heavy) == (2, [])
    openai_server.queue(text("## Summary\nAna owns billing (team/people/ana.md)"))
    answer, heavy = cli_probe(tmp_path, QUESTIONS["llm"], env)
    assert (answer["tier"], answer["llm"], answer["sources"]) == (3, True, ["team/people/ana.md"])
    assert answer["text"] == "## Summary\nAna owns billing (team/people/ana.md)"
    assert "langchain_core" in heavy and "langchain_openai" in heavy and "langgraph" in heavy
    assert len(openai_server.requests) == 1
    # the same question again is tier 0, and the light path again
    answer, heavy = cli_probe(tmp_path, QUESTIONS["llm"], env)
    assert (answer["tier"], answer["cached"], answer["llm"]) == (0, True, True)
    assert heavy == []

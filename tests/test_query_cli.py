"""``memgrove query`` and ``memgrove stats``, and the query log they share.

Each feature twice where it matters: through the library (``Memory.query`` /
``Memory.stats``) and through the CLI (click's ``CliRunner``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import QUESTIONS
from helpers.openai_server import status

from memgrove import Memory
from memgrove.cli import cli
from memgrove.graphs.tiers import Answer

FIELDS = {"question", "answer", "text", "tier", "sources", "evidence", "top_score", "latency_ms", "cached",
          "out_of_domain", "llm", "error"}


@pytest.fixture
def runner(qmem, monkeypatch):
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    r = CliRunner()
    r.root = str(qmem.home.parent)
    return r


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(cli, ["--root", runner.root, *args], catch_exceptions=False)


def ask_json(runner: CliRunner, question: str) -> dict:
    res = invoke(runner, "query", question, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def log_rows(home: Path) -> list[dict]:
    return [json.loads(line) for line in (home / "query-log.jsonl").read_text().splitlines()]


# -- memgrove query ----------------------------------------------------------------------

def test_query_json_has_every_answer_field(runner):
    data = ask_json(runner, QUESTIONS["direct"])
    assert set(data) == FIELDS == set(Answer.FIELDS)
    assert data["question"] == QUESTIONS["direct"]
    assert (data["tier"], data["cached"], data["llm"], data["error"]) == (2, False, False, None)
    assert data["sources"][0] == "auth/jwt/rotation.md"
    assert 0.85 <= data["top_score"] <= 1.0
    assert isinstance(data["latency_ms"], float) and math.isfinite(data["latency_ms"])   # a time: its size is a benchmark's
    headings = [line for line in data["text"].splitlines() if line.startswith("## ")]
    assert headings == ["## Summary", "## Details", "## Sources", "## Gaps"]
    assert "- auth/jwt/rotation.md" in data["text"]


def test_second_identical_query_is_tier0_cached(runner):
    first = ask_json(runner, QUESTIONS["direct"])
    second = ask_json(runner, QUESTIONS["direct"])
    assert (second["tier"], second["cached"]) == (0, True)
    assert (second["text"], second["sources"]) == (first["text"], first["sources"])


def tier_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("[tier "))


def test_query_table_output(runner):
    res = invoke(runner, "query", QUESTIONS["direct"], "--verbose")
    assert res.exit_code == 0
    assert res.stdout.startswith("## Summary\n")
    line = tier_line(res.stdout)
    assert line.startswith("[tier 2 · search, quoted (no LLM) · ") and "ms · top score 0.9" in line
    again = tier_line(invoke(runner, "query", QUESTIONS["direct"]).stdout)
    assert again.startswith("[tier 0 · exact cache · ")


def test_query_without_llm_says_so(runner):
    res = invoke(runner, "query", QUESTIONS["llm"])
    assert res.exit_code == 0
    assert "[tier 3 · search, quoted (no LLM configured: the LLM call did not run)" in res.stdout
    assert "LLM error" not in res.stdout
    assert "No LLM is configured" in invoke(runner, "query", QUESTIONS["llm"], "--verbose").stdout


def test_query_shows_the_llm_error(runner, monkeypatch, openai_server):
    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    openai_server.queue(status(401))
    res = invoke(runner, "query", QUESTIONS["llm"])
    assert res.exit_code == 0
    err_line = next(line for line in res.stdout.splitlines() if line.startswith("[LLM error"))
    assert err_line.startswith("[LLM error: ") and "AuthenticationError (HTTP 401)" in err_line


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_one_line_error(runner, question):
    res = runner.invoke(cli, ["--root", runner.root, "query", question])
    assert res.exit_code != 0
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == ["Error: the question is empty"]


def test_no_memory_is_one_line_error(tmp_path, monkeypatch):
    empty = tmp_path / "nowhere"
    empty.mkdir()
    monkeypatch.setenv("MEMGROVE_HOME", str(empty))
    res = CliRunner().invoke(cli, ["query", "anything at all"])
    assert res.exit_code != 0 and res.stdout == ""
    [line] = res.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "memgrove init" in line
    res = CliRunner().invoke(cli, ["query", "anything at all", "--json"])     # the same error, as JSON
    assert res.exit_code != 0 and res.stderr == ""
    assert json.loads(res.stdout)["error"]["code"] == "tree_not_found"
    assert not (empty / ".memgrove").exists()          # asking does not create a memory


def test_library_empty_question_raises_memgrove_error(qmem):
    from memgrove.tree.base.errors import MemgroveError

    with pytest.raises(MemgroveError, match="empty"):
        qmem.query("  ")
    assert not (qmem.home / "query-log.jsonl").exists()


# -- the query log and memgrove stats ------------------------------------------------------------

def test_query_log_has_one_line_per_answer(qmem):
    asked = [QUESTIONS["direct"], QUESTIONS["direct"], "how do the refresh tokens rotate now", QUESTIONS["llm"],
             QUESTIONS["agent"]]
    answers = [qmem.query(q) for q in asked]
    rows = log_rows(qmem.home)
    assert len(rows) == len(asked)
    for row, a in zip(rows, answers):
        assert row["question"] == a.question
        assert (row["tier"], row["cached"], row["llm"], row["error"]) == (a.tier, a.cached, a.llm, a.error)
        assert row["latency_ms"] == pytest.approx(a.latency_ms, abs=1e-3)      # the answer's own latency is logged
        assert row["sources"] == a.sources and row["at"].endswith("Z")
    assert [(r["tier"], r["cached"]) for r in rows] == [(2, False), (0, True), (1, True), (3, False), (4, False)]


def test_query_log_through_cli_and_graph(runner, qmem):
    ask_json(runner, QUESTIONS["direct"])
    ask_json(runner, QUESTIONS["direct"])
    qmem.graph().invoke({"question": QUESTIONS["agent"]})
    rows = log_rows(qmem.home)
    assert [(r["tier"], r["cached"]) for r in rows] == [(2, False), (0, True), (4, False)]


def test_stats_counts_tiers(runner, qmem):
    for q in [QUESTIONS["direct"], QUESTIONS["direct"], QUESTIONS["direct"], "how do the refresh tokens rotate now",
              QUESTIONS["llm"], QUESTIONS["agent"]]:
        qmem.query(q)
    lib = qmem.stats()
    res = invoke(runner, "stats", "--json")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data == lib
    assert data["queries"] == 6
    counts = {t["tier"]: t["count"] for t in data["tiers"]}
    assert counts == {0: 2, 1: 1, 2: 1, 3: 1, 4: 1}
    shares = {t["tier"]: t["share"] for t in data["tiers"]}
    assert shares[0] == pytest.approx(2 / 6) and sum(shares.values()) == pytest.approx(1.0)
    # the percentiles are the tier's own logged latencies (nearest rank), whatever their size
    logged: dict[int, list[float]] = {}
    for row in log_rows(qmem.home):
        logged.setdefault(row["tier"], []).append(row["latency_ms"])
    for t in data["tiers"]:
        lat = sorted(logged[t["tier"]])
        assert (t["p50_ms"], t["p95_ms"], t["p99_ms"]) == (lat[round((len(lat) - 1) / 2)], lat[round(0.95 * (len(lat) - 1))],
                                                           lat[round(0.99 * (len(lat) - 1))])
    assert (data["llm"], data["errors"], data["out_of_domain"]) == (0, 0, 0)


def test_stats_table_and_empty_log(runner):
    res = invoke(runner, "stats")
    assert res.exit_code == 0 and "no queries logged yet" in res.stdout
    data = json.loads(invoke(runner, "stats", "--json").stdout)
    assert data.pop("vectors")["meaning"] is False          # how far entries' vectors are (test_vector_backlog.py)
    assert data == {"queries": 0, "damaged_lines": 0, "tiers": [], "out_of_domain": 0, "llm": 0, "errors": 0}
    ask_json(runner, QUESTIONS["direct"])
    ask_json(runner, QUESTIONS["direct"])
    table = invoke(runner, "stats").stdout
    assert "2 queries" in table and "0 exact cache" in table and "2 BM25" in table
    assert "50%" in table


def test_stats_skips_a_torn_log_line(qmem):
    qmem.query(QUESTIONS["direct"])
    with (qmem.home / "query-log.jsonl").open("a") as fh:
        fh.write('{"tier": 2, "latency')                 # a crash mid-append
    assert qmem.stats()["queries"] == 1


def test_stats_counts_llm_answers_and_errors(tmp_path, monkeypatch, openai_server):
    from conftest import QUERY_SEED
    from helpers.openai_server import text

    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    openai_server.queue(status(401), text("## Summary\nAna (team/people/ana.md)"))
    mem = Memory.open(tmp_path, create=True, durable=False)
    try:
        mem.curate(QUERY_SEED)
        assert mem.query(QUESTIONS["llm"]).error
        assert mem.query(QUESTIONS["llm"]).llm
        s = mem.stats()
        assert (s["queries"], s["llm"], s["errors"]) == (2, 1, 1)
    finally:
        mem.close()

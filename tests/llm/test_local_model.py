"""Tiers 3 and 4 and the LLM curator against a real llama.cpp server (``make test-llm``), opt-in.

A real llama.cpp server (tests/helpers/llama_server.py: xllamacpp serving SmolLM2-135M-Instruct)
on 127.0.0.1. Skipped unless ``MEMGROVE_TEST_LLM=1`` (the Makefile target sets it): ``make test``
never starts it.

memgrove builds its own ``ChatOpenAI`` from ``MEMGROVE_MODEL`` and ``OPENAI_BASE_URL`` (no key),
as a user pointing it at llama.cpp, Ollama or vLLM would. SmolLM2-135M answers in plain text and
rarely calls a tool: the tests hold what must hold whatever it says (an answer through the
server, nothing lost or half-written, the run reported), not what it says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import QUERY_SEED, QUESTIONS
from helpers import llama_server
from helpers.memgrove_server import free_port

from memgrove import Memory
from memgrove.graphs.settings import CurateSettings

OPT_IN = "MEMGROVE_TEST_LLM"
pytestmark = pytest.mark.skipif(os.environ.get(OPT_IN) != "1",
                                reason=f"a real local model: opt-in with `make test-llm` ({OPT_IN}=1)")


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("xllamacpp", reason="`make test-llm` installs xllamacpp")
    srv = llama_server.start(free_port(), tmp_path_factory.mktemp("llama") / "llama.log")
    try:
        yield srv
    finally:
        llama_server.stop(srv)


@pytest.fixture
def llm_env(llama, monkeypatch: pytest.MonkeyPatch):
    """memgrove's model is the local server's: ``MEMGROVE_MODEL`` and ``OPENAI_BASE_URL``, no key."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMGROVE_MODEL", "smollm2-135m")
    monkeypatch.setenv("OPENAI_BASE_URL", llama.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return llama


SLOW = "[query]\nllm_timeout = 600.0\nllm_retries = 0\n"   # a loaded 2-core machine: minutes, not seconds
CONV = {"id": "c1", "messages": [
    {"id": "m1", "speaker": "Ana", "time": "2026-03-02T09:15:00Z", "text": "Our billing service runs on Postgres 16."},
    {"id": "m2", "speaker": "Ben", "time": "2026-03-02T09:16:00Z", "text": "And the deploy day is Tuesday."},
]}


def seeded(root: Path) -> Memory:
    m = Memory.open(root, create=True, durable=False)
    (m.home / "config.toml").write_text(SLOW, encoding="utf-8")
    m.close()
    m = Memory.open(root, durable=False)
    m.curate(QUERY_SEED)
    return m


def test_tier3_answers_through_the_real_server(tmp_path, llm_env):
    with seeded(tmp_path) as mem:
        a = mem.query(QUESTIONS["llm"])
        print(f"\ntier 3 answered: {a.answer!r} (sources {a.sources})")
        assert (a.tier, a.llm, a.error, a.cached) == (3, True, None, False), a
        assert a.answer.strip() and a.text.strip()                       # the model's words
        assert all(mem.tree.exists(p) for p in a.sources)                # only entries it was shown
        again = mem.query(QUESTIONS["llm"])                              # an LLM answer is cached
        assert (again.tier, again.cached, again.text) == (0, True, a.text)


def test_tier4_runs_the_agent_loop_through_the_real_server(tmp_path, llm_env):
    with seeded(tmp_path) as mem:
        a = mem.query(QUESTIONS["agent"])
        print(f"\ntier 4 answered: {a.answer!r} (llm {a.llm}, error {a.error})")
        assert a.tier == 4 and a.answer.strip()
        # the model answered (with or without its tools), or its failure is named in the answer
        assert a.llm or (a.error and a.error in a.text), a


def test_the_cli_query_uses_the_local_server_without_a_key(tmp_path, llm_env):
    seeded(tmp_path).close()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MEMGROVE_HOME")}
    out = subprocess.run([sys.executable, "-m", "memgrove.cli", "--root", str(tmp_path), "query",
                          QUESTIONS["llm"], "--json"], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    a = json.loads(out.stdout)
    assert (a["tier"], a["llm"], a["error"]) == (3, True, None) and a["answer"].strip()


def test_the_curator_handles_a_model_that_answers_without_tool_calls(tmp_path, llm_env):
    with seeded(tmp_path) as mem:
        before = len(mem.history(limit=None))
        report = mem.learn(conversation=CONV, settings=CurateSettings(llm_timeout=600.0, llm_retries=0, max_steps=3))
        assert report.curator == "llm" and report.chunks == 1 and not report.stopped, report.summary
        assert 1 <= report.model_calls <= 3 and report.prompt_tokens > 0
        print(f"\nthe curator's report: {report.summary}\nnotes: {report.notes}")
        # SmolLM2 (greedy, the pinned llama.cpp) answers this chunk in prose, with no tool call: the
        # chunk ends with nothing written, its words kept as the chunk's note, and no error
        assert (report.applied, report.errors) == ([], []) and len(report.notes) == 1 and report.notes[0].strip()
        assert "nothing written" in report.summary
        # whatever it wrote is in the tree and journaled, once; the tree checks out
        assert len(mem.history(limit=None)) == before + len(report.applied)
        assert all(mem.tree.exists(r.path) for r in report.applied if r.op not in ("DELETE", "ARCHIVE", "MERGE"))
        assert mem.doctor().ok

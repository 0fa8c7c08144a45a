"""``make test-llm``: the LLM paths against a real local model, opt-in.

A real llama.cpp server (tests/helpers/llama_server.py: xllamacpp serving SmolLM2-135M-Instruct)
on 127.0.0.1, reached by memgrove's own ``ChatOpenAI`` through ``OPENAI_BASE_URL`` with no key.
A 135M model is weak: these tests prove the protocol path end to end, not the answers' quality.
Skipped unless ``MEMGROVE_TEST_LLM=1`` (the Makefile target sets it): ``make test`` never runs them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import llama_server
from helpers.memgrove_server import free_port

OPT_IN = "MEMGROVE_TEST_LLM"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(OPT_IN) == "1":
        return
    skip = pytest.mark.skip(reason=f"a real local model: opt-in with `make test-llm` ({OPT_IN}=1)")
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
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

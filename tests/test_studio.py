"""Studio out of the box: ``cp .env.example .env && langgraph dev`` in a fresh clone.

The example configures no model (so no "key not set" failures: tiers 0–2 and
extractive answers), and a server started with no ``MEMGROVE_HOME`` serves a
memory that already holds the bundled sample. The last test starts the real
``langgraph dev`` with the repo's ``.env.example`` as its ``.env``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from dotenv import dotenv_values
from helpers.memgrove_server import inherited_env
from test_langgraph_dev import DevServer, _DROP_PREFIXES, free_port, server_config, stop, wait_ready

from memgrove import Memory

REPO = Path(__file__).resolve().parent.parent
ENV_EXAMPLE = REPO / ".env.example"
SAMPLE_QUESTION = "What is the name of Ben's dog?"          # routes to tier 4 on the sample
KEYWORDS = "reuse detection token family"                   # tier 2 on the sample


def load_deployment(monkeypatch, cwd: Path):
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    monkeypatch.delenv("MEMGROVE_MODEL", raising=False)
    spec = importlib.util.spec_from_file_location("memgrove_studio_deployment", REPO / "graphs" / "deployment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_example_configures_no_model_and_no_empty_key():
    values = dotenv_values(ENV_EXAMPLE)
    assert not {k for k in values if k.startswith(("MEMGROVE_MODEL", "OPENAI_"))}, values
    assert all(v for v in values.values()), values          # nothing set to an empty value


def test_deployment_in_a_fresh_folder_serves_the_sample(tmp_path, monkeypatch):
    d = load_deployment(monkeypatch, tmp_path)
    try:
        assert d.memory.home == (tmp_path / ".memgrove").resolve()
        n = d.memory.count()
        assert n > 50
        a = d.query.invoke({"question": KEYWORDS})["answer"]
        assert a["tier"] == 2 and "revoke the whole token family" in a["text"], a
        b = d.query.invoke({"messages": [{"role": "user", "content": SAMPLE_QUESTION}]})["answer"]
        assert b["tier"] == 4 and b["error"] is None and not b["llm"], b        # extractive: no model
    finally:
        d.memory.close()
    again = load_deployment(monkeypatch, tmp_path)           # a restart adds nothing
    try:
        assert again.memory.count() == n
    finally:
        again.memory.close()


def test_deployment_never_adds_the_sample_to_a_memory_with_entries(tmp_path, tmp_path_factory, monkeypatch):
    m = Memory.open(tmp_path, create=True, durable=False)
    m.curate([{"op": "ADD", "path": "mine/notes/one.md", "title": "Mine", "content": "My own note.",
               "reason": "seed"}])
    before = m.count()
    m.close()
    d = load_deployment(monkeypatch, tmp_path)
    try:
        assert d.memory.count() == before and not d.memory.search("token family")
    finally:
        d.memory.close()
    other = tmp_path_factory.mktemp("named")
    monkeypatch.setenv("MEMGROVE_HOME", str(other))        # a named project is never filled either
    spec = importlib.util.spec_from_file_location("memgrove_studio_deployment2", REPO / "graphs" / "deployment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        assert module.memory.count() == 0
    finally:
        module.memory.close()


def test_langgraph_dev_with_the_example_env_answers_from_the_sample(tmp_path):
    import subprocess
    import sys

    import httpx

    config = server_config(tmp_path)
    cfg = json.loads(config.read_text(encoding="utf-8"))
    (tmp_path / ".env").write_text(ENV_EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    cfg["env"] = str(tmp_path / ".env")
    config.write_text(json.dumps(cfg), encoding="utf-8")
    workdir = tmp_path / "clone"
    workdir.mkdir()
    env = inherited_env(_DROP_PREFIXES)
    env.update(NO_PROXY="127.0.0.1,localhost", LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true",
               LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false", PYTHONUNBUFFERED="1")
    log = tmp_path / "server.log"
    cmd = [sys.executable, "-m", "langgraph_cli", "dev", "--no-browser", "--host", "127.0.0.1",
           "--port", str(free_port()), "--config", str(config)]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    dev = DevServer(process, log, workdir, llm=None)
    try:
        wait_ready(dev)
        first = dev.run("query", {"question": KEYWORDS})["answer"]
        assert first["tier"] == 2 and "revoke the whole token family" in first["text"], first
        assert any(p.startswith("conversations/team_chat/") for p in first["sources"]), first
        chat = dev.run("query", {"messages": [{"type": "human", "content": SAMPLE_QUESTION}]})
        a = chat["answer"]
        assert a["tier"] == 4 and a["error"] is None and not a["llm"], a           # no "key not set"
        assert chat["messages"][-1]["type"] == "ai" and chat["messages"][-1]["content"] == a["text"]
        assert (workdir / ".memgrove" / "tree" / "conversations" / "team_chat").is_dir()
        assert "curated the bundled sample" in dev.log_text(tail=10**7)
    except httpx.HTTPError as exc:  # pragma: no cover - shown with the server's log
        pytest.fail(f"{exc}\n{dev.log_text()}")
    finally:
        stop(dev)

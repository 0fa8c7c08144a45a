"""The graphs of ``langgraph.json`` served by the real ``langgraph dev`` server, over its HTTP API.

One server per module (per xdist worker): ``langgraph dev`` as a subprocess on
a free port of 127.0.0.1, its memory (``MEMGROVE_HOME``) a temp project seeded
with the sample conversation, its model (``MEMGROVE_MODEL``) the canned
OpenAI-protocol server of ``tests/helpers/openai_server.py``. Nothing leaves
127.0.0.1: the CLI's analytics ping, the PyPI version check and LangSmith
tracing are switched off in the server's environment.

The server runs in a temp folder (``.langgraph_api/`` lands there) with a copy
of the repo's ``langgraph.json`` whose graph paths are made absolute: the
server resolves ``./graphs/deployment.py`` against its working directory, not
against the config file. The copy leaves out ``"env": ".env"``, because values
from a developer's ``.env`` would override the test's environment (the server
lets ``.env`` win): a real model, a real key, or a real ``MEMGROVE_HOME``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from helpers import engine_choice
from helpers.memgrove_server import inherited_env
from helpers.openai_server import OpenAIServer, serve, text, tool_calls

from memgrove import Memory

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "langgraph.json"
SAMPLE = REPO / "memgrove" / "data" / "sample" / "conversation.json"
GRAPHS = {"query", "curate", "agent"}
READY_TIMEOUT = 60.0
RUN_TIMEOUT = 60.0

# a keyword question over the sample conversation that routes to tier 2 (quoted evidence, no LLM),
# so its answer is cached and asking again is a tier-0 hit; checked against Memory.query beforehand
TIER2_QUESTION = "reuse detection token family"

# the server's environment: inherited, minus anything that could reach beyond 127.0.0.1
_DROP_PREFIXES = ("LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_", "OPENAI_", "MEMGROVE_", "LANGFUSE_")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(home: Path, llm: OpenAIServer) -> dict[str, str]:
    env = inherited_env(_DROP_PREFIXES)
    env.update(
        MEMGROVE_HOME=str(home),
        MEMGROVE_MODEL="test-model",
        OPENAI_BASE_URL=llm.base_url,
        OPENAI_API_KEY="x",
        NO_PROXY="127.0.0.1,localhost",
        LANGGRAPH_CLI_NO_ANALYTICS="1",     # `langgraph dev` posts usage analytics otherwise
        LANGGRAPH_NO_VERSION_CHECK="true",  # ... and asks PyPI for the latest langgraph-api
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        PYTHONUNBUFFERED="1",
    )
    return env


def server_config(folder: Path) -> Path:
    """The repo's langgraph.json with absolute graph paths and no ``.env`` (see the module docstring)."""
    cfg = json.loads(CONFIG.read_text(encoding="utf-8"))
    assert set(cfg["graphs"]) == GRAPHS, cfg["graphs"]
    graphs = {}
    for name, spec in cfg["graphs"].items():
        path, _, var = spec.rpartition(":")
        assert (REPO / path).is_file(), f"langgraph.json: graph {name!r} names a missing file {path}"
        graphs[name] = f"{(REPO / path).resolve()}:{var}"
    cfg["graphs"] = graphs
    cfg["dependencies"] = [str((REPO / d).resolve()) for d in cfg.get("dependencies", [])]
    cfg.pop("env", None)
    out = folder / "langgraph.json"
    out.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    return out


@dataclass
class DevServer:
    process: subprocess.Popen
    log: Path
    home: Path            # MEMGROVE_HOME; the memory is home/.memgrove
    llm: OpenAIServer
    client: httpx.Client | None = None

    @property
    def tree(self) -> Path:
        return self.home / ".memgrove" / "tree"

    def log_text(self, tail: int = 20_000) -> str:
        try:
            raw = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(no server log: {exc})"
        return re.sub(r"\x1b\[[0-9;]*m", "", raw)[-tail:]

    def api_port(self) -> int | None:
        """The port the server announced ("API: http://127.0.0.1:PORT"); it moves when ours got taken."""
        m = re.search(r"API: http://127\.0\.0\.1:(\d+)", self.log_text(tail=10**7))
        return int(m.group(1)) if m else None

    def run(self, assistant_id: str, input: dict[str, Any]) -> dict[str, Any]:
        """POST /runs/wait; the run's final state. A failed run fails the test with its error and the log."""
        assert self.client is not None
        r = self.client.post("/runs/wait", json={"assistant_id": assistant_id, "input": input},
                             timeout=RUN_TIMEOUT)
        assert r.status_code == 200, f"/runs/wait {assistant_id}: HTTP {r.status_code} {r.text}\n{self.log_text()}"
        out = r.json()
        assert "__error__" not in out, (f"run of {assistant_id!r} failed: {out['__error__']}\n"
                                        f"--- langgraph dev log ---\n{self.log_text()}")
        return out

    def script(self, *replies: dict[str, Any]) -> int:
        """Queue the model's replies for the next run; returns the index of its first request."""
        with self.llm._lock:
            self.llm.replies.clear()       # leftovers of a test that failed halfway
        self.llm.queue(*replies)
        return len(self.llm.requests)


def start(folder: Path, home: Path, llm: OpenAIServer) -> DevServer:
    workdir = folder / "server"            # cwd: .langgraph_api/ goes here
    workdir.mkdir()
    config = server_config(folder)
    log = folder / "server.log"            # beside the server's folder, never inside a watched one
    # this interpreter, not the `langgraph` script: a venv copied from another checkout keeps that
    # checkout's interpreter in the script's first line, and the server would run its memgrove
    cmd = [sys.executable, "-m", "langgraph_cli", "dev", "--no-browser", "--host", "127.0.0.1", "--port", str(free_port()),
           "--config", str(config)]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, cwd=workdir, env=server_env(home, llm), stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    return DevServer(process, log, home, llm)


def wait_ready(dev: DevServer) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if dev.process.poll() is not None:
            pytest.fail(f"langgraph dev exited with status {dev.process.returncode} before it was ready\n"
                        f"--- langgraph dev log ---\n{dev.log_text()}", pytrace=False)
        if "Application startup failed" in dev.log_text(tail=10**7):   # the reloader would wait on
            pytest.fail(f"langgraph dev could not start\n--- langgraph dev log ---\n{dev.log_text()}",
                        pytrace=False)
        port = dev.api_port()
        if port is not None:
            if dev.client is None:
                dev.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10.0, trust_env=False)
            try:
                if dev.client.get("/ok").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    pytest.fail(f"langgraph dev did not answer GET /ok within {READY_TIMEOUT:.0f} s\n"
                f"--- langgraph dev log ---\n{dev.log_text()}", pytrace=False)


def stop(dev: DevServer) -> None:
    if dev.client is not None:
        dev.client.close()
    if dev.process.poll() is None:
        try:
            os.killpg(dev.process.pid, signal.SIGTERM)
            dev.process.wait(10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(dev.process.pid, signal.SIGKILL)
    dev.process.wait(10)
    try:                                   # the reloader's worker, should it outlive its parent
        os.killpg(dev.process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory):
    with running(tmp_path_factory.mktemp("langgraph_dev")) as server:
        yield server


@contextmanager
def running(folder: Path) -> Iterator[DevServer]:
    """`langgraph dev` over a memory holding the sample chat in ``folder``/home, with a scripted
    model on 127.0.0.1; stopped on exit."""
    home = folder / "home"
    with Memory.open(home, create=True) as m:
        m.ingest(conversation=str(SAMPLE))
    with serve() as llm:
        server = start(folder, home, llm)
        try:
            wait_ready(server)
            yield server
        finally:
            stop(server)


def messages_of(state: dict[str, Any]) -> list[dict[str, Any]]:
    return state.get("messages", [])


# -- the tests -------------------------------------------------------------------------------

def test_assistants_are_the_registered_graphs(dev: DevServer):
    r = dev.client.post("/assistants/search", json={})
    assert r.status_code == 200, r.text
    assert {a["graph_id"] for a in r.json()} == GRAPHS


def test_query_graph_answers_from_memory_then_from_the_cache(dev: DevServer):
    llm_calls = len(dev.llm.requests)
    state = dev.run("query", {"question": TIER2_QUESTION})
    a = state["answer"]
    assert a["tier"] == 2 and not a["cached"] and not a["llm"] and not a["out_of_domain"], a
    # Studio gets the Answer as plain JSON: every field, the short answer first among them
    from memgrove.graphs.tiers import Answer

    assert set(a) == set(Answer.FIELDS) and a["answer"] and a["answer"] in a["text"], a
    assert [e["path"] for e in a["evidence"]] == a["sources"]
    assert a["error"] is None
    assert a["sources"], a
    for path in a["sources"]:
        assert path.endswith(".md") and (dev.tree / path).is_file(), f"{path} is not an entry of {dev.tree}"
        assert path in a["text"]
    assert any(p.startswith("conversations/team_chat/") for p in a["sources"]), a["sources"]
    assert "revoke the whole token family" in a["text"]   # Ana's words in the sample conversation
    assert len(dev.llm.requests) == llm_calls              # tier 2: no model call

    again = dev.run("query", {"question": TIER2_QUESTION})["answer"]
    assert again["tier"] == 0 and again["cached"], again
    assert again["sources"] == a["sources"] and again["text"] == a["text"]
    # the server ran on the suite's engine (MEMGROVE_TEST_ENGINE): the index it built is that engine's
    assert engine_choice.index_engine(dev.home / ".memgrove") == engine_choice.chosen()


def test_agent_graph_searches_and_curates_through_the_model(dev: DevServer):
    entry = dev.tree / "projects" / "demo" / "fact.md"
    assert not entry.exists()
    first = dev.script(
        tool_calls(("search_knowledge", {"query": "demo service port"})),
        tool_calls(("curate", {"operations": [{
            "op": "UPSERT", "path": "projects/demo/fact.md", "title": "Demo service port",
            "content": "The demo service listens on port 8080.", "reason": "the user said so"}]})),
        text("Noted: the demo service listens on port 8080."))
    state = dev.run("agent", {"messages": [{"role": "user", "content": "Remember: the demo service listens on 8080."}]})

    msgs = messages_of(state)
    tools = [m for m in msgs if m.get("type") == "tool"]
    assert [m["name"] for m in tools] == ["search_knowledge", "curate"], msgs
    assert all(m.get("status") != "error" for m in tools), tools
    assert "projects/demo/fact.md" in tools[1]["content"] and "added" in tools[1]["content"]
    assert msgs[-1]["type"] == "ai" and msgs[-1]["content"] == "Noted: the demo service listens on port 8080."
    assert entry.is_file() and "port 8080" in entry.read_text(encoding="utf-8")

    requests = dev.llm.requests[first:]
    assert len(requests) == 3 and not dev.llm.replies
    assert {"search_knowledge", "read_entry", "list_tree", "curate"} <= {
        t["function"]["name"] for t in requests[0].get("tools", [])}
    assert requests[0]["model"] == "test-model"
    assert "Remember: the demo service listens on 8080." in dev.llm.request_text(first)


def test_curate_graph_writes_what_the_model_curates(dev: DevServer):
    entry = dev.tree / "projects" / "demo" / "deploy_day.md"
    assert not entry.exists()
    first = dev.script(
        tool_calls(("curate", {"operations": [{
            "op": "ADD", "path": "projects/demo/deploy_day.md", "title": "Demo deploy day",
            "content": "The demo service is deployed every Tuesday.", "reason": "from the release notes"}]})))
    state = dev.run("curate", {"text": "Release notes: the demo service is deployed every Tuesday."})

    assert "projects/demo/deploy_day.md" in state["summary"] and "1 added" in state["summary"], state["summary"]
    assert [a["path"] for a in state["applied"]] == ["projects/demo/deploy_day.md"]
    assert not state.get("errors") and not state.get("stopped"), state
    assert entry.is_file() and "every Tuesday" in entry.read_text(encoding="utf-8")
    assert len(dev.llm.requests) - first == 1 and not dev.llm.replies   # the chunk ends when curate has written
    assert "deployed every Tuesday" in dev.llm.request_text(first)


# -- memgrove's REST and LangServe routes beside the LangGraph API (langgraph.json "http.app") --

def test_http_app_serves_rest_and_langserve_beside_the_langgraph_api(dev: DevServer):
    assert dev.client.get("/ok").status_code == 200                       # LangGraph's own API
    health = dev.client.get("/health")
    assert health.status_code == 200 and health.json()["status"] == "ok", health.text
    assert health.json()["project"] == str(dev.home)
    hits = dev.client.get("/api/search", params={"q": "token family reuse"})
    assert hits.status_code == 200, hits.text
    assert any(h["path"].startswith("conversations/team_chat/") for h in hits.json()["hits"])
    r = dev.client.post("/query/invoke", json={"input": {"question": TIER2_QUESTION}})
    assert r.status_code == 200, f"{r.text}\n{dev.log_text()}"
    assert "revoke the whole token family" in r.json()["output"]["answer"]["text"]
    batch = dev.client.post("/query/batch", json={"inputs": [{"question": TIER2_QUESTION}]})
    assert batch.status_code == 200 and len(batch.json()["output"]) == 1, batch.text
    stream = dev.client.post("/query/stream", json={"input": {"question": TIER2_QUESTION}})
    assert stream.status_code == 200 and "event: end" in stream.text, stream.text
    missing = dev.client.get("/api/entries/no/such/entry.md")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "invalid_path", missing.text
    foreign = dev.client.get("/api/tree", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403, foreign.text                        # the guard came along

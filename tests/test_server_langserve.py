"""LangServe routes of ``memgrove serve`` over a real socket: invoke, batch, stream,
stream_events, input_schema and the playground for the ``query`` graph; invoke for the
``curate`` and ``agent`` graphs with a scripted model (the OpenAI-protocol server of
``tests/helpers/openai_server.py``), the agent's thread kept by ``thread_id``, the project
chosen by header. One server per module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.memgrove_server import Server, start_server, stop_server
from helpers.openai_server import OpenAIServer, serve, text, tool_calls

from memgrove import Memory

SAMPLE = Path(__file__).resolve().parent.parent / "memgrove" / "data" / "sample" / "conversation.json"
QUESTION = "reuse detection token family"    # tier 2 over the sample conversation (see test_langgraph_dev)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("langserve")
    a, b = base / "a", base / "b"
    with Memory.open(a, create=True) as m:
        m.ingest(conversation=str(SAMPLE))
    Memory.open(b, create=True).close()
    with serve() as llm:
        srv = start_server(a, "--project", str(b), env={"MEMGROVE_MODEL": "test-model",
                                                        "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "x"})
        try:
            yield srv, llm, b
        finally:
            assert stop_server(srv) == 0, srv.log_text()


def _script(llm: OpenAIServer, *replies: dict[str, Any]) -> int:
    with llm._lock:
        llm.replies.clear()
    llm.queue(*replies)
    return len(llm.requests)


def _sse(body: str) -> list[tuple[str, Any]]:
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                data.append(line.split(":", 1)[1].strip())
        if name is not None:
            raw = "\n".join(data)
            events.append((name, json.loads(raw) if raw else None))
    return events


def test_query_invoke(env):
    srv, llm, _ = env
    calls = len(llm.requests)
    r = srv.client.post("/query/invoke", json={"input": {"question": QUESTION}})
    assert r.status_code == 200, r.text
    answer = r.json()["output"]["answer"]
    assert answer["tier"] in (0, 2) and answer["sources"], answer
    assert "revoke the whole token family" in answer["text"]
    assert len(llm.requests) == calls          # tiers 0-2 call no model


def test_query_batch(env):
    srv, _, _ = env
    r = srv.client.post("/query/batch", json={"inputs": [{"question": QUESTION}, {"question": "refresh token rotation"}]})
    assert r.status_code == 200, r.text
    outs = r.json()["output"]
    assert len(outs) == 2 and all(o["answer"]["text"] for o in outs)
    assert outs[0]["answer"]["question"] == QUESTION


def test_query_stream(env):
    srv, _, _ = env
    r = srv.client.post("/query/stream", json={"input": {"question": QUESTION}})
    assert r.status_code == 200, r.text
    events = _sse(r.text)
    assert events[-1][0] == "end", events[-3:]
    data = [d for e, d in events if e == "data"]
    assert len(data) >= 2, data                # one chunk per step, not one final blob
    answers = [step["answer"] for chunk in data for step in chunk.values() if isinstance(step, dict) and "answer" in step]
    assert answers and answers[-1]["question"] == QUESTION and "token family" in answers[-1]["text"]


def test_query_stream_events(env):
    srv, _, _ = env
    r = srv.client.post("/query/stream_events", json={"input": {"question": QUESTION}})
    assert r.status_code == 200, r.text
    events = [d for e, d in _sse(r.text) if e == "data"]
    kinds = {d["event"] for d in events}
    assert {"on_chain_start", "on_chain_end"} <= kinds, kinds
    assert {"exact_cache", "finish"} <= {d["name"] for d in events}, {d["name"] for d in events}


def test_query_schema_and_playground(env):
    srv, _, _ = env
    schema = srv.client.get("/query/input_schema").json()
    state = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]] if "$ref" in schema else schema
    assert "question" in state["properties"], schema
    page = srv.client.get("/query/playground/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    for name in ("curate", "agent"):
        assert srv.client.get(f"/{name}/input_schema").status_code == 200


@pytest.mark.parametrize("route", ["/query/invoke", "/query/batch", "/query/stream", "/curate/invoke",
                                   "/agent/invoke", "/agent/stream", "/query/playground/"])
def test_langserve_routes_need_the_token(env, route: str):
    srv, _, _ = env
    r = srv.http(token=None).post(route, json={"input": {}}) if "playground" not in route \
        else srv.http(token=None).get(route)
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", r.text


def test_curate_graph_writes_into_the_project_the_request_names(env):
    srv, llm, b = env
    first = _script(llm, tool_calls(("curate", {"operations": [{
        "op": "ADD", "path": "projects/demo/deploy_day.md", "title": "Demo deploy day",
        "content": "The demo service is deployed every Tuesday.", "reason": "from the release notes"}]})))
    body = {"input": {"text": "Release notes: the demo service is deployed every Tuesday."}}
    refused = srv.client.post("/curate/invoke", headers={"X-Memgrove-Project": str(b)}, json=body)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden", refused.text  # A's token
    b_token = (b / ".memgrove" / "server.token").read_text().strip()
    r = srv.http(token=b_token).post("/curate/invoke", headers={"X-Memgrove-Project": str(b)}, json=body)
    assert r.status_code == 200, r.text
    out = r.json()["output"]
    assert [a["path"] for a in out["applied"]] == ["projects/demo/deploy_day.md"], out
    assert (b / ".memgrove" / "tree" / "projects" / "demo" / "deploy_day.md").is_file()
    assert not (srv.home / "tree" / "projects").exists()
    assert "deployed every Tuesday" in llm.request_text(first)


def test_agent_keeps_its_thread(env):
    srv, llm, _ = env
    first = _script(llm, text("Hello Ana."), text("Your name is Ana."))
    body = {"input": {"messages": [{"type": "human", "content": "My name is Ana, remember it."}]},
            "config": {"configurable": {"thread_id": "thread-ana"}}}
    r1 = srv.client.post("/agent/invoke", json=body)
    assert r1.status_code == 200, r1.text
    assert r1.json()["output"]["messages"][-1]["content"] == "Hello Ana."
    r2 = srv.client.post("/agent/invoke", headers={"X-Thread-Id": "thread-ana"},
                         json={"input": {"messages": [{"type": "human", "content": "What is my name?"}]}})
    assert r2.status_code == 200, r2.text
    msgs = r2.json()["output"]["messages"]
    assert [m["content"] for m in msgs if m["type"] == "human"] == ["My name is Ana, remember it.", "What is my name?"]
    assert "My name is Ana" in llm.request_text(first + 1)     # the model saw the thread's history

    other = _script(llm, text("I do not know your name."))
    r3 = srv.client.post("/agent/invoke", json={"input": {"messages": [{"type": "human", "content": "Who am I?"}]}})
    assert r3.status_code == 200, r3.text
    assert "My name is Ana" not in llm.request_text(other)      # no thread id: a thread of its own

"""A question or search query past ``MAX_QUESTION_CHARS`` is refused wherever it comes in, before any
work: the library (``Memory.query``/``search``, ``ContextTree.search``, the query graph, the store's
search, the knowledge tool), the CLI, REST (413), LangServe (413) and MCP (an error result). A 10 MB
question once took 24-42 s of CPU and grew the server from 1 to 3 GB; the query log keeps only a
prefix of a question.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import pytest
from click.testing import CliRunner

from memgrove import Memory, QuestionTooLong
from memgrove.tree.base.question_bound import LOGGED_QUESTION_CHARS, MAX_QUESTION_CHARS

LONG = "how many connections does the pool hold " * (MAX_QUESTION_CHARS // 40 + 1)   # just past the bound
HUGE = "pool " * 2_000_000                                                           # 10 MB
BOUND = 20.0     # seconds: refusing is instant; answering HUGE took 24-42 s


@pytest.fixture
def seeded(mem: Memory) -> Memory:
    mem.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "Database pool",
                 "content": "The Postgres pool holds twenty connections.", "reason": "seed"}])
    return mem


def _refused(call) -> QuestionTooLong:
    started = time.monotonic()
    with pytest.raises(QuestionTooLong) as exc:
        call()
    assert time.monotonic() - started < BOUND
    assert f"at most {MAX_QUESTION_CHARS:,}" in str(exc.value) and exc.value.code == "question_too_long"
    return exc.value


def test_the_library_refuses_a_question_past_the_bound(seeded: Memory):
    assert len(LONG) > MAX_QUESTION_CHARS
    _refused(lambda: seeded.query(LONG))
    _refused(lambda: seeded.query(HUGE))
    _refused(lambda: seeded.search(HUGE))
    _refused(lambda: seeded.tree.search(LONG))
    assert "characters long" in str(_refused(lambda: seeded.search(LONG)))
    # the bound itself is a question like any other
    assert seeded.search(("pool " * MAX_QUESTION_CHARS)[:MAX_QUESTION_CHARS])[0].path == "infra/db/pool.md"
    assert not (seeded.home / "query-log.jsonl").exists() or "pool pool" not in (
        seeded.home / "query-log.jsonl").read_text()


def test_the_query_graph_refuses_a_long_question_or_last_message(seeded: Memory):
    graph = seeded.graph("query")
    _refused(lambda: graph.invoke({"question": HUGE}))
    _refused(lambda: graph.invoke({"messages": [{"role": "user", "content": LONG}]}))


def test_the_store_and_the_knowledge_tool_refuse_a_long_query(seeded: Memory):
    from memgrove import ContextTreeStore
    from memgrove.tools import knowledge_tools

    store = ContextTreeStore(seeded)
    _refused(lambda: store.search(("memories",), query=HUGE))
    search = next(t for t in knowledge_tools(seeded) if t.name == "search_knowledge")
    said = search.invoke({"query": HUGE})
    assert "characters long" in said and "key words" in said


def test_the_query_log_keeps_a_prefix_of_a_question(seeded: Memory):
    question = "how many connections does the pool hold " * 200          # 8,000 characters: answered
    seeded.query(question)
    [line] = (seeded.home / "query-log.jsonl").read_text(encoding="utf-8").splitlines()
    logged = json.loads(line)["question"]
    assert len(logged) <= LOGGED_QUESTION_CHARS + 1 and question.startswith(logged.rstrip("…"))


def test_the_cli_says_the_question_is_too_long(seeded: Memory):
    from memgrove.cli import cli

    for command in ("query", "search"):
        result = CliRunner().invoke(cli, ["--root", str(seeded.home.parent), command, LONG])
        assert result.exit_code == 1, result.output
        assert f"at most {MAX_QUESTION_CHARS:,}" in result.output


@pytest.fixture
def client(seeded: Memory):
    from fastapi.testclient import TestClient

    from memgrove.server.app import create_app
    from memgrove.server.settings import ServerSettings

    app = create_app(seeded.home.parent, ServerSettings(allowed_hosts="testserver"), mcp=False)
    with TestClient(app) as c:
        yield c


def _is_413(r, code: str = "question_too_long") -> None:
    assert r.status_code == 413, r.text
    assert r.json()["error"]["code"] == code, r.text


def test_rest_and_langserve_answer_413(client):
    _is_413(client.post("/api/query", json={"question": LONG}))
    _is_413(client.get("/api/search", params={"q": LONG}))
    _is_413(client.post("/query/invoke", json={"input": {"question": LONG}}))
    _is_413(client.post("/query/batch", json={"inputs": [{"question": "pool"}, {"question": LONG}]}))
    with client.stream("POST", "/query/stream", json={"input": {"question": LONG}}) as r:
        body = r.read().decode()
    assert r.status_code == 413 and "question_too_long" in body, body      # refused before the stream
    ok = client.post("/api/query", json={"question": "how many connections does the pool hold"})
    assert ok.status_code == 200 and ok.json()["sources"] == ["infra/db/pool.md"]


def test_a_question_route_refuses_a_body_past_a_megabyte_unread(client):
    started = time.monotonic()
    for path in ("/api/query", "/query/invoke"):
        r = client.post(path, content=b'{"question": "' + b"a" * (2 * 1024 * 1024) + b'"}',
                        headers={"Content-Type": "application/json"})
        _is_413(r, "too_large")
        assert "a question is at most" in r.json()["error"]["message"]
    assert time.monotonic() - started < BOUND


def test_mcp_tools_answer_an_error_the_model_can_act_on(seeded: Memory):
    pytest.importorskip("mcp")
    from memgrove.mcp.server import create_server

    server = create_server(lambda project, request: contextlib.nullcontext(seeded))
    for tool, args in (("memgrove_query", {"query": HUGE}), ("memgrove_search", {"query": LONG})):
        result = asyncio.run(server.call_tool(tool, args))
        assert result.isError, result
        assert result.structuredContent["error"]["code"] == "question_too_long"
        assert "key words" in result.content[0].text


def test_the_remote_client_raises_the_same_error():
    from memgrove.remote.wire import error_classes

    assert error_classes()["question_too_long"] is QuestionTooLong

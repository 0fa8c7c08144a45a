"""Tiers 3 and 4: a scripted chat model, the real ``ChatOpenAI`` against a local server, and no model.

No network: the real client talks to ``tests/helpers/openai_server.py`` on
127.0.0.1. Every LLM failure must come back as the extractive answer with the
error named, never as an exception; with no model configured, tiers 3–4 say so.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from conftest import QUESTIONS
from helpers.openai_server import stall, status, text, tool_calls
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memgrove import Memory
from memgrove.graphs import build_query_graph, tiers
from memgrove.graphs.settings import QuerySettings

ANA = "Ana leads the payments team and owns the billing service."
TIER3_ANSWER = ("## Summary\nAna owns the billing service.\n\n## Details\n- Ana leads payments and owns billing "
                "(team/people/ana.md)\n\n## Sources\n- team/people/ana.md\n\n## Gaps\nnone")
TIER4_ANSWER = ("## Summary\nAna leads the payments team; the memory does not say which database billing uses."
                "\n\n## Details\n- Ana leads payments (team/people/ana.md)\n\n## Sources\n- team/people/ana.md"
                "\n\n## Gaps\nThe database of the billing service.")


def ask(mem: Memory, question: str, via: str, **graph_kwargs) -> tiers.Answer:
    """Ask through ``Memory.query`` or through the compiled LangGraph graph."""
    if via == "query":
        return mem.query(question)
    out = build_query_graph(mem, **graph_kwargs).invoke({"question": question})
    return tiers.Answer.from_dict(out["answer"])


def seeded(tmp_path, model=None) -> Memory:
    from conftest import QUERY_SEED

    m = Memory.open(tmp_path, create=True, durable=False, model=model)
    m.curate(QUERY_SEED)
    return m


@pytest.fixture
def llm_env(monkeypatch, openai_server):
    """MEMGROVE_MODEL pointed at the local OpenAI-protocol server."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    return openai_server


@pytest.fixture
def no_model_env(monkeypatch):
    for var in ("MEMGROVE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def assert_extractive(a: tiers.Answer, tier: int, *, error_has: str | None):
    assert a.tier == tier and not a.llm and not a.cached
    for heading in ("## Summary", "## Details", "## Sources", "## Gaps"):
        assert heading in a.text
    if error_has is None:
        assert a.error is None
        assert tiers.NO_LLM in a.text
    else:
        assert a.error and error_has.lower() in a.error.lower(), a.error
        assert a.error in a.text                                   # the error is named in the answer


# -- the real ChatOpenAI client against the local server ----------------------------------

@pytest.mark.parametrize("via", ["query", "graph"])
def test_real_client_tier3(tmp_path, llm_env, via):
    srv = llm_env
    mem = seeded(tmp_path)
    try:
        srv.queue(text(TIER3_ANSWER))
        a = ask(mem, QUESTIONS["llm"], via)
        assert a.tier == 3 and a.llm and a.error is None and not a.cached
        assert a.text == TIER3_ANSWER                                   # the server's words
        assert a.sources == ["team/people/ana.md"] and all(mem.tree.exists(p) for p in a.sources)
        assert len(srv.requests) == 1
        req = srv.requests[0]
        assert srv.paths[0] == "/v1/chat/completions" and req["model"] == "test-model"
        assert srv.headers[0].get("authorization") == "Bearer x"
        prompt = srv.request_text(0)
        assert ANA in prompt and "=== team/people/ana.md ===" in prompt and QUESTIONS["llm"] in prompt
        # each entry as its reader view: title and body, not the frontmatter
        assert "# Ana leads payments" in prompt and "createdAt" not in prompt and "keywords:" not in prompt
        assert "tools" not in req                                       # tier 3: one plain call
        # an LLM answer is cached: the same question again costs no request
        again = mem.query(QUESTIONS["llm"])
        assert (again.tier, again.cached, again.llm, again.text) == (0, True, True, TIER3_ANSWER)
        assert len(srv.requests) == 1
    finally:
        mem.close()


@pytest.mark.parametrize("via", ["query", "graph"])
def test_real_client_tier4_tool_loop(tmp_path, llm_env, via):
    srv = llm_env
    mem = seeded(tmp_path)
    try:
        srv.queue(tool_calls(("search_knowledge", {"query": "payments team lead"})),
                  tool_calls(("read_entry", {"path": "team/people/ana.md"})),
                  text(TIER4_ANSWER))
        a = ask(mem, QUESTIONS["agent"], via)
        assert a.tier == 4 and a.llm and a.error is None
        assert a.text == TIER4_ANSWER
        assert a.sources == ["team/people/ana.md"]
        assert len(srv.requests) == 3
        first = srv.requests[0]
        assert sorted(t["function"]["name"] for t in first["tools"]) == ["list_tree", "read_entry", "search_knowledge"]
        assert first["messages"][-1] == {"role": "user", "content": QUESTIONS["agent"]}
        # request 2 carries the search call and its result
        m2 = srv.messages(1)
        call = next(m for m in m2 if m["role"] == "assistant")["tool_calls"][0]
        assert call["function"]["name"] == "search_knowledge"
        result = next(m for m in m2 if m["role"] == "tool")
        assert result["tool_call_id"] == call["id"]
        found = json.loads(result["content"])
        assert found["entries"][0]["path"] == "team/people/ana.md"
        # request 3 carries the entry read in full
        reads = [m for m in srv.messages(2) if m["role"] == "tool"]
        assert len(reads) == 2 and ANA in reads[1]["content"]
    finally:
        mem.close()


def test_real_client_401_degrades_to_extractive(tmp_path, llm_env):
    srv = llm_env
    mem = seeded(tmp_path)
    try:
        srv.queue(status(401))
        a = mem.query(QUESTIONS["llm"])
        assert_extractive(a, 3, error_has="401")
        assert a.sources == ["team/people/ana.md"] and ANA in a.text    # the evidence, quoted
        assert len(srv.requests) == 1                                    # a 401 is not retried
        # an error is not cached: once the server works, the question gets a real answer
        srv.queue(text(TIER3_ANSWER))
        b = mem.query(QUESTIONS["llm"])
        assert (b.tier, b.llm, b.cached, b.text) == (3, True, False, TIER3_ANSWER)
    finally:
        mem.close()


def test_real_client_401_in_the_agent_loop(tmp_path, llm_env):
    llm_env.queue(status(401))
    mem = seeded(tmp_path)
    try:
        assert_extractive(ask(mem, QUESTIONS["agent"], "graph"), 4, error_has="401")
    finally:
        mem.close()


def test_real_client_timeout_from_config_toml(tmp_path, llm_env):
    srv = llm_env
    mem = seeded(tmp_path)
    (mem.home / "config.toml").write_text("[query]\nllm_timeout = 0.3\nllm_retries = 0\n")
    mem.close()
    mem = Memory.open(tmp_path, durable=False)
    try:
        srv.queue(stall(10))
        a = mem.query(QUESTIONS["llm"])
        assert_extractive(a, 3, error_has="timed out")
        assert "Timeout" in a.error          # the stalled reply never arrived: the client gave up
        assert len(srv.requests) == 1                                    # llm_retries = 0
    finally:
        mem.close()


def test_real_client_timeout_in_the_graph_with_query_settings(tmp_path, llm_env):
    srv = llm_env
    mem = seeded(tmp_path)
    try:
        srv.queue(stall(10))
        a = ask(mem, QUESTIONS["agent"], "graph", settings=QuerySettings(llm_timeout=0.3, llm_retries=0))
        assert_extractive(a, 4, error_has="timed out")
        assert len(srv.requests) == 1
    finally:
        mem.close()


def test_real_client_malformed_tool_call(tmp_path, llm_env):
    llm_env.queue(tool_calls(("search_knowledge", {}), raw_arguments='{"query": "payments'))
    mem = seeded(tmp_path)
    try:
        a = mem.query(QUESTIONS["agent"])
        assert_extractive(a, 4, error_has="malformed tool call")
        assert "search_knowledge" in a.error
    finally:
        mem.close()


def test_model_configured_without_credentials_degrades(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    mem = seeded(tmp_path)
    try:
        for via in ("query", "graph"):
            a = ask(mem, QUESTIONS["llm"], via)
            assert_extractive(a, 3, error_has="OPENAI_API_KEY")
    finally:
        mem.close()


# -- a scripted model passed from Python ------------------------------------------------

def test_scripted_model_contract():
    from pydantic import BaseModel

    class Lookup(BaseModel):
        """Look something up."""
        query: str

    m = ScriptedChatModel(replies=[tool_call("Lookup", query="x"), "done", "done"], raise_on={3: TimeoutError("late")})
    bound = m.bind_tools([Lookup])
    first, second = bound.invoke("q1"), m.invoke("q2")
    assert first.tool_calls[0]["name"] == "Lookup" and first.tool_calls[0]["args"] == {"query": "x"}
    assert first.tool_calls[0]["id"] and second.content == "done"
    assert first.id != second.id                                      # fresh ids
    assert m.bound_tools == [["Lookup"]] and m.call_tools == [["Lookup"], []]
    assert [c[0].content for c in m.calls] == ["q1", "q2"]            # the binding records on the model
    assert m.invoke("q3").id not in (first.id, second.id)
    with pytest.raises(TimeoutError):
        m.invoke("q4")
    with pytest.raises(AssertionError, match="call 5"):
        m.invoke("q5")


@pytest.mark.parametrize("via", ["query", "graph"])
def test_scripted_tier3_sees_the_entries(tmp_path, no_model_env, via):
    model = ScriptedChatModel(replies=[TIER3_ANSWER])
    mem = seeded(tmp_path, model=model)
    try:
        a = ask(mem, QUESTIONS["llm"], via, model=model)
        assert (a.tier, a.llm, a.text, a.sources) == (3, True, TIER3_ANSWER, ["team/people/ana.md"])
        [msgs] = model.calls
        assert isinstance(msgs[0], SystemMessage) and isinstance(msgs[1], HumanMessage)
        assert ANA in msgs[1].content and QUESTIONS["llm"] in msgs[1].content
        assert model.call_tools == [[]]
    finally:
        mem.close()


def test_scripted_tier3_sources_only_cite_the_context(tmp_path, no_model_env):
    # a path the model invents (or one not in its context) is not a source
    model = ScriptedChatModel(replies=["## Summary\nSee made/up/entry.md and infra/db/postgres_version.md.\n"])
    mem = seeded(tmp_path, model=model)
    try:
        a = mem.query(QUESTIONS["llm"])
        assert a.tier == 3 and a.llm
        assert a.sources == ["team/people/ana.md"]      # nothing cited is in the context: the context is cited
        assert "made/up/entry.md" not in a.sources
    finally:
        mem.close()


@pytest.mark.parametrize("via", ["query", "graph"])
def test_scripted_tier4_tool_results_reach_the_model(tmp_path, no_model_env, via):
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query="payments team"),
                                       tool_call("read_entry", path="team/people/ana.md"),
                                       tool_call("list_tree", folder="team"),
                                       TIER4_ANSWER])
    mem = seeded(tmp_path, model=model)
    try:
        a = ask(mem, QUESTIONS["agent"], via, model=model)
        assert (a.tier, a.llm, a.error, a.text) == (4, True, None, TIER4_ANSWER)
        assert a.sources == ["team/people/ana.md"]
        assert model.remaining == 0 and len(model.calls) == 4
        assert model.bound_tools and sorted(model.bound_tools[0]) == ["list_tree", "read_entry", "search_knowledge"]
        assert all(sorted(t) == ["list_tree", "read_entry", "search_knowledge"] for t in model.call_tools)
        tool_msgs = [m for m in model.calls[3] if isinstance(m, ToolMessage)]
        assert [m.name for m in tool_msgs] == ["search_knowledge", "read_entry", "list_tree"]
        assert [m.tool_call_id for m in tool_msgs] == [r.tool_calls[0]["id"] for r in model.replied[:3]]
        assert "team/people/ana.md" in [h["path"] for h in json.loads(tool_msgs[0].content)["entries"]]
        assert ANA in tool_msgs[1].content
        assert "team/people" in tool_msgs[2].content
        # replies kept their own ids: add_messages appended, never overwrote
        ais = [m for m in model.calls[3] if isinstance(m, AIMessage)]
        assert len(ais) == 3 and len({m.id for m in ais}) == 3
    finally:
        mem.close()


def test_scripted_tool_mistake_goes_back_to_the_model(tmp_path, no_model_env):
    model = ScriptedChatModel(replies=[tool_call("read_entry", path="no/such/entry.md"), TIER4_ANSWER])
    mem = seeded(tmp_path, model=model)
    try:
        a = mem.query(QUESTIONS["agent"])
        assert a.tier == 4 and a.llm and a.error is None
        [err] = [m for m in model.calls[1] if isinstance(m, ToolMessage)]
        assert err.content.startswith("Error:") and "search_knowledge" in err.content
    finally:
        mem.close()


def test_scripted_agent_is_bounded(tmp_path, no_model_env):
    s = QuerySettings(agent_max_iterations=2)
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query=f"q{i}") for i in range(2)] + [TIER4_ANSWER])
    mem = seeded(tmp_path, model=model)
    try:
        a = ask(mem, QUESTIONS["agent"], "graph", model=model, settings=s)
        assert a.tier == 4 and a.llm and a.text == TIER4_ANSWER
        assert len(model.calls) == s.agent_max_iterations + 1
        assert model.call_tools[-1] == []                           # the last call cannot call tools
        assert "Stop searching" in model.prompt_text(-1)
    finally:
        mem.close()


def test_scripted_agent_that_never_stops_degrades(tmp_path, no_model_env):
    s = QuerySettings(agent_max_iterations=1)
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query=f"q{i}") for i in range(5)])
    mem = seeded(tmp_path, model=model)
    try:
        a = ask(mem, QUESTIONS["agent"], "graph", model=model, settings=s)
        assert_extractive(a, 4, error_has="without an answer")
        assert len(model.calls) == 2
    finally:
        mem.close()


@pytest.mark.parametrize("exc", [httpx.TimeoutException("timed out"),
                                 openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1/v1"))],
                         ids=["httpx", "openai"])
@pytest.mark.parametrize("route,tier", [("llm", 3), ("agent", 4)])
@pytest.mark.parametrize("via", ["query", "graph"])
def test_scripted_timeout_degrades(tmp_path, no_model_env, exc, route, tier, via):
    model = ScriptedChatModel(replies=[exc])
    mem = seeded(tmp_path, model=model)
    try:
        a = ask(mem, QUESTIONS[route], via, model=model)
        assert_extractive(a, tier, error_has="timed out")
        assert type(exc).__name__ in a.error
        assert a.sources and all(mem.tree.exists(p) for p in a.sources)
    finally:
        mem.close()


def test_scripted_failure_mid_loop_degrades(tmp_path, no_model_env):
    model = ScriptedChatModel(replies=[tool_call("search_knowledge", query="payments")],
                              raise_on={1: httpx.ConnectError("connection refused")})
    mem = seeded(tmp_path, model=model)
    try:
        a = mem.query(QUESTIONS["agent"])
        assert_extractive(a, 4, error_has="ConnectError")
        assert len(model.calls) == 2
    finally:
        mem.close()


def test_scripted_malformed_tool_call_degrades(tmp_path, no_model_env):
    bad = AIMessage(content="", invalid_tool_calls=[{"name": "search_knowledge", "args": '{"query": ',
                                                     "id": "c1", "error": "bad JSON", "type": "invalid_tool_call"}])
    model = ScriptedChatModel(replies=[bad])
    mem = seeded(tmp_path, model=model)
    try:
        a = mem.query(QUESTIONS["agent"])
        assert_extractive(a, 4, error_has="malformed tool call")
        assert "bad JSON" in a.error
    finally:
        mem.close()


def test_scripted_empty_answer_degrades(tmp_path, no_model_env):
    model = ScriptedChatModel(replies=["   "])
    mem = seeded(tmp_path, model=model)
    try:
        assert_extractive(mem.query(QUESTIONS["llm"]), 3, error_has="empty answer")
    finally:
        mem.close()


# -- no model configured --------------------------------------------------------------------

@pytest.mark.parametrize("route,tier", [("llm", 3), ("agent", 4)])
@pytest.mark.parametrize("via", ["query", "graph"])
def test_no_model_answers_extractively_and_is_not_cached(tmp_path, no_model_env, route, tier, via):
    mem = seeded(tmp_path)
    try:
        a = ask(mem, QUESTIONS[route], via)
        assert_extractive(a, tier, error_has=None)
        assert "no LLM is configured" in a.text.lower().replace("no llm", "no LLM")
        assert a.sources and all(mem.tree.exists(p) for p in a.sources)
        assert "team/people/ana.md" in a.sources and ANA in a.text
        b = ask(mem, QUESTIONS[route], via)
        assert (b.tier, b.cached) == (tier, False)
        assert mem.pipeline.cache.get_exact(QUESTIONS[route], mem.pipeline.fingerprint()) is None
    finally:
        mem.close()


def test_no_model_and_no_match_says_so(tmp_path, no_model_env):
    mem = seeded(tmp_path)
    try:
        a = mem.query("quantum chromodynamics lattice")
        assert_extractive(a, 4, error_has=None)
        assert a.sources == [] and "no stored entry matches" in a.text
    finally:
        mem.close()

"""The scripts of ``examples/`` run as a user runs them: ``python examples/X.py PROJECT``.

Their model is the real ``ChatOpenAI`` (``MEMGROVE_MODEL``), pointed by ``OPENAI_BASE_URL`` at
the scripted OpenAI-protocol server of ``tests/helpers/openai_server.py``: nothing leaves
127.0.0.1, and the tests check what the model was sent and what landed in the tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.openai_server import OpenAIServer, serve, text, tool_calls

from memgrove import Memory

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def run_example(name: str, project: Path, llm: OpenAIServer) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith(("OPENAI_", "MEMGROVE_", "LANGSMITH_", "LANGCHAIN_"))
           and k.lower() not in {"http_proxy", "https_proxy", "all_proxy"}}
    env.update(MEMGROVE_MODEL="test-model", OPENAI_BASE_URL=llm.base_url,
               NO_PROXY="127.0.0.1,localhost", LANGSMITH_TRACING="false")
    r = subprocess.run([sys.executable, str(EXAMPLES / name), str(project)], env=env, cwd=project,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    assert not llm.replies, f"{name} left {len(llm.replies)} scripted replies unused"
    return r.stdout


@pytest.fixture
def llm():
    with serve() as srv:
        yield srv


def test_three_examples_exist_and_are_short():
    names = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert names == ["agent_with_memory_tools.py", "query_graph_in_workflow.py", "store_in_create_agent.py"]
    for p in EXAMPLES.glob("*.py"):
        assert len(p.read_text(encoding="utf-8").splitlines()) <= 80, p.name


def test_memory_tools_in_your_own_agent(tmp_path, llm):
    llm.queue(
        tool_calls(("curate", {"operations": [{
            "op": "ADD", "path": "services/billing/deploy_day.md", "title": "Billing deploy day",
            "content": "The billing service deploys every Tuesday at 10:00.", "reason": "the user said so"}]})),
        text("Noted."),
        tool_calls(("search_knowledge", {"query": "billing deploy"}), ("service_health", {"service": "billing"})),
        text("Billing deploys on Tuesdays at 10:00 and is healthy."))
    out = run_example("agent_with_memory_tools.py", tmp_path, llm)
    assert "Billing deploys on Tuesdays at 10:00 and is healthy." in out
    with Memory.open(tmp_path) as mem:
        assert "Tuesday" in str(mem.read("services/billing/deploy_day.md").sections)
    # the second run knew the first only through memory: its search found the entry
    assert "Remember: the billing" not in llm.request_text(2)
    assert "services/billing/deploy_day.md" in llm.request_text(3)
    assert "healthy, last deploy 2 hours ago" in llm.request_text(3)
    tools = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert tools == {"service_health", "search_knowledge", "read_entry", "list_tree", "curate"}


def test_query_graph_inside_your_workflow(tmp_path, llm):
    llm.queue(
        text("We set the Postgres pool size as the notes say."),                  # q1: tier 2, then reply
        tool_calls(("search_knowledge", {"query": "search library decision"})),   # q2: tier 4's loop
        text("The team chose the library named in the chat (see the entries cited)."),
        text("You decided on the search library from the chat."))                  # q2: reply
    out = run_example("query_graph_in_workflow.py", tmp_path, llm)
    assert "reply: We set the Postgres pool size" in out
    assert "reply: You decided on the search library" in out
    # the reply node saw the memory's answer; the tier-4 loop saw only its own prompt and question
    assert "pool" in llm.request_text(0).lower() and llm.messages(0)[-1]["role"] == "assistant"
    loop = llm.messages(1)
    assert loop[0]["role"] == "system" and "pool size" not in llm.request_text(1).lower()
    assert loop[-1]["content"] == "Which library did we decide to use for search?"
    assert llm.messages(3)[-1]["content"] == "The team chose the library named in the chat (see the entries cited)."


def test_the_store_in_a_create_agent_app(tmp_path, llm):
    llm.queue(
        tool_calls(("save_memory", {"key": "editor_theme", "text": "Prefers dark mode in every editor"})),
        text("Saved."),
        tool_calls(("search_memory", {"query": "editor theme"})),
        text("You like dark mode."))
    out = run_example("store_in_create_agent.py", tmp_path, llm)
    assert "You like dark mode." in out and "editor_theme" in out
    assert "Prefers dark mode in every editor" in llm.request_text(3)
    with Memory.open(tmp_path) as mem:
        assert mem.read("memories/user_1/editor_theme.md").sections["text"] == "Prefers dark mode in every editor"

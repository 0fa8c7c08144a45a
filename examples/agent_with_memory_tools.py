"""Memory tools in your own agent: a LangChain ``create_agent`` agent that curates and searches memory.

    python examples/agent_with_memory_tools.py [PROJECT]

The model: ``MEMGROVE_MODEL`` (default ``gpt-4o-mini``) through ``ChatOpenAI``, with
``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` (a local OpenAI-compatible server). PROJECT: the folder
whose memory the agent uses (default: a new temporary one).
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain.tools import tool

from memgrove import Memory
from memgrove.terminal import safe

TURNS = ["Remember: the billing service deploys every Tuesday at 10:00.",
         "When does billing deploy, and is it healthy right now?"]


@tool
def service_health(service: str) -> str:
    """The current health of a service."""
    return f"{service}: healthy, last deploy 2 hours ago"


def main(project: str, model: Any = None) -> list[str]:
    if model is None:
        from memgrove import chat_model

        model = chat_model()  # MEMGROVE_MODEL; no key needed with OPENAI_BASE_URL
    with Memory.open(project, create=True) as mem:
        # your tools plus memgrove's: search_knowledge, read_entry, list_tree, curate
        agent = create_agent(model, tools=[service_health, *mem.tools()],
                             system_prompt="Search memory before you answer. Curate what the user asks "
                                           "you to remember, under a domain/topic/name.md path.")
        replies = []
        for turn in TURNS:          # separate runs: the second knows the first only through memory
            out = agent.invoke({"messages": [{"role": "user", "content": turn}]})
            replies.append(out["messages"][-1].content)
            print(f"> {turn}\n{safe(replies[-1])}\n")
    return replies


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memgrove-example-"))

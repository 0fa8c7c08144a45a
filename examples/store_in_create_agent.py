"""The Context Tree as the ``store`` of a ``create_agent`` app: tools use ``runtime.store``.

    python examples/store_in_create_agent.py [PROJECT]

Each item the tools put is an entry of the tree (``memories/<user>/<key>.md``): readable,
searchable with ``memgrove search``, journaled and undoable. The model as in
``agent_with_memory_tools.py``; PROJECT defaults to a temporary folder.
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool

from memgrove import ContextTreeStore
from memgrove.terminal import safe

NS = ("memories", "user_1")
TURNS = ["Please remember that I prefer dark mode in every editor.", "Which editor theme do I like?"]


@tool
def save_memory(key: str, text: str, runtime: ToolRuntime) -> str:
    """Save one fact about the user under a short key (letters, digits, underscores)."""
    runtime.store.put(NS, key, {"text": text})
    return f"saved {key}"


@tool
def search_memory(query: str, runtime: ToolRuntime) -> str:
    """Search what is known about the user."""
    items = runtime.store.search(NS, query=query, limit=3)
    return "\n".join(f"{i.key}: {i.value['text']}" for i in items) or "nothing found"


def main(project: str, model: Any = None) -> list[str]:
    if model is None:
        from memgrove import chat_model

        model = chat_model()  # MEMGROVE_MODEL; no key needed with OPENAI_BASE_URL
    with ContextTreeStore(project) as store:
        agent = create_agent(model, tools=[save_memory, search_memory], store=store,
                             system_prompt="Save what the user asks you to remember; search before answering.")
        replies = []
        for turn in TURNS:
            out = agent.invoke({"messages": [{"role": "user", "content": turn}]})
            replies.append(out["messages"][-1].content)
            print(f"> {turn}\n{safe(replies[-1])}\n")
        print("stored:", [(i.key, i.value) for i in store.search(NS)])
    return replies


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memgrove-example-"))

"""The query graph inside your own LangGraph workflow, as one node of a ``MessagesState`` graph.

    python examples/query_graph_in_workflow.py [PROJECT]

``recall_node`` is memgrove's query graph: it reads the last user message and appends exactly one
AIMessage with memory's answer; its own tool loop stays private. Your ``reply`` node then
answers with that in view. PROJECT defaults to a temporary folder holding the bundled sample.
The model as in ``agent_with_memory_tools.py``.
"""

from __future__ import annotations

import sys
import tempfile
from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.graph import START, MessagesState, StateGraph

from memgrove import Memory
from memgrove.graphs import recall_node
from memgrove.sample import ingest_sample
from memgrove.terminal import safe

QUESTIONS = ["What pool size did we set for Postgres?", "Which library did we decide to use for search?"]


def build(mem: Memory, model: Any):
    def reply(state: MessagesState) -> dict:
        prompt = SystemMessage("Answer the user in one friendly sentence, from the memory's answer above.")
        return {"messages": [model.invoke([prompt, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", recall_node(mem, model=model))
    builder.add_node("reply", reply)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "reply")
    return builder.compile()


def main(project: str, model: Any = None) -> list[dict]:
    if model is None:
        from memgrove import chat_model

        model = chat_model()  # MEMGROVE_MODEL; no key needed with OPENAI_BASE_URL
    with Memory.open(project, create=True) as mem:
        if mem.count() == 0:
            ingest_sample(mem)
        app = build(mem, model)
        outs = []
        for q in QUESTIONS:
            out = app.invoke({"messages": [{"role": "user", "content": q}]})
            outs.append(out)
            memory_answer, reply = out["messages"][-2:]
            print(f"> {q}\nmemory: {safe(memory_answer.content)[:300]}\nreply: {safe(reply.content)}\n")
    return outs


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="memgrove-example-"))

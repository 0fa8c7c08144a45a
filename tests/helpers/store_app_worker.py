"""One process of a LangGraph app whose store is ``ContextTreeStore()`` with ``MEMGROVE_URL`` set:
what each worker or replica of a deployed app runs (tests/test_store_remote.py starts several).

    python store_app_worker.py NAME N WORKERS sync|async

A graph with two nodes, given the store at compile time as a LangGraph app is: ``remember``
puts N items under ``("team", "memories")`` one call at a time (the workers' writes interleave at
the server), then ``recall`` waits until the items of all WORKERS workers are visible and searches
for the words of the others. Prints the final state as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import TypedDict

from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph

from memgrove import ContextTreeStore

NS = ("team", "memories")
WAIT_S = 120.0


class State(TypedDict, total=False):
    name: str
    n: int
    workers: int
    keys: list[str]
    found: dict[str, list[str]]


def _value(name: str, i: int) -> dict:
    return {"text": f"Fact {i} learned by {name}", "worker": name, "i": i}


def remember(state: State) -> dict:
    store = get_store()
    for i in range(state["n"]):
        store.put(NS, f"{state['name']}-{i}", _value(state["name"], i))
    return {}


async def aremember(state: State) -> dict:
    store = get_store()
    for i in range(state["n"]):
        await store.aput(NS, f"{state['name']}-{i}", _value(state["name"], i))
    return {}


def recall(state: State) -> dict:
    store = get_store()
    want = state["n"] * state["workers"]
    deadline = time.monotonic() + WAIT_S
    while True:
        items = store.search(NS, limit=1000)
        if len(items) >= want or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    found = {}
    for w in range(state["workers"]):
        other = f"w{w}"
        found[other] = sorted(h.key for h in store.search(("team",), query=f"learned by {other}", limit=1000,
                                                          filter={"worker": other}))
    return {"keys": sorted(i.key for i in items), "found": found}


def main(name: str, n: int, workers: int, mode: str) -> None:
    graph = StateGraph(State)
    graph.add_node("remember", aremember if mode == "async" else remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    with ContextTreeStore() as store:
        app = graph.compile(store=store)
        state = {"name": name, "n": n, "workers": workers}
        out = asyncio.run(app.ainvoke(state)) if mode == "async" else app.invoke(state)
        print(json.dumps({"repr": repr(store), **out}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])

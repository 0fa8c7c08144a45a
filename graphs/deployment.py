"""The graphs ``langgraph.json`` registers: ``query``, ``curate``, ``agent``.

A thin module for ``langgraph dev`` / LangGraph Studio / LangGraph Platform;
Python code builds its own with ``Memory.graph(...)``. Compiled without a
checkpointer (the server brings its own) and without a model (resolved from
``MEMGROVE_MODEL`` when a node first needs one), so the server starts with no key.

The query graph answers over ``MEMGROVE_HOME`` (default: the folder the server
starts in; created if missing). The curate and agent graphs use the same memory
unless a run's context names another: ``{"memgrove_home": "/path/to/project"}``.
"""

import os

from memgrove.graphs.agent import build_memory_agent
from memgrove.graphs.curate import build_curate_graph
from memgrove.graphs.query import build_query_graph
from memgrove.memory import Memory

memory = Memory.open(os.environ.get("MEMGROVE_HOME") or os.getcwd(), create=True)


query = build_query_graph(memory)
curate = build_curate_graph(memory)
agent = build_memory_agent(memory)

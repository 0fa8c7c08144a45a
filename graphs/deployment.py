"""The graphs ``langgraph.json`` registers: ``query``, ``curate``, ``agent``.

A thin module for ``langgraph dev`` / LangGraph Studio / LangGraph Platform;
Python code builds its own with ``Memory.graph(...)``. Compiled without a
checkpointer (the server brings its own) and without a model (resolved from
``MEMGROVE_MODEL`` when a node first needs one; unset, the query graph answers
from tiers 0–2 and quotes the evidence for tiers 3–4), so the server starts
with no key.

With ``MEMGROVE_URL`` set (and ``MEMGROVE_TOKEN``), the graphs run here and their
memory is that ``memgrove serve``'s (``Memory.connect``): every worker and replica
of the LangGraph server shares one memory. Nothing is asked of it until a run.

Otherwise every graph answers over ``MEMGROVE_HOME`` unless a run's context names
another project: ``{"memgrove_home": "/path/to/project"}``. With ``MEMGROVE_HOME``
unset, the memory is the one of the folder the server starts in; when that
memory is empty, the bundled sample is curated into it first, so Studio
started in a fresh clone has something to answer from.
"""

import os

from memgrove.graphs.agent import build_memory_agent
from memgrove.graphs.curate import build_curate_graph
from memgrove.graphs.query import build_query_graph
from memgrove.memory import Memory

if os.environ.get("MEMGROVE_URL", "").strip():
    memory = Memory.connect()
else:
    from memgrove.sample import studio_home

    memory = Memory.open(studio_home())

# a run's context naming another project's folder: opened with Memory
query = build_query_graph(memory, memory_class=Memory)
curate = build_curate_graph(memory, memory_class=Memory)
agent = build_memory_agent(memory, memory_class=Memory)

"""memgrove.graphs — the query pipeline, the LLM curator and the memory agent as LangGraph graphs.

The builders import LangGraph when called; ``memgrove.graphs.pipeline`` and
``memgrove.graphs.tiers`` do not, so the CLI's fast path stays light.
"""

from typing import Any

__all__ = ["build_query_graph", "build_curate_graph", "build_memory_agent"]


def build_query_graph(memory: Any, **kwargs: Any):
    """The 5-tier query pipeline (``graphs/query.py``)."""
    from .query import build_query_graph as build

    return build(memory, **kwargs)


def build_curate_graph(memory: Any = None, **kwargs: Any):
    """The LLM curator (``graphs/curate.py``)."""
    from .curate import build_curate_graph as build

    return build(memory, **kwargs)


def build_memory_agent(memory: Any = None, **kwargs: Any):
    """The memory agent (``graphs/agent.py``)."""
    from .agent import build_memory_agent as build

    return build(memory, **kwargs)

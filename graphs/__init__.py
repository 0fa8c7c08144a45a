"""memgrove.graphs — the query pipeline and its LangGraph graph.

``build_query_graph`` imports LangGraph; ``memgrove.graphs.pipeline`` and
``memgrove.graphs.tiers`` do not, so the CLI's fast path stays light.
"""

from typing import Any

__all__ = ["build_query_graph"]


def build_query_graph(memory: Any, **kwargs: Any):
    from .query import build_query_graph as build

    return build(memory, **kwargs)

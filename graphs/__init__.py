"""memgrove.graphs — the query pipeline, the LLM curator and the memory agent as LangGraph graphs.

The package owns the query pipeline (``pipeline``, the plain tiers in ``tiers`` and ``answer*``,
the LLM tiers in ``llm_tiers``) and its graph (``query``), the LLM curator (``curate``, its
report in ``curate_report``), the memory agent (``agent``), the nodes for a graph of yours
(``compose``), dream's model judgments (``dream``), the model client (``llm``), prompts and
settings. Its modules may use the tree, the tools (``memgrove.tools``' modules) and LangGraph and
LangChain; they never import ``Memory`` or the remote client, which build them, except
``deployment`` (the graphs ``langgraph.json`` serves, over a ``Memory`` it opens). The builders
below are the public face: they hand ``Memory`` in (imported when a run's context first names a
project folder), so that a graph built here serves whichever project a run names.

The builders import LangGraph when called; ``memgrove.graphs.pipeline`` and
``memgrove.graphs.tiers`` do not, so the CLI's fast path stays light.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["build_query_graph", "build_curate_graph", "build_memory_agent", "recall_node", "remember_node"]


def _with_memory_class(kwargs: dict) -> dict:
    from memgrove.tools import MEMORY

    return {"memory_class": MEMORY, **kwargs}


def build_query_graph(memory: Any = None, **kwargs: Any):
    """The 5-tier query pipeline (``graphs/query.py``)."""
    from .query import build_query_graph as build

    return build(memory, **_with_memory_class(kwargs))


def build_curate_graph(memory: Any = None, **kwargs: Any):
    """The LLM curator (``graphs/curate.py``)."""
    from .curate import build_curate_graph as build

    return build(memory, **_with_memory_class(kwargs))


def build_memory_agent(memory: Any = None, **kwargs: Any):
    """The memory agent (``graphs/agent.py``)."""
    from .agent import build_memory_agent as build

    return build(memory, **_with_memory_class(kwargs))


def recall_node(memory: Any = None, **kwargs: Any):
    """The query graph as a node of your ``StateGraph`` (``graphs/compose.py``)."""
    from .compose import recall_node as build

    return build(memory, **_with_memory_class(kwargs))


def remember_node(memory: Any = None, **kwargs: Any):
    """A node that writes the latest human turn (or a text field) into memory (``graphs/compose.py``)."""
    from .compose import remember_node as build

    return build(memory, **_with_memory_class(kwargs))

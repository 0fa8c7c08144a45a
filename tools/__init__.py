"""memgrove.tools — the Context Tree as LangChain tools an agent binds.

    from memgrove.tools import memory_tools
    tools = memory_tools(memory)                       # search_knowledge, read_entry, list_tree, curate
    tools = memory_tools(memory, allow=("UPSERT",))    # a curate tool that may only upsert
    tools = memory_tools()                             # memory from the run's context (one graph, many projects)
    tools.append(dream_candidates_tool(memory))        # what `memgrove dream` would do, for the agent to judge

The package owns the tools (``knowledge``: search, read, list; ``curate``; ``dream``), the
set of them (``toolset``) and how a tool finds its memory (``runtime``: the one given, or the run's
context's). Its modules may use the tree and LangChain's tool types only; they never import
``Memory``, which sits above them and builds them. This ``__init__`` is the public face a user
calls: its builders hand in ``Memory`` (imported when a project folder named by a run's context
is first opened), so that a tool built here can open that folder. ``Memory``, the graphs and the
remote client import the modules, never this face.
"""

from typing import Any

from memgrove.tree.writes.operations import OPS

from . import curate as _curate
from . import dream as _dream
from . import knowledge as _knowledge
from . import toolset as _toolset
from .runtime import NoMemory
from .runtime import memory_from_context as _memory_from_context
from .runtime import open_memory as _open_memory


class _Memory:
    """``Memory`` as ``runtime.MemoryClass``, imported on first use: building a tool loads no Whoosh."""

    def __call__(self, tree: Any) -> Any:
        from memgrove.memory import Memory

        return Memory(tree)

    def open(self, path: Any) -> Any:
        from memgrove.memory import Memory

        return Memory.open(path)


MEMORY = _Memory()


def memory_tools(memory: Any = None, *, allow: tuple[str, ...] | list[str] = OPS, actor: str = "agent",
                 read_only: bool = False, use_cache: bool = True, max_ops: int = 50) -> list:
    """``search_knowledge``, ``read_entry``, ``list_tree`` and (unless ``read_only``) ``curate``."""
    return _toolset.memory_tools(memory, allow=allow, actor=actor, read_only=read_only, use_cache=use_cache,
                                 max_ops=max_ops, memory_class=MEMORY)


def knowledge_tools(memory: Any = None, **options: Any) -> list:
    """The read-only tools: ``search_knowledge``, ``read_entry``, ``list_tree`` (``tools/knowledge.py``)."""
    return _knowledge.knowledge_tools(memory, **{"memory_class": MEMORY, **options})


def curate_tool(memory: Any = None, **options: Any):
    """The ``curate`` tool: a batch of operations, all or nothing (``tools/curate.py``)."""
    return _curate.curate_tool(memory, **{"memory_class": MEMORY, **options})


def dream_candidates_tool(memory: Any = None, **options: Any):
    """The ``dream_candidates`` tool: what ``memgrove dream`` would do, nothing changed (``tools/dream.py``)."""
    return _dream.dream_candidates_tool(memory, **{"memory_class": MEMORY, **options})


def memory_from_context(context: Any) -> Any:
    """The memory a run's context names (its ``memory``, or its ``memgrove_home`` opened), or None."""
    return _memory_from_context(context, MEMORY)


def open_memory(home: Any) -> Any:
    """The ``Memory`` of the project at ``home``, opened once per process (it must exist)."""
    return _open_memory(home, MEMORY)


__all__ = ["memory_tools", "knowledge_tools", "curate_tool", "dream_candidates_tool", "memory_from_context",
           "open_memory", "NoMemory"]

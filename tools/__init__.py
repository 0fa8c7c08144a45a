"""memgrove.tools — the Context Tree as LangChain tools an agent binds.

    from memgrove.tools import memory_tools
    tools = memory_tools(memory)                       # search_knowledge, read_entry, list_tree, curate
    tools = memory_tools(memory, allow=("UPSERT",))    # a curate tool that may only upsert
    tools = memory_tools()                             # memory from the run's context (one graph, many projects)
    tools.append(dream_candidates_tool(memory))        # what `memgrove dream` would do, for the agent to judge
"""

from typing import Any

from memgrove.tree.writes.operations import OPS

from .curate import curate_tool
from .dream import dream_candidates_tool
from .knowledge import knowledge_tools
from .runtime import NoMemory, memory_from_context, open_memory


def memory_tools(memory: Any = None, *, allow: tuple[str, ...] | list[str] = OPS, actor: str = "agent",
                 read_only: bool = False, use_cache: bool = True, max_ops: int = 50) -> list:
    """``search_knowledge``, ``read_entry``, ``list_tree`` and (unless ``read_only``) ``curate``."""
    tools = knowledge_tools(memory, use_cache=use_cache)
    if not read_only:
        tools.append(curate_tool(memory, allow=allow, actor=actor, max_ops=max_ops))
    return tools


__all__ = ["memory_tools", "knowledge_tools", "curate_tool", "dream_candidates_tool", "memory_from_context", "open_memory", "NoMemory"]

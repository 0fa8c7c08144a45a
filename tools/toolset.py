"""``memory_tools``: the four tools an agent binds to work on a memory, in one call.

What ``Memory.tools``, the memory agent (``graphs/agent.py``) and the public
``memgrove.tools.memory_tools`` build. A run's context naming a project folder is opened with
``memory_class`` (``Memory``, handed in: see ``runtime.py``).
"""

from typing import Any

from memgrove.tree.writes.operations import OPS

from .curate import curate_tool
from .knowledge import knowledge_tools
from .runtime import MemoryClass


def memory_tools(memory: Any = None, *, allow: tuple[str, ...] | list[str] = OPS, actor: str = "agent",
                 read_only: bool = False, use_cache: bool = True, max_ops: int = 50,
                 memory_class: MemoryClass | None = None) -> list:
    """``search_knowledge``, ``read_entry``, ``list_tree`` and (unless ``read_only``) ``curate``."""
    tools = knowledge_tools(memory, use_cache=use_cache, memory_class=memory_class)
    if not read_only:
        tools.append(curate_tool(memory, allow=allow, actor=actor, max_ops=max_ops, memory_class=memory_class))
    return tools

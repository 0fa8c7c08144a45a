"""Which memory a tool works on: the one its factory was given, or the run's context.

A tool looks first in the graph run's context (LangChain 1.x ``ToolRuntime``),
then at the memory its factory was given, so one compiled graph serves many
projects::

    agent.invoke({"messages": [...]}, context={"memgrove_home": "/path/to/project"})

The context may be a mapping or an object with a ``memory`` (a ``Memory``) or a
``memgrove_home`` (a project folder, opened once per process and kept).

A folder is opened with the ``memory_class`` the tools were built with (``Memory``: its ``open``
classmethod): ``Memory`` sits above the tools and graphs, which never import it, so whatever
builds them hands it in -- ``Memory.tools``/``graph``/``agent``, ``memgrove.tools`` and
``memgrove.graphs`` (the public builders), ``Memory.connect``'s client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from langchain.tools import ToolRuntime

# The default of a tool function's ``runtime`` parameter, for a call outside an agent. LangChain
# injects the runtime only into a parameter annotated ``ToolRuntime`` itself: ``ToolRuntime | None``
# is taken for a model-visible argument and the tool's schema fails. So the None is typed here.
NO_RUNTIME = cast(ToolRuntime, None)

from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import MemgroveError

_opened: dict[Path, Any] = {}
_lock = forksafe.lock()


@dataclass
class MemoryContext:
    """The run context of every memgrove graph: which project's memory to use.

    ``memgrove_home``: a project folder (what Studio and HTTP clients send);
    ``memory``: a ``Memory`` object (for Python callers; it wins over the folder).
    """

    memgrove_home: str | None = None
    memory: Any = None


class NoMemory(MemgroveError, RuntimeError):
    """A tool or graph built without a memory ran without one in its context (a configuration error)."""

    code = "no_memory"


def _field(context: Any, name: str) -> Any:
    if context is None:
        return None
    if isinstance(context, dict):
        return context.get(name)
    return getattr(context, name, None)


class MemoryClass(Protocol):
    """What opens a project's memory from its folder, and wraps a bare ``ContextTree``: ``Memory``."""

    def __call__(self, tree: Any) -> Any: ...
    def open(self, path: Any) -> Any: ...


def open_memory(home: str | Path, memory_class: MemoryClass | None) -> Any:
    """The memory of the project at ``home`` (it must exist), opened with ``memory_class`` once per
    process."""
    key = Path(home).expanduser().resolve()
    with _lock:
        mem = _opened.get(key)
        if mem is None:
            if memory_class is None:
                raise NoMemory(f"the run's context names the project {str(key)!r}, but these tools and graphs were "
                               "built without Memory to open it with: build them with memgrove.tools or "
                               "memgrove.graphs (or Memory.tools/graph), or pass memory_class=Memory")
            mem = _opened[key] = memory_class.open(key)
        return mem


def memory_from_context(context: Any, memory_class: MemoryClass | None = None) -> Any:
    """The memory a run's context names, or None."""
    mem = _field(context, "memory")
    if mem is not None:
        return mem
    home = _field(context, "memgrove_home")
    return open_memory(home, memory_class) if home else None


class MemoryRef:
    """A tool's way to its memory: the run's context if it names one, else the one given at build time."""

    def __init__(self, memory: Any = None, memory_class: MemoryClass | None = None):
        if memory is not None and not hasattr(getattr(memory, "tree", memory), "search"):
            raise TypeError(f"memory tools need a memgrove Memory or ContextTree, not {type(memory).__name__}")
        self.memory = memory
        self.memory_class = memory_class

    def get(self, runtime: Any = None) -> Any:
        mem = memory_from_context(getattr(runtime, "context", None), self.memory_class) or self.memory
        if mem is None:
            raise NoMemory("these memory tools were built without a memory: pass one to memory_tools(memory), "
                           "or run the graph with context={'memgrove_home': '/path/to/project'}")
        return mem

    def tree(self, runtime: Any = None) -> Any:
        mem = self.get(runtime)
        return getattr(mem, "tree", mem)

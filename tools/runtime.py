"""Which memory a tool works on: the one its factory was given, or the run's context.

A tool looks first in the graph run's context (LangChain 1.x ``ToolRuntime``),
then at the memory its factory was given, so one compiled graph serves many
projects::

    agent.invoke({"messages": [...]}, context={"memgrove_home": "/path/to/project"})

The context may be a mapping or an object with a ``memory`` (a ``Memory``) or a
``memgrove_home`` (a project folder, opened once per process and kept).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

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


def open_memory(home: str | Path) -> Any:
    """The ``Memory`` of the project at ``home``, opened once per process (it must exist)."""
    from memgrove.memory import Memory

    key = Path(home).expanduser().resolve()
    with _lock:
        mem = _opened.get(key)
        if mem is None:
            mem = _opened[key] = Memory.open(key)
        return mem


def memory_from_context(context: Any) -> Any:
    """The memory a run's context names, or None."""
    mem = _field(context, "memory")
    if mem is not None:
        return mem
    home = _field(context, "memgrove_home")
    return open_memory(home) if home else None


class MemoryRef:
    """A tool's way to its memory: the run's context if it names one, else the one given at build time."""

    def __init__(self, memory: Any = None):
        if memory is not None and not hasattr(getattr(memory, "tree", memory), "search"):
            raise TypeError(f"memory tools need a memgrove Memory or ContextTree, not {type(memory).__name__}")
        self.memory = memory

    def get(self, runtime: Any = None) -> Any:
        mem = memory_from_context(getattr(runtime, "context", None)) or self.memory
        if mem is None:
            raise NoMemory("these memory tools were built without a memory: pass one to memory_tools(memory), "
                           "or run the graph with context={'memgrove_home': '/path/to/project'}")
        return mem

    def tree(self, runtime: Any = None) -> Any:
        mem = self.get(runtime)
        return getattr(mem, "tree", mem)

"""The memory agent: a general LangChain 1.x ``create_agent`` with the memory tools in its loop.

The same model that reasons about the task searches memory before answering
and curates what it learned afterwards, so the next run starts from it::

    agent = build_memory_agent(memory, model=ChatOpenAI(...), tools=[my_tool])
    agent.invoke({"messages": [("user", "...")]}, {"configurable": {"thread_id": "t1"}})

``memory`` may be left out: the tools then find it in the run's context
(``context={"memgrove_home": ...}``), so one compiled agent serves many projects.
``model`` may be left out: it is then resolved from ``MEMGROVE_MODEL`` at the
first model call, so the graph can be built (and listed by ``langgraph dev``)
with no key. Threads persist with a checkpointer; ``sqlite_checkpointer(memory)``
keeps them in ``.memgrove/threads.db``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any, Sequence

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatResult

from memgrove.tools.runtime import MemoryClass, MemoryContext
from memgrove.tools.toolset import memory_tools
from memgrove.tree.writes.operations import OPS

from .llm import prompt, resolve_model


class UnconfiguredModel(BaseChatModel):
    """Stands in for the model until ``MEMGROVE_MODEL`` names one; calling it says what to set."""

    @property
    def _llm_type(self) -> str:
        return "memgrove-unconfigured"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        raise RuntimeError("no model configured: set MEMGROVE_MODEL (and OPENAI_API_KEY, or OPENAI_BASE_URL "
                           "for a local OpenAI-compatible server), or pass model= to build_memory_agent")


class ConfiguredModel(AgentMiddleware):
    """Swaps in the model ``MEMGROVE_MODEL`` names, resolved at the first call, not at import:
    listing the graph must not need a key. Sync and async (``langgraph dev`` runs graphs async)."""

    def __init__(self):
        super().__init__()
        self._model: Any = None

    def _resolve(self) -> Any:
        if self._model is None:
            self._model = resolve_model(None) or UnconfiguredModel()
        return self._model

    def wrap_model_call(self, request: ModelRequest, handler):
        return handler(request.override(model=self._resolve()))

    async def awrap_model_call(self, request: ModelRequest, handler):
        # building the client reads certificate files: keep that off the event loop
        model = self._model or await asyncio.to_thread(self._resolve)
        return await handler(request.override(model=model))


def build_memory_agent(memory: Any = None, *, model: Any = None, tools: Sequence[Any] = (),
                       system_prompt: str | None = None, allow: tuple[str, ...] = OPS,
                       checkpointer: Any = None, store: Any = None, middleware: Sequence[Any] = (),
                       name: str = "memgrove-agent", memory_class: MemoryClass | None = None):
    """A ``create_agent`` agent whose tools are ``tools`` plus the memory tools (a project folder a run's
    context names opened with ``memory_class``, ``Memory``, handed in)."""
    all_tools = list(tools) + memory_tools(memory, allow=allow, actor="memory-agent", memory_class=memory_class)
    mw = list(middleware)
    if model is None:
        model, mw = UnconfiguredModel(), [ConfiguredModel(), *mw]
    return create_agent(model, all_tools, system_prompt=system_prompt or prompt("memory_agent_v1"),
                        middleware=mw, context_schema=MemoryContext, checkpointer=checkpointer, store=store,
                        name=name)


def sqlite_checkpointer(memory: Any):
    """A SQLite checkpointer for agent threads in ``.memgrove/threads.db`` (kept open for the process)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    home = getattr(memory, "tree", memory).home
    conn = sqlite3.connect(home / "threads.db", check_same_thread=False)
    return SqliteSaver(conn)

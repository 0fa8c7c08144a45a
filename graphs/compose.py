"""Memory as one line of your own ``StateGraph``::

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember_node(memory))   # the user's last turn -> an entry
    builder.add_node("recall", recall_node(memory))       # the last human turn -> one AIMessage answer

``recall_node`` is the query graph itself: it reads ``question`` (or the last
human message of ``messages``) and writes ``answer`` (and, when the parent has
``messages``, appends one AIMessage). ``remember_node`` writes with the
verbatim curator (no LLM): the same text remembered twice changes nothing.
Both follow the run's context (``{"memgrove_home": ...}`` / ``{"memory": ...}``).
"""

from __future__ import annotations

from typing import Any, Callable

from langgraph.runtime import Runtime

from memgrove.tools.runtime import MemoryClass, MemoryRef
from memgrove.tree.base.errors import InvalidInput

from .query import build_query_graph, question_text


def recall_node(memory: Any = None, *, model: Any = None, settings: Any = None,
                memory_class: MemoryClass | None = None):
    """The query graph, ready to ``add_node``: ``question``/``messages`` in, ``answer``/one AIMessage out."""
    return build_query_graph(memory, model=model, settings=settings, memory_class=memory_class)


def remember_text(state: dict, text_key: str | None) -> str:
    """What to remember: ``state[text_key]``, or the last human message of ``messages``."""
    text = state.get(text_key) if text_key else question_text({"messages": state.get("messages")})
    if not isinstance(text, str) or not text.strip():
        where = f"the state's {text_key!r}" if text_key else "the last human message of 'messages'"
        raise InvalidInput(f"nothing to remember: {where} is empty or missing")
    return text


def remember_node(memory: Any = None, *, text_key: str | None = None,
                  memory_class: MemoryClass | None = None) -> Callable[..., dict]:
    """A node that curates one text into memory and changes no state.

    ``text_key``: the state key holding the text; default: the last human message of ``messages``.
    ``memory_class`` (``Memory``, handed in) opens a project folder the run's context names, and
    wraps a bare ``ContextTree`` to ingest into it.
    """
    ref = MemoryRef(memory, memory_class)

    def remember(state: dict, runtime: Runtime | None = None) -> dict:
        text = remember_text(state, text_key)
        mem = ref.get(runtime)
        if not hasattr(mem, "ingest"):            # a bare ContextTree
            if memory_class is None:
                raise TypeError("remember_node over a bare ContextTree needs memory_class=Memory to ingest with "
                                "(memgrove.graphs.remember_node hands it in)")
            mem = memory_class(mem)
        mem.ingest(text=text)
        return {}

    return remember

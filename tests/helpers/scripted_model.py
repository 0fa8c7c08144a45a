"""A scripted LangChain chat model for tests: replays replies, records calls.

langchain-core's fake chat models implement no ``bind_tools``, and
``FakeMessagesListChatModel`` hands out the same message object (same id) when
it cycles, which ``add_messages`` then overwrites. This one gives every reply
a fresh id, keeps tool calls, records what it was asked, and can raise a given
exception on a given call (a timeout, an HTTP error) to exercise degradation.

>>> m = ScriptedChatModel(replies=[tool_call("search_knowledge", query="jwt"), "The answer."])
>>> m.bind_tools(tools).invoke("q").tool_calls[0]["name"]           # doctest: +SKIP
'search_knowledge'
>>> m.invoke("q").content, len(m.calls)                             # doctest: +SKIP
('The answer.', 2)
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> AIMessage:
    """An assistant turn that calls one tool (the id is filled in on replay)."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "", "type": "tool_call"}])


class ScriptedChatModel(BaseChatModel):
    """Replays ``replies`` in order, one per call; records every call.

    A reply is an ``AIMessage`` (tool calls kept), a ``str`` (plain content), or
    an exception instance, which that call raises. ``raise_on={2: exc}`` raises
    ``exc`` on the third call instead of consuming a reply. Calling more often
    than scripted raises ``AssertionError`` naming the call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: list[Any] = Field(default_factory=list)
    raise_on: dict[int, Any] = Field(default_factory=dict)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    call_tools: list[list[str]] = Field(default_factory=list)     # tool names bound at each call
    bound_tools: list[list[str]] = Field(default_factory=list)    # every bind_tools() call
    replied: list[AIMessage] = Field(default_factory=list)
    cursor: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):
        schemas = [convert_to_openai_tool(t) for t in tools]
        self.bound_tools.append([s["function"]["name"] for s in schemas])
        # a binding of this very instance: calls through it are recorded here too
        return self.bind(tools=schemas, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        n = len(self.calls)
        self.calls.append(list(messages))
        self.call_tools.append([t["function"]["name"] for t in kwargs.get("tools") or []])
        if n in self.raise_on:
            raise self.raise_on[n]
        if self.cursor >= len(self.replies):
            raise AssertionError(f"ScriptedChatModel: call {n + 1}, but only {len(self.replies)} replies are scripted")
        reply = self.replies[self.cursor]
        self.cursor += 1
        if isinstance(reply, BaseException):
            raise reply
        message = self._fresh(reply)
        self.replied.append(message)
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def _fresh(reply: Any) -> AIMessage:
        """A copy with a new id (and ids for its tool calls), so replies never overwrite each other."""
        n = next(_ids)
        if isinstance(reply, str):
            return AIMessage(content=reply, id=f"scripted-{n}")
        if not isinstance(reply, AIMessage):
            raise TypeError(f"a scripted reply must be an AIMessage, str or exception, not {type(reply).__name__}")
        calls = [{**c, "id": c.get("id") or f"call_{n}_{i}"} for i, c in enumerate(reply.tool_calls)]
        return AIMessage(content=reply.content, tool_calls=calls, invalid_tool_calls=list(reply.invalid_tool_calls),
                         additional_kwargs=dict(reply.additional_kwargs), id=f"scripted-{n}")

    # -- what the tests look at --------------------------------------------------
    @property
    def remaining(self) -> int:
        return len(self.replies) - self.cursor

    def prompt_text(self, call: int = -1) -> str:
        """All message contents of one call, joined: to check what the model was shown."""
        return "\n".join(_text(m) for m in self.calls[call])


def _text(m: BaseMessage) -> str:
    c = m.content
    if isinstance(c, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c)

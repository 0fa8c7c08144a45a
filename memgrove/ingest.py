"""What ``ingest`` returns and the conversations it reads, shared by ``Memory`` and ``RemoteMemory``
(which reads a conversation here before the LLM curator run in this process sees it): neither
imports the other for them."""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from memgrove.tree.base.errors import InvalidInput
from memgrove.tree.base.nesting import deep_error, too_deep
from memgrove.tree.writes.operations import OpResult

if TYPE_CHECKING:
    from memgrove.tree.inputs.conversation_formats import Conversation


class IngestResult(list):
    """``Memory.ingest``'s results (a list of ``OpResult``, in order) and what it left out.

    ``skipped``: counts of what was read but not curated, by kind -- ``"empty messages"``
    (no text: empty, whitespace, a tool call without words), ``"system prompts"``, ``"repeated
    sessions"`` and ``"repeated messages"`` (the same id and words again, curated once), ``"empty
    conversations"`` (in an export), and files (``tree/inputs/input_folders.py``: ``"empty files"``,
    ``"binary files"``, ...); only kinds that occurred.
    """

    def __init__(self, results: Iterable[OpResult] = (), skipped: dict[str, int] | None = None):
        super().__init__(results)
        self.skipped: dict[str, int] = dict(skipped or {})

    def skipped_line(self) -> str:
        """``"skipped 2 empty messages, 1 repeated session"``, or "" when nothing was."""
        parts = [f"{n} {kind[:-1] if n == 1 else kind}" for kind, n in self.skipped.items() if n]
        return "skipped " + ", ".join(parts) if parts else ""


def skipped_of(conv: Conversation) -> dict[str, int]:
    counts = {"empty messages": len(conv.skipped_empty), "system prompts": len(conv.skipped_system),
              "repeated sessions": len(conv.repeated_sessions),
              "repeated messages": len(conv.repeated_messages)}
    return {k: n for k, n in counts.items() if n}


def load_conversations(conv: Any, limit: int, *, system: bool = False,
                        skipped: dict[str, int] | None = None) -> builtins.list[Conversation]:
    """Every conversation a file or value holds (an export holds many): each read into
    memgrove's shape. In an export of several, one without any text is skipped and counted
    (``"empty conversations"`` in ``skipped``)."""
    from memgrove.tree.inputs import chat_exports

    found, empty = chat_exports.read(conversation_value(conv, limit), system=system)
    if empty and skipped is not None:
        skipped["empty conversations"] = skipped.get("empty conversations", 0) + empty
    return found


def load_conversation(conv: Any, limit: int, *, system: bool = False) -> Conversation:
    """One conversation (the LLM curator reads one at a time), or a clear InvalidInput."""
    found = load_conversations(conv, limit, system=system, skipped={})
    if len(found) > 1:
        raise InvalidInput(f"this input holds {len(found)} conversations; the LLM curator reads one at a "
                           "time: curate it with the verbatim curator (--verbatim), or one conversation at a time")
    return found[0]


def conversation_value(conv: Any, limit: int) -> Any:
    """A conversation file (JSON) read, or the value as given (a clear InvalidInput otherwise)."""
    from memgrove.tree.inputs import curator

    if isinstance(conv, (str, os.PathLike)):
        return curator.read_json_input(Path(conv), limit)
    if too_deep(conv):
        raise deep_error("the conversation")
    return conv

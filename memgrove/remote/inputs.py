"""What ``RemoteMemory`` sends for its writes: files and folders read on this machine as
``(name, text)``, a conversation as JSON, and the server's results as ``OpResult``.

Standard library and light memgrove modules only (the CLI's cold path imports ``remote``);
the readers are imported where they are used.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from memgrove.tree.base.errors import InvalidInput

if TYPE_CHECKING:
    from memgrove.tree.writes.operations import OpResult


def _results(data: dict[str, Any]) -> builtins.list["OpResult"]:
    from memgrove.tree.writes.operations import OpResult

    return [OpResult.from_dict(r) for r in data["results"]]


def _documents(files: Iterable[str | os.PathLike], exclude: Iterable[str],
               limit: int) -> tuple[builtins.list[tuple[str, str]], dict[str, int]]:
    """Files and folders read here, as ``(name, text)`` for the server (folders expanded as
    ``Memory.ingest`` expands them, ``.gitignore`` and ``exclude`` respected)."""
    files = builtins.list(files)
    if not files:
        return [], {}
    from memgrove.tree.inputs import curator, input_folders

    paths, skipped = input_folders.expand(files, exclude=exclude, max_bytes=limit)
    docs = []
    for p in paths:
        try:
            text = curator.decode_input(curator.read_input(Path(p), limit), str(p), limit)
        except OSError as exc:
            raise InvalidInput(f"cannot read {p}: {exc.strerror or exc}") from None
        docs.append((_name(Path(p)), text))
    return docs, dict(skipped)


def _name(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _conversation_json(conversation: Any, limit: int) -> Any:
    """A conversation as JSON: a file's contents, message objects as LangChain's message dicts."""
    if isinstance(conversation, (str, os.PathLike)):
        from memgrove.tree.inputs import curator

        return curator.read_json_input(Path(conversation), limit)
    messages = conversation.get("messages") if isinstance(conversation, dict) else conversation
    if isinstance(messages, builtins.list) and any(hasattr(m, "type") and hasattr(m, "content") for m in messages):
        from langchain_core.messages import messages_to_dict

        plain = [messages_to_dict([m])[0] if hasattr(m, "content") else m for m in messages]
        return {**conversation, "messages": plain} if isinstance(conversation, dict) else plain
    return conversation

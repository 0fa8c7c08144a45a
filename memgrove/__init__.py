"""memgrove: agent-native memory for LangGraph agents.

    from memgrove import Memory
    mem = Memory.open(".", create=True)
    mem.curate([{"op": "ADD", "path": "auth/jwt/refresh_rotation.md", "title": "Refresh token rotation",
                 "content": "Refresh tokens rotate on every use.", "reason": "learned in review"}])
    mem.search("refresh token rotation")

Importing memgrove is cheap: no LangChain, no LangGraph, not even ``typing`` (the console script's
fast path, memgrove/cli/fastpath.py, counts milliseconds).
"""

from __future__ import annotations

import os as _os

# Installed, memgrove.tree, .tools and .graphs are folders inside this one; a source checkout keeps
# them beside it (tree/, tools/, graphs/). Where the checkout's root comes first on sys.path
# (`python -m ...` run there), this folder is the package imported: its subpackages are found beside it.
_here = _os.path.dirname(_os.path.abspath(__file__))
_checkout = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "tree")) and all(
    _os.path.isfile(_os.path.join(_checkout, name, "__init__.py")) for name in ("tree", "tools", "graphs")
):
    __path__.append(_checkout)
del _here, _checkout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memgrove.graphs.llm import chat_model
    from memgrove.graphs.tiers import Answer
    from memgrove.store.tree_store import ContextTreeStore
    from memgrove.memory import Memory
    from memgrove.remote.memory import BadReply, RemoteMemory, ServerError, ServerTimeout, ServerUnreachable
    from memgrove.tree.doctor import DoctorReport
    from memgrove.tree.entries.entry import Entry
    from memgrove.tree.base.errors import (
        BatchRejected,
        Cancelled,
        DreamRunning,
        EntryNotFound,
        InvalidEntry,
        InvalidInput,
        InvalidPath,
        ItemNotFound,
        JournalError,
        LockTimeout,
        MemgroveError,
        NotWritable,
        OperationConflict,
        OperationNotFound,
        PrimaryUnreachable,
        QuestionTooLong,
        ReadOnlyReplica,
        ReviewConflict,
        TreeNotFound,
        TreeOutside,
    )
    from memgrove.tree.writes.journal import JournalRecord
    from memgrove.tree.writes.operations import OpResult
    from memgrove.tree.ranking.hits import Hit
    from memgrove.tree.settings import TreeSettings

# Names are imported on first use: a client that only needs ``memgrove.server.registry``
# (to find a running server) must not pay for Whoosh and YAML.
_WHERE = {
    "Answer": "memgrove.graphs.tiers",
    "chat_model": "memgrove.graphs.llm",             # imports LangChain's OpenAI client: only when asked for
    "ContextTreeStore": "memgrove.store.tree_store",  # imports LangGraph: only when asked for
    "Memory": "memgrove.memory",
    "RemoteMemory": "memgrove.remote.memory",        # Memory.connect's: the standard library only
    "ServerError": "memgrove.remote.memory",
    "ServerTimeout": "memgrove.remote.memory",       # a call past its timeout
    "BadReply": "memgrove.remote.memory",            # a reply not JSON, of another shape, or too large
    "ServerUnreachable": "memgrove.remote.memory",
    "DoctorReport": "memgrove.tree.doctor",
    "Entry": "memgrove.tree.entries.entry",
    "JournalRecord": "memgrove.tree.writes.journal",
    "OpResult": "memgrove.tree.writes.operations",
    "Hit": "memgrove.tree.ranking.hits",
    "TreeSettings": "memgrove.tree.settings",
    **{name: "memgrove.tree.base.errors" for name in (
        "BatchRejected", "Cancelled", "DreamRunning", "EntryNotFound", "InvalidEntry", "InvalidInput", "InvalidPath",
        "ItemNotFound", "JournalError", "LockTimeout", "MemgroveError", "NotWritable", "OperationConflict",
        "OperationNotFound", "PrimaryUnreachable", "QuestionTooLong", "ReadOnlyReplica", "ReviewConflict", "TreeNotFound", "TreeOutside")},
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'memgrove' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "Answer",
    "BadReply",
    "BatchRejected",
    "Cancelled",
    "chat_model",
    "ContextTreeStore",
    "DoctorReport",
    "DreamRunning",
    "Entry",
    "EntryNotFound",
    "Hit",
    "InvalidEntry",
    "InvalidInput",
    "InvalidPath",
    "ItemNotFound",
    "JournalError",
    "JournalRecord",
    "LockTimeout",
    "MemgroveError",
    "Memory",
    "NotWritable",
    "OperationConflict",
    "OperationNotFound",
    "OpResult",
    "PrimaryUnreachable",
    "QuestionTooLong",
    "ReadOnlyReplica",
    "RemoteMemory",
    "ReviewConflict",
    "ServerError",
    "ServerTimeout",
    "ServerUnreachable",
    "TreeNotFound",
    "TreeOutside",
    "TreeSettings",
    "__version__",
]

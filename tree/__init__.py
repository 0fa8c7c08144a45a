"""memgrove.tree — the Context Tree, a plain library (no LangChain, no CLI).

    from memgrove.tree import ContextTree
    tree = ContextTree.open(".", create=True)
    tree.curate([{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "...",
                  "content": "...", "reason": "..."}])
    tree.search("refresh token")
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .doctor import DoctorReport, diagnose
    from .entries.entry import Entry, parse, serialize
    from .base.errors import (BatchRejected, Cancelled, InvalidEntry, InvalidInput, InvalidPath,
        JournalError, LockTimeout, MemgroveError, NotWritable, OperationConflict, TreeNotFound)
    from .writes.journal import Change, JournalRecord
    from .writes.operations import OPS, OpResult
    from .entries.paths import normalize_entry_path, normalize_folder, snake_case
    from .ranking.hits import Hit
    from .settings import TreeSettings
    from .base.home import locate_home
    from .store import ContextTree

# Names are imported on first use: a client that only needs ``errors`` (the CLI talking to a
# running server) must not pay for Whoosh, SQLite and YAML.
_WHERE = {
    "DoctorReport": "doctor",
    "diagnose": "doctor",
    "Entry": "entries.entry",
    "parse": "entries.entry",
    "serialize": "entries.entry",
    "BatchRejected": "base.errors",
    "Cancelled": "base.errors",
    "InvalidEntry": "base.errors",
    "InvalidInput": "base.errors",
    "InvalidPath": "base.errors",
    "JournalError": "base.errors",
    "LockTimeout": "base.errors",
    "MemgroveError": "base.errors",
    "NotWritable": "base.errors",
    "OperationConflict": "base.errors",
    "TreeNotFound": "base.errors",
    "Change": "writes.journal",
    "JournalRecord": "writes.journal",
    "OPS": "writes.operations",
    "OpResult": "writes.operations",
    "normalize_entry_path": "entries.paths",
    "normalize_folder": "entries.paths",
    "snake_case": "entries.paths",
    "Hit": "ranking.hits",
    "TreeSettings": "settings",
    "ContextTree": "store",
    "locate_home": "base.home",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "OPS", "BatchRejected", "Cancelled", "Change", "ContextTree", "DoctorReport", "Entry", "Hit", "InvalidEntry", "InvalidInput",
    "InvalidPath", "JournalError", "JournalRecord", "LockTimeout", "MemgroveError", "NotWritable", "OpResult",
    "OperationConflict", "TreeNotFound", "TreeSettings", "diagnose", "locate_home", "normalize_entry_path",
    "normalize_folder", "parse", "serialize", "snake_case",
]

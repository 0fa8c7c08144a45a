"""memgrove.tree — the Context Tree, a plain library (no LangChain, no CLI).

    from memgrove.tree import ContextTree
    tree = ContextTree.open(".", create=True)
    tree.curate([{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "...",
                  "content": "...", "reason": "..."}])
    tree.search("refresh token")
"""

from .doctor import DoctorReport, diagnose
from .entry import Entry, parse, serialize
from .errors import (
    BatchRejected,
    InvalidEntry,
    InvalidInput,
    InvalidPath,
    JournalError,
    LockTimeout,
    MemgroveError,
    NotWritable,
    OperationConflict,
    TreeNotFound,
)
from .journal import Change, JournalRecord
from .operations import OPS, OpResult
from .paths import normalize_entry_path, normalize_folder, snake_case
from .search import Hit
from .settings import TreeSettings
from .store import ContextTree, locate_home

__all__ = [
    "OPS", "BatchRejected", "Change", "ContextTree", "DoctorReport", "Entry", "Hit", "InvalidEntry", "InvalidInput",
    "InvalidPath", "JournalError", "JournalRecord", "LockTimeout", "MemgroveError", "NotWritable", "OpResult",
    "OperationConflict", "TreeNotFound", "TreeSettings", "diagnose", "locate_home", "normalize_entry_path",
    "normalize_folder", "parse", "serialize", "snake_case",
]

"""Errors raised by the Context Tree library.

Every error a user can cause is a subclass of ``MemgroveError`` and carries a
one-line message that says what is wrong and, where it helps, how to fix it::

    MemgroveError
    ├── TreeNotFound        no .memgrove/ here or above, and create=False
    ├── TreeOutside         .memgrove/ or its tree/ is a symbolic link, or resolves outside its project
    ├── InvalidPath         a path breaks the rules (escape, depth, reserved name)
    │   └── EntryNotFound   ... or names no entry or folder
    ├── InvalidEntry        an entry file or frontmatter cannot be parsed
    ├── InvalidInput        an ingest input is binary, too large or not UTF-8
    │   └── QuestionTooLong a question or search query longer than ``MAX_QUESTION_CHARS``
    ├── BatchRejected       a curate batch failed validation; nothing was written
    │                       (``.errors`` holds one message per invalid op)
    ├── OperationConflict   undo refused: the entry changed after the operation
    │   └── ReviewConflict  a queued change's files changed since it was proposed
    ├── JournalError        an unreadable journal, nothing to undo
    │   └── OperationNotFound  an unknown operation id
    │       └── ItemNotFound   an unknown review item or dream run
    ├── DreamRunning        another ``memgrove dream`` is running on this tree
    ├── LockTimeout         another writer held the tree's lock for too long
    ├── NotWritable         the disk is full, or the tree is read-only; nothing was written
    ├── PrimaryUnreachable  a read replica could not reach its primary to forward a write;
    │                       nothing was applied here
    ├── ReadOnlyReplica     a write reached a read replica's own tree (its writes go to the primary)
    └── Cancelled           a write was cancelled (time limit, client gone) before its commit
                            point; nothing was written (tree/writes/cancel.py)

Each class has a stable ``code`` (``"invalid_path"``…): the CLI's ``--json`` errors and the
server's error bodies carry it, so clients can branch on it without parsing messages.
"""

from __future__ import annotations


class MemgroveError(Exception):
    """Base class of every error memgrove raises on purpose."""

    code = "memgrove_error"


class TreeNotFound(MemgroveError):
    """No ``.memgrove/`` was found and the caller did not ask to create one."""

    code = "tree_not_found"


class TreeOutside(MemgroveError):
    """``.memgrove/`` or its ``tree/`` is a symbolic link or resolves outside its project: refused,
    because every read and write of the tree would then land somewhere the project does not hold."""

    code = "tree_outside"


class InvalidPath(MemgroveError):
    """A path is not a valid tree path, or would resolve outside the tree."""

    code = "invalid_path"


class EntryNotFound(InvalidPath):
    """No entry or folder at a valid path (the code stays ``invalid_path``; the server answers 404)."""


class InvalidEntry(MemgroveError):
    """An entry's markdown or YAML frontmatter cannot be parsed."""

    code = "invalid_entry"


class InvalidInput(MemgroveError):
    """Input given to the curator is binary, too large, or not UTF-8 text."""

    code = "invalid_input"


class QuestionTooLong(InvalidInput):
    """A question or search query is longer than memgrove answers (``tree/base/question_bound.py``); the server
    answers 413."""

    code = "question_too_long"


class BatchRejected(MemgroveError):
    """A batch of curate operations is invalid; nothing was written."""

    code = "batch_rejected"

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        if len(errors) == 1:
            text = f"batch rejected, nothing written: {errors[0]}"
        else:
            text = f"batch rejected, nothing written ({len(errors)} invalid operations): " + "; ".join(errors)
        super().__init__(text)


class OperationConflict(MemgroveError):
    """An undo would overwrite changes made after the operation being undone."""

    code = "operation_conflict"


class ReviewConflict(OperationConflict):
    """Approving a queued change whose files changed since it was proposed (never a blind overwrite)."""


class JournalError(MemgroveError):
    """An operation id is unknown, or the journal cannot be read."""

    code = "journal_error"


class OperationNotFound(JournalError):
    """No operation with that id in the journal (the code stays ``journal_error``; the server answers 404)."""


class ItemNotFound(OperationNotFound):
    """No pending review item, or no dream run, with that id (the server answers 404)."""


class DreamRunning(MemgroveError):
    """Another dream run holds the tree's dream lock: runs never overlap."""

    code = "dream_running"


class LockTimeout(MemgroveError):
    """The tree's writer lock could not be taken in time."""

    code = "lock_timeout"


class NotWritable(MemgroveError):
    """A write failed because the file system is full, read-only or not ours; nothing was written."""

    code = "not_writable"


class PrimaryUnreachable(MemgroveError):
    """A read replica could not reach its primary to forward a write; nothing was applied on the replica
    (the server answers 503: retry, or write to the primary once it is back)."""

    code = "primary_unreachable"


class ReadOnlyReplica(MemgroveError):
    """A write reached a read replica's own tree: a replica's files come from its primary only."""

    code = "read_only_replica"


class Cancelled(MemgroveError):
    """A write was cancelled before its commit point (its time ran out, its client went away); nothing was written."""

    code = "cancelled"

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message)
        self.reason = reason   # why: "it ran past request_timeout (120 s)", "its client went away"


def error_body(exc: BaseException, message: str | None = None) -> dict:
    """The JSON shape of an error for clients: ``{"error": {"code", "message"}}``.

    ``message`` overrides ``str(exc)`` (the CLI passes its terminal-safe text).
    Errors memgrove did not raise on purpose get the code ``"internal"``.
    """
    code = exc.code if isinstance(exc, MemgroveError) else "internal"
    text = message if message is not None else str(exc)
    body: dict = {"code": code, "message": text}
    if isinstance(exc, BatchRejected):
        body["errors"] = list(exc.errors)
    return {"error": body}

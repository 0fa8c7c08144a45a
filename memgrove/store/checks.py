"""The refusals every operation of a ``ContextTreeStore`` meets before it runs, in-process or over
HTTP (the remote store checks before sending, so both raise the same exceptions with the same
messages, and the server checks again what it is sent)."""

from __future__ import annotations

from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, Op, PutOp, SearchOp, validate_op_namespace

from memgrove.tree.base.errors import InvalidInput
from memgrove.tree.base.nesting import deep_error, too_deep
from memgrove.tree.base.question_bound import check_length


def check_op(op: Op) -> None:
    """Raise what LangGraph's stores raise for ``op`` (``InvalidNamespaceError``, ``NotImplementedError``
    for a TTL), ``InvalidInput`` for a key no file can hold, ``QuestionTooLong`` for a search query past
    ``MAX_QUESTION_CHARS``."""
    if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
        raise ValueError(f"Unknown operation type: {type(op)}")
    validate_op_namespace(op)
    if isinstance(op, PutOp):
        # the "langgraph" root is refused by BaseStore.put, and allowed by batch(), as in InMemoryStore
        if not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if too_deep(op.value):   # before json.dumps, which would raise RecursionError
            raise deep_error("the value")
        if op.ttl is not None:
            raise NotImplementedError("TTL is not supported by ContextTreeStore. "
                                      "Use a store implementation that supports TTL or set ttl=None.")
    if isinstance(op, (GetOp, PutOp)):
        if not isinstance(op.key, str):
            raise InvalidInput(f"a key must be a string, not {type(op.key).__name__}")
        if "\x00" in op.key:
            raise InvalidInput("a key may not contain a NUL character")
    if isinstance(op, SearchOp) and isinstance(op.query, str):
        check_length(op.query, "search query")
    if isinstance(op, GetOp) and not op.namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")

"""LangGraph's store refusals as ``MemgroveError``s, so that they cross HTTP with a code of their own.

Each is both: ``InvalidNamespace`` is LangGraph's ``InvalidNamespaceError`` (a ``ValueError``) and
a ``MemgroveError`` with code ``invalid_namespace``; ``NotSupported`` is a ``NotImplementedError``
(what a store without TTL raises for one) with code ``not_supported``. The server
(``memgrove/server/store_routes.py``) answers them with their code; the remote store raises them
again, so code written against ``ContextTreeStore`` catches the same exceptions either way.
"""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError

from memgrove.tree.base.errors import MemgroveError


class InvalidNamespace(MemgroveError, InvalidNamespaceError):
    """A namespace LangGraph refuses (empty, a dot or an empty segment, not text...)."""

    code = "invalid_namespace"


class NotSupported(MemgroveError, NotImplementedError):
    """A store feature the tree does not have (a TTL)."""

    code = "not_supported"

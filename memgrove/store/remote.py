"""``ContextTreeStore(url=...)``: LangGraph's ``BaseStore`` over HTTP, answered by ``memgrove serve``.

Every worker, replica or process of a LangGraph app that opens the store this way shares one
memory: the server's, with its one writer queue. ``batch`` sends its operations in one
``POST /api/store/batch`` (``memgrove/server/store_routes.py``) and the server runs them as the
in-process store runs them, so both pass the same conformance suite
(tests/test_store_conformance.py).

    >>> store = ContextTreeStore(url="http://127.0.0.1:8765", token="...")   # doctest: +SKIP
    >>> store = ContextTreeStore()      # MEMGROVE_URL and MEMGROVE_TOKEN set  # doctest: +SKIP

Errors: operations are checked here before anything is sent (``memgrove/store/checks.py``), so
LangGraph's refusals are raised as in-process; the server's ``{"error": {"code", "message"}}``
becomes the ``MemgroveError`` subclass with that code (``OperationConflict``, ``InvalidInput``...).
A write is never sent twice: when the server stops answering after a write was sent,
``ServerUnreachable`` says it may have been applied. A batch of reads is tried once more on a
connection that broke, which is harmless. The requests go through ``Memory.connect``'s wire
(``memgrove/remote/wire.py``): a batch ends within ``timeout`` seconds in all (``ServerTimeout``), a reply
past 64 MB, not JSON or of another shape is ``BadReply``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp

from memgrove.store import errors as store_errors
from memgrove.remote.wire import (  # noqa: F401 - ServerError, ServerUnreachable: this module's names
    TIMEOUT,
    BadReply,
    ServerError,
    ServerTimeout,
    ServerUnreachable,
    Wire,
    _NoAnswer,
    _Refused,
    as_dict,
    shaped,
    shown_url,
)
from memgrove.store.checks import check_op
from memgrove.store.filters import _check_filter
from memgrove.store.items import _as_json
from memgrove.tree.base import errors as tree_errors
from memgrove.tree.base.errors import BatchRejected, MemgroveError

URL_ENV = "MEMGROVE_URL"
TOKEN_ENV = "MEMGROVE_TOKEN"


def remote_from_env() -> tuple[str, str | None] | None:
    """``(MEMGROVE_URL, MEMGROVE_TOKEN)`` when ``MEMGROVE_URL`` is set (the token may be None), else None."""
    url = os.environ.get(URL_ENV, "").strip()
    return (url, os.environ.get(TOKEN_ENV) or None) if url else None


def _error_classes() -> dict[str, type[MemgroveError]]:
    """code -> the most general class with that code, of the library's errors and the store's."""
    table: dict[str, type[MemgroveError]] = {}
    modules = {tree_errors.__name__, store_errors.__name__}
    queue: list[type[MemgroveError]] = [MemgroveError]
    while queue:
        cls = queue.pop(0)
        if cls.__module__ in modules:
            table.setdefault(cls.code, cls)
        queue.extend(cls.__subclasses__())
    return table


def error_of(payload: Any, status: int, url: str) -> MemgroveError:
    """The exception an error answer stands for."""
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return ServerError("server_error", f"memgrove serve at {url} answered {status}")
    code, message = str(err.get("code") or "server_error"), err["message"]
    if code == BatchRejected.code and isinstance(err.get("errors"), list):
        return BatchRejected([str(e) for e in err["errors"]])
    cls = _error_classes().get(code)
    return cls(message) if cls is not None and cls is not MemgroveError else ServerError(code, message)


# -- operations and results as JSON -------------------------------------------------

def op_json(op: Op) -> dict[str, Any]:
    if isinstance(op, GetOp):
        return {"op": "get", "namespace": list(op.namespace), "key": op.key}
    if isinstance(op, PutOp):
        return {"op": "put", "namespace": list(op.namespace), "key": op.key,
                "value": None if op.value is None else _as_json(op.value),
                "index": op.index if op.index is None or op.index is False else list(op.index), "ttl": op.ttl}
    if isinstance(op, SearchOp):
        _check_filter(op.filter)
        return {"op": "search", "namespace_prefix": list(op.namespace_prefix), "query": op.query,
                "filter": op.filter, "limit": max(op.limit, 0), "offset": max(op.offset, 0)}
    assert isinstance(op, ListNamespacesOp)
    return {"op": "list_namespaces", "max_depth": op.max_depth, "limit": op.limit, "offset": op.offset,
            "match_conditions": [{"match_type": c.match_type, "path": list(c.path)}
                                 for c in op.match_conditions or ()]}


def _item(d: dict[str, Any], search: bool) -> Item:
    fields = dict(namespace=tuple(d["namespace"]), key=d["key"], value=d["value"],
                  created_at=datetime.fromisoformat(d["created_at"]), updated_at=datetime.fromisoformat(d["updated_at"]))
    return SearchItem(**fields, score=d.get("score")) if search else Item(**fields)


def result_of(op: Op, r: Any) -> Result:
    if isinstance(op, GetOp):
        return None if r is None else _item(r, search=False)
    if isinstance(op, SearchOp):
        return [_item(d, search=True) for d in r]
    if isinstance(op, ListNamespacesOp):
        return [tuple(ns) for ns in r]
    return None


# -- the store --------------------------------------------------------------------------

class RemoteContextTreeStore(BaseStore):
    """The store ``ContextTreeStore(url=...)`` gives: the server's Context Tree, over HTTP.

    ``token``: the project's token (default ``MEMGROVE_TOKEN``, else, for a server on this
    machine, the ``.memgrove/server.token`` of the project it serves here). ``index``: as for
    ``ContextTreeStore``, the value fields a put searches when it does not say.
    """

    supports_ttl = False

    def __init__(self, url: str, *, token: str | None = None, index: list[str] | None = None,
                 timeout: float = TIMEOUT):
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise tree_errors.InvalidInput(f"a memgrove server URL is http(s)://host:port, not {shown_url(url)!r}")
        self.index_fields = None if index is None else list(index)
        token = token or os.environ.get(TOKEN_ENV) or _local_token(parts.hostname, port)
        # (an httpx.Timeout, as this took before: its read timeout bounds the whole batch now)
        timeout = getattr(timeout, "read", timeout) or TIMEOUT
        self._wire = Wire(url, token, timeout=float(timeout), errors=error_of)
        self.url = shown_url(self._wire.url)

    def close(self) -> None:
        self._wire.close()

    def __enter__(self) -> "RemoteContextTreeStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ContextTreeStore(url={self.url!r})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """One request for the whole batch; reads see the tree as it was before its writes."""
        ops = list(ops)
        for op in ops:
            check_op(op)
        if not ops:
            return []
        try:
            body = json.dumps({"ops": [op_json(op) for op in ops], "index": self.index_fields}, ensure_ascii=False,
                              allow_nan=False)
        except (TypeError, ValueError) as exc:   # a filter holding what JSON cannot (values are checked above)
            raise tree_errors.InvalidInput(f"the operations are not JSON-serializable ({exc})") from None
        results = self._post("/api/store/batch", body, any(isinstance(op, PutOp) for op in ops))
        with shaped(self.url, "/api/store/batch"):
            if len(results) != len(ops):
                raise ValueError(f"{len(results)} results for {len(ops)} operations")
            return [result_of(op, r) for op, r in zip(ops, results)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # one blocking client shared by threads: its pool keeps connections open across calls
        return await asyncio.to_thread(self.batch, list(ops))

    def _post(self, path: str, body: str, writes: bool) -> list[Any]:
        what = "; the write may have been applied: see `memgrove history`" if writes else ""
        try:
            # a batch of reads: on a kept-alive connection, once more on a fresh one if it broke
            payload = self._wire.send("POST", path, raw=body.encode("utf-8"), retry=not writes)
        except _Refused as exc:     # nothing was sent
            raise ServerUnreachable(f"memgrove serve at {self.url} is not reachable ({exc})") from None
        except (_NoAnswer, OSError) as exc:
            raise ServerUnreachable(f"memgrove serve at {self.url} did not answer ({exc}){what}") from None
        except ServerTimeout as exc:
            raise ServerTimeout(f"{exc}{what}") from None
        with shaped(self.url, path):
            results = as_dict(self.url, path, payload)["results"]
            if not isinstance(results, list):
                raise TypeError("'results' is not a list")
            return results


def _local_token(host: str, port: int | None) -> str | None:
    """The token of the project served here on that port: its ``.memgrove/server.token``."""
    import ipaddress

    from memgrove.server import registry

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback or port is None:
        return None
    try:
        from memgrove.tree.base.home import locate_home

        home = locate_home(None)
    except MemgroveError:
        return None
    info = registry.read_registration(home)
    if info is None or info.get("port") != port or not info.get("auth", True):
        return None
    return registry.client_token(home, info)

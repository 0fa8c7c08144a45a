"""``ContextTreeStore``: the Context Tree as LangGraph's long-term memory interface, ``BaseStore``.

An item is an entry: its namespace names the folder, its key the file, and its value is the
entry. Writes are curate operations (the writer lock, the journal, undo); search is the tree's
BM25 index. The mapping and how it differs from ``InMemoryStore`` are in docs/store.md.

How namespaces, keys and values map to entry files (untrusted names hashed, nothing outside the
tree) is in ``memgrove.store.items``; filters and namespace match conditions are in
``memgrove.store.filters``. Their names stay importable from here.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memgrove.memory import Memory
from memgrove.store.checks import check_op
from memgrove.store.filters import (  # noqa: F401 - re-exported: memgrove.store.tree_store names them
    _FILTER_OPS,
    _check_filter,
    _condition,
    _number,
    _operator,
    matches,
)
from memgrove.store.items import (  # noqa: F401 - re-exported: memgrove.store.tree_store names them
    _CLEAN,
    _CONTROL,
    _HASHED,
    _STEM,
    META,
    SEARCH_SECTION,
    _as_json,
    _canon,
    _describe,
    _digest,
    _indexed_fields,
    _meta,
    _prefix_folder,
    _section_safe,
    _section_text,
    _timestamp,
    _title,
    encode_name,
    entry_op,
    folder_of_namespace,
    item_of,
    path_of,
    value_of,
)
from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.index.engine import IndexBroken
from memgrove.tree.base.errors import InvalidEntry, InvalidPath, OperationConflict
from memgrove.tree.entries.paths import CONTEXT_FILE, resolve_inside
from memgrove.tree.ranking.table import normalize

ACTOR = "langgraph-store"


# -- the store ---------------------------------------------------------------

class ContextTreeStore(BaseStore):
    """A LangGraph ``BaseStore`` over a memgrove Context Tree.

    >>> store = ContextTreeStore("/tmp/project")                     # doctest: +SKIP
    >>> store.put(("memories", "user_1"), "editor", {"text": "Prefers dark mode"})
    >>> store.search(("memories",), query="dark mode")[0].score      # doctest: +SKIP

    ``source``: a project folder (its ``.memgrove/`` is found upwards, or created) or an open
    ``Memory``, which the store then does not close. ``url`` (or, with neither, ``MEMGROVE_URL``):
    the memory a ``memgrove serve`` serves, over HTTP (``memgrove.store.remote``; ``token``, else
    ``MEMGROVE_TOKEN``); without any of them, the memory of the current folder. ``index``: the
    value fields searched when a ``put`` does not say (default: every top-level text field);
    ``put(index=False)`` keeps an item out of query search, ``put(index=["a", "b.c"])`` chooses fields.
    """

    supports_ttl = False

    def __new__(cls, source: str | os.PathLike | Memory | None = None, *, url: str | None = None,
                token: str | None = None, index: list[str] | None = None, create: bool = True) -> Any:
        if url is None and source is None:
            from memgrove.store.remote import remote_from_env

            url, token = remote_from_env() or (None, token)
        if url is None:
            return super().__new__(cls)
        if source is not None:
            raise TypeError("ContextTreeStore takes a project (source) or a server (url), not both")
        from memgrove.store.remote import RemoteContextTreeStore

        return RemoteContextTreeStore(url, token=token, index=index)   # not a ContextTreeStore: no __init__

    def __init__(self, source: str | os.PathLike | Memory | None = None, *, url: str | None = None,
                 token: str | None = None, index: list[str] | None = None, create: bool = True):
        if isinstance(source, Memory):
            self.memory, self._owned = source, False
        else:
            self.memory, self._owned = Memory.open(source, create=create), True
        self.index_fields = None if index is None else list(index)

    @property
    def tree(self):
        return self.memory.tree

    def close(self) -> None:
        if self._owned:
            self.memory.close()

    def __enter__(self) -> "ContextTreeStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ContextTreeStore({str(self.memory.home)!r})"

    # -- BaseStore ----------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Reads see the tree as it was before the batch (as in ``InMemoryStore``); the puts and
        deletes of one batch are one curate batch: one lock, one journal commit."""
        ops = list(ops)
        for op in ops:
            self._check(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                puts[(op.namespace, op.key)] = op   # the last put of a key wins
                results.append(None)
        if puts:
            self._write(list(puts.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # file and SQLite I/O: off the event loop (langgraph dev refuses blocking calls in it)
        return await asyncio.to_thread(self.batch, list(ops))

    _check = staticmethod(check_op)

    # -- reads ----------------------------------------------------------------
    def _read_text(self, rel: str) -> tuple[str, float] | None:
        try:
            p = resolve_inside(self.tree.root, rel)   # a symlink out of the tree is refused
            text = p.read_text(encoding="utf-8")
            return text, p.stat().st_mtime
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnicodeDecodeError, InvalidPath):
            return None

    def _read(self, rel: str) -> Item | None:
        found = self._read_text(rel)
        return item_of(rel, *found) if found else None

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        item = self._read(path_of(namespace, key))
        if item is None or item.namespace != tuple(namespace) or item.key != key:
            return None   # another item's file (hash collision) or an entry under other names
        return item

    def _paths_under(self, folder: str) -> list[str]:
        if not folder:
            return self.tree.entry_paths()
        try:
            return self.tree.entries_under(folder)
        except InvalidPath:
            return []

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        offset, limit = max(op.offset, 0), max(op.limit, 0)
        _check_filter(op.filter)
        if limit == 0:
            return []

        def keep(item: Item | None) -> bool:
            return (item is not None and item.namespace[:len(prefix)] == prefix
                    and (not op.filter or all(matches(item.value.get(k), v) for k, v in op.filter.items())))

        if not op.query or not op.query.strip():
            return self._listing(_prefix_folder(prefix), keep, offset, limit)
        folder = _prefix_folder(prefix)
        want = offset + limit
        n = max(50, want * 4)
        while True:
            raw = self._engine(op.query, n)
            found: list[SearchItem] = []
            for rel, score, _terms in raw:
                if rel.endswith("/" + CONTEXT_FILE) or (folder and not rel.startswith(folder + "/")):
                    continue
                it = self._read(rel)
                if keep(it):
                    found.append(SearchItem(namespace=it.namespace, key=it.key, value=it.value,
                                            created_at=it.created_at, updated_at=it.updated_at,
                                            score=normalize(score)))
                    if len(found) >= want:
                        return found[offset:want]
            if len(raw) < n:
                return found[offset:want]
            n *= 4

    def _listing(self, folder: str, keep: Callable[[Item | None], bool], offset: int,
                 limit: int) -> list[SearchItem]:
        """Items under ``folder``, the most recently written file first: a stat of each, and
        reads only until the page is full (reading every item took 135 ms for 100 of them)."""
        stamped = []
        for rel in self._paths_under(folder):
            try:
                stamped.append((os.stat(self.tree.root / rel).st_mtime_ns, rel))
            except OSError:
                continue
        stamped.sort(reverse=True)
        out: list[SearchItem] = []
        for _, rel in stamped:
            it = self._read(rel)
            if not keep(it):
                continue
            if offset:
                offset -= 1
                continue
            out.append(SearchItem(namespace=it.namespace, key=it.key, value=it.value, created_at=it.created_at,
                                  updated_at=it.updated_at))
            if len(out) >= limit:
                break
        return out

    def _engine(self, query: str, n: int) -> list[tuple[str, float, frozenset]]:
        tree = self.tree
        tree.ensure_fresh()   # hand edits since the last write are indexed first
        try:
            return tree.engine.search(query, boosts=tree.settings.boosts(), limit=n)
        except IndexBroken:
            tree.reindex()
            return tree.engine.search(query, boosts=tree.settings.boosts(), limit=n)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        # one folder holds one namespace: a folder's first readable entry names it
        by_folder: dict[str, list[str]] = {}
        for rel in self.tree.entry_paths():
            by_folder.setdefault(rel.rsplit("/", 1)[0], []).append(rel)
        found: set[tuple[str, ...]] = set()
        for paths in by_folder.values():
            for rel in paths:
                item = self._read(rel)
                if item is not None:
                    found.add(item.namespace)
                    break
        out = [ns for ns in found if all(_condition(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            out = list({ns[:op.max_depth] for ns in out})
        return sorted(out)[op.offset:op.offset + op.limit]

    # -- writes ---------------------------------------------------------------
    def _write(self, puts: list[PutOp]) -> None:
        with self.tree.lock.hold():
            self.tree.recover()
            ops = []
            for p in puts:
                rel = path_of(p.namespace, p.key)
                on_disk = (self.tree.root / rel).exists() or (self.tree.root / rel).is_symlink()
                if on_disk and not self._holds(rel, p.namespace, p.key):
                    raise OperationConflict(
                        f"{rel} holds another entry (not the store's item {_describe(p.namespace, p.key)}); "
                        "the store does not overwrite or delete it: edit it with curate, or use another key")
                if p.value is None:
                    if on_disk:
                        ops.append({"op": "DELETE", "path": rel, "reason": f"store delete {_describe(p.namespace, p.key)}"})
                    continue
                ops.append(entry_op(p.namespace, p.key, p.value, p.index, self.index_fields))
            if ops:
                self.memory.curate(ops, actor=ACTOR)

    def _holds(self, rel: str, namespace: tuple[str, ...], key: str) -> bool:
        """Whether the file at ``rel`` is the store's item (namespace, key), and no other entry."""
        found = self._read_text(rel)
        if found is None:
            return False
        try:
            meta = _meta(entry_mod.parse(found[0], where=rel))
        except InvalidEntry:
            return False
        return meta is not None and tuple(meta["namespace"]) == tuple(namespace) and meta["key"] == key


@contextmanager
def server_store() -> Iterator[BaseStore]:
    """The store ``langgraph.json`` names (``store.path``): the memory ``MEMGROVE_URL`` names
    (a ``memgrove serve`` every worker shares), else the memory of ``MEMGROVE_HOME`` (default: the
    folder the server starts in; see ``memgrove.sample.studio_home``); closed when the server stops."""
    from memgrove.sample import studio_home
    from memgrove.store.remote import remote_from_env

    remote = remote_from_env()
    store = ContextTreeStore(url=remote[0], token=remote[1]) if remote else ContextTreeStore(studio_home())
    try:
        yield store
    finally:
        store.close()

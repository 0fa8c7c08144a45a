"""``ContextTreeStore``: the Context Tree as LangGraph's long-term memory interface, ``BaseStore``.

An item is an entry: its namespace names the folder, its key the file, and its value is the
entry. Writes are curate operations (the writer lock, the journal, undo); search is the tree's
BM25 index. The mapping and how it differs from ``InMemoryStore`` are in docs/store.md.

Namespace segments and keys are untrusted text: a segment that is already a clean folder name
(``memories``, ``user_1``) is used as it is; any other becomes its snake_case form plus a hash of
the exact text (``User 1`` -> ``user_1_h…``), so different namespaces never share a folder and
nothing a caller writes can name a path outside the tree. The exact namespace and key are kept
in the entry's frontmatter and checked on every read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path

from memgrove.memory import Memory
from memgrove.tree import entry as entry_mod
from memgrove.tree.engine import IndexBroken
from memgrove.tree.errors import InvalidEntry, InvalidInput, InvalidPath, OperationConflict
from memgrove.tree.nesting import deep_error, too_deep
from memgrove.tree.paths import CONTEXT_FILE, MAX_FOLDERS, resolve_inside, snake_case
from memgrove.tree.search import normalize

ACTOR = "langgraph-store"
META = "store"                       # the frontmatter key holding namespace, key and value
SEARCH_SECTION = "Search text (store)"  # indexed text that is not a field of its own
_HASHED = re.compile(r"_h[0-9a-f]{12}$")
_CLEAN = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STEM = 48
_FILTER_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


# -- namespaces and keys <-> paths ------------------------------------------

def _digest(parts: list[str]) -> str:
    raw = json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()[:12]


def encode_name(parts: list[str], *, entry: bool = False) -> str:
    """A folder or file name for one segment (or several joined ones): the segment itself when
    it is a clean snake_case name, else its snake_case form plus a hash of the exact text.

    A hashed name always ends in ``_h`` and 12 hex digits and a clean one never does (a clean
    segment of that shape is hashed too), so the two kinds cannot meet.
    """
    if len(parts) == 1:
        s = parts[0]
        if _CLEAN.match(s) and len(s) <= 60 and not _HASHED.search(s) and not (entry and s == "context"):
            return s
    stem = snake_case("_".join(parts))[:_STEM].strip("_") or ("items" if not parts else "x")
    return f"{stem}_h{_digest(parts)}"


def folder_of_namespace(namespace: tuple[str, ...]) -> str:
    """``(a,)`` -> ``a/items_h…``; ``(a, b)`` -> ``a/b``; ``(a, b, c)`` -> ``a/b/c``;
    ``(a, b, c, d, …)`` -> ``a/b/<c, d, … joined and hashed>``: the tree holds 2–3 folders."""
    ns = list(namespace)
    if len(ns) == 1:
        parts = [encode_name(ns), encode_name([])]
    elif len(ns) <= MAX_FOLDERS:
        parts = [encode_name([s]) for s in ns]
    else:
        parts = [encode_name([ns[0]]), encode_name([ns[1]]), encode_name(ns[2:])]
    return "/".join(parts)


def path_of(namespace: tuple[str, ...], key: str) -> str:
    return f"{folder_of_namespace(namespace)}/{encode_name([key], entry=True)}.md"


def _prefix_folder(prefix: tuple[str, ...]) -> str:
    """The folder holding every namespace that starts with ``prefix`` ('' for the whole tree)."""
    if not prefix:
        return ""
    return "/".join(encode_name([s]) for s in prefix[:2])


# -- values <-> entries -----------------------------------------------------

def _as_json(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(f"a store value must be a dict, not {type(value).__name__}")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"the value is not JSON-serializable ({exc}); give text, numbers, "
                           "booleans, null, lists and dicts") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("the value holds a lone surrogate, which no text file can hold") from None
    return json.loads(text)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _section_text(fields: dict[str, str], search_text: list[str]) -> str:
    parts = [f"## {k}\n\n{v}" if v else f"## {k}" for k, v in fields.items()]
    if search_text:
        parts.append(f"## {SEARCH_SECTION}\n\n" + "\n\n".join(search_text))
    return "\n\n".join(parts)


def _section_safe(name: Any, text: Any) -> bool:
    """Whether ``text`` comes back exactly from a ``## name`` section of an entry file."""
    if not isinstance(name, str) or not isinstance(text, str) or name == SEARCH_SECTION:
        return False
    if not name or name != name.strip() or _CONTROL.search(name) or "\r" in text:
        return False
    return entry_mod.split_sections(f"## {name}\n\n{text}") == {name: text}


def _indexed_fields(value: dict[str, Any], index: Any, default: list[str] | None) -> tuple[list[str], list[str]]:
    """(top-level string fields written as searchable sections, other searchable texts)."""
    if index is False:
        return [], []
    paths = default if index is None else list(index)
    if paths is None or "$" in paths:
        return [k for k, v in value.items() if isinstance(v, str)], []
    fields, texts = [], []
    for p in paths:
        if p in value and isinstance(value[p], str):
            fields.append(p)
        else:
            texts += [t for t in get_text_at_path(value, p) if isinstance(t, str) and t.strip()]
    return list(dict.fromkeys(fields)), texts


def entry_op(namespace: tuple[str, ...], key: str, value: dict[str, Any], index: Any,
             default_index: list[str] | None) -> dict[str, Any]:
    """The UPSERT that writes an item: searchable text fields as ``## field`` sections (markdown a
    person reads), the other fields under the frontmatter's ``store.value``. If that would not
    read back exactly, the whole value is kept as JSON text instead (checked here, not hoped)."""
    value = _as_json(value)
    fields, nested = _indexed_fields(value, index, default_index)
    sections = {k: value[k] for k in fields if _section_safe(k, value[k])}
    texts = [value[k] for k in fields if k not in sections and value[k].strip()] + nested
    meta: dict[str, Any] = {"namespace": list(namespace), "key": key,
                            "index": index if index in (None, False) else list(index),
                            "value": {k: v for k, v in value.items() if k not in sections},
                            "sections": list(sections)}
    content = _section_text(sections, texts)
    title = _title(key, sections)
    probe = entry_mod.Entry(title=title, sections=entry_mod.sections_from_content(content), extra={META: meta})
    try:
        back = value_of(entry_mod.parse(entry_mod.serialize(probe)))
    except Exception:  # noqa: BLE001 - any failure to read back means: keep it as JSON
        back = None
    if back is None or _canon(back) != _canon(value):
        meta.update(value={}, sections=[], json=json.dumps(value, ensure_ascii=False))
        content = _section_text({}, [value[k] for k in fields if value[k].strip()] + nested)
    return {"op": "UPSERT", "path": path_of(namespace, key), "title": title, "content": content or None,
            "extra": {META: meta}, "replace": True, "reason": f"store put {_describe(namespace, key)}"}


def _title(key: str, sections: dict[str, str]) -> str:
    """The first line of the first searchable text field (a uuid key says nothing to a reader),
    else the key. Only searchable text: a title is indexed, so it must not leak ``index=False``."""
    for text in sections.values():
        line = next((" ".join(_CONTROL.sub(" ", ln).split()) for ln in text.split("\n") if ln.strip()), "")
        if line:
            return line if len(line) <= 80 else line[:79].rsplit(" ", 1)[0] + "…"
    return " ".join(_CONTROL.sub(" ", key).split())[:200] or "Untitled"


def _describe(namespace: tuple[str, ...], key: str) -> str:
    return json.dumps([list(namespace), key], ensure_ascii=False)[:300]


def _meta(e: entry_mod.Entry) -> dict[str, Any] | None:
    meta = e.extra.get(META)
    if (isinstance(meta, dict) and isinstance(meta.get("namespace"), list) and meta["namespace"]
            and all(isinstance(s, str) for s in meta["namespace"]) and isinstance(meta.get("key"), str)):
        return meta
    return None


def value_of(e: entry_mod.Entry) -> dict[str, Any] | None:
    """The value of an entry written by the store (None for any other entry)."""
    meta = _meta(e)
    if meta is None:
        return None
    if isinstance(meta.get("json"), str):
        return json.loads(meta["json"])
    value = dict(meta.get("value") or {})
    for name in meta.get("sections") or []:
        value[name] = e.sections.get(name, "")
    return value


def _timestamp(text: str, fallback: float) -> datetime:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.fromtimestamp(fallback, timezone.utc)


def item_of(rel: str, text: str, mtime: float) -> Item | None:
    """The item an entry file holds: a store item, or any other entry seen read-only as
    ``{title, summary, content, tags, path}`` under its folder names; None if unreadable."""
    try:
        e = entry_mod.parse(text, where=rel)
    except InvalidEntry:
        return None
    meta = _meta(e)
    if meta is not None:
        try:
            value = value_of(e)
        except ValueError:
            return None
        namespace, key = tuple(meta["namespace"]), meta["key"]
    else:
        *folders, name = rel.split("/")
        namespace, key = tuple(folders), name[:-3]
        value = {"title": e.title, "summary": e.summary, "content": e.body, "tags": list(e.tags), "path": rel}
    return Item(value=value or {}, key=key, namespace=namespace, created_at=_timestamp(e.created_at, mtime),
                updated_at=_timestamp(e.updated_at, mtime))


# -- filters and namespace conditions (LangGraph's documented semantics) -----

def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _operator(value: Any, op: str, target: Any) -> bool:
    if op == "$eq":
        return value == target
    if op == "$ne":
        return value != target
    if op not in _FILTER_OPS:
        raise InvalidInput(f"unsupported filter operator {op!r}; use {', '.join(_FILTER_OPS)}")
    a, b = _number(value), _number(target)
    if a is None or b is None:
        return False   # a missing or non-numeric field does not compare (InMemoryStore raises)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(item_value: Any, expected: Any) -> bool:
    """Whether a value matches a filter: equality (nested dicts and lists too) or operators."""
    if isinstance(expected, dict):
        if any(str(k).startswith("$") for k in expected):
            return all(_operator(item_value, k, v) for k, v in expected.items())
        return isinstance(item_value, dict) and all(matches(item_value.get(k), v) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (isinstance(item_value, (list, tuple)) and len(item_value) == len(expected)
                and all(matches(a, b) for a, b in zip(item_value, expected)))
    return item_value == expected


def _check_filter(flt: Any) -> None:
    if flt is None:
        return
    if not isinstance(flt, dict):
        raise InvalidInput(f"a filter must be a dict of field -> value or {{operator: value}}, not {type(flt).__name__}")
    stack = list(flt.values())
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            bad = [k for k in v if str(k).startswith("$") and k not in _FILTER_OPS]
            if bad:
                raise InvalidInput(f"unsupported filter operator {bad[0]!r}; use {', '.join(_FILTER_OPS)}")
            stack.extend(v.values())


def _condition(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if cond.match_type == "prefix" else zip(reversed(ns), reversed(path))
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidInput(f"unsupported match type {cond.match_type!r}: use 'prefix' or 'suffix'")
    return all(p == "*" or a == p for a, p in pairs)


# -- the store ---------------------------------------------------------------

class ContextTreeStore(BaseStore):
    """A LangGraph ``BaseStore`` over a memgrove Context Tree.

    >>> store = ContextTreeStore("/tmp/project")                     # doctest: +SKIP
    >>> store.put(("memories", "user_1"), "editor", {"text": "Prefers dark mode"})
    >>> store.search(("memories",), query="dark mode")[0].score      # doctest: +SKIP

    ``source``: a project folder (its ``.memgrove/`` is found upwards, or created) or an open
    ``Memory``, which the store then does not close. ``index``: the value fields searched when a
    ``put`` does not say (default: every top-level text field); ``put(index=False)`` keeps an item
    out of query search, ``put(index=["a", "b.c"])`` chooses fields.
    """

    supports_ttl = False

    def __init__(self, source: str | os.PathLike | Memory, *, index: list[str] | None = None,
                 create: bool = True):
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

    @staticmethod
    def _check(op: Op) -> None:
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
        if isinstance(op, GetOp) and not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")

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
def server_store() -> Iterator[ContextTreeStore]:
    """The store ``langgraph.json`` names (``store.path``): the memory of ``MEMGROVE_HOME``
    (default: the folder the server starts in; see ``memgrove.sample.studio_home``), closed when
    the server stops."""
    from memgrove.sample import studio_home

    store = ContextTreeStore(studio_home())
    try:
        yield store
    finally:
        store.close()

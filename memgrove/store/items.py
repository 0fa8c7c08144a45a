"""The store's items as tree entries: LangGraph namespaces and keys <-> tree paths, and values <->
entries (for ``ContextTreeStore`` in ``memgrove.store.tree_store``; the mapping is in docs/store.md).

Namespace segments and keys are untrusted text: a segment that is already a clean folder name
(``memories``, ``user_1``) is used as it is; any other becomes its snake_case form plus a hash of
the exact text (``User 1`` -> ``user_1_h…``), so different namespaces never share a folder and
nothing a caller writes can name a path outside the tree. The exact namespace and key are kept
in the entry's frontmatter and checked on every read.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import Item
from langgraph.store.base.embed import get_text_at_path

from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.base.errors import InvalidEntry, InvalidInput
from memgrove.tree.entries.paths import MAX_FOLDERS, snake_case

META = "store"                       # the frontmatter key holding namespace, key and value
SEARCH_SECTION = "Search text (store)"  # indexed text that is not a field of its own
_HASHED = re.compile(r"_h[0-9a-f]{12}$")
_CLEAN = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STEM = 48


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


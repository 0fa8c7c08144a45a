"""Building entries for the curate operations: a new one, an updated one, two merged, each
rendered only if the reader takes it back, and links rewritten when an entry goes."""

from __future__ import annotations

from typing import Any

import yaml

from ..entries import entry as entry_mod, frontmatter, validity
from ..entries.entry import SEE_ALSO, Entry, see_also
from ..base.errors import InvalidEntry
from ..entries.frontmatter import MAX_FRONTMATTER_BYTES
from .journal import Change
from .op_shapes import text_size
from .overlay import Overlay

# What to do when one part of an entry's frontmatter is too large.
_SHRINK = {
    "title": "shorten the title and put the text in 'content', which has no such limit",
    "summary": "keep the summary to a sentence or two and put the text in 'content', which has no such limit",
    "tags": "give fewer and shorter tags",
    "keywords": "give fewer and shorter keywords",
    "related": "link fewer entries in 'related'",
}


def _yaml_size(key: str, value: Any) -> int:
    """Bytes ``key: value`` takes in the frontmatter (its text alone, if that is already far too big)."""
    size = text_size(value, 2 * MAX_FRONTMATTER_BYTES)
    if size > 2 * MAX_FRONTMATTER_BYTES:
        return size
    return len(frontmatter.dump({key: value}).encode("utf-8", "surrogatepass"))


def _too_big(e: Entry, path: str) -> InvalidEntry:
    parts = {"title": e.title, "summary": e.summary, "tags": e.tags, "keywords": e.keywords,
             "related": e.related, "sources": e.sources, **{f"extra '{k}'": v for k, v in e.extra.items()}}
    keys = {f"extra '{k}'": k for k in e.extra}
    name, size = max(((name, _yaml_size(keys.get(name, name), v)) for name, v in parts.items()), key=lambda x: x[1])
    if name == "sources":
        what = f"'sources' lists {len(e.sources)} sources ({size / 1024:.1f} KiB)"
        fix = ("an entry that gains a source with every update fills up: put the new knowledge in a new entry "
               f"(ADD) that names {path} in 'related', instead of updating this one")
    else:
        what = f"{name} holds {size / 1024:.1f} KiB"
        fix = _SHRINK.get(name, f"shrink {name} or move its text to 'content', which has no such limit")
    return InvalidEntry(f"{path} would not be readable: its frontmatter would be over the "
                        f"{MAX_FRONTMATTER_BYTES // 1024} KiB an entry may hold ({what}); {fix}")


def check_floor(e: Entry, path: str) -> None:
    """Refuse, before rendering it, an entry whose frontmatter text alone is too big (YAML only adds)."""
    floor = sum(text_size(v, MAX_FRONTMATTER_BYTES) for v in
                (e.title, e.summary, e.tags, e.keywords, e.related, e.sources, e.extra))
    if floor > MAX_FRONTMATTER_BYTES:
        raise _too_big(e, path)


def render(e: Entry, path: str) -> str:
    """The file text of ``e``, only if the reader takes it back: nothing is written that
    ``parse`` would refuse (a 70 KB summary was "added", then unreadable and unsearchable)."""
    check_floor(e, path)
    try:
        text = entry_mod.serialize(e)
    except yaml.YAMLError as exc:  # an 'extra' value from the Python API that YAML cannot hold (a set)
        raise InvalidEntry(f"{path}: a frontmatter value cannot be written as YAML ({exc}); give text, "
                           "numbers, lists and mappings") from None
    if entry_mod.frontmatter_bytes(text) > MAX_FRONTMATTER_BYTES:
        raise _too_big(e, path)
    try:
        entry_mod.parse(text, where=path)
    except InvalidEntry as exc:
        raise InvalidEntry(f"the entry would not read back: {exc}") from None
    return text


# -- building and combining entries -----------------------------------------

def _union(a: list, b: list) -> list:
    """``a``, then what ``b`` adds (a set beside the list: a membership test per item was k² steps)."""
    out, seen = list(a), set(a)
    for x in b:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def _union_sources(a: list[dict], b: list[dict]) -> list[dict]:
    """Provenance unioned by (kind, ref): the same source curated again is not a new one."""
    seen = {(x.get("kind"), x.get("ref")) for x in a}
    out = list(a)
    for x in b:
        key = (x.get("kind"), x.get("ref"))
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


def _merge_facts(a: str, b: str) -> str:
    lines = _union(entry_mod.fact_lines(a), entry_mod.fact_lines(b))
    rest_a = "\n".join(ln for ln in a.split("\n") if ln.strip() and not ln.strip().startswith(("- ", "* ")))
    return "\n".join(([rest_a] if rest_a else []) + lines)


def _title_from_path(path: str) -> str:
    stem = path.rsplit("/", 1)[-1][:-3]
    return stem.replace("_", " ").strip().capitalize()


def new_entry(n: dict[str, Any], now: str) -> Entry:
    return Entry(
        title=n["title"] or _title_from_path(n["path"]),
        summary=n["summary"] or "",
        tags=n["tags"], keywords=n["keywords"], related=[r for r in n["related"] if r != n["path"]],
        created_at=now, updated_at=now, sources=n["sources"], sections=dict(n["sections"]), extra=n["extra"],
    )


def _extra_updated(old: Entry, new_extra: dict[str, Any], path: str) -> dict[str, Any]:
    """The old frontmatter keys with the given ones over them; ``seeAlso`` is unioned, as ``related`` is."""
    extra = {**old.extra, **new_extra}
    if SEE_ALSO in new_extra:
        extra[SEE_ALSO] = [p for p in _union(see_also(old), see_also(new_extra)) if p != path]
    return extra


def updated_entry(old: Entry, n: dict[str, Any], now: str) -> Entry:
    """UPDATE: given fields replace; list fields (and ``seeAlso``) and facts are unioned unless ``replace``."""
    if n["replace"]:
        fresh = new_entry({**n, "title": n["title"] or old.title}, now)
        fresh.created_at = old.created_at or now
        fresh.extra = {**old.extra, **n["extra"]}
        return fresh
    sections = dict(old.sections)
    for name, text in n["sections"].items():
        sections[name] = _merge_facts(sections.get(name, ""), text) if name == "Facts" else text
    return Entry(
        title=n["title"] or old.title,
        summary=old.summary if n["summary"] is None else n["summary"],
        tags=_union(old.tags, n["tags"]), keywords=_union(old.keywords, n["keywords"]),
        related=[r for r in _union(old.related, n["related"]) if r != n["path"]],
        created_at=old.created_at or now, updated_at=now,
        sources=_union_sources(old.sources, n["sources"]), sections=sections,
        extra=_extra_updated(old, n["extra"], n["path"]),
    )


def merged_entry(target: Entry, source: Entry, target_path: str, source_path: str, now: str) -> Entry:
    """MERGE: lists unioned, sections concatenated target-then-source, earliest createdAt."""
    sections = dict(target.sections)
    for name, text in source.sections.items():
        if name == "Facts":
            sections[name] = _merge_facts(sections.get(name, ""), text)
        elif not sections.get(name, "").strip():
            sections[name] = text
        elif text.strip() and text.strip() not in sections[name]:
            sections[name] = sections[name].rstrip("\n") + "\n\n" + text.strip("\n")
    created = min([c for c in (target.created_at, source.created_at) if c] or [now])
    related = [r for r in _union(target.related, source.related) if r not in (target_path, source_path)]
    summary = target.summary or source.summary
    return Entry(
        title=target.title, summary=summary, tags=_union(target.tags, source.tags),
        keywords=_union(target.keywords, source.keywords), related=related, created_at=created,
        updated_at=now, sources=_union_sources(target.sources, source.sources), sections=sections,
        extra=_merged_extra(target, source, target_path, source_path),
    )


def _merged_extra(target: Entry, source: Entry, target_path: str, source_path: str) -> dict[str, Any]:
    """The target's frontmatter keys over the source's, but for validity: whether the merged entry
    is closed is the target's own state (merging an old fact into its replacement must not close
    the replacement), and it replaced what either replaced, but not itself or the source."""
    extra = {k: v for k, v in source.extra.items() if k not in validity.KEYS}
    extra.update(target.extra)
    older = [p for p in dict.fromkeys(validity.supersedes(target) + validity.supersedes(source))
             if p not in (target_path, source_path)]
    extra.pop(validity.SUPERSEDES, None)
    if older:
        extra[validity.SUPERSEDES] = older
    also = [p for p in _union(see_also(target), see_also(source)) if p not in (target_path, source_path)]
    extra.pop(SEE_ALSO, None)
    if also:
        extra[SEE_ALSO] = also
    return extra


def parse_existing(text: str, path: str) -> Entry:
    try:
        return entry_mod.parse(text, where=path)
    except InvalidEntry as exc:
        raise InvalidEntry(f"{exc}; fix the file by hand or rewrite it with UPDATE and replace: true") from None


def relink(overlay: Overlay, old: str, new: str | None, skip: set[str], now: str) -> list[Change]:
    """Rewrite ``related`` links to ``old`` so they point at ``new`` (or vanish)."""
    changes = []
    for p in overlay.linkers(old):
        if p in skip:
            continue
        before = overlay.read(p)
        e = entry_mod.parse(before or "", where=p)
        e.related = [r for r in dict.fromkeys(new if r == old else r for r in e.related) if r and r != p]
        after = render(e, p)
        if after != before:
            overlay.set(p, after)
            changes.append(Change(p, before, after))
    return changes



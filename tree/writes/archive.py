"""The archive: entries moved out of the searched tree, to ``.memgrove/archive/<same path>``.

``ARCHIVE`` moves an entry there and ``RESTORE`` moves it back, each one journaled operation
whose changes name the archived copy as ``@archive/<path>`` (``archived``): the write path,
crash recovery (``pending.json``) and undo read and write it like any file of the tree, and
``ContextTree._abs`` places it under ``.memgrove/archive/``. The index, the catalog and the
folders' context files never see it. ``search(..., include_archived=True)`` scores the
archived entries against the question (BM25 over the archive, with the tree's term weights)
and marks them.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..entries import entry as entry_mod
from ..text.analysis import analyze
from ..index.catalog import scan
from ..entries.entry import Entry
from ..base.errors import InvalidEntry
from ..entries.paths import is_entry_file

ARCHIVE_DIR = "archive"          # under .memgrove/
PREFIX = "@archive/"              # how a change of the journal names an archived copy
# BM25's usual constants, as the engines use them
K1, B = 1.2, 0.75


def archived(path: str) -> str:
    """The journal's name of the archived copy of ``path``."""
    return PREFIX + path


def is_archived(rel: str) -> bool:
    return rel.startswith(PREFIX)


def in_tree(rel: str) -> str:
    """The tree path of an archived copy's name (``@archive/a/b/x.md`` -> ``a/b/x.md``)."""
    return rel[len(PREFIX):] if is_archived(rel) else rel


def archive_root(home: Path) -> Path:
    return home / ARCHIVE_DIR


def archived_paths(home: Path) -> list[str]:
    """The entries in the archive, by their tree path."""
    root = archive_root(home)
    return sorted(p for p in scan(root) if is_entry_file(p)) if root.is_dir() else []


def search_archive(home: Path, query: str, idf: dict[str, float], limit: int) -> list[tuple[str, float, Entry]]:
    """The archived entries matching ``query``, best first: ``(path, BM25 score, entry)``. Each
    query term weighs its ``idf`` in the tree (or 1.0 when the tree lacks it); title and text
    count together. The archive is read whole: it is what was put aside, small next to the tree."""
    terms = list(dict.fromkeys(analyze(query)))
    if not terms:
        return []
    docs: list[tuple[str, Entry, list[str]]] = []
    root = archive_root(home)
    for p in archived_paths(home):
        try:
            e = entry_mod.parse((root / p).read_text(encoding="utf-8"), where=p)
        except (OSError, UnicodeDecodeError, InvalidEntry):
            continue
        docs.append((p, e, analyze(" ".join([e.title, e.summary, e.body, " ".join(e.tags), " ".join(e.keywords)]))))
    if not docs:
        return []
    avg = sum(len(t) for _, _, t in docs) / len(docs) or 1.0
    n = len(docs)
    out = []
    for p, e, toks in docs:
        score = 0.0
        for t in terms:
            tf = toks.count(t)
            if tf:
                df = sum(1 for _, _, o in docs if t in o)
                w = idf.get(t) or math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += w * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(toks) / avg))
        if score > 0:
            out.append((p, score, e))
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:limit]


def read_archived(home: Path, path: str) -> str | None:
    """The text of the archived copy of the entry at ``path`` (a tree path), or None when none is
    kept. The path is normalized and resolved inside the archive as any entry path is in the tree."""
    from ..entries.paths import normalize_entry_path, resolve_inside

    try:
        return resolve_inside(archive_root(home), normalize_entry_path(path)).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None

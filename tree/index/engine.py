"""The narrow seam between the tree and a full-text engine.

Nothing outside an engine module sees past ``SearchEngine``: documents in,
``(path, raw_score)`` out. Whoosh is the default; a tantivy engine would only
implement these methods.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence

FIELDS = ("title", "content", "path_text", "tags", "keywords")


@dataclass(frozen=True)
class IndexDoc:
    path: str
    kind: str  # "entry" or "context"
    title: str
    content: str
    path_text: str
    tags: str
    keywords: str = ""

    def digest(self) -> str:
        """Changes exactly when what the engine would index changes."""
        raw = "\0".join((self.kind, self.title, self.content, self.path_text, self.tags, self.keywords))
        return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


class IndexBroken(Exception):
    """The on-disk index is missing or unreadable; the caller rebuilds it."""


_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)
_OS_ERROR = re.compile(r"\(os error (\d+)\)|code: (\d+)")


def no_room(exc: BaseException) -> OSError | None:
    """The ``OSError`` behind an engine's failed write when the disk is full or read-only: the
    index is not broken, and rebuilding it (a read of every file, then more writes) cannot help.
    Tantivy reports it as a ``ValueError`` naming the OS error."""
    if isinstance(exc, OSError):
        return exc if exc.errno in _NO_ROOM else None
    m = _OS_ERROR.search(str(exc))
    code = int(m.group(1) or m.group(2)) if m else 0
    return OSError(code, os.strerror(code)) if code in _NO_ROOM else None


class SearchEngine(Protocol):
    def write(self, replace: Sequence[IndexDoc] = (), delete: Sequence[str] = ()) -> None:
        """Add or replace ``replace`` docs (by path) and delete ``delete`` paths, in one commit."""

    def search(self, text: str, *, boosts: Mapping[str, float], limit: int,
               expand: str = "none") -> list[tuple[str, float, frozenset[str]]]:
        """BM25F OR-query over the fields with per-field boosts, best first, as
        ``(path, raw score, analyzed query terms the document matched)``.
        ``expand`` is ``"none"``, ``"fuzzy"`` or ``"prefix"`` (expensive: used only as a fallback)."""

    def terms(self, text: str) -> list[str]:
        """The analyzed terms of ``text`` (what the engine will match)."""

    def idf(self, terms: list[str], fields: tuple[str, ...] = ("title", "content")) -> dict[str, float]:
        """Inverse document frequency of analyzed terms: the rarest of ``fields``' (the answer
        picker weighs a sentence's words by the ``content`` field's alone)."""

    def count(self) -> int: ...

    def rebuild(self, docs: Iterable[IndexDoc], *, total: int | None = None, progress=None) -> None: ...

    def close(self) -> None: ...

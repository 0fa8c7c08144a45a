"""Where the verbatim curator puts an input: each path holds one input's words.

The curator names folders and entries after what it reads (a note's first
words, a file's stem, a message id), and two different inputs can give one
name: notes that open alike, ``a/README.md`` and ``b/README.md``, message ids
``m-1`` and ``m_1``, names with no Latin letters. An UPSERT onto such a name
would replace one input with the other, so every name the curator uses is
claimed through a ``Placer``: a name held by another input (earlier in the
same batch, or in the tree, told by the entry's ``sources``) is given a short
digest of the input's identity instead; the same input always finds the name
it was given before, so curating it again changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..base.errors import InvalidInput
from ..entries.paths import MAX_SEGMENT

Sources = list[Mapping[str, Any]]
# path -> the sources of the entry there; None when there is none, [] when it has none or cannot be read
SourcesAt = Callable[[str], "Sources | None"]

_RESERVED = {"context"}        # context.md is a folder's overview, never an entry (paths.py)


def digest(text: str, n: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


@dataclass(frozen=True)
class Owner:
    """One input, as entries' ``sources`` name it: a kind and the refs it gives.

    A source is the input's when its ref is one of ``refs`` or continues one
    after ``#`` (``notes.md#install`` is file ``notes.md``'s, ``c1#m4`` is
    conversation ``c1``'s).
    """

    kind: str
    refs: tuple[str, ...]

    def gave(self, source: Mapping[str, Any]) -> bool:
        ref = str(source.get("ref", ""))
        return source.get("kind") == self.kind and any(ref == r or ref.startswith(r + "#") for r in self.refs)

    def owns(self, sources: Sources) -> bool:
        """Every source is this input's (an entry without sources is nobody's to overwrite)."""
        return bool(sources) and all(isinstance(s, Mapping) and self.gave(s) for s in sources)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.refs[0]}" + (f" (+{len(self.refs) - 1})" if len(self.refs) > 1 else "")

    @property
    def key(self) -> str:
        return "\n".join((self.kind, *self.refs))


def _names(name: str, owner: Owner) -> list[str]:
    """The name, then the name with a short and a longer digest of the input."""
    out = [name]
    for n in (6, 12):
        tail = "_" + digest(owner.key, n)
        out.append(name[: MAX_SEGMENT - len(tail)].rstrip("_") + tail)
    return out


class Placer:
    """Hands out folder and entry paths so that each is claimed by exactly one input.

    ``entry_sources(path)``: the sources of the entry at ``path`` in the tree;
    ``folder_sources(folder)``: those of an entry under ``folder`` (a folder the
    curator made holds one input); ``stamp(path)``: something that changes when
    the file at ``path`` does (its stat), None when there is none, so that free
    names and unchanged entries need no reading. Without them, only the inputs
    of this batch are kept apart.
    """

    def __init__(self, entry_sources: SourcesAt | None = None, folder_sources: SourcesAt | None = None,
                 stamp: Callable[[str], Hashable | None] | None = None,
                 subfolders: Callable[[str], list[str]] | None = None):
        self._entry_sources = entry_sources or (lambda path: None)
        self._folder_sources = folder_sources or (lambda folder: None)
        self._stamp = stamp or (lambda path: object())    # unknown: read the entry each time
        self._subfolders = subfolders or (lambda parent: [])
        self._held: dict[str, Owner] = {}
        self._seen: dict[str, Hashable | None] = {}       # entry path -> its stamp when handed out

    def find(self, parent: str, name: str, owner: Owner) -> str | None:
        """The folder under ``parent`` (``notes``: one per day) where ``owner`` already has entry
        ``name``, if any: an input curated again on another day stays where it is."""
        for held, who in self._held.items():
            if who == owner and held.startswith(parent + "/") and held.endswith(".md"):
                return held.rsplit("/", 1)[0]
        for folder in sorted(self._subfolders(parent)):
            for n in _names(name, owner):
                path = f"{parent}/{folder}/{n}.md"
                if path not in self._held and self._entry_state(path, owner) == "ours":
                    return f"{parent}/{folder}"
        return None

    def folder(self, parent: str, name: str, owner: Owner) -> str:
        """``parent/name`` for ``owner``'s entries: a folder of its own."""
        return self._claim([f"{parent}/{n}" for n in _names(name, owner)], owner, self._folder_state)

    def entry(self, folder: str, name: str, owner: Owner) -> str:
        """``folder/name.md`` for ``owner``'s words."""
        return self._claim([f"{folder}/{n}.md" for n in _names(name, owner) if n not in _RESERVED],
                           owner, self._entry_state)

    def _folder_state(self, folder: str, owner: Owner) -> str:
        return _state(self._folder_sources(folder), owner)

    def _entry_state(self, path: str, owner: Owner) -> str:
        stamp = self._seen[path] = self._stamp(path)
        return "free" if stamp is None else _state(self._entry_sources(path), owner)

    def _claim(self, candidates: list[str], owner: Owner, state_of: Callable[[str, Owner], str]) -> str:
        states: list[str] = []
        for path in candidates:
            held = self._held.get(path)
            states.append(state_of(path, owner) if held is None else "ours" if held == owner else "taken")
            if states[-1] == "ours":
                # where this input already is comes first: curating it again finds the same entries
                self._held[path] = owner
                return path
        for path, state in zip(candidates, states):
            if state == "free":
                self._held[path] = owner
                return path
        raise InvalidInput(f"cannot place {owner.label}: {', '.join(candidates)} hold other inputs; "
                           "nothing was written")

    def confirm(self, paths: Iterable[str]) -> None:
        """Check again, under the writer lock, that no other writer has put another input at ``paths``
        since they were handed out."""
        for path in paths:
            owner = self._held.get(path)
            if owner is None:
                continue
            stamp = self._stamp(path)
            if stamp is None or (path in self._seen and stamp == self._seen[path]):
                continue
            if _state(self._entry_sources(path), owner) == "taken":
                raise InvalidInput(f"{path} now holds another input, written meanwhile by another writer; "
                                   f"{owner.label} was not written there: curate it again")


def _state(sources: Sources | None, owner: Owner) -> str:
    if sources is None:
        return "free"
    return "ours" if owner.owns(sources) else "taken"

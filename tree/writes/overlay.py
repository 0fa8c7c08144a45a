"""``Overlay``: the tree as it will be after the operations of a batch planned so far.

Planning asks it, for every operation, what a file holds, which entries a folder holds and
which entries link to one. Each answer costs what it returns, not the size of the batch:
a batch of k DELETEs or MERGEs (a directory renamed by the memory tool) used to parse every
file changed so far for each of them, k² parses (a rename of 300 entries: 24 s under the
writer lock). Changed files are parsed once each, for their links, and folders are indexed
by the changes under them.
"""

from __future__ import annotations

from typing import Callable

from ..entries import entry as entry_mod
from ..base.errors import InvalidEntry
from ..entries.paths import parent_folders


class Overlay:
    """Reads through the changes planned so far to the disk (``read_disk``, ``entries_under``
    and the catalog's ``backlinks``, which are read once per path or folder asked about)."""

    def __init__(self, read_disk: Callable[[str], str | None], entries_under: Callable[[str], list[str]],
                 backlinks: Callable[[str], list[str]]):
        self._read_disk = read_disk
        self._entries_under = entries_under
        self._backlinks = backlinks
        self.changes: dict[str, str | None] = {}
        self._changed_under: dict[str, dict[str, bool]] = {}   # folder -> {changed file below it: exists}
        self._under: dict[str, set[str]] = {}                  # folder asked about -> entries below it now
        self._unindexed: dict[str, None] = {}                  # changed files whose links are not indexed
        self._links_of: dict[str, list[str]] = {}              # changed file -> the entries it links to
        self._links_to: dict[str, set[str]] = {}               # entry -> changed files linking to it

    def read(self, path: str) -> str | None:
        return self.changes[path] if path in self.changes else self._read_disk(path)

    def exists(self, path: str) -> bool:
        return self.read(path) is not None

    def set(self, path: str, text: str | None) -> None:
        self.changes[path] = text
        for folder in parent_folders(path):
            self._changed_under.setdefault(folder, {})[path] = text is not None
            live = self._under.get(folder)
            if live is not None:
                (live.add if text is not None else live.discard)(path)
        self._unindexed[path] = None

    def entries_under(self, folder: str) -> list[str]:
        return sorted(self._live_under(folder))

    def holds_entries(self, folder: str) -> bool:
        return bool(self._live_under(folder))

    def _live_under(self, folder: str) -> set[str]:
        live = self._under.get(folder)
        if live is None:
            live = set(self._entries_under(folder))
            for path, exists in self._changed_under.get(folder, {}).items():
                (live.add if exists else live.discard)(path)
            self._under[folder] = live
        return live

    def linkers(self, target: str) -> list[str]:
        """The entries whose ``related`` names ``target``, as the batch leaves them so far."""
        self._index_links()
        found = set(self._links_to.get(target, ()))
        for p in self._backlinks(target):
            if p in self.changes or p == target:
                continue       # a changed file is indexed from its new text above
            text = self._read_disk(p)
            try:
                if text is not None and target in entry_mod.parse(text).related:
                    found.add(p)   # the catalog may lag behind a hand edit: the file decides
            except InvalidEntry:
                continue
        found.discard(target)
        return sorted(found)

    def _index_links(self) -> None:
        for path in self._unindexed:
            for old in self._links_of.pop(path, ()):
                self._links_to[old].discard(path)
            text = self.changes[path]
            try:
                links = entry_mod.parse(text).related if text is not None else []
            except InvalidEntry:
                links = []
            self._links_of[path] = links
            for target in links:
                self._links_to.setdefault(target, set()).add(path)
        self._unindexed.clear()

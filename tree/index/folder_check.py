"""Without a file watcher: what a long-lived process looks at before a search instead of every file.

A folder's mtime changes when a file is added, removed or renamed in it, which is also how editors
save (a temp file renamed over the old one): every folder's mtime is compared with what the last
full scan saw, before every search. A file edited in place changes no folder, so the files
themselves are looked at too, a slice of the folders at a time, in turn: each search takes the
share of the folders that the time since the last one is of ``scan_interval``, so every file is
looked at within ``scan_interval`` seconds and no search pays for all of them (unless the process
was idle that long).
"""

from __future__ import annotations

import math
import os

from .catalog import Stat
from ..base.fsio import TEMP_PREFIX


class FolderCheck:
    """The folders of the tree as the last full scan saw them (``catalog.scan(root, folders)``)."""

    def __init__(self, root: str, folders: dict[str, int], now: float):
        self.base = len(root) + 1
        self.mtimes = folders          # absolute folder path -> mtime_ns, taken before it was listed
        self.order = sorted(folders)
        self.cursor = 0
        self.last = now

    def unchanged(self) -> bool:
        """No file was added, removed or renamed in any folder since the scan."""
        try:
            return all(os.stat(f).st_mtime_ns == m for f, m in self.mtimes.items())
        except OSError:
            return False

    def due(self, now: float, interval: float) -> list[str]:
        """The folders (relative, "" for the tree's own) whose files are to be looked at now: all of
        them every ``interval`` seconds."""
        n = len(self.order)
        k = n if interval <= 0 else min(n, math.ceil(n * max(0.0, now - self.last) / interval))
        self.last = now
        out = [self.order[(self.cursor + i) % n] for i in range(k)]
        self.cursor = (self.cursor + k) % n if n else 0
        return [f[self.base:] for f in out]


def files_in(folder: str) -> dict[str, Stat]:
    """``{file name: (mtime_ns, size)}`` of the entries and context files directly in ``folder``,
    as ``catalog.scan`` counts them."""
    out: dict[str, Stat] = {}
    try:
        with os.scandir(folder) as it:
            for e in it:
                if e.name.endswith(".md") and not e.name.startswith((".", "_", TEMP_PREFIX)):
                    try:
                        if e.is_file(follow_symlinks=False):
                            st = e.stat(follow_symlinks=False)
                            out[e.name] = (st.st_mtime_ns, st.st_size)
                    except FileNotFoundError:
                        continue
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        pass
    return out

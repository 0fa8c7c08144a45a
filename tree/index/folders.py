"""Where an engine's index lives on disk, and how a rebuild replaces it.

A rebuild writes a fresh index into ``<folder>.new`` beside the live one, then swaps folders
(the live one goes to ``<folder>.old`` for the moment of the swap), so readers keep the old
index until the new one is whole. A killed rebuild leaves ``.new`` or ``.old`` behind: those
are removed under the tree's writer lock (a live rebuild writes ``.new``). Both engines use
these functions.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def leftovers(folder: Path) -> list[Path]:
    """Folders a killed rebuild left beside the index (``<name>.new``, ``<name>.old``)."""
    return [p for p in (folder.with_name(folder.name + s) for s in (".new", ".old")) if p.exists()]


def remove_leftovers(folder: Path) -> int:
    """Remove them; only under the tree's writer lock (a live rebuild writes ``.new``)."""
    gone = leftovers(folder)
    for p in gone:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:  # a file or link where a folder was expected
            p.unlink()
    return len(gone)


def fresh_beside(folder: Path) -> Path:
    """An empty ``<name>.new`` folder for a rebuild, leftovers of an earlier one removed."""
    new = folder.with_name(folder.name + ".new")
    remove_leftovers(folder)
    new.mkdir(parents=True)
    return new


def swap_in(folder: Path) -> None:
    """Make the finished ``<name>.new`` the index; the old one is removed."""
    new = folder.with_name(folder.name + ".new")
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    os.replace(new, folder)
    shutil.rmtree(old, ignore_errors=True)

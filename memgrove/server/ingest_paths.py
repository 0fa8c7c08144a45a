"""Files and folders a REST ingest names (``"paths"``): only inside the project served.

A token opens one project's memory, not the machine: a path is read relative to the project
folder, and one that leads outside it (``..``, an absolute path elsewhere, a symlink out) is
refused, so a client cannot have the server curate, and so show, files it could not read itself.
"""

from __future__ import annotations

from pathlib import Path

from memgrove.tree.base.errors import InvalidInput


def inside_project(folder: Path, given: str) -> Path:
    """``given`` (relative to ``folder``, or absolute inside it) as a path inside the project."""
    root = folder.resolve()
    full = (root / given).resolve()
    if full != root and root not in full.parents:
        raise InvalidInput(f"{given!r} is outside the project ({root}); the server reads only files inside it")
    return full

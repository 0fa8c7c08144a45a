"""Entry paths as people type them on a command line.

Tab completion gives a file's path from the current folder (``.memgrove/tree/auth/jwt/rotation.md``,
``../.memgrove/tree/...``, or an absolute one), not the tree path ``auth/jwt/rotation.md`` the
library takes. ``tree_path`` turns the first into the second when the file is inside the tree;
anything else is handed to the tree's own checks unchanged, except a path that names a real file
outside the tree, which is refused here with a message that says so.
"""

from __future__ import annotations

import os
from pathlib import Path

from memgrove.tree.base.errors import InvalidPath

_PREFIXES = (".memgrove/tree/", "tree/")


def _inside(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` ("" for the root itself), or None if it is not under it.
    Compared lexically and with symlinks resolved, so ``/tmp`` → ``/private/tmp`` still matches."""
    roots = {os.path.abspath(root), os.path.realpath(root)}
    head, name = os.path.split(os.path.abspath(path))
    # the folders resolved, not the file: a symlinked entry keeps its own name
    for candidate in (os.path.abspath(path), os.path.join(os.path.realpath(head), name)):
        for r in roots:
            if candidate == r:
                return ""
            if candidate.startswith(r + os.sep):
                return Path(os.path.relpath(candidate, r)).as_posix()
    return None


def tree_path(given: str, root: Path, cwd: Path | None = None) -> str:
    """The tree path ``given`` names, for the tree rooted at ``root`` (``.memgrove/tree``).

    A path that already names something in the tree is kept, so an entry in a domain named
    ``tree`` is still found by its tree path.
    """
    if not given or "\x00" in given:
        return given
    cwd = cwd or Path.cwd()
    if os.path.isabs(given):
        rel = _inside(given, root)
        if rel is None:
            raise InvalidPath(f"{given} is an absolute path outside the memory's tree ({root})")
        return rel
    plain = given.replace("\\", "/")
    if ".." not in plain.split("/") and (root / plain).exists():
        return given
    here = os.path.join(cwd, given)
    rel = _inside(here, root)
    if rel is not None and os.path.exists(here):
        return rel
    stripped = plain[2:] if plain.startswith("./") else plain
    for prefix in _PREFIXES:
        if stripped.startswith(prefix):
            return stripped[len(prefix):]
    if os.path.isfile(here):
        raise InvalidPath(f"{given} is a file outside the memory's tree ({root}); "
                          "give an entry's path in the tree, such as domain/topic/name.md")
    return given

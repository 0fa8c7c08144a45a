"""Finding a project's ``.memgrove/`` folder (standard library only: clients call it before
deciding whether to open the tree or talk to a running server)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import TreeNotFound

HOME_NAME = ".memgrove"


def locate_home(path: str | os.PathLike | None = None, *, create: bool = False) -> Path:
    """Find ``.memgrove/`` like git finds ``.git``: in ``path`` or any parent.

    ``path`` may also be the ``.memgrove`` folder itself. With ``create``, a
    missing one is made in ``path``.
    """
    start = Path(path or os.environ.get("MEMGROVE_HOME") or os.getcwd()).expanduser().absolute()
    if start.name == HOME_NAME and (start.is_dir() or create):
        home = start
    else:
        home = None
        for folder in [start, *start.parents]:
            if (folder / HOME_NAME / "tree").is_dir():
                home = folder / HOME_NAME
                break
        if home is None:
            if not create:
                raise TreeNotFound(f"no {HOME_NAME}/ in {start} or any parent; run `memgrove init` there first")
            home = start / HOME_NAME
    if create:
        (home / "tree").mkdir(parents=True, exist_ok=True)
        (home / "journal").mkdir(exist_ok=True)
    elif not (home / "tree").is_dir():
        raise TreeNotFound(f"{home} is not a memgrove folder (no tree/ inside); run `memgrove init`")
    return home

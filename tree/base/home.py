"""Finding a project's ``.memgrove/`` folder (standard library only: clients call it before
deciding whether to open the tree or talk to a running server)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import TreeNotFound, TreeOutside

HOME_NAME = ".memgrove"


def locate_home(path: str | os.PathLike | None = None, *, create: bool = False) -> Path:
    """Find ``.memgrove/`` like git finds ``.git``: in ``path`` or any parent.

    ``path`` may also be the ``.memgrove`` folder itself. With ``create``, a
    missing one is made in ``path``. A ``.memgrove`` or ``tree`` that is a symbolic
    link, or resolves outside its project, is refused (``TreeOutside``).
    """
    start = Path(path or os.environ.get("MEMGROVE_HOME") or os.getcwd()).expanduser().absolute()
    try:
        home = _find(start, create)
        check_contained(home)              # before creating anything: mkdir would follow a link
    except OSError as exc:       # a name too long, a folder not ours (/proc/1/root/...): no project there
        shown = str(start) if len(str(start)) <= 200 else str(start)[:200] + "..."
        raise TreeNotFound(f"cannot look for {HOME_NAME}/ in {shown}: {exc.strerror or exc}") from None
    if create:
        (home / "tree").mkdir(parents=True, exist_ok=True)
        (home / "journal").mkdir(exist_ok=True)
        check_contained(home)
    elif not (home / "tree").is_dir():
        raise TreeNotFound(f"{home} is not a memgrove folder (no tree/ inside); run `memgrove init`")
    return home


def _find(start: Path, create: bool) -> Path:
    if start.name == HOME_NAME and (start.is_dir() or create):
        return start
    for folder in [start, *start.parents]:
        if (folder / HOME_NAME / "tree").is_dir():
            return folder / HOME_NAME
    if not create:
        raise TreeNotFound(f"no {HOME_NAME}/ in {start} or any parent; run `memgrove init` there first")
    return start / HOME_NAME


def check_contained(home: Path) -> None:
    """Refuse a ``.memgrove`` (or its ``tree``) that is a symbolic link or resolves outside its
    project: a cloned repository or a hostile process could point it at any folder of the user,
    and every search would read there, every curation write there."""
    for p in (home, home / "tree"):
        if p.is_symlink():
            raise TreeOutside(f"{p} is a symbolic link (to {os.readlink(p)}); memgrove keeps a project's "
                              f"memory inside the project: replace the link with the folder itself")
    if not home.exists():
        return
    real = home.resolve()
    if real != home.parent.resolve() / HOME_NAME or (
            (home / "tree").exists() and (home / "tree").resolve() != real / "tree"):
        raise TreeOutside(f"{home} resolves to {real}, outside its project {home.parent}")


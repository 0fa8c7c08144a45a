"""The engine the whole suite runs on: ``MEMGROVE_TEST_ENGINE=tantivy`` (``make test-tantivy``).

Read only by the tests. It changes the default of ``TreeSettings.engine`` in this process
(conftest) and, through ``engine_site/sitecustomize.py`` on ``PYTHONPATH``, in the processes the
tests start. Only the constructor's default changes: the documented default (the dataclass
field, which the README and ``config.toml`` template show) stays "whoosh".
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

VARIABLE = "MEMGROVE_TEST_ENGINE"
SITE = Path(__file__).parent / "engine_site"


def chosen() -> str:
    return os.environ.get(VARIABLE, "") or "whoosh"


def apply() -> None:
    """Make ``chosen()`` the engine of every tree whose settings do not name one."""
    from memgrove.tree.settings import ENGINES

    engine = chosen()
    if engine not in ENGINES:
        raise SystemExit(f"{VARIABLE}={engine!r}: use one of {', '.join(ENGINES)}")
    set_default("engine", engine)


def set_default(name: str, value: object) -> None:
    """``TreeSettings(...)``'s default for the field ``name`` becomes ``value`` (in this process);
    the dataclass field, which the docs and the config template show, stays as it is."""
    from memgrove.tree.settings import TreeSettings

    init = TreeSettings.__init__
    names = [f.name for f in dataclasses.fields(TreeSettings)]
    defaults = list(init.__defaults__)
    # every field has a default, so __defaults__ lines up with the fields
    defaults[names.index(name) - len(names) + len(defaults)] = value
    init.__defaults__ = tuple(defaults)


def export() -> None:
    """Let processes started by the tests pick the same engine (and meaning: meaning_choice.py)."""
    paths = [str(SITE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def index_engine(home: Path) -> str:
    """The engine that last built the index of the memory at ``home`` (its ``.memgrove``), from
    the format the catalog records ("tantivy-14"): which engine a started process really ran."""
    from memgrove.tree.index.catalog import Catalog

    cat = Catalog(home / "index" / "catalog.db")
    try:
        return (cat.get_meta("format") or "").split("-")[0]
    finally:
        cat.close()

"""The engine a tree's settings choose (``engine`` in ``[tree]``), each in its own index folder."""

from __future__ import annotations

from pathlib import Path

from .engine import SearchEngine
from ..settings import ENGINES, TreeSettings


def open_engine(home: Path, settings: TreeSettings) -> SearchEngine:
    """The engine of ``settings`` over ``home/index/<engine>``; ``EngineMissing`` (naming the
    extra to install) if it is tantivy and tantivy is not installed."""
    folder = home / "index" / settings.engine
    if settings.engine == "tantivy":
        from .tantivy_engine import TantivyEngine, require_tantivy

        require_tantivy()
        return TantivyEngine(folder, procs=settings.index_procs)
    assert settings.engine in ENGINES
    from .whoosh_engine import WhooshEngine

    return WhooshEngine(folder, procs=settings.index_procs)

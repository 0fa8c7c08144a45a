"""Shared fixtures: every test gets its own memory under ``tmp_path``.

``MEMGROVE_HOME`` points at ``tmp_path`` so nothing can touch a real
``.memgrove/``, and ``MEMGROVE_RAISE_ERRORS`` makes unexpected exceptions
surface as tracebacks instead of one-line messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from memgrove import Memory


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path))
    monkeypatch.setenv("MEMGROVE_RAISE_ERRORS", "1")


@pytest.fixture
def mem(tmp_path: Path):
    m = Memory.open(tmp_path, create=True, durable=False)
    yield m
    m.close()


@pytest.fixture
def tree(mem: Memory):
    """The ``ContextTree`` behind ``mem``."""
    return mem.tree


def tree_files(home: Path) -> dict[str, bytes]:
    """Every file under ``.memgrove/tree/`` (relative path -> bytes)."""
    root = home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def snapshot(mem: Memory) -> Callable[[], dict[str, bytes]]:
    """``snapshot()`` -> the tree's files and the journal, to compare before/after."""

    def take() -> dict[str, bytes]:
        state = tree_files(mem.home)
        journal = mem.home / "journal" / "journal.jsonl"
        state["<journal>"] = journal.read_bytes() if journal.exists() else b""
        return state

    return take


"""A stand-in for ``memgrove.tree.scan`` in tests: ``memgrove dream`` finds the candidates given.

>>> fake_scan(monkeypatch, [candidate, ...])                       # doctest: +SKIP
"""

from __future__ import annotations

import sys
import types
from typing import Any

from memgrove.tree.findings import Candidate


def fake_scan(monkeypatch: Any, candidates: list[Candidate]) -> list[Any]:
    """Every dream in this process scans to ``candidates`` (those whose paths all exist); the
    calls are recorded in the list returned."""
    calls: list[Any] = []

    def scan(tree: Any, settings: Any = None, *, kinds: Any = None, now: Any = None) -> list[Candidate]:
        calls.append(now)
        return [c for c in candidates if all(tree.exists(p) for p in c.paths)]

    mod = types.ModuleType("memgrove.tree.scan")
    mod.scan = scan  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memgrove.tree.scan", mod)
    return calls

"""A stand-in for ``memgrove.tree.hygiene.scan`` in tests: ``memgrove dream`` finds the candidates given.

>>> fake_scan(monkeypatch, [candidate, ...])                       # doctest: +SKIP
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from memgrove.tree.hygiene.findings import Candidate


def fake_scan(monkeypatch: Any, candidates: list[Candidate]) -> list[Any]:
    """Every dream in this process scans to ``candidates`` (those whose paths all exist); the
    calls are recorded in the list returned."""
    calls: list[Any] = []

    def scan(tree: Any, settings: Any = None, *, kinds: Any = None, now: Any = None) -> list[Candidate]:
        calls.append(now)
        return [c for c in candidates if all(tree.exists(p) for p in c.paths)]

    mod = types.ModuleType("memgrove.tree.hygiene.scan")
    mod.scan = scan  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memgrove.tree.hygiene.scan", mod)
    return calls


VARIABLE = "MEMGROVE_TEST_SCAN"
SITE = __import__("pathlib").Path(__file__).parent / "dream_site"


def install(candidates: list[Candidate]) -> None:
    """Make ``memgrove.tree.hygiene.scan`` in this process the stand-in (a started process: see ``site_env``)."""
    def scan(tree: Any, settings: Any = None, *, kinds: Any = None, now: Any = None) -> list[Candidate]:
        return [c for c in candidates if all(tree.exists(p) for p in c.paths)]

    mod = types.ModuleType("memgrove.tree.hygiene.scan")
    mod.scan = scan  # type: ignore[attr-defined]
    sys.modules["memgrove.tree.hygiene.scan"] = mod


def site_env(tmp: Any, candidates: list[Candidate]) -> dict[str, str]:
    """Environment variables for a started process whose dream scans to ``candidates``."""
    import json
    import os

    spec = tmp / "scan.json"
    spec.write_text(json.dumps([c.to_dict() for c in candidates]), encoding="utf-8")
    paths = [str(SITE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {VARIABLE: str(spec), "PYTHONPATH": os.pathsep.join(paths)}


# the served tests' memory (the REST routes, the MCP tools): an exact duplicate and a near one
TEXT = "The staging database listens on port 6543 since March 2026."
KEPT, DUP = "infra/db/staging_port.md", "chats/day1/staging_port_again.md"


def served_candidates() -> list[Candidate]:
    return [Candidate("duplicate", (KEPT, DUP), "MERGE",
                      ({"op": "MERGE", "path": DUP, "merge_into": KEPT, "reason": "the same text"},),
                      "the same text after normalization", 1.0),
            Candidate("near_duplicate", ("ops/backups/every_night.md", "ops/backups/nightly.md"), "MERGE",
                      ({"op": "MERGE", "path": "ops/backups/nightly.md", "merge_into": "ops/backups/every_night.md",
                        "reason": "nearly the same"},), "high lexical overlap", 0.75)]


# entries and candidates the dream tests share
def add(mem, path: str, content: str, **fields) -> None:
    mem.curate([{"op": "ADD", "path": path, "title": fields.pop("title", path.rsplit("/", 1)[-1][:-3]),
                 "content": content, "reason": "test", **fields}])


def entries(home: Path) -> dict[str, bytes]:
    root = home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md")) if p.name != "context.md"}


def duplicate(kept: str, dup: str) -> Candidate:
    return Candidate("duplicate", (kept, dup), "MERGE",
                     ({"op": "MERGE", "path": dup, "merge_into": kept, "reason": "the same text"},),
                     "the same text after normalization", 1.0)


def link(a: str, b: str) -> Candidate:
    return Candidate("link", (a, b), "LINK",
                     ({"op": "UPDATE", "path": a, "related": [b], "reason": "closely related"},
                      {"op": "UPDATE", "path": b, "related": [a], "reason": "closely related"}),
                     "closely related entries that do not link each other", 0.7)

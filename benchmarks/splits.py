"""The fixed dev/test halves of BEAM and LoCoMo (``benchmarks/splits.json``, where the reasons are).

    from splits import members, in_split
    members("locomo", "test")            # ['conv-30', 'conv-42', ...]
    members("beam", "dev", tier="100K")  # chat numbers as BEAM's folder names: ['1', '3', ...]

Decide on ``dev``; report ``test`` (run once per change) beside it. ``all`` is both halves.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

SPLITS_FILE = Path(__file__).resolve().parent / "splits.json"
SPLITS = ("dev", "test", "all")


@functools.lru_cache(maxsize=None)
def load(path: Path = SPLITS_FILE) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def halves(dataset: str, tier: str | None = None) -> dict[str, list[str]]:
    """``{"dev": [...], "test": [...]}`` of ``dataset`` ("locomo" or "beam"; BEAM by ``tier``)."""
    data = load()
    if dataset not in ("locomo", "beam"):
        raise ValueError(f"unknown data set {dataset!r}; splits exist for locomo and beam")
    table = data[dataset]
    if dataset == "beam":
        if tier not in table:
            raise ValueError(f"no split of BEAM tier {tier!r}; tiers: {', '.join(table)}")
        table = table[tier]
    return {"dev": list(table["dev"]), "test": list(table["test"])}


def members(dataset: str, split: str, tier: str | None = None) -> list[str]:
    """The conversation ids (LoCoMo ``sample_id``) or chat numbers (BEAM) of ``split``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    h = halves(dataset, tier)
    return h["dev"] + h["test"] if split == "all" else h[split]


def in_split(dataset: str, name: str, split: str, tier: str | None = None) -> bool:
    """Whether ``name`` belongs to ``split`` (always, for ``all``: a conversation the split file
    does not know is still run in full)."""
    return split == "all" or str(name) in members(dataset, split, tier)

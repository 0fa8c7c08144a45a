"""``memgrove stats``: what the query log says about tiers and latency."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def _row(line: bytes) -> tuple[int, float, dict[str, Any]] | None:
    """``(tier, latency_ms, row)`` of one log line, or None if the line is damaged."""
    try:
        r = json.loads(line)
        if not isinstance(r, dict):
            return None
        tier, ms = r.get("tier", -1), r.get("latency_ms", 0.0)
        if isinstance(tier, bool) or isinstance(ms, bool) or not isinstance(tier, int) \
                or not isinstance(ms, (int, float)) or not math.isfinite(ms):
            return None
        return tier, float(ms), r
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def query_stats(log_file: Path) -> dict[str, Any]:
    """Tier shares and latency percentiles; damaged lines (a torn write, a hand edit) are
    skipped and counted in ``damaged_lines``."""
    rows: list[tuple[int, float, dict[str, Any]]] = []
    damaged = 0
    try:
        with log_file.open("rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = _row(line)
                if row is None:
                    damaged += 1
                else:
                    rows.append(row)
    except FileNotFoundError:
        pass
    tiers: dict[int, list[float]] = {}
    by_llm: dict[int, int] = {}
    for tier, ms, r in rows:
        tiers.setdefault(tier, []).append(ms)
        by_llm[tier] = by_llm.get(tier, 0) + bool(r.get("llm"))
    out: dict[str, Any] = {"queries": len(rows), "damaged_lines": damaged, "tiers": []}
    for tier in sorted(tiers):
        lat = tiers[tier]
        out["tiers"].append({"tier": tier, "count": len(lat), "share": len(lat) / len(rows),
                             "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
                             "p99_ms": percentile(lat, 99),
                             # without a model, tiers 3-4 answer from the best entries: a row says which ran
                             "llm": by_llm[tier]})
    out["out_of_domain"] = sum(1 for _, _, r in rows if r.get("out_of_domain"))
    out["llm"] = sum(1 for _, _, r in rows if r.get("llm"))
    out["errors"] = sum(1 for _, _, r in rows if r.get("error"))
    return out

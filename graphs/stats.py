"""``memgrove stats``: what the query log says about tiers and latency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def query_stats(log_file: Path) -> dict[str, Any]:
    rows = []
    try:
        with log_file.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue
    except FileNotFoundError:
        pass
    tiers: dict[int, list[float]] = {}
    for r in rows:
        tiers.setdefault(int(r.get("tier", -1)), []).append(float(r.get("latency_ms", 0.0)))
    out = {"queries": len(rows), "tiers": []}
    for tier in sorted(tiers):
        lat = tiers[tier]
        out["tiers"].append({"tier": tier, "count": len(lat), "share": len(lat) / len(rows),
                             "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
                             "p99_ms": percentile(lat, 99)})
    out["out_of_domain"] = sum(1 for r in rows if r.get("out_of_domain"))
    out["llm"] = sum(1 for r in rows if r.get("llm"))
    out["errors"] = sum(1 for r in rows if r.get("error"))
    return out

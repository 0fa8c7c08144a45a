"""``memgrove stats``: what the query log says about tiers and latency."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from memgrove.tree.base import forksafe


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


Row = tuple[int, float, bool, bool, bool]     # tier, latency_ms, llm, out_of_domain, error


def _compact(line: bytes) -> Row | None:
    got = _row(line)
    if got is None:
        return None
    tier, ms, r = got
    return tier, ms, bool(r.get("llm")), bool(r.get("out_of_domain")), bool(r.get("error"))


def query_stats(log_file: Path) -> dict[str, Any]:
    """Tier shares and latency percentiles; damaged lines (a torn write, a hand edit) are
    skipped and counted in ``damaged_lines``."""
    return QueryLog(log_file).stats()


class QueryLog:
    """``query_stats`` of one log for a long-lived process (``Memory.stats``, the server's status page):
    the lines read once, then only those appended since (the log only grows; a log replaced or cut,
    by ``doctor --fix``, is read again), so asking costs what was logged since, not the whole log."""

    def __init__(self, log_file: Path):
        self.file = log_file
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._rows: list[Row] = []
        self._damaged = 0
        self._last: tuple[int, dict[str, Any]] | None = None    # (size it was computed at, stats)
        self._lock = forksafe.lock()     # a server's threads ask at once

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return self._stats()

    def _stats(self) -> dict[str, Any]:
        try:
            with self.file.open("rb") as fh:
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) != self._identity or st.st_size < self._offset:
                    self._identity, self._offset, self._rows, self._damaged, self._last = \
                        (st.st_dev, st.st_ino), 0, [], 0, None
                if self._last is not None and self._last[0] == st.st_size:
                    return dict(self._last[1])
                fh.seek(self._offset)
                data = fh.read(st.st_size - self._offset)
        except FileNotFoundError:
            return summarize([], 0)
        whole = data.rfind(b"\n") + 1      # a line still being written is read, not kept
        for line in data[:whole].splitlines():
            self._add(line)
        self._offset += whole
        rest = _compact(data[whole:]) if data[whole:].strip() else None
        rows = self._rows + [rest] if rest is not None else self._rows
        out = summarize(rows, self._damaged + (rest is None and bool(data[whole:].strip())))
        self._last = (self._offset + len(data) - whole, out)
        return dict(out)

    def _add(self, line: bytes) -> None:
        if not line.strip():
            return
        row = _compact(line)
        if row is None:
            self._damaged += 1
        else:
            self._rows.append(row)


def summarize(rows: list[Row], damaged: int) -> dict[str, Any]:
    tiers: dict[int, list[float]] = {}
    by_llm: dict[int, int] = {}
    for tier, ms, llm, _, _ in rows:
        tiers.setdefault(tier, []).append(ms)
        by_llm[tier] = by_llm.get(tier, 0) + llm
    out: dict[str, Any] = {"queries": len(rows), "damaged_lines": damaged, "tiers": []}
    for tier in sorted(tiers):
        lat = tiers[tier]
        out["tiers"].append({"tier": tier, "count": len(lat), "share": len(lat) / len(rows),
                             "p50_ms": percentile(lat, 50), "p95_ms": percentile(lat, 95),
                             "p99_ms": percentile(lat, 99),
                             # without a model, tiers 3-4 answer from the best entries: a row says which ran
                             "llm": by_llm[tier]})
    out["out_of_domain"] = sum(1 for r in rows if r[3])
    out["llm"] = sum(1 for r in rows if r[2])
    out["errors"] = sum(1 for r in rows if r[4])
    return out

"""Statistics of the timing benchmarks: percentiles, millisecond summaries, growth exponents and an
exclusive-time profiler."""

from __future__ import annotations

import functools
import math
import os
import re
import time
from typing import Any, Callable, Iterable


def pct(xs: list[float], q: float, digits: int | None = None) -> float:
    """Percentile with linear interpolation (q in 0..100), rounded to ``digits`` when given; NaN for none."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    v = s[lo] + (s[hi] - s[lo]) * (k - lo)
    return v if digits is None else round(v, digits)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """What ``fn()`` returns, and the seconds it took."""
    t0 = time.perf_counter()
    got = fn()
    return got, time.perf_counter() - t0


def timed_ms(fn: Callable[[], Any]) -> float:
    """The milliseconds one call of ``fn`` takes."""
    return timed(fn)[1] * 1000


def summary_ms(xs_s: list[float]) -> dict[str, float]:
    ms = [x * 1000 for x in xs_s]
    return {"n": len(ms), "p50": round(pct(ms, 50), 3), "p95": round(pct(ms, 95), 3),
            "p99": round(pct(ms, 99), 3), "mean": round(sum(ms) / len(ms), 3) if ms else float("nan"),
            "max": round(max(ms), 3) if ms else float("nan")}


class Profiler:
    """Wraps callables; each bucket gets its exclusive time (nested wrapped calls are
    charged to their own bucket, not to the caller's)."""

    def __init__(self):
        self.totals: dict[str, float] = {}
        self._stack: list[list[float]] = []
        self._undo: list[Callable[[], None]] = []

    def wrap(self, obj: Any, attrs: str, bucket: str | Callable[..., str]) -> None:
        """Time ``obj.attr`` into ``bucket`` (a name, or a function of the call's arguments giving one), for each
        attribute named in ``attrs`` (space-separated: "idf terms")."""
        for attr in attrs.split():
            self._wrap(obj, attr, bucket)

    def _wrap(self, obj: Any, attr: str, bucket: str | Callable[..., str]) -> None:
        orig = getattr(obj, attr)
        had_own = isinstance(obj, type(os)) or attr in getattr(obj, "__dict__", {})
        prof = self

        @functools.wraps(orig)
        def timed(*a, **kw):
            prof._stack.append([0.0])
            t0 = time.perf_counter()
            try:
                return orig(*a, **kw)
            finally:
                el = time.perf_counter() - t0
                child = prof._stack.pop()[0]
                b = bucket if isinstance(bucket, str) else bucket(*a, **kw)
                prof.totals[b] = prof.totals.get(b, 0.0) + el - child
                if prof._stack:
                    prof._stack[-1][0] += el

        setattr(obj, attr, timed)
        if had_own:
            self._undo.append(lambda: setattr(obj, attr, orig))
        else:
            self._undo.append(lambda: delattr(obj, attr))

    def reset(self) -> None:
        self.totals = {}

    def restore(self) -> None:
        for u in reversed(self._undo):
            u()
        self._undo = []

    def each(self, calls: Iterable[Callable[[], Any]], keep: Callable[[Any], bool] = lambda _: True,
             ) -> tuple[list[dict[str, float]], list[float]]:
        """Make every call, then restore what was wrapped: the buckets and the seconds of each call whose result
        ``keep`` accepts (the arguments of :func:`breakdown`)."""
        samples, totals = [], []
        try:
            for call in calls:
                self.reset()
                ts = time.perf_counter()
                got = call()
                el = time.perf_counter() - ts
                if keep(got):
                    samples.append(dict(self.totals))
                    totals.append(el)
        finally:
            self.restore()
        return samples, totals


def import_nodes(stderr: str) -> list[tuple[int, str, int, int]]:
    """``python -X importtime``'s lines as (depth: 1 for a top-level import, module, self µs, cumulative µs),
    children before their parent."""
    return [(len(m.group(3)), m.group(4), int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|( +)(\S+)", stderr, re.M)]


def breakdown(samples: list[dict[str, float]], totals: list[float]) -> dict[str, dict[str, float]]:
    """Median ms per bucket and share of the summed time; 'other' is total minus buckets."""
    keys = sorted({k for s in samples for k in s})
    rows = {}
    grand = sum(totals)
    for k in keys:
        vals = [s.get(k, 0.0) for s in samples]
        rows[k] = {"p50_ms": round(pct(vals, 50) * 1000, 3), "mean_ms": round(sum(vals) / len(vals) * 1000, 3),
                   "share": round(sum(vals) / grand, 4) if grand else 0.0}
    other = [t - sum(s.values()) for s, t in zip(samples, totals)]
    rows["other"] = {"p50_ms": round(pct(other, 50) * 1000, 3), "mean_ms": round(sum(other) / len(other) * 1000, 3),
                     "share": round(sum(other) / grand, 4) if grand else 0.0}
    rows["total"] = {"p50_ms": round(pct(totals, 50) * 1000, 3), "mean_ms": round(grand / len(totals) * 1000, 3),
                     "share": 1.0}
    return rows


def growth_exponent(sizes: list[float], values: list[float | None]) -> dict[str, Any]:
    """Least-squares slope of log(value) against log(size) (1.0 = linear, 0 = flat), its R², and the
    slopes between consecutive sizes. Points with no value (or a non-positive one) are left out."""
    pts = [(math.log(s), math.log(v)) for s, v in zip(sizes, values)
           if v is not None and isinstance(v, (int, float)) and math.isfinite(v) and v > 0 and s > 0]
    out: dict[str, Any] = {"slope": None, "r2": None, "points": len(pts), "local": []}
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        out["local"].append(round((y1 - y0) / (x1 - x0), 3) if x1 != x0 else None)
    if len(pts) < 2:
        return out
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return out
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
    ss_tot = sum((y - my) ** 2 for _, y in pts)
    ss_res = sum((y - (my + slope * (x - mx))) ** 2 for x, y in pts)
    out["slope"] = round(slope, 3)
    out["r2"] = round(1 - ss_res / ss_tot, 3) if ss_tot > 0 else 1.0
    return out

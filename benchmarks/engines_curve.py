#!/usr/bin/env python
"""Both engines' scale curves on one figure and in one table.

    python benchmarks/scale.py --curve --sizes 1000 5000 25000 --engine whoosh --out benchmarks/results/scale_curve_whoosh
    python benchmarks/scale.py --curve --sizes 1000 5000 25000 --engine tantivy --out benchmarks/results/scale_curve_tantivy
    python benchmarks/engines_curve.py benchmarks/results/scale_curve_whoosh.json \\
        benchmarks/results/scale_curve_tantivy.json --out benchmarks/results/scale_curve_engines
    (benchmarks/figures.py does the third step)
    mv benchmarks/results/scale_curve_{whoosh,tantivy}.{md,png} benchmarks/runs/   # by-products: the engines' report is the one kept

Each input is a ``scale.py --curve`` report of one engine (its runs name the engine). The
figure has scale.py's three log-log panels (query latency, build time, disk and memory) with
one line per engine and metric; the table puts the engines side by side per size, with the
ratio tantivy ÷ Whoosh and each metric's growth exponent. Run the two curves back to back on
a quiet machine: the ratios are only as good as the loads were alike (both are printed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.plots import plot_curves  # noqa: E402
from scale_curve import curve_summary  # noqa: E402

ROWS = [  # (metric key in curve_summary, label, format)
    ("build_s", "build (curate in batches), s", "{:.1f}"),
    ("build_ops_per_s", "build throughput, ops/s", "{:.0f}"),
    ("tier2_p50_ms", "tier 2 warm p50, ms", "{:.2f}"),
    ("tier2_p95_ms", "tier 2 warm p95, ms", "{:.2f}"),
    ("cold_tier2_p50_ms", "cold CLI tier 2 p50, ms", "{:.0f}"),
    ("peak_rss_mb", "peak RSS, MB", "{:.0f}"),
    ("disk_mb", ".memgrove/ on disk, MB", "{:.1f}"),
]
PANELS = [  # (title, [(metric, label, line style)])
    ("query latency (ms)", [("tier2_p50_ms", "tier 2 p50", "-"), ("tier2_p95_ms", "tier 2 p95", "--"),
                            ("cold_tier2_p50_ms", "cold CLI tier 2 p50", "-.")]),
    ("build time (s)", [("build_s", "build", "-")]),
    ("disk and memory (MB)", [("disk_mb", "disk", "-"), ("peak_rss_mb", "peak RSS", "--")]),
]


def load(path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(engine, report, curve summary) of one curve report."""
    report = json.loads(path.read_text(encoding="utf-8"))
    engines = {r.get("engine") for r in report["runs"]} - {None}
    if len(engines) != 1:
        raise SystemExit(f"{path}: expected the runs of one engine, found {sorted(engines) or 'none named'}")
    return engines.pop(), report, curve_summary(report["runs"])


def _value(cv: dict[str, Any], key: str, size: int) -> float | None:
    m = cv["metrics"].get(key)
    if m is None or size not in cv["sizes"]:
        return None
    return m["values"][cv["sizes"].index(size)]


def render(curves: list[tuple[str, dict[str, Any], dict[str, Any]]], png: str | None) -> str:
    names = [c[0] for c in curves]
    sizes = sorted(set(curves[0][2]["sizes"]).intersection(*(set(c[2]["sizes"]) for c in curves[1:])))
    out = ["# memgrove scale curve, both engines", ""]
    for name, report, _ in curves:
        m = report["machine"]
        out.append(f"- **{name}**: {report.get('command', '')} · load {m['loadavg'][0]:.1f} → "
                   f"{m.get('loadavg_end', m['loadavg'])[0]:.1f} · wall {report.get('wall_s', 0):.0f} s")
    out += ["", "| metric | size | " + " | ".join(names) + (f" | {names[1]} ÷ {names[0]}" if len(names) == 2 else "") + " |",
            "|---|---|" + "---|" * (len(names) + (1 if len(names) == 2 else 0))]
    for key, label, fmt in ROWS:
        for s in sizes:
            vals = [_value(cv, key, s) for _, _, cv in curves]
            cells = [fmt.format(v) if v is not None else "—" for v in vals]
            ratio = ""
            if len(vals) == 2:
                ratio = f" | {vals[1] / vals[0]:.2f}×" if vals[0] and vals[1] is not None else " | —"
            out.append(f"| {label} | {s:,} | " + " | ".join(cells) + ratio + " |")
        exps = [cv["exponents"].get(key, {}).get("slope") for _, _, cv in curves]
        out.append(f"| {label}: growth exponent | {sizes[0]:,}–{sizes[-1]:,} | "
                   + " | ".join(f"{e:.2f}" if e is not None else "—" for e in exps) + (" | " if len(names) == 2 else "")
                   + " |")
    out += ["", "Growth exponent: least-squares slope of log(metric) against log(size) (1.0 = linear)."]
    if png:
        out += ["", f"![both engines against tree size, log-log]({png})"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reports", type=Path, nargs=2, help="two scale.py --curve JSON reports, one per engine")
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.png")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    curves = [load(p) for p in a.reports]
    png = None
    if not a.no_plot:
        png = a.out.with_suffix(".png")
        plot_curves([(name, cv) for name, _, cv in curves], PANELS, png,
                    "memgrove scale curve, Whoosh and tantivy · k = growth exponent (log-log slope)")
    md = render(curves, png.name if png else None)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".md").write_text(md + "\n", encoding="utf-8")
    print(md)
    return md


if __name__ == "__main__":
    main()

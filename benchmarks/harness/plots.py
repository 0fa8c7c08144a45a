"""The benchmarks' figures (matplotlib, in the ``bench`` extra; Agg backend, PNG): the scale curve against
tree size, recall against word budget, and the shares of the query tiers."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _batch_note(runs: list[dict[str, Any]], c: dict[str, Any]) -> str:
    """" (100,000 in batches of 1000)" when --size-batch changed the batch of some size."""
    other = [(r["size"], r["build"]["batch"]) for r in runs if r["build"]["batch"] != c["batch"]]
    return (" (" + ", ".join(f"{s:,} in batches of {b}" for s, b in other) + ")") if other else ""


def log_log_axes(ax: Any, sizes: list[int]) -> None:
    """A curve panel's axes: log-log against tree size, one tick per size, legend below."""
    import matplotlib.ticker

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("entries in the tree")
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)


CURVE_PANELS = [  # (title, [(metric, label, line style)]) of the scale curve's figure (the build's: + batch size)
    ("query latency (ms)", [("tier0_p50_ms", "tier 0 exact cache, p50", "-"),
                            ("tier1_p50_ms", "tier 1 fuzzy cache, p50", "-"),
                            ("tier2_p50_ms", "tier 2 BM25 direct, p50", "-"),
                            ("tier2_p95_ms", "tier 2 BM25 direct, p95", "--"),
                            ("cold_tier0_p50_ms", "cold CLI, tier 0, p50", "-."),
                            ("cold_tier2_p50_ms", "cold CLI, tier 2, p50", "-.")]),
    ("build time (s)", [("build_s", "build: curate in batches (s)", "-")]),
    ("disk and memory (MB)", [("disk_mb", ".memgrove/ on disk (MB)", "-"), ("peak_rss_mb", "peak RSS (MB)", "-")]),
]
ENGINE_COLOURS = {"whoosh": "tab:blue", "tantivy": "tab:orange"}


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig: Any, path: Path, dpi: int = 100) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    _pyplot().close(fig)


def plot_curve(report: dict[str, Any], path: Path) -> None:
    """Three log-log panels against tree size: query latency, build time, disk and peak RSS."""
    c, m = report["config"], report["machine"]
    panels = [(f"build time (s), batches of {c['batch']}{_batch_note(report['runs'], c)}" if t.startswith("build")
               else t, lines) for t, lines in CURVE_PANELS]
    plot_curves([(None, report["curve"])], panels, path, f"memgrove scale curve · {m['cores']} cores · load avg "
                f"{m['loadavg'][0]:.1f} → {m['loadavg_end'][0]:.1f} · k = growth exponent (log-log slope)",
                guides=("build_s", "disk_mb"))


def plot_curves(curves: list[tuple[str | None, dict[str, Any]]], panels: list[tuple[str, list[tuple[str, str, str]]]],
                path: Path, title: str, guides: tuple[str, ...] = ()) -> None:
    """Log-log panels against tree size, ``panels`` = [(title, [(metric, label, line style)])]: a line per metric
    and curve (``curves`` = [(engine or None, curve summary)]; an engine colours its lines and names them), and
    for the metrics in ``guides`` a linear (k=1) guide through their first point."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 6), constrained_layout=True)
    sizes = sorted({s for _, cv in curves for s in cv["sizes"]})
    for ax, (panel, lines) in zip(axes, panels):
        for name, cv in curves:
            for key, label, style in lines:
                pts = [(s, v) for s, v in zip(cv["sizes"], cv["metrics"].get(key, {}).get("values", []))
                       if v is not None and v > 0]
                if pts:
                    k = cv["exponents"].get(key, {}).get("slope")
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=4,
                            color=ENGINE_COLOURS.get(name or ""), label=(f"{name}: " if name else "") + label
                            + (f" (k={k:.2f})" if k is not None else ""))
            for key in (k for k, _, _ in lines if k in guides):
                vals = cv["metrics"][key]["values"]
                if vals and vals[0]:
                    ax.plot([sizes[0], sizes[-1]], [vals[0], vals[0] * sizes[-1] / sizes[0]], ":", color="grey",
                            label="linear (k=1) guide")
        ax.set_title(panel)
        log_log_axes(ax, sizes)
    fig.suptitle(title, fontsize=10)
    _save(fig, path, 110)


def plot_recall_budget(panels: list[tuple[str, dict[str, dict[str, float]]]], budgets: list[int], path: Path,
                       note: str = "") -> None:
    """One panel per dataset: evidence recall (percent) against the word budget, one line per system.
    ``panels`` = [(title, {system: {"R@<b>w": recall 0-1}})]; memgrove is drawn first and thick."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), constrained_layout=True,
                             squeeze=False)
    for ax, (title, systems) in zip(axes[0], panels):
        for name, row in systems.items():
            ys = [100 * row[f"R@{b}w"] for b in budgets]
            ax.plot(budgets, ys, marker="o", lw=2.6 if name == "memgrove" else 1.3,
                    ls="-" if name == "memgrove" else "--", label=name)
        ax.set_xscale("log")
        ax.set_xticks(budgets)
        ax.set_xticklabels([f"{b:,}" for b in budgets])
        ax.set_xlabel("words of retrieved text (budget)")
        ax.set_ylabel("evidence recall, %")
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    if note:
        fig.suptitle(note, fontsize=9)
    _save(fig, path)


def plot_shares(panels: list[tuple[str, dict[str, dict[str, int]]]], order: list[str], path: Path,
                note: str = "") -> None:
    """Stacked horizontal bars, one panel each: ``(title, {bar label: {part: count}})``; every bar is 100% (its
    parts' shares of its count); ``order`` fixes the parts' order and colours, one legend for all panels."""
    plt = _pyplot()
    colours = dict(zip(order, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 3.9), squeeze=False)
    for ax, (title, bars) in zip(axes[0], panels):
        labels = list(bars)
        left = [0.0] * len(labels)
        for part in order:
            widths = [100 * bars[b].get(part, 0) / (sum(bars[b].values()) or 1) for b in labels]
            ax.barh(labels, widths, left=left, label=part, color=colours[part])
            left = [x + w for x, w in zip(left, widths)]
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of questions, %")
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[p]) for p in order]
    fig.legend(handles, order, loc="lower center", ncol=len(order), fontsize=8, frameon=False)
    if note:
        fig.suptitle(note, fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    _save(fig, path)

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


def plot_curve(report: dict[str, Any], path: Path) -> None:
    """Three log-log panels against tree size: query latency, build time, disk and peak RSS."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401  (NullLocator)

    cv = report["curve"]
    sizes, M, E = cv["sizes"], cv["metrics"], cv["exponents"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 6), constrained_layout=True)

    def line(ax, key: str, style: str, label: str | None = None) -> None:
        pts = [(s, v) for s, v in zip(sizes, M[key]["values"]) if v is not None and v > 0]
        if not pts:
            return
        k = E[key]["slope"]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=4,
                label=f"{label or M[key]['label']} (k={k:.2f})" if k is not None else (label or M[key]["label"]))

    def ref(ax, key: str) -> None:  # a slope-1 (linear) guide through the first point
        vals = M[key]["values"]
        if vals and vals[0]:
            ax.plot([sizes[0], sizes[-1]], [vals[0], vals[0] * sizes[-1] / sizes[0]], ":", color="grey",
                    label="linear (k=1) guide")

    ax = axes[0]
    line(ax, "tier0_p50_ms", "-", "tier 0 exact cache, p50")
    line(ax, "tier1_p50_ms", "-", "tier 1 fuzzy cache, p50")
    line(ax, "tier2_p50_ms", "-", "tier 2 BM25 direct, p50")
    line(ax, "tier2_p95_ms", "--", "tier 2 BM25 direct, p95")
    line(ax, "cold_tier0_p50_ms", "-.", "cold CLI, tier 0, p50")
    line(ax, "cold_tier2_p50_ms", "-.", "cold CLI, tier 2, p50")
    ax.set_title("query latency (ms)")
    ax = axes[1]
    line(ax, "build_s", "-", "build: curate in batches (s)")
    ref(ax, "build_s")
    ax.set_title(f"build time (s), batches of {report['config']['batch']}{_batch_note(report['runs'], report['config'])}")
    ax = axes[2]
    line(ax, "disk_mb", "-", ".memgrove/ on disk (MB)")
    line(ax, "peak_rss_mb", "-", "peak RSS (MB)")
    ref(ax, "disk_mb")
    ax.set_title("disk and memory (MB)")
    for ax in axes:
        log_log_axes(ax, sizes)
    m = report["machine"]
    fig.suptitle(f"memgrove scale curve · {m['cores']} cores · load avg {m['loadavg'][0]:.1f} → "
                 f"{m['loadavg_end'][0]:.1f} · k = growth exponent (log-log slope)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _pyplot() -> Any:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)

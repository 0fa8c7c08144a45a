"""The scale benchmark's markdown report (benchmarks/scale.py writes it beside the JSON)."""

from __future__ import annotations

from typing import Any, Callable

from harness.machine import machine_line
from harness.report import head, table, target as target_cell

TARGETS = {"search_p95_ms": 25.0, "fingerprint_ms": 50.0, "reindex_s": 30.0}   # issue 2, at TARGET_SIZE
TARGET_SIZE = 10_000


def render_markdown(report: dict[str, Any]) -> str:
    m, runs, c = report["machine"], report["runs"], report["config"]
    sizes = [r["size"] for r in runs]
    L = head("# memgrove scale benchmark", machine_line(m), report)
    L.append(f"Build: `Memory.open(tmp, create=True, durable=False)` + `mem.curate` in batches of {c['batch']} ADDs; "
             f"then {c['single_adds']} ADDs one per `curate` call. Search: {c['queries']} queries of 2-4 vocabulary "
             f"words after {c['warmup']} warm-up queries, `limit=10`, all modes interleaved query by query in one "
             f"process: *engine* = `mem.tree.engine.search` alone (the baseline); *default* = `Memory.open` defaults "
             f"(inotify watcher once the process is warm); *strict* = `watch=False, scan_interval=0` (stat scan of "
             f"the whole tree before every search); *interval* = `watch=False, scan_interval=1.0`. Times in ms "
             f"unless noted. *interval*'s p95 depends on how often its once-a-second rescan falls on a measured "
             f"query (about one in (1 s ÷ the time of one round of all modes)). Shared, noisy 2-core machine: read "
             f"medians and the ratios measured in the same run.")
    L.append("")
    growth = len(sizes) >= 2
    tgt_col = TARGET_SIZE in sizes
    L += table(["metric", *(f"{s:,}" for s in sizes), *([f"×{sizes[-1] / sizes[0]:g} entries →"] if growth else []),
                *([f"target @ {TARGET_SIZE:,}"] if tgt_col else [])], [])
    tr = next((r for r in runs if r["size"] == TARGET_SIZE), None)

    def row(label: str, get: Callable[[dict], float], fmt: str = "{:.1f}", key: str = "", unit: str = "ms",
            grow: bool = True, text: Callable[[dict], str] | None = None) -> None:
        vals = [get(r) for r in runs]
        cells = [text(r) for r in runs] if text else [fmt.format(v) for v in vals]
        line = f"| {label} | " + " | ".join(cells) + " |"
        if growth:
            line += (f" ×{vals[-1] / vals[0]:.2f} |" if grow and vals[0] else " |")
        if tgt_col:
            target = ""
            if key and tr is not None:
                v = get(tr)
                target = target_cell(v, TARGETS[key], unit)
            line += f" {target} |"
        L.append(line)

    row("curate, batches of %d: ops/s" % c["batch"], lambda r: r["build"]["ops_per_s"], "{:.0f}")
    row("  first batch, ops/s", lambda r: r["build"]["first_batch_ops_per_s"], "{:.0f}")
    row("  last batch, ops/s", lambda r: r["build"]["last_batch_ops_per_s"], "{:.0f}")
    row("curate, one op per call: ops/s", lambda r: r["single_add"]["ops_per_s"], "{:.1f}")
    row("  latency p50", lambda r: r["single_add"]["latency_ms"]["p50"])
    row("  latency p95", lambda r: r["single_add"]["latency_ms"]["p95"])
    row("full reindex, s", lambda r: r["reindex"]["seconds"], "{:.2f}", "reindex_s", "s")
    labels = {"engine": "engine alone (baseline)", "default": "mem.search, default (watcher)",
              "strict": "mem.search, strict scan", "interval_1s": "mem.search, scan_interval=1.0"}
    for mode, label in labels.items():
        for p in ("p50", "p95", "p99"):
            key = "search_p95_ms" if p == "p95" and mode != "engine" else ""
            row(f"search {p}: {label}", lambda r, mode=mode, p=p: r["search"][mode][p], "{:.2f}", key)
    for mode in ("default", "strict", "interval_1s"):
        row(f"  {mode} ÷ engine, p50 / p95", lambda r, mode=mode: r["search"][mode]["x_engine_p50"], grow=False,
            text=lambda r, mode=mode: f"{r['search'][mode]['x_engine_p50']:.2f}× / "
                                      f"{r['search'][mode]['x_engine_p95']:.2f}×")
    row("search p50: engine alone after full reindex", lambda r: r["search"]["engine_after_reindex"]["p50"], "{:.2f}")
    row("search p95: engine alone after full reindex", lambda r: r["search"]["engine_after_reindex"]["p95"], "{:.2f}")
    row("  Whoosh segments: built by curate / after reindex", lambda r: r["whoosh_segments"] or 0, grow=False,
        text=lambda r: f"{r['whoosh_segments']} / {r['whoosh_segments_after_reindex']}")
    row("  deleted docs kept in the index: built by curate", lambda r: r["whoosh_deleted_docs"] or 0, grow=False,
        text=lambda r: f"{r['whoosh_deleted_docs']} of {r['whoosh_deleted_docs'] + r['files_scanned']}"
        if r["whoosh_deleted_docs"] is not None else "?")
    row("fingerprint p50: default (watcher)", lambda r: r["fingerprint_ms"]["default"]["p50"], "{:.2f}")
    row("fingerprint p95: default (watcher)", lambda r: r["fingerprint_ms"]["default"]["p95"], "{:.2f}",
        "fingerprint_ms")
    row("fingerprint p50: strict (scan)", lambda r: r["fingerprint_ms"]["strict"]["p50"], "{:.2f}")
    row("fingerprint p95: strict (scan)", lambda r: r["fingerprint_ms"]["strict"]["p95"], "{:.2f}",
        "fingerprint_ms")
    row("  stat scan of the tree alone, p50", lambda r: r["scan_ms"]["p50"], "{:.2f}")
    row("  digest of the scan alone, p50", lambda r: r["digest_ms"]["p50"], "{:.2f}")
    row("cold one-shot query process, p50", lambda r: r["cold"]["query_process_ms"]["p50"], "{:.0f}")
    row("  `python -c pass`, p50", lambda r: r["cold"]["python_pass_ms"]["p50"], "{:.0f}")
    row("  `python -c 'import memgrove'`, p50", lambda r: r["cold"]["import_memgrove_ms"]["p50"], "{:.0f}")
    row("  inside it: `Memory.open`", lambda r: r["cold"]["inside_p50_ms"]["open"], "{:.1f}")
    row("  inside it: first `search`", lambda r: r["cold"]["inside_p50_ms"]["first_search"], "{:.0f}")
    row("peak RSS after the build, MB", lambda r: r["maxrss_after_build_mb"], "{:.0f}")
    row("peak RSS, whole run in-process, MB", lambda r: r["maxrss_mb"], "{:.0f}")
    row("peak RSS during reindex (process + workers), MB", lambda r: r["reindex"]["peak_rss_mb"], "{:.0f}")
    mb = 1024 * 1024
    row("disk tree/, MB (bytes / allocated)", lambda r: r["disk"]["tree"]["allocated"] / mb,
        text=lambda r: f"{r['disk']['tree']['bytes'] / mb:.1f} / {r['disk']['tree']['allocated'] / mb:.1f}")
    row("disk index/, MB", lambda r: r["disk"]["index"]["allocated"] / mb, "{:.1f}")
    row("disk journal/, MB", lambda r: r["disk"]["journal"]["allocated"] / mb, "{:.1f}")
    row("disk .memgrove/ total, MB", lambda r: r["disk"]["total"]["allocated"] / mb, "{:.1f}")
    row("files in tree/ (entries + context.md)", lambda r: r["files_scanned"], "{:,}")
    L.append("")
    if tgt_col and tr is not None:
        L.append(f"Targets (issue 2, {TARGET_SIZE:,} entries, 2 cores): search p95 ≤ {TARGETS['search_p95_ms']:g} ms "
                 f"warm, fingerprint ≤ {TARGETS['fingerprint_ms']:g} ms (compared with p95), full reindex ≤ "
                 f"{TARGETS['reindex_s']:g} s.")
        L.append("")

    for r in runs:
        L.append(f"## {r['size']:,} entries: where the time goes")
        L.append("")
        for name, bd in r["search_breakdown"].items():
            L.append(f"Search, {labels.get(name, name)}: {bd['total']['mean_ms']:.2f} ms mean, "
                     f"{bd['total']['p50_ms']:.2f} ms p50 over {c['breakdown_queries']} queries "
                     f"(exclusive time per part):")
            L.append("")
            L += _parts(bd) + [""]
        L.append(f"Curate, one ADD per call: {r['single_add']['latency_ms']['mean']:.1f} ms mean, "
                 f"{r['single_add']['latency_ms']['p50']:.1f} ms p50:")
        L.append("")
        L += _parts(r["single_add"]["breakdown"]) + [""]
        L.append(f"Corpus: {r['corpus']['entries']:,} entries, {r['corpus']['words_total']:,} words "
                 f"(median {r['corpus']['words_p50']:.0f} per entry), {r['corpus']['domains']} domains, "
                 f"{r['corpus']['topics']} topics, {r['folders']} folders; Whoosh segments after the build "
                 f"{r['whoosh_segments']}, after reindex {r['whoosh_segments_after_reindex']}; queries with no hit "
                 f"{r['search']['empty_results']} (those fall back to fuzzy/prefix); watcher active in the default "
                 f"reader: {r['watcher_active']}; load average {r['loadavg_start']} → {r['loadavg_end']}; "
                 f"this size took {r['wall_s']:.0f} s.")
        L.append("")
    return "\n".join(L)


def _parts(breakdown: dict[str, dict[str, float]]) -> list[str]:
    """A profile's table: exclusive time per part, the largest first (the total left out)."""
    return table(["part", "p50 ms", "mean ms", "share"],
                 [[k, f"{v['p50_ms']:.3f}", f"{v['mean_ms']:.3f}", f"{v['share'] * 100:.0f}%"]
                  for k, v in sorted(breakdown.items(), key=lambda kv: -kv[1]["mean_ms"]) if k != "total"])

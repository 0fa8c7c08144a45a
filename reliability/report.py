"""The report: ``reliability.md`` (a table per section, every failure with a one-line repro) and ``.json``."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .common import REPO, SectionResult


def commit() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha + (" (with uncommitted changes)" if dirty else "") if sha else "unknown"


def _cell(v: Any) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def render(results: list[SectionResult], meta: dict[str, Any]) -> str:
    total = sum(len(r.failures) for r in results)
    lines = ["# Reliability suite", "",
             f"`make reliability` (`python -m reliability {meta['argv']}`), {meta['date']}, "
             f"commit {meta['commit']}, seed {meta['seed']}, wall time {meta['seconds']:.0f} s, "
             f"{os.cpu_count()} cores, load average {meta['load']} at the start.", "",
             f"**{total} failure(s).**" + ("" if total else " Nothing lost, torn, stale, blocked or unexpected."), "",
             "| section | result | failures | seconds | summary |", "|---|---|---|---|---|"]
    for r in results:
        state = f"skipped: {r.skipped}" if r.skipped else ("ok" if not r.failures else "FAIL")
        brief = ", ".join(f"{k} {v}" for k, v in r.summary.items() if isinstance(v, (int, float, str)))
        lines.append(f"| {r.name} | {_cell(state)} | {len(r.failures)} | {r.seconds:.0f} | {_cell(brief)} |")
    for r in results:
        lines += ["", f"## {r.name}", ""]
        if r.skipped:
            lines += [f"Skipped: {r.skipped}"]
            continue
        if r.columns and r.rows:
            lines.append("| " + " | ".join(r.columns) + " |")
            lines.append("|" + "---|" * len(r.columns))
            for row in r.rows:
                lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
            lines.append("")
        lines += r.notes
    lines += ["", "## Failures", ""]
    if not total:
        lines.append("None.")
    for r in results:
        for f in r.failures:
            lines.append(f"- {_cell(f.line())}")
    return "\n".join(lines) + "\n"


def write(results: list[SectionResult], meta: dict[str, Any], out: Path) -> tuple[Path, Path]:
    out.parent.mkdir(parents=True, exist_ok=True)
    md, js = out.with_suffix(".md"), out.with_suffix(".json")
    md.write_text(render(results, meta), encoding="utf-8")
    js.write_text(json.dumps({"meta": meta, "failures": sum(len(r.failures) for r in results),
                              "sections": [r.to_json() for r in results]}, indent=1, ensure_ascii=False, default=str),
                  encoding="utf-8")
    return md, js


def meta_now(seed: int, argv: str) -> dict[str, Any]:
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit(), "seed": seed,
            "argv": argv, "load": load, "seconds": 0.0}

"""Writing a report: ``<stem>.json`` (the data, per-question records one per line) and ``<stem>.md`` (the
tables), the number formats of those tables, and the log line on stderr."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"
LONG_LISTS = ("questions", "llm_answers")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pct(v: float | None) -> str:
    """A share as a percentage with one decimal ("—" for none)."""
    return "—" if v is None else f"{v * 100:.1f}"


def times(v: float | None) -> str:
    """A ratio ("1.23×", "—" for none)."""
    return "—" if v is None else f"{v:.2f}×"


def target(value: float, limit: float, unit: str = "ms") -> str:
    """A target's cell: "≤ 25 ms: **ok**", or **MISS** when ``value`` is over ``limit``."""
    return f"≤ {limit:g} {unit}: **{'ok' if value <= limit else 'MISS'}**"


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def dump_json(report: dict[str, Any]) -> str:
    """Indented JSON, with the long per-question lists one compact record per line."""
    long = {k: report[k] for k in LONG_LISTS if k in report}
    text = json.dumps({**report, **{k: f"@@{k}@@" for k in long}}, indent=1, default=str)
    for k, rows in long.items():
        lines = ",\n".join("  " + json.dumps(r, separators=(",", ":"), default=str) for r in rows)
        text = text.replace(f'"@@{k}@@"', "[\n" + lines + "\n ]" if rows else "[]")
    return text + "\n"


def write(out: Path, report: dict[str, Any], md: str, *, compact: bool = False, **dump: Any) -> None:
    """``out.json`` and ``out.md`` (``out`` without a suffix); ``compact`` writes the per-question lists one
    record per line (:func:`dump_json`), otherwise ``json.dumps(report, indent=2, **dump)`` (``dump`` may
    set another indent)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    text = dump_json(report) if compact else json.dumps(report, **{"indent": 2, **dump}) + "\n"
    out.with_name(out.name + ".json").write_text(text, encoding="utf-8")
    out.with_name(out.name + ".md").write_text(md + "\n", encoding="utf-8")
    log(f"wrote {out}.json and .md")


def publish(report: dict[str, Any], md: str, out: Path | None, **dump: Any) -> dict[str, Any]:
    """Print the markdown, write the report (:func:`write`) unless ``out`` is None, and return it."""
    print(md)
    if out is not None:
        write(out, report, md, **dump)
    return report


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "") -> list[str]:
    """A markdown table's lines (an empty cell as "| |"); ``align`` has an "r" for each right-aligned column
    (``---:``), e.g. "lrr"."""
    rule = "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(header), "l"))
    return (["| " + " | ".join(header) + " |", "|" + rule]
            + [re.sub(r"\|  (?=\|)", "| ", "| " + " | ".join(str(c) for c in r) + " |") for r in rows])


def head(title: str, machine: str, report: dict[str, Any], more: str = "") -> list[str]:
    """A report's opening lines: its title, the machine line, the command and its wall time (then ``more``)."""
    return [title, "", machine, "", f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s{more}", ""]


def conversation_versions() -> dict[str, str | None]:
    """The versions the conversational benchmarks' reports (LoCoMo, BEAM, LongMemEval) record."""
    from harness.machine import versions
    return versions("bm25s", "langgraph", "langchain-core", "numpy")


def conversation_machine_line(report: dict[str, Any]) -> str:
    """The machine line of a conversational benchmark's report, with bm25s and langgraph's versions."""
    from harness.machine import machine_line
    v = report["versions"]
    return machine_line(report["machine"], f" · bm25s {v.get('bm25s')} · langgraph {v.get('langgraph')}")


def meaning(tree_overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The ranking by meaning a run's memories use: the variant's ``semantic_weight`` if it sets one, else the
    product default ("auto": ``SEMANTIC_DEFAULT`` where the embedding model is installed, else 0)."""
    import dataclasses

    from memgrove.tree.settings import TreeSettings
    over = tree_overrides or {}
    names = {f.name for f in dataclasses.fields(TreeSettings)}
    weight = TreeSettings(**{k: v for k, v in over.items() if k in names}).semantic_weight
    return {"semantic_weight": weight, "default": "semantic_weight" not in over}


def meaning_phrase(config: dict[str, Any]) -> str:
    """The settings description's words on meaning (``config["meaning"]``; "" for a report from before it was
    recorded)."""
    m = config.get("meaning")
    if m is None:
        return ""
    how = "the default where the embedding model is installed" if m["default"] else "set for this run"
    if m["semantic_weight"] > 0:
        return f", ranking by meaning on (`semantic_weight` {m['semantic_weight']:g}, {how})"
    return f", ranking by meaning off (`semantic_weight` 0, {'no embedding model installed' if m['default'] else how})"


def latency_table(latency_ms: dict[str, dict[str, Any]], systems: Sequence[str]) -> list[str]:
    """A conversational benchmark's latency table, one row per system."""
    keys = ("n", "p50", "p95", "p99", "mean", "max")
    return table(["latency (ms)", *keys], [
        ["memgrove `graph.invoke` (wall, harness)" if s == "memgrove" else f"{s} (bm25s scoring + sort)",
         *(latency_ms[s][k] for k in keys)] for s in systems])

#!/usr/bin/env python
"""What the verbatim curator makes of a folder of markdown documentation: a smoke check of its shapes.

    python benchmarks/document_entries.py DIR [DIR ...]          # a table per folder
    python benchmarks/document_entries.py DIR --json out.json     # the numbers, and every title

Each markdown file under DIR is turned into curate operations by ``curator.ops_from_file`` (what
``memgrove curate -f DIR`` writes into an empty memory; nothing is written here) and the entries
are described: how many, their titles (how many open with a bare "Synopsis" or "Description", a
section named without its page; the longest), their size in lines and words (median, 90th
percentile, max), and the faults a reader of documents would see: front matter text in a body
(``title:`` or ``description:`` lines before the first paragraph), an entry that is only a table's
header, a part of a table that starts with rows but without the table's header, a summary that is
a table's row, and a heading line (outside code) left inside a body, where it was not split.
Deterministic: the example titles are every n-th entry, in file order.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

_ROW = re.compile(r"^\s*\|.*\|\s*$")
_DELIMITER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.M)
_FRONT_KEY = re.compile(r"^(title|description|section|tags|date|lastmod):\s", re.M)


def _pct(values: list[int], q: float) -> int:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0


def _unfenced(body: str) -> str:
    return re.sub(r"^\s*(```|~~~).*?^\s*\1", "", body, flags=re.S | re.M)


def header_only(body: str) -> bool:
    """A body that is a table's header (a row and its delimiter line) and nothing else."""
    lines = [ln for ln in body.strip().split("\n") if ln.strip()]
    return 1 <= len(lines) <= 2 and _ROW.match(lines[0]) is not None and all(
        _ROW.match(ln) or _DELIMITER.match(ln) for ln in lines)


def headless_rows(body: str) -> bool:
    """A body whose first table rows have no delimiter line under their first row: a cut table."""
    lines = body.strip().split("\n")
    for i, ln in enumerate(lines):
        if _ROW.match(ln):
            return i + 1 >= len(lines) or not _DELIMITER.match(lines[i + 1])
        if ln.strip():
            return False
    return False


def describe(folder: Path) -> dict[str, Any]:
    from memgrove.tree.inputs import curator
    from memgrove.tree.inputs.placement import Placer

    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".md", ".markdown") and p.is_file())
    placer, now = Placer(), datetime.now(timezone.utc)
    ops = [op for f in files for op in curator.ops_from_file(f, max_bytes=10**7, now=now, root=folder, placer=placer)]
    bodies = [op["content"]["narrative"] for op in ops]
    titles = [op["title"] for op in ops]
    lines = [len(b.strip().split("\n")) for b in bodies]
    words = [len(b.split()) for b in bodies]
    step = max(1, len(ops) // 10)
    return {
        "folder": str(folder), "files": len(files), "entries": len(ops),
        "titles_bare_synopsis_or_description": sum(t.startswith(("Synopsis", "Description")) for t in titles),
        "title_chars_max": max(map(len, titles), default=0),
        "lines_median": int(statistics.median(lines)) if lines else 0, "lines_p90": _pct(lines, 0.9),
        "lines_max": max(lines, default=0),
        "words_median": int(statistics.median(words)) if words else 0, "words_p90": _pct(words, 0.9),
        "words_max": max(words, default=0),
        "front_matter_in_body": sum(bool(_FRONT_KEY.search(b.split("\n\n", 1)[0])) for b in bodies),
        "table_header_only": sum(map(header_only, bodies)),
        "table_rows_without_header": sum(map(headless_rows, bodies)),
        "summary_is_a_table_row": sum(op["summary"].lstrip().startswith("|") for op in ops),
        "heading_lines_in_body": sum(bool(_HEADING_LINE.search(_unfenced(b))) for b in bodies),
        "example_titles": titles[::step][:10],
        "titles": titles,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write the numbers and every title here")
    args = ap.parse_args(argv)
    runs = [describe(f) for f in args.folders]
    for r in runs:
        print(f"\n{r['folder']}")
        for k, v in r.items():
            if k not in ("folder", "titles", "example_titles"):
                print(f"  {k}: {v}")
        print("  example titles:")
        for t in r["example_titles"]:
            print(f"    {t}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the conversational benchmarks' command lines share: the memgrove system's options, the start of a
run (its command and machine line) and its end (the markdown printed, the report written)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.machine import loadavg, start  # noqa: F401  (the scripts call cli.start)
from harness.report import publish
from harness.retrievers import DEFAULT_VARIANT, VARIANTS


def parser(doc: str | None) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(description=(doc or "").split("\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def memgrove_options(ap: argparse.ArgumentParser, *, out: Path, prefetch: int, tree: bool = True) -> None:
    """--variant, --tree (an ablation's [tree] overrides), --prefetch-limit, --out, --no-write, --no-questions."""
    ap.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(VARIANTS),
                    help="memgrove variant (harness/retrievers.py VARIANTS)")
    if tree:
        ap.add_argument("--tree", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [tree] setting for an ablation, e.g. --tree link_weight=0 (repeatable)")
    ap.add_argument("--prefetch-limit", type=int, default=prefetch,
                    help=f"query graph prefetch_limit (entry hits per question; default {prefetch})")
    ap.add_argument("--out", type=Path, default=out, help="directory for the report's .json and .md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-questions", action="store_true", help="leave the per-question records out of the JSON")


def finish(report: dict[str, Any], md: str, out: Path, stem: str, write: bool) -> dict[str, Any]:
    """Print the markdown; unless told not to, write ``out/stem.json`` (per-question records one a line)
    and ``out/stem.md``."""
    return publish(report, md, out / stem if write else None, compact=True)


def load_end(machine: dict[str, Any]) -> None:
    machine["loadavg_end"] = loadavg()

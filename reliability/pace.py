"""How long this machine, now, takes to write one entry: the honest bound of a large legitimate input.

A hostile input may be large and still legitimate: a markdown file of 5,000 one-line sections is
5,000 entries, each a file written, indexed and listed in its folder's ``context.md``. What such a
case must show is that its cost is the cost of its entries (linear), not that 5,000 entries fit in
the 2 s a single bad field gets. So a case may take ``--slow`` seconds plus ``ENTRY_MARGIN`` times
the time per entry measured at the start of the section, on the same memory, for every entry it
wrote; a case that does more work per entry than curating plain sections is still reported slow.
"""

from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path
from typing import Any, Callable

ENTRY_MARGIN = 3.0       # x the measured time per entry: room for larger entries and a busier minute
CALIBRATION_ENTRIES = 300
# the largest input of the corpus writes 37,500 entries: api_conversation:huge_text, one message of
# 3,000,000 words curated as parts of part_words (80) words each (cli_ops:huge_list writes 20,000);
# a case is killed only once even that many would be over its bound
LARGEST_CASE_ENTRIES = 37_500


def entries_in(root: Path) -> int:
    """Entry files in a project's tree (context files left out)."""
    from memgrove.tree.index.catalog import scan
    from memgrove.tree.entries.paths import is_entry_file

    return sum(1 for p in scan(root / ".memgrove" / "tree") if is_entry_file(p))


def _median(template: Path, scratch: Path, runs: int, work: Callable[[Any], float], embed_ahead: bool = True) -> float:
    """Median over ``runs`` of ``work(mem)`` (seconds per unit of work) on a fresh copy of ``template``,
    opened as the cases it paces open theirs (``embed_ahead``)."""
    from memgrove import Memory

    scratch.mkdir(parents=True, exist_ok=True)
    times = []
    for r in range(runs):
        root = scratch / f"pace{r}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(template, root, symlinks=True)
        with Memory.open(root, embed_ahead=embed_ahead) as mem:
            times.append(work(mem))
        shutil.rmtree(root, ignore_errors=True)
    return statistics.median(times)


def seconds_per_entry(template: Path, scratch: Path, runs: int = 3, embed_ahead: bool = True) -> float:
    """Wall time per entry of the dearer of two ways of writing many entries, each the median of
    ``runs``: a file of ``CALIBRATION_ENTRIES`` one-line sections, and one message of as many parts
    (a conversation's parts carry sources and a link to the next part: about 3x a section here, so a
    pace taken from sections alone killed the 37,500-part message while it was writing linearly)."""
    source = scratch / "pace.md"
    scratch.mkdir(parents=True, exist_ok=True)
    source.write_text("".join(f"## Section {i}\nline {i}\n" for i in range(CALIBRATION_ENTRIES)), encoding="utf-8")
    message = {"id": "pace", "messages": [{"id": "1", "speaker": "Ana", "text": "w " * (80 * CALIBRATION_ENTRIES)}]}

    def timed(ingest: Callable[[Any], Any]) -> Callable[[Any], float]:
        def work(mem: Any) -> float:
            t0 = time.monotonic()
            written = len(ingest(mem))
            return (time.monotonic() - t0) / max(1, written)
        return work

    files = _median(template, scratch, runs, timed(lambda mem: mem.ingest(files=[source])), embed_ahead)
    parts = _median(template, scratch, runs, timed(lambda mem: mem.ingest(conversation=message)), embed_ahead)
    return max(files, parts)


def seconds_per_mb(template: Path, scratch: Path, runs: int = 3) -> float:
    """Wall time per MB of writing one entry of 1 MB (an ADD, then an UPDATE of its text), the median
    of ``runs``: what a case editing a large entry may take."""
    body = "word " * 200_000

    def work(mem: Any) -> float:
        t0 = time.monotonic()
        mem.curate([{"op": "ADD", "path": "pace/mb/one.md", "content": body, "reason": "pace"}])
        mem.curate([{"op": "UPDATE", "path": "pace/mb/one.md", "content": body + "more", "replace": True,
                     "reason": "pace"}])
        return (time.monotonic() - t0) / 2

    return _median(template, scratch, runs, work)


def allowed(slow: float, per_entry: float, entries: int, per_mb: float = 0.0, mb: float = 0.0) -> float:
    """Seconds a case that wrote ``entries`` entries (and ``mb`` MB into one) may take."""
    return slow + ENTRY_MARGIN * (per_entry * max(0, entries) + per_mb * max(0.0, mb))

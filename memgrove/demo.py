"""``make demo``: the main job on the embedded default — no LLM, no key, no server.

Creates a memory (in a temp folder, deleted at the end, or in ``--keep DIR``),
curates the bundled sample (a three-session conversation and three markdown
notes) with the verbatim curator, prints the tree, then asks the sample
questions through the 5-tier query pipeline and shows each answer first, then
what answered it and where it came from.

Output follows the terminal's width (``COLUMNS`` when it is not a terminal):
text wraps between words, never inside one, and an answer that is a markdown
table is printed as a table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from memgrove import Memory
from memgrove.graphs.tiers import tier_label
from memgrove.sample import sample_dir
from memgrove.terminal import safe
from memgrove.terminal import safe_markup as esc

# keywords rather than a question land in tier 2; asked again in other case and spacing,
# they are served by the exact cache (tier 3-4 evidence without an LLM is never cached)
KEYWORDS = "JWT access token lifetime RS256"
INDENT = 5
SHOWN_SOURCES = 3


def questions(data: Path) -> list[str]:
    """Every question the demo asks, in order: the sample's, then the keyword pair."""
    asked = [q.strip() for q in (data / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    return asked + [KEYWORDS, "  " + KEYWORDS.lower() + "  "]


def _tree(mem: Memory, folder: str, branch: Tree) -> None:
    node = mem.list(folder)
    for f in node["folders"]:
        name = esc(f["path"].rsplit("/", 1)[-1])
        _tree(mem, f["path"], branch.add(f"[bold]{name}/[/bold] [dim]{f['entries']} entries[/dim]"))
    entries = node["entries"]
    for e in entries[:4]:
        branch.add(f"{esc(e['path'].rsplit('/', 1)[-1])} [dim]{esc(e['title'])}[/dim]")
    if len(entries) > 4:
        branch.add(f"[dim]… {len(entries) - 4} more[/dim]")


_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def table_of(text: str) -> Table | None:
    """A markdown table (a header, its rule, rows) as a rich table; None for anything else."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if len(lines) < 2 or not all(ln.startswith("|") for ln in lines) or not _RULE.match(lines[1]):
        return None
    table = Table(show_edge=True, pad_edge=True)
    for head in _cells(lines[0]):
        table.add_column(Text(safe(head.replace("`", ""))), overflow="fold")
    for row in lines[2:]:
        table.add_row(*(Text(safe(c.replace("`", ""))) for c in _cells(row)))
    return table


def answer_view(a: Any) -> RenderableType:
    """The answer first: its text (a table stays a table), then what answered it, then its sources."""
    if a.out_of_domain:
        lead: RenderableType = Text("not in memory", style="yellow")
    else:
        lead = table_of(a.answer) or Text(safe(" ".join(a.answer.replace("**", "").split())))
    how = f"tier {a.tier} · {tier_label(a)} · {a.latency_ms:.1f} ms"
    parts: list[RenderableType] = [lead, Text(how, style="dim")]
    if a.sources:
        more = len(a.sources) - SHOWN_SOURCES
        parts.append(Text("sources: " + ", ".join(safe(p) for p in a.sources[:SHOWN_SOURCES])
                          + (f" and {more} more" if more > 0 else ""), style="dim"))
    return Padding(Group(*parts), (0, 0, 0, INDENT), expand=False)


def conversation_size(path: Path) -> int:
    return len(json.loads(path.read_text(encoding="utf-8")).get("messages", []))


def run(workdir: Path, console: Console, *, kept: bool = False) -> list[dict]:
    """Curate the sample into ``workdir``, show the tree and ask every question; the rows asked."""
    data = sample_dir()
    notes = sorted((data / "notes").glob("*.md"))
    conversation = data / "conversation.json"
    mem = Memory.open(workdir, create=True, embed_ahead=False)   # its vectors are computed below, in view
    try:
        console.rule("[bold]1. Curate[/bold] (verbatim curator, no LLM)")
        start = time.perf_counter()
        results = mem.ingest(conversation=conversation, files=notes)
        where = f" into {esc(mem.home)}" if kept else ""
        console.print(f"{len(results)} entries from 1 conversation ({conversation_size(conversation)} messages) "
                      f"and {len(notes)} notes in {time.perf_counter() - start:.2f} s{where}")
        if mem.tree.settings.semantic_weight > 0:    # what a server does in the background as entries arrive
            start = time.perf_counter()
            embedded, _dropped = mem.embed()
            console.print(f"{embedded} entries' sentence embeddings (ranking by meaning: the model is installed) "
                          f"in {time.perf_counter() - start:.2f} s")
        console.rule("[bold]2. The Context Tree[/bold]")
        root = Tree(f"[bold]{esc(mem.home / 'tree') if kept else '.memgrove/tree'}[/bold]")
        _tree(mem, "", root)
        console.print(root)
        asked = questions(data)
        console.rule(f"[bold]3. {len(asked)} questions[/bold] (the 5-tier pipeline; no LLM configured)")
        rows = []
        for q in asked:
            a = mem.query(q)
            console.print(Text.assemble(("Q: ", "bold"), (safe(q), "bold")))
            console.print(answer_view(a))
            rows.append({"question": q, "tier": a.tier, "sources": a.sources, "ms": a.latency_ms})
        console.print("[dim]Without an LLM, questions that would need one (tiers 3–4) are answered with the "
                      "sentence that answers best and its evidence; set MEMGROVE_MODEL for a model's answer.[/dim]")
        rep = mem.doctor()
        console.print(f"doctor: {'consistent' if rep.ok else 'INCONSISTENT'} — {rep.entries} entries, "
                      f"{rep.contexts} context files, {rep.indexed} indexed")
    finally:
        mem.close()
    return rows


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m memgrove.demo",
        description="Curate a sample conversation and notes into a memory and ask it questions, "
                    "without an LLM. The memory is deleted at the end unless --keep names a folder.")
    ap.add_argument("--keep", metavar="DIR", type=Path,
                    help="create the memory in DIR (DIR/.memgrove) and keep it, to query it afterwards")
    return ap


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    args = parser().parse_args(argv)
    console = console or Console(emoji=False, highlight=False)
    if args.keep is not None:
        folder = args.keep.expanduser().resolve()
        if (folder / ".memgrove").exists():
            console.print(f"[red]{esc(folder / '.memgrove')} already exists: give --keep a new folder[/red]")
            return 2
        folder.mkdir(parents=True, exist_ok=True)
        run(folder, console, kept=True)
        console.print(f"The memory is kept in {esc(folder / '.memgrove')}. Ask it yourself:")
        console.print(Padding(Text(f'memgrove --root {safe(folder)} query "Who adopted a dog?"'), (0, 0, 0, 2)))
    else:
        with tempfile.TemporaryDirectory(prefix="memgrove-demo-") as tmp:
            run(Path(tmp), console)
        console.print("The demo's memory was temporary (keep one with [bold]--keep DIR[/bold]).")
    console.print("Try it on your own project: [bold]memgrove init[/bold], [bold]memgrove curate -f notes.md[/bold], "
                  "[bold]memgrove query \"...\"[/bold]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

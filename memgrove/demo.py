"""``make demo``: the main job on the embedded default — no LLM, no key, no server.

Creates a memory in a temp folder, curates the bundled sample (a three-session
conversation and three markdown notes) with the verbatim curator, prints the
tree, then asks the sample questions and shows each answer's source, tier and
latency.
"""

from __future__ import annotations

import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.tree import Tree

from memgrove import Memory


def sample_dir() -> Path:
    return Path(str(resources.files("memgrove") / "data" / "sample"))


def _tree(mem: Memory, folder: str, branch: Tree) -> None:
    node = mem.list(folder)
    for f in node["folders"]:
        _tree(mem, f["path"], branch.add(f"[bold]{f['path'].rsplit('/', 1)[-1]}/[/bold] [dim]{f['entries']} entries[/dim]"))
    entries = node["entries"]
    for e in entries[:4]:
        branch.add(f"{e['path'].rsplit('/', 1)[-1]} [dim]{e['title'][:60]}[/dim]")
    if len(entries) > 4:
        branch.add(f"[dim]… {len(entries) - 4} more[/dim]")


def run(workdir: Path, console: Console) -> list[dict]:
    data = sample_dir()
    notes = sorted((data / "notes").glob("*.md"))
    mem = Memory.open(workdir, create=True)
    console.rule("[bold]1. Curate[/bold] (verbatim curator, no LLM)")
    start = time.perf_counter()
    results = mem.ingest(conversation=data / "conversation.json", files=notes)
    console.print(f"{len(results)} entries from 1 conversation (45 messages) and {len(notes)} notes "
                  f"in {time.perf_counter() - start:.2f} s → {mem.home}")
    console.rule("[bold]2. The Context Tree[/bold]")
    root = Tree(f"[bold]{mem.home / 'tree'}[/bold]")
    _tree(mem, "", root)
    console.print(root)
    console.rule("[bold]3. Queries[/bold] (answered from the tree: BM25 search, no LLM)")
    rows = []
    questions = [q.strip() for q in (data / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    for q in questions:
        start = time.perf_counter()
        hits = mem.search(q, limit=3)
        ms = (time.perf_counter() - start) * 1000
        console.print(f"[bold]Q: {q}[/bold]")
        if hits:
            h = hits[0]
            ref = h.sources[0]["ref"] if h.sources else h.path
            console.print(f"   [green]→[/green] {h.excerpt.replace('**', '')}")
            console.print(f"   [dim]entry {h.path} · score {h.score:.3f} · source {ref}[/dim]")
        else:
            console.print("   [yellow]→ not in memory[/yellow]")
        console.print(f"   [dim]tier: BM25 search (no LLM) · {ms:.1f} ms[/dim]")
        rows.append({"question": q, "path": hits[0].path if hits else None, "ms": ms})
    rep = mem.doctor()
    console.print(f"doctor: {'consistent' if rep.ok else 'INCONSISTENT'} — {rep.entries} entries, "
                  f"{rep.contexts} context files, {rep.indexed} indexed")
    mem.close()
    return rows


def main() -> int:
    console = Console()
    with tempfile.TemporaryDirectory(prefix="memgrove-demo-") as tmp:
        run(Path(tmp), console)
    console.print("Try it on your own project: [bold]memgrove init[/bold], [bold]memgrove curate -f notes.md[/bold], "
                  "[bold]memgrove search \"...\"[/bold]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``make demo``: the main job on the embedded default — no LLM, no key, no server.

Creates a memory in a temp folder, curates the bundled sample (a three-session
conversation and three markdown notes) with the verbatim curator, prints the
tree, then asks the sample questions through the 5-tier query pipeline and
shows each answer's evidence, tier and latency.
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
from memgrove.terminal import safe_markup as esc


def sample_dir() -> Path:
    return Path(str(resources.files("memgrove") / "data" / "sample"))


def _tree(mem: Memory, folder: str, branch: Tree) -> None:
    node = mem.list(folder)
    for f in node["folders"]:
        name = esc(f["path"].rsplit("/", 1)[-1])
        _tree(mem, f["path"], branch.add(f"[bold]{name}/[/bold] [dim]{f['entries']} entries[/dim]"))
    entries = node["entries"]
    for e in entries[:4]:
        branch.add(f"{esc(e['path'].rsplit('/', 1)[-1])} [dim]{esc(e['title'][:60])}[/dim]")
    if len(entries) > 4:
        branch.add(f"[dim]… {len(entries) - 4} more[/dim]")


TIER_NAMES = {0: "exact cache", 1: "fuzzy cache", 2: "BM25 answer", 3: "one LLM call → evidence",
              4: "agent loop → evidence"}


def _best_line(mem: Memory, answer) -> str:
    """The top entry's words (the Summary line of a tier 2 answer, the best evidence otherwise)."""
    if answer.out_of_domain or not answer.sources:
        return "not in memory"
    entry = mem.read(answer.sources[0])
    text = entry.sections.get("Narrative") or entry.summary or entry.title
    return " ".join(text.replace("**", "").split())[:220]


def run(workdir: Path, console: Console) -> list[dict]:
    data = sample_dir()
    notes = sorted((data / "notes").glob("*.md"))
    mem = Memory.open(workdir, create=True)
    console.rule("[bold]1. Curate[/bold] (verbatim curator, no LLM)")
    start = time.perf_counter()
    results = mem.ingest(conversation=data / "conversation.json", files=notes)
    console.print(f"{len(results)} entries from 1 conversation (45 messages) and {len(notes)} notes "
                  f"in {time.perf_counter() - start:.2f} s → {esc(mem.home)}")
    console.rule("[bold]2. The Context Tree[/bold]")
    root = Tree(f"[bold]{esc(mem.home / 'tree')}[/bold]")
    _tree(mem, "", root)
    console.print(root)
    console.rule("[bold]3. Queries[/bold] (the 5-tier pipeline; no LLM configured)")
    rows = []
    questions = [q.strip() for q in (data / "queries.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    # keywords rather than a question land in tier 2; asked again in other case and spacing,
    # they are served by the exact cache (tier 3-4 evidence without an LLM is never cached)
    keywords = "JWT access token lifetime RS256"
    for q in questions + [keywords, "  " + keywords.lower() + "  "]:
        a = mem.query(q)
        console.print(f"[bold]Q: {esc(q)}[/bold]")
        console.print(f"   [green]→[/green] {esc(_best_line(mem, a))}")
        if a.sources:
            console.print(f"   [dim]sources: {esc(', '.join(a.sources[:3]))}{' …' if len(a.sources) > 3 else ''}[/dim]")
        console.print(f"   [dim]tier {a.tier} ({TIER_NAMES[a.tier]}{', out of domain' if a.out_of_domain else ''}"
                      f"{', cached' if a.cached else ''}) · {a.latency_ms:.1f} ms[/dim]")
        rows.append({"question": q, "tier": a.tier, "sources": a.sources, "ms": a.latency_ms})
    console.print("[dim]Tiers 3–4 would ask an LLM (set MEMGROVE_MODEL); without one they quote the best "
                  "evidence, as above.[/dim]")
    rep = mem.doctor()
    console.print(f"doctor: {'consistent' if rep.ok else 'INCONSISTENT'} — {rep.entries} entries, "
                  f"{rep.contexts} context files, {rep.indexed} indexed")
    mem.close()
    return rows


def main() -> int:
    console = Console(emoji=False)
    with tempfile.TemporaryDirectory(prefix="memgrove-demo-") as tmp:
        run(Path(tmp), console)
    console.print("Try it on your own project: [bold]memgrove init[/bold], [bold]memgrove curate -f notes.md[/bold], "
                  "[bold]memgrove query \"...\"[/bold]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

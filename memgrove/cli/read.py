"""``memgrove search``, ``query``, ``stats``, ``tree``, ``show`` and ``history``: the commands
that read the memory and render it (text, or JSON with ``--json``). Listed in ``COMMANDS`` for the group
(``memgrove/cli/app.py``) to add."""

from __future__ import annotations

import shlex
import time
from typing import TYPE_CHECKING, Any

import click

from memgrove.cli.common import State, console, emit_json, json_option, wrap
from memgrove.cli.render import answer_lines, hits_lines
from memgrove.cli.given_paths import tree_path
from memgrove.graphs.llm import model_configured
from memgrove.terminal import echo, safe

if TYPE_CHECKING:
    from memgrove.remote.memory import RemoteMemory
    from memgrove.memory import Memory


@click.command()
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Most results to show.")
@click.option("--include-archived", is_flag=True, help="Search the archived entries too (marked [archived]).")
@json_option
@click.pass_obj
def search(state: State, query: str, limit: int, include_archived: bool, as_json: bool) -> None:
    """Full-text search of the tree (BM25F, no LLM)."""
    start = time.perf_counter()
    hits = state.memory().search(query, limit=limit + 1,    # one more: is anything left out?
                                 **({"include_archived": True} if include_archived else {}))
    ms = (time.perf_counter() - start) * 1000
    more = len(hits) > limit
    hits = hits[:limit]
    if as_json:
        emit_json({"query": query, "latency_ms": round(ms, 2), "hits": [h.to_dict() for h in hits], "more": more})
        return
    # click.echo drops the styles when stdout is not a terminal
    click.echo("\n".join(hits_lines(query, hits, ms, limit, more, color=True)))


@click.command()
@click.argument("question")
@click.option("-v", "--verbose", is_flag=True, help="Also print the evidence: every entry quoted, and the gaps.")
@json_option
@click.pass_obj
def query(state: State, question: str, verbose: bool, as_json: bool) -> None:
    """Answer QUESTION from memory: caches and BM25 first, an LLM only if needed.

    Prints the answer first, then how it was answered and the entries it came from
    (paths for `memgrove show`); --verbose adds the evidence, --json all of it.
    """
    answer = state.memory().query(question)
    if as_json:
        emit_json(answer.to_dict())
        return
    click.echo("\n".join(answer_lines(answer, verbose)))


@click.command()
@json_option
@click.pass_obj
def stats(state: State, as_json: bool) -> None:
    """Tier distribution and latency percentiles of the queries asked so far."""
    data = state.memory().stats()
    if as_json:
        emit_json(data)
        return
    if data["damaged_lines"]:
        click.echo(f"skipped {data['damaged_lines']} damaged line(s) of the query log", err=True)
    if not data["queries"]:
        echo("no queries logged yet (ask with `memgrove query`)")
        return
    from rich.table import Table

    configured = model_configured()
    title = f"{data['queries']} queries · {data['out_of_domain']} out of domain"
    if configured or data["llm"] or data["errors"]:
        title += f" · {data['llm']} answered by an LLM · {data['errors']} LLM errors"
    table = Table(title=title)
    table.add_column("tier")
    for col in ("queries", "share", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(col, justify="right", no_wrap=True)
    for t in data["tiers"]:
        table.add_row(_tier_label(t), str(t["count"]), f"{t['share']:.0%}",
                      f"{t['p50_ms']:.2f}", f"{t['p95_ms']:.2f}", f"{t['p99_ms']:.2f}")
    console().print(table)
    if not configured:
        click.echo(wrap("no model configured (set MEMGROVE_MODEL): questions past BM25 are answered from the "
                         "best entries, without an LLM", 0))


_TIER_NAMES = {0: "0 exact cache", 1: "1 fuzzy cache", 2: "2 BM25", 3: "3 one LLM call", 4: "4 agent loop"}


def _tier_label(row: dict[str, Any]) -> str:
    """A row's name says what answered: tiers 3-4 without a model answer from the best entries."""
    tier, llm = row["tier"], row.get("llm", 0)
    if tier not in (3, 4):
        return _TIER_NAMES.get(tier, str(tier))
    if not llm:
        return f"{tier} best entries, no model"
    if llm < row["count"]:
        return f"{_TIER_NAMES[tier]} ({row['count'] - llm} no model)"
    return _TIER_NAMES[tier]


@click.command()
@click.argument("folder", required=False, default="")
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(min=0),
              help="Most entries shown per folder (0: all).")
@click.option("--all", "show_all", is_flag=True, help="Show every entry (same as --limit 0).")
@json_option
@click.pass_obj
def tree(state: State, folder: str, limit: int, show_all: bool, as_json: bool) -> None:
    """Show the tree (or one FOLDER of it) with entry titles. JSON lists every entry."""
    mem = state.memory()
    folder = tree_path(folder, mem.tree.root) if folder else folder
    if as_json:
        emit_json(_walk(mem, folder))
        return
    top = mem.list(folder)
    click.echo(click.style(safe(top["title"]), bold=True) + " " + safe(top["path"] or mem.home / "tree"))
    _render(mem, top, "", 0 if show_all else limit)


def _walk(mem: "Memory | RemoteMemory", folder: str) -> dict[str, Any]:
    node = mem.list(folder)
    node["folders"] = [_walk(mem, f["path"]) for f in node["folders"]]
    return node


def _render(mem: "Memory | RemoteMemory", node: dict[str, Any], prefix: str, limit: int) -> None:
    """One line per folder and entry, never wrapped or cut here: a name is copied whole."""
    entries = node["entries"] if not limit else node["entries"][:limit]
    more = len(node["entries"]) - len(entries)
    lines: list[tuple[str, dict[str, Any] | None]] = [(_folder_line(f), f) for f in node["folders"]]
    lines += [(_entry_line(e), None) for e in entries]
    if more:
        again = f"memgrove tree {shlex.quote(node['path'])} --all" if node["path"] else "memgrove tree --all"
        lines.append((click.style(f"… {more} more entries: {safe(again)}", dim=True), None))
    for i, (line, sub) in enumerate(lines):
        last = i == len(lines) - 1
        click.echo(prefix + ("└── " if last else "├── ") + line)
        if sub is not None:
            _render(mem, mem.list(sub["path"]), prefix + ("    " if last else "│   "), limit)


def _folder_line(f: dict[str, Any]) -> str:
    return (click.style(safe(f["path"].rsplit("/", 1)[-1]) + "/", bold=True) + " " + safe(f["title"])
            + click.style(f" ({f['entries']} entries)", dim=True))


def _entry_line(e: dict[str, Any]) -> str:
    name = safe(e["path"].rsplit("/", 1)[-1])
    if e["title"]:
        return name + "  " + click.style(safe(e["title"]), dim=True)
    return name + "  " + click.style(safe(e.get("error", "unreadable")), fg="red")


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
def show(state: State, path: str, as_json: bool) -> None:
    """Print one entry with its links and backlinks.

    PATH is the entry's path in the tree (auth/jwt/rotation.md) or the file's path as tab
    completion gives it (.memgrove/tree/auth/jwt/rotation.md, or an absolute one).
    """
    mem = state.memory()
    data = mem.show(tree_path(path, mem.tree.root))
    if as_json:
        emit_json(data)
        return
    echo(data["text"].rstrip("\n"))
    if data["links"] or data["backlinks"]:
        echo("")
        for p in data["links"]:
            echo(f"→ {p}")
        for p in data["backlinks"]:
            echo(f"← {p}")


@click.command()
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(min=0),
              help="Most operations shown (0: all).")
@click.option("--all", "show_all", is_flag=True, help="Show every operation (same as --limit 0).")
@click.option("--path", default=None, help="Only operations touching this entry or folder.")
@json_option
@click.pass_obj
def history(state: State, limit: int, show_all: bool, path: str | None, as_json: bool) -> None:
    """List curate operations, newest first."""
    mem = state.memory()
    records = mem.history(limit=None, path=tree_path(path, mem.tree.root) or None if path else None)
    shown = records if show_all or not limit else records[:limit]
    if as_json:
        emit_json({"operations": [r.to_listing() for r in shown]})     # GET /api/history's shape
        return
    if not records:
        echo("no operations yet" + (f" touching {path}" if path else ""))
        return
    for r in shown:
        # the path whole on the id's line: it is what `show` and `undo` users copy
        click.echo(click.style(safe(r.id), fg="yellow") + f"  {safe(r.op):<9} " + safe(r.path))   # SUPERSEDE is the longest
        if r.reason:
            click.echo(click.style(wrap(r.reason, 4), dim=True))
    if len(records) > len(shown):
        click.echo(f"… {len(records) - len(shown)} more: use --limit 0 or --all to see every one")


# what the group (memgrove/cli/app.py) adds
COMMANDS = [search, query, stats, tree, show, history]

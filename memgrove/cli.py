"""The ``memgrove`` command line: a thin layer over ``Memory``.

Each command parses its arguments, calls one library method and renders the
result (a rich table, or JSON with ``--json``). Known errors become one line
and exit status 1; unexpected ones too, unless ``MEMGROVE_RAISE_ERRORS`` is set
(tests), where they propagate with their traceback.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from memgrove.graphs.llm import model_configured
from memgrove.memory import Memory
from memgrove.terminal import dumps, echo, safe, safe_markup
from memgrove.tree import curator
from memgrove.tree.curator import decode_input
from memgrove.tree.errors import InvalidInput, MemgroveError
from memgrove.tree.nesting import parse_json


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        finally:
            _notices(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemgroveError as exc:
            raise click.ClickException(safe(exc)) from None
        except click.ClickException as exc:   # its message may quote a path or a file's words
            exc.message = safe(exc.message)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            _reader_left()
            raise click.exceptions.Exit(0) from None
        except Exception as exc:  # noqa: BLE001 - users see one line, tests see the traceback
            if os.environ.get("MEMGROVE_RAISE_ERRORS"):
                raise
            raise click.ClickException(safe(f"unexpected {type(exc).__name__}: {exc}")) from None


def _notices(ctx: click.Context) -> None:
    """What the command had to repair on the way (a damaged cache reset, a stale lock), on
    stderr; ``doctor`` lists them itself."""
    state = ctx.obj
    mem = getattr(state, "_memory", None)
    if mem is None or ctx.invoked_subcommand == "doctor":
        return
    for note in mem.tree.notices:
        try:
            click.echo(f"notice: {safe(note)}", err=True)
        except OSError:
            return


def _reader_left() -> None:
    """`memgrove query ... | head -1`: the reader left, not an error. Output still buffered
    goes to /dev/null, so the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _State:
    def __init__(self, root: str | None):
        self.root = root
        self._memory: Memory | None = None

    def memory(self) -> Memory:
        if self._memory is None:
            self._memory = Memory.open(self.root)
        return self._memory


def _console():
    from rich.console import Console

    # no emoji codes either: ":warning:" in a title stays as it is written
    return Console(highlight=False, soft_wrap=False, emoji=False)


def _emit_json(data: Any) -> None:
    click.echo(dumps(data))


def _progress(description: str):
    """A rich progress bar usable as a ``(done, total)`` callback; silent when not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=_console(), transient=True, disable=not sys.stderr.isatty())
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, update


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


@click.group(cls=_Group)
@click.option("--root", envvar="MEMGROVE_HOME", type=click.Path(file_okay=False),
              help="Project folder holding .memgrove/ (default: found upwards from the current folder).")
@click.version_option(package_name="memgrove")
@click.pass_context
def cli(ctx: click.Context, root: str | None) -> None:
    """memgrove: agent-native memory in a tree of markdown files."""
    ctx.obj = _State(root)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@click.pass_obj
def init(state: _State, folder: str | None) -> None:
    """Create .memgrove/ in FOLDER (default: --root or the current folder), with a config.toml
    listing every setting at its default, commented out (an existing one is kept)."""
    from memgrove.config import write_config

    mem = Memory.open(folder or state.root or ".", create=True)
    written = write_config(mem.home)
    echo(f"memory ready at {mem.home}")
    echo(f"settings: {mem.home / 'config.toml'}" + (" (every setting at its default, commented out)"
                                                    if written else " (kept as it was)"))


@cli.command()
@click.argument("text", required=False)
@click.option("-f", "--file", "files", multiple=True, type=click.Path(dir_okay=False), help="Text or markdown file (repeatable).")
@click.option("--conversation", type=click.Path(dir_okay=False),
              help='Conversation JSON: {"id", "messages": [...]}, or a list of {"role", "content"} '
                   'or LangChain messages.')
@click.option("--ops", "ops_file", type=click.Path(dir_okay=False), help="JSON list of explicit operations.")
@click.option("--verbatim", is_flag=True, help="Use the verbatim curator even when a model is configured.")
@click.option("--window", default=1, show_default=True, help="Conversation messages per entry (verbatim curator).")
@json_option
@click.pass_obj
def curate(state: _State, text: str | None, files: tuple[str, ...], conversation: str | None,
           ops_file: str | None, verbatim: bool, window: int, as_json: bool) -> None:
    """Curate TEXT, files, a conversation, or explicit operations into the tree.

    With a model configured (MEMGROVE_MODEL), the LLM curator reads what the
    tree holds and writes, updates or merges entries. Without one (or with
    --verbatim), the verbatim curator makes every message or section an entry
    with its provenance. Use "-" as TEXT to read it from standard input.
    """
    mem = state.memory()
    if text == "-":
        limit = mem.tree.settings.max_input_bytes
        # at most one byte more than allowed: 200 MB piped in is refused without reading it all
        raw = sys.stdin.buffer.read(limit + 1)
        if len(raw) > limit:
            raise InvalidInput(f"standard input is larger than {limit:,} bytes (setting max_input_bytes)")
        text = decode_input(raw, "standard input", limit)
    if ops_file:
        _report_ops(mem.curate(_read_ops(ops_file, mem.tree.settings.max_input_bytes)), "", as_json)
        return
    if text is None and not files and not conversation:
        raise click.UsageError("give TEXT, -f FILE, --conversation FILE or --ops FILE")
    if verbatim or not model_configured():
        if not verbatim and not as_json:
            echo("no model configured (set MEMGROVE_MODEL): using the verbatim curator", err=True)
        bar, update = _progress("curating")
        with bar:
            results = mem.ingest(text=text, files=files, conversation=conversation, window=window, progress=update)
        _report_ops(results, " verbatim (no LLM curator)", as_json)
        if results.skipped_line():
            # under --json standard output stays the list of results; the count goes to standard error
            echo(results.skipped_line() + " (read, not curated)", err=as_json)
        return
    report = mem.learn(text=text, files=files, conversation=conversation)
    if as_json:
        _emit_json(report.to_dict())
    else:
        echo(report.summary)
        if report.skipped and report.curator == "llm":
            echo("skipped " + ", ".join(f"{n} {k}" for k, n in report.skipped.items()) + " (read, not curated)")
    if report.stopped:
        raise click.ClickException(f"the LLM curator stopped early: {report.stopped}")


def _read_ops(ops_file: str, limit: int) -> Any:
    """The operations of an ``--ops`` file; one larger than the curator takes is refused unread."""
    try:
        text = curator.decode_input(curator.read_input(Path(ops_file), limit), ops_file, limit)
    except OSError as exc:
        raise click.ClickException(f"{ops_file}: cannot read operations ({exc.strerror or exc})") from None
    try:
        return parse_json(text, ops_file)
    except ValueError as exc:  # a number too long to convert
        raise click.ClickException(f"{ops_file}: not valid JSON operations ({exc})") from None


def _report_ops(results, how: str, as_json: bool) -> None:
    if as_json:
        _emit_json([r.__dict__ for r in results])
        return
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    echo(f"curated{how}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    for r in results[:20]:
        echo(f"  {r.status:8} {r.path}  [{r.id}]")
    if len(results) > 20:
        echo(f"  … and {len(results) - 20} more (see `memgrove history`)")


@cli.command()
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True, help="Most results to show.")
@json_option
@click.pass_obj
def search(state: _State, query: str, limit: int, as_json: bool) -> None:
    """Full-text search of the tree (BM25F, no LLM)."""
    start = time.perf_counter()
    hits = state.memory().search(query, limit=limit)
    ms = (time.perf_counter() - start) * 1000
    if as_json:
        _emit_json({"query": query, "latency_ms": round(ms, 2), "hits": [h.to_dict() for h in hits]})
        return
    if not hits:
        echo(f"no results for {query!r}")
        return
    from rich.table import Table

    table = Table(title=f"{len(hits)} result(s) in {ms:.1f} ms", show_lines=False)
    table.add_column("score", justify="right")
    table.add_column("entry")
    table.add_column("excerpt")
    for h in hits:
        table.add_row(f"{h.score:.3f}", f"{safe_markup(h.title)}\n[dim]{safe_markup(h.path)}[/dim]", safe_markup(h.excerpt))
    _console().print(table)


@cli.command()
@click.argument("question")
@click.option("-v", "--verbose", is_flag=True, help="Also print the evidence: every entry quoted, and the gaps.")
@json_option
@click.pass_obj
def query(state: _State, question: str, verbose: bool, as_json: bool) -> None:
    """Answer QUESTION from memory: caches and BM25 first, an LLM only if needed.

    Prints the answer first, then how it was answered and the entries it came from
    (paths for `memgrove show`); --verbose adds the evidence, --json all of it.
    """
    answer = state.memory().query(question)
    if as_json:
        _emit_json(answer.to_dict())
        return
    for line in _answer_lines(answer, verbose):
        echo(line)


# the sources a short answer lists; the rest are one `--verbose` away
SHORT_SOURCES = 3


def _answer_lines(answer: Any, verbose: bool) -> list[str]:
    from memgrove.graphs.tiers import tier_label

    lines = [answer.text if verbose else answer.answer, ""]
    lines.append(f"[tier {answer.tier} · {tier_label(answer)} · {answer.latency_ms:.1f} ms · "
                 f"top score {answer.top_score:.3f}]")
    if answer.error:
        lines.append(f"[LLM error: {answer.error}]")
    if not verbose and answer.sources:
        shown = answer.sources[:SHORT_SOURCES]
        lines += ["sources:"] + [f"  {p}" for p in shown]
        if len(answer.sources) > len(shown):
            lines.append(f"  … {len(answer.sources) - len(shown)} more (--verbose shows the evidence)")
    return lines


@cli.command()
@json_option
@click.pass_obj
def stats(state: _State, as_json: bool) -> None:
    """Tier distribution and latency percentiles of the queries asked so far."""
    data = state.memory().stats()
    if as_json:
        _emit_json(data)
        return
    if data["damaged_lines"]:
        click.echo(f"skipped {data['damaged_lines']} damaged line(s) of the query log", err=True)
    if not data["queries"]:
        echo("no queries logged yet (ask with `memgrove query`)")
        return
    from rich.table import Table

    names = {0: "0 exact cache", 1: "1 fuzzy cache", 2: "2 BM25", 3: "3 one LLM call", 4: "4 agent loop"}
    table = Table(title=f"{data['queries']} queries · {data['out_of_domain']} out of domain · "
                        f"{data['llm']} answered by an LLM · {data['errors']} LLM errors")
    for col in ("tier", "queries", "share", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(col, justify="right" if col != "tier" else "left")
    for t in data["tiers"]:
        table.add_row(names.get(t["tier"], str(t["tier"])), str(t["count"]), f"{t['share']:.0%}",
                      f"{t['p50_ms']:.2f}", f"{t['p95_ms']:.2f}", f"{t['p99_ms']:.2f}")
    _console().print(table)


@cli.command()
@click.argument("folder", required=False, default="")
@json_option
@click.pass_obj
def tree(state: _State, folder: str, as_json: bool) -> None:
    """Show the tree (or one FOLDER of it) with entry titles."""
    mem = state.memory()
    if as_json:
        _emit_json(_walk(mem, folder))
        return
    from rich.tree import Tree

    top = mem.list(folder)
    root = Tree(f"[bold]{safe_markup(top['title'])}[/bold] [dim]{safe_markup(top['path'] or mem.home / 'tree')}[/dim]")
    _render(mem, top, root)
    _console().print(root)


def _walk(mem: Memory, folder: str) -> dict[str, Any]:
    node = mem.list(folder)
    node["folders"] = [_walk(mem, f["path"]) for f in node["folders"]]
    return node


def _render(mem: Memory, node: dict[str, Any], branch: Any) -> None:
    for f in node["folders"]:
        sub = branch.add(f"[bold]{safe_markup(f['path'].rsplit('/', 1)[-1])}/[/bold] {safe_markup(f['title'])} "
                         f"[dim]({f['entries']} entries)[/dim]")
        _render(mem, mem.list(f["path"]), sub)
    for e in node["entries"]:
        label = safe_markup(e["title"]) or f"[red]{safe_markup(e.get('error', 'unreadable'))}[/red]"
        branch.add(f"{safe_markup(e['path'].rsplit('/', 1)[-1])}  [dim]{label}[/dim]")


@cli.command()
@click.argument("path")
@json_option
@click.pass_obj
def show(state: _State, path: str, as_json: bool) -> None:
    """Print one entry with its links and backlinks."""
    data = state.memory().show(path)
    if as_json:
        _emit_json(data)
        return
    echo(data["text"].rstrip("\n"))
    if data["links"] or data["backlinks"]:
        echo("")
        for p in data["links"]:
            echo(f"→ {p}")
        for p in data["backlinks"]:
            echo(f"← {p}")


@cli.command()
@click.option("-n", "--limit", default=20, show_default=True)
@click.option("--path", default=None, help="Only operations touching this entry or folder.")
@json_option
@click.pass_obj
def history(state: _State, limit: int, path: str | None, as_json: bool) -> None:
    """List curate operations, newest first."""
    records = state.memory().history(limit=limit, path=path)
    if as_json:
        _emit_json([{k: v for k, v in r.to_json().items() if k not in ("before", "after", "also")}
                    | {"files": [c.path for c in r.changes()]} for r in records])
        return
    from rich.table import Table

    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("op", no_wrap=True)
    table.add_column("path", overflow="fold")
    table.add_column("reason")
    for r in records:
        table.add_row(*(safe_markup(v) for v in (r.id, r.op, r.path, r.reason)))
    _console().print(table)


@cli.command()
@click.argument("op_id")
@click.option("--force", is_flag=True,
              help="Undo even if the files changed after the operation (what it overwrites stays in the journal).")
@click.pass_obj
def undo(state: _State, op_id: str, force: bool) -> None:
    """Restore what operation OP_ID changed (ids from `memgrove history`)."""
    result = state.memory().undo(op_id, force=force)
    echo(f"{result.message} [{result.id}]" if result.id else result.message)


@cli.command()
@json_option
@click.pass_obj
def reindex(state: _State, as_json: bool) -> None:
    """Rebuild the search index from the files."""
    start = time.perf_counter()
    bar, update = _progress("indexing")
    with bar:
        n = state.memory().reindex(progress=update)
    secs = time.perf_counter() - start
    if as_json:
        _emit_json({"documents": n, "seconds": round(secs, 3)})
    else:
        echo(f"indexed {n} documents in {secs:.2f} s")


@cli.command()
@click.option("--fix", is_flag=True, help="Repair what is derived: index, context files, temp files.")
@json_option
@click.pass_obj
def doctor(state: _State, fix: bool, as_json: bool) -> None:
    """Check that files, index and journal agree; exit 1 if not."""
    rep = state.memory().doctor(fix=fix)
    if as_json:
        _emit_json(rep.to_dict())
    else:
        status = "consistent" if rep.ok else "INCONSISTENT"
        echo(f"{status}: {rep.entries} entries, {rep.contexts} context files, {rep.indexed} indexed")
        for label, items in (("problem", rep.problems), ("warning", rep.warnings), ("fixed", rep.fixed),
                             ("notice", rep.notices)):
            for item in items:
                echo(f"  {label}: {item}")
    if not rep.ok:
        raise click.exceptions.Exit(1)


@cli.command("mcp")
@click.option("--root", "mcp_root", type=click.Path(file_okay=False),
              help="Project folder holding .memgrove/ (default: the global --root, or found upwards).")
@click.pass_obj
def mcp_command(state: _State, mcp_root: str | None) -> None:
    """Serve the memory to an MCP client over stdio (Claude Code, Claude Desktop, Cursor...).

    Standard output carries only the protocol; messages go to standard error.
    """
    from memgrove.mcp.stdio import serve_stdio

    serve_stdio(mcp_root or state.root)


@cli.command()
@click.option("--port", type=int, default=None, help="Port to listen on (default 7437, setting port).")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1, setting host).")
@click.option("--no-auth", is_flag=True, help="Accept requests without the bearer token (loopback hosts only).")
@click.pass_obj
def serve(state: _State, port: int | None, host: str | None, no_auth: bool) -> None:
    """Serve this project's memory (and any other project a request names) over HTTP: a REST API,
    LangServe routes for the query, curate and agent graphs, and MCP when installed.

    A bearer token is required: it is written to .memgrove/server.token (readable by you only)
    unless MEMGROVE_TOKEN sets it. The server registers itself in .memgrove/server.json; stop it
    with Ctrl-C or SIGTERM."""
    from memgrove.server.run import serve as run_server

    code = run_server(state.root, host=host, port=port, no_auth=no_auth)
    if code:
        raise click.exceptions.Exit(code)


def main() -> None:
    try:
        cli(prog_name="memgrove")
    except BrokenPipeError:  # `memgrove tree | head`: the reader left, not an error
        _reader_left()
        sys.exit(0)


if __name__ == "__main__":
    main()

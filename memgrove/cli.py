"""The ``memgrove`` command line: a thin layer over ``Memory``.

Each command parses its arguments, calls one library method and renders the
result (text, or JSON with ``--json``). Known errors become one line and exit
status 1 (usage errors 2); unexpected ones too, unless ``MEMGROVE_RAISE_ERRORS``
is set (tests), where they propagate with their traceback. With ``--json`` an
error is one JSON object on stdout, ``{"error": {"code", "message"}}``.

The group's options (``--root``, ``--json``) are taken after the subcommand as
well (``memgrove search x --root DIR``), and ``-h`` is ``--help`` everywhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memgrove.given_paths import tree_path
from memgrove.graphs.llm import model_configured
from memgrove.terminal import dumps, echo, safe
from memgrove.tree.errors import InvalidInput, MemgroveError, error_body
from memgrove.tree.nesting import parse_json

# Heavy modules (Memory: Whoosh, YAML) are imported where used: with a server running,
# `memgrove query` never loads them (memgrove/client.py).
if TYPE_CHECKING:
    from memgrove.client import ServerMemory
    from memgrove.memory import Memory
    from memgrove.tree.operations import OpResult

_ROOT_HELP = "Project folder holding .memgrove/ (default: found upwards from the current folder)."
_JSON_HELP = "Print JSON instead of text (errors too: {\"error\": {\"code\", \"message\"}})."
_NO_SERVER_HELP = ("Work in this process even when `memgrove serve` runs for the project "
                   "(also MEMGROVE_NO_SERVER=1).")


class _Failure(click.ClickException):
    """An error with its JSON body (``error_body``), for ``--json``."""

    def __init__(self, message: str, body: dict[str, Any]):
        super().__init__(message)
        self.body = body


def _asks_json(args: list[str]) -> bool:
    # decided from the words, not the parse: a usage error stops the parse before --json is read
    words = args[:args.index("--")] if "--" in args else args
    return "--json" in words


def _error_json(exc: click.ClickException) -> dict[str, Any]:
    if isinstance(exc, _Failure):
        return exc.body
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return {"error": {"code": "usage", "message": safe(exc.format_message()) + hint}}
    return {"error": {"code": "error", "message": safe(exc.format_message())}}


def _with_global_options(cmd: click.Command) -> None:
    """``--root`` and ``--json`` after the subcommand too, meaning what they mean before it."""
    given = {opt for p in cmd.params for opt in getattr(p, "opts", ())}
    if "--root" not in given:
        cmd.params.append(click.Option(["--root"], metavar="DIR", type=click.Path(file_okay=False),
                                       expose_value=False, callback=_root_after, help=_ROOT_HELP))
    if "--json" not in given:
        cmd.params.append(click.Option(["--json"], is_flag=True, expose_value=False, callback=_json_flag,
                                       help=_JSON_HELP))
    if "--no-server" not in given and cmd.name not in ("serve", "mcp", "init"):
        cmd.params.append(click.Option(["--no-server"], is_flag=True, expose_value=False,
                                       callback=_no_server_after, help=_NO_SERVER_HELP))


def _root_after(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    state = ctx.find_object(_State)
    if value is not None and state is not None:
        state.root = value


def _no_server_after(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    state = ctx.find_object(_State)
    if value and state is not None:
        state.no_server = True


def _json_flag(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    state = ctx.find_object(_State)
    if state is None:
        return value
    state.json = state.json or value
    return state.json


class _Group(click.Group):
    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        _with_global_options(cmd)
        super().add_command(cmd, name)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or not _asks_json(argv):
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        # click's standalone mode prints errors as text on stderr: here they are JSON on stdout
        try:
            rv = super().main(argv, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            click.echo(dumps(_error_json(exc)))
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo(dumps({"error": {"code": "aborted", "message": "aborted"}}))
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        finally:
            _notices(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemgroveError as exc:
            text = safe(exc)
            raise _Failure(text, error_body(exc, text)) from None
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
            text = safe(f"unexpected {type(exc).__name__}: {exc}")
            raise _Failure(text, error_body(exc, text)) from None


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
    def __init__(self, root: str | None, as_json: bool = False, no_server: bool = False):
        self.root = root
        self.json = as_json
        self.no_server = no_server
        self._memory: Memory | ServerMemory | None = None

    def memory(self) -> "Memory | ServerMemory":
        """The project's memory, chosen once: its running server's, else in this process."""
        if self._memory is None:
            from memgrove.client import open_memory

            self._memory = open_memory(self.root, self.no_server)
        return self._memory

    def local(self) -> Memory:
        """The memory in this process, for what only it does (reindex, doctor)."""
        from memgrove.memory import Memory

        if self._memory is None or not isinstance(self._memory, Memory):
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


def _width() -> int:
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def _wrap(text: str, indent: int, first: str = "") -> str:
    """``text`` wrapped at the terminal's width by words; a word longer than a line (a path,
    a URL) is kept whole, for the terminal to wrap, never cut."""
    return textwrap.fill(" ".join(safe(text).split()), width=_width(), initial_indent=first or " " * indent,
                         subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)


json_option = click.option("--json", "as_json", is_flag=True, callback=_json_flag, help=_JSON_HELP)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", envvar="MEMGROVE_HOME", metavar="DIR", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP + " Also taken after the command.")
@click.option("--no-server", is_flag=True, help=_NO_SERVER_HELP + " Also taken after the command.")
@click.version_option(package_name="memgrove")
@click.pass_context
def cli(ctx: click.Context, root: str | None, as_json: bool, no_server: bool) -> None:
    """memgrove: agent-native memory in a tree of markdown files.

    --root and --json are taken after the command as well: memgrove search "x" --root DIR.
    """
    ctx.obj = _State(root, as_json, no_server)


@cli.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@json_option
@click.pass_obj
def init(state: _State, folder: str | None, as_json: bool) -> None:
    """Create .memgrove/ in FOLDER (default: --root or the current folder), with a config.toml
    listing every setting at its default, commented out (an existing one is kept)."""
    from memgrove.config import write_config
    from memgrove.memory import Memory

    mem = Memory.open(folder or state.root or ".", create=True)
    written = write_config(mem.home)
    if as_json:
        _emit_json({"home": str(mem.home), "config": str(mem.home / "config.toml"), "config_written": written})
        return
    echo(f"memory ready at {mem.home}")
    echo(f"settings: {mem.home / 'config.toml'}" + (" (every setting at its default, commented out)"
                                                    if written else " (kept as it was)"))


@cli.command()
@click.argument("text", required=False)
@click.option("-f", "--file", "files", multiple=True, type=click.Path(),
              help="Text or markdown file, or a folder of them, read recursively (repeatable).")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Leave out what this gitignore-style pattern matches in a folder (repeatable); "
                   ".gitignore files are respected too.")
@click.option("--conversation", type=click.Path(dir_okay=False),
              help='Conversation JSON: {"id", "messages": [...]}, a list of {"role", "content"} '
                   'or LangChain messages, a ChatGPT export (conversations.json) or a Claude export.')
@click.option("--system", "system", is_flag=True, help="Keep system prompts (skipped and counted by default).")
@click.option("--ops", "ops_file", type=click.Path(dir_okay=False),
              help="JSON list of explicit operations: ADD, UPDATE, UPSERT, MERGE, DELETE, SUPERSEDE "
                   "(path closed 'by' a newer entry), ARCHIVE, RESTORE; each with a reason.")
@click.option("--verbatim", is_flag=True, help="Use the verbatim curator even when a model is configured.")
@click.option("--window", default=1, show_default=True, help="Conversation messages per entry (verbatim curator).")
@json_option
@click.pass_obj
def curate(state: _State, text: str | None, files: tuple[str, ...], exclude: tuple[str, ...],
           conversation: str | None, system: bool, ops_file: str | None, verbatim: bool, window: int,
           as_json: bool) -> None:
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
        from memgrove.tree.curator import decode_input

        text = decode_input(raw, "standard input", limit)
    if ops_file:
        _report_ops(mem.curate(_read_ops(ops_file, mem.tree.settings.max_input_bytes)), "ops", as_json)
        return
    if text is None and not files and not conversation:
        raise click.UsageError("give TEXT, -f FILE, --conversation FILE or --ops FILE")
    if verbatim or not model_configured():
        if not verbatim and not as_json:
            echo("no model configured (set MEMGROVE_MODEL): using the verbatim curator", err=True)
        bar, update = _progress("curating")
        with bar:
            results = mem.ingest(text=text, files=files, conversation=conversation, window=window, progress=update,
                                 exclude=exclude, system=system)
        _report_ops(results, "verbatim", as_json, skipped=results.skipped)
        return
    report = mem.learn(text=text, files=files, conversation=conversation)
    if not report.stopped:
        if as_json:
            _emit_json(report.to_dict())
        else:
            echo(report.summary)
            if report.skipped and report.curator == "llm":
                echo("skipped " + ", ".join(f"{n} {k}" for k, n in report.skipped.items()) + " (read, not curated)")
        return
    # the failure is said once, on the error line, with the way to curate without the model
    message = safe(f"the LLM curator stopped early: {report.stopped}. What it wrote before that is kept; "
                   "to curate without a model, run the same command with --verbatim")
    if as_json:
        _emit_json(report.to_dict() | {"error": {"code": "model_failed", "message": message}})
        raise click.exceptions.Exit(1)
    echo(report.account(stopped=False))
    raise _Failure(message, {"error": {"code": "model_failed", "message": message}})


def _read_ops(ops_file: str, limit: int) -> Any:
    """The operations of an ``--ops`` file; one larger than the curator takes is refused unread."""
    from memgrove.tree import curator

    try:
        text = curator.decode_input(curator.read_input(Path(ops_file), limit), ops_file, limit)
    except OSError as exc:
        raise InvalidInput(f"{ops_file}: cannot read operations ({exc.strerror or exc})") from None
    try:
        return parse_json(text, ops_file)
    except ValueError as exc:  # a number too long to convert
        raise InvalidInput(f"{ops_file}: not valid JSON operations ({exc})") from None


def _report_ops(results: list[OpResult], curator_name: str, as_json: bool,
                skipped: dict[str, int] | None = None) -> None:
    """What the verbatim curator or an ``--ops`` file wrote; as JSON, the same ``CurateReport``
    shape as the LLM curator's. ``skipped``: what the input held but was not curated, by kind."""
    if as_json:
        from memgrove.graphs.curate_report import CurateReport

        _emit_json(CurateReport(curator=curator_name, applied=results, skipped=dict(skipped or {})).to_dict())
        return
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    how = " verbatim (no LLM curator)" if curator_name == "verbatim" else ""
    echo(f"curated{how}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    for r in results[:20]:
        echo(f"  {r.status:8} {r.path}  [{r.id}]")
    if len(results) > 20:
        echo(f"  … and {len(results) - 20} more (see `memgrove history`)")
    if skipped:
        echo("skipped " + ", ".join(f"{n} {k[:-1] if n == 1 else k}" for k, n in skipped.items())
             + " (read, not curated)")


@cli.command()
@click.argument("query")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Most results to show.")
@click.option("--include-archived", is_flag=True, help="Search the archived entries too (marked [archived]).")
@json_option
@click.pass_obj
def search(state: _State, query: str, limit: int, include_archived: bool, as_json: bool) -> None:
    """Full-text search of the tree (BM25F, no LLM)."""
    start = time.perf_counter()
    hits = state.memory().search(query, limit=limit + 1,    # one more: is anything left out?
                                 **({"include_archived": True} if include_archived else {}))
    ms = (time.perf_counter() - start) * 1000
    more = len(hits) > limit
    hits = hits[:limit]
    if as_json:
        _emit_json({"query": query, "latency_ms": round(ms, 2), "hits": [h.to_dict() for h in hits], "more": more})
        return
    if not hits:
        echo(f"no results for {query!r}")
        return
    click.echo(f"{len(hits)} result(s) in {ms:.1f} ms")
    for h in hits:
        click.echo("")
        click.echo(click.style(_wrap(h.title, 7, f"{h.score:6.3f} "), bold=True))
        # the path whole: it is what `show` takes
        click.echo(click.style(f"       {safe(h.path)}" + ("  [archived]" if h.archived else ""), fg="cyan"))
        if h.excerpt:
            click.echo(_wrap(h.excerpt, 7))
    if more:
        click.echo(f"\n… more results: use --limit {limit + 10} to see more")


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
    from memgrove.graphs.answer import tier_label

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
    _console().print(table)
    if not configured:
        click.echo(_wrap("no model configured (set MEMGROVE_MODEL): questions past BM25 are answered from the "
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


@cli.command()
@click.argument("folder", required=False, default="")
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(min=0),
              help="Most entries shown per folder (0: all).")
@click.option("--all", "show_all", is_flag=True, help="Show every entry (same as --limit 0).")
@json_option
@click.pass_obj
def tree(state: _State, folder: str, limit: int, show_all: bool, as_json: bool) -> None:
    """Show the tree (or one FOLDER of it) with entry titles. JSON lists every entry."""
    mem = state.memory()
    folder = tree_path(folder, mem.tree.root) if folder else folder
    if as_json:
        _emit_json(_walk(mem, folder))
        return
    top = mem.list(folder)
    click.echo(click.style(safe(top["title"]), bold=True) + " " + safe(top["path"] or mem.home / "tree"))
    _render(mem, top, "", 0 if show_all else limit)


def _walk(mem: "Memory | ServerMemory", folder: str) -> dict[str, Any]:
    node = mem.list(folder)
    node["folders"] = [_walk(mem, f["path"]) for f in node["folders"]]
    return node


def _render(mem: "Memory | ServerMemory", node: dict[str, Any], prefix: str, limit: int) -> None:
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


@cli.command()
@click.argument("path")
@json_option
@click.pass_obj
def show(state: _State, path: str, as_json: bool) -> None:
    """Print one entry with its links and backlinks.

    PATH is the entry's path in the tree (auth/jwt/rotation.md) or the file's path as tab
    completion gives it (.memgrove/tree/auth/jwt/rotation.md, or an absolute one).
    """
    mem = state.memory()
    data = mem.show(tree_path(path, mem.tree.root))
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
@click.option("-n", "--limit", default=20, show_default=True, type=click.IntRange(min=0),
              help="Most operations shown (0: all).")
@click.option("--all", "show_all", is_flag=True, help="Show every operation (same as --limit 0).")
@click.option("--path", default=None, help="Only operations touching this entry or folder.")
@json_option
@click.pass_obj
def history(state: _State, limit: int, show_all: bool, path: str | None, as_json: bool) -> None:
    """List curate operations, newest first."""
    mem = state.memory()
    records = mem.history(limit=None, path=tree_path(path, mem.tree.root) or None if path else None)
    shown = records if show_all or not limit else records[:limit]
    if as_json:
        _emit_json({"operations": [r.to_listing() for r in shown]})     # GET /api/history's shape
        return
    if not records:
        echo("no operations yet" + (f" touching {path}" if path else ""))
        return
    for r in shown:
        # the path whole on the id's line: it is what `show` and `undo` users copy
        click.echo(click.style(safe(r.id), fg="yellow") + f"  {safe(r.op):<9} " + safe(r.path))   # SUPERSEDE is the longest
        if r.reason:
            click.echo(click.style(_wrap(r.reason, 4), dim=True))
    if len(records) > len(shown):
        click.echo(f"… {len(records) - len(shown)} more: use --limit 0 or --all to see every one")


@cli.command()
@click.argument("op_id")
@click.option("--force", is_flag=True,
              help="Undo even if the files changed after the operation (what it overwrites stays in the journal).")
@json_option
@click.pass_obj
def undo(state: _State, op_id: str, force: bool, as_json: bool) -> None:
    """Restore what operation OP_ID changed (ids from `memgrove history`)."""
    result = state.memory().undo(op_id, force=force)
    if as_json:
        _emit_json(result.to_dict())
        return
    echo(f"{result.message} [{result.id}]" if result.id else result.message)


@cli.command()
@click.argument("path")
@json_option
@click.pass_obj
def restore(state: _State, path: str, as_json: bool) -> None:
    """Bring the archived entry PATH back into the tree (undo its id to archive it again)."""
    result = state.memory().restore(path)
    if as_json:
        _emit_json(result.to_dict())
        return
    echo(f"{result.message} [{result.id}]")


@cli.command()
@json_option
@click.pass_obj
def reindex(state: _State, as_json: bool) -> None:
    """Rebuild the search index from the files (and, with semantic_weight set, the entries' vectors)."""
    start = time.perf_counter()
    bar, update = _progress("indexing")
    mem = state.local()
    with bar:
        n = mem.reindex(progress=update)
    secs = time.perf_counter() - start
    out: dict[str, Any] = {"documents": n, "seconds": round(secs, 3)}
    if mem.tree.settings.semantic_weight > 0:
        bar, update = _progress("embedding")
        with bar:
            out["vectors"], out["vectors_dropped"] = mem.embed(progress=update)
        out["vector_seconds"] = round(time.perf_counter() - start - secs, 3)
    if as_json:
        _emit_json(out)
        return
    echo(f"indexed {n} documents in {secs:.2f} s")
    if "vectors" in out:
        echo(f"embedded {out['vectors']} entries in {out['vector_seconds']:.2f} s "
             f"({out['vectors_dropped']} stale vectors dropped)")


@cli.command()
@click.option("--fix", is_flag=True, help="Repair what is derived: index, context files, temp files.")
@json_option
@click.pass_obj
def doctor(state: _State, fix: bool, as_json: bool) -> None:
    """Check that files, index and journal agree; exit 1 if not."""
    rep = state.local().doctor(fix=fix)
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
@click.option("--project", "projects", multiple=True, type=click.Path(file_okay=False),
              help="Serve this project too, with its own token (repeatable; setting projects).")
@click.option("--add", "add", multiple=True, type=click.Path(file_okay=False),
              help="Add this project to the server already running for this one, and exit (repeatable).")
@click.pass_obj
def serve(state: _State, port: int | None, host: str | None, no_auth: bool, projects: tuple[str, ...],
          add: tuple[str, ...]) -> None:
    """Serve this project's memory (and those named with --project) over HTTP: REST, LangServe
    routes for the query, curate and agent graphs, and MCP. Each project has its own bearer token
    in its .memgrove/server.token (readable by you only; MEMGROVE_TOKEN sets this one's) and the
    server registers in its .memgrove/server.json; stop it with Ctrl-C or SIGTERM."""
    from memgrove.server.run import add_to_running, serve as run_server

    for one in add_to_running(state.root, add) if add else ():
        echo(f"serving {one['project']}" + (f", token in {one['token_file']}" if one["token_file"] else ""))
    code = 0 if add else run_server(state.root, host=host, port=port, no_auth=no_auth, projects=projects)
    if code:
        raise click.exceptions.Exit(code)


from memgrove import cli_dream  # noqa: E402,F401 - registers `dream` and `review` on the group above


def main() -> None:
    try:
        cli(prog_name="memgrove")
    except BrokenPipeError:  # `memgrove tree | head`: the reader left, not an error
        _reader_left()
        sys.exit(0)


if __name__ == "__main__":
    main()

"""The ``memgrove`` command line: a thin layer over ``Memory``.

Each command parses its arguments, calls one library method and renders the
result (text, or JSON with ``--json``). Known errors become one line and exit
status 1 (usage errors 2); unexpected ones too, unless ``MEMGROVE_RAISE_ERRORS``
is set (tests), where they propagate with their traceback. With ``--json`` an
error is one JSON object on stdout, ``{"error": {"code", "message"}}``.

The group's options (``--root``, ``--json``) are taken after the subcommand as
well (``memgrove search x --root DIR``), and ``-h`` is ``--help`` everywhere.

This module holds the group, its shared options and state, and the helpers the commands
share; the commands are in ``cli_read`` (search, query, stats, tree, show, history),
``cli_write`` (curate, undo, restore), ``cli_admin`` (init, reindex, doctor, mcp, serve) and
``cli_dream`` (dream, review), each registering its own on the group.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from memgrove.render import wrap as _wrap  # noqa: F401 - the commands' wrapping, shared with the fast path
from memgrove.terminal import dumps, safe
from memgrove.tree.base.errors import MemgroveError, error_body

# Heavy modules (Memory: Whoosh, YAML) are imported where used: with a server running,
# `memgrove query` never loads them (memgrove/client.py).
if TYPE_CHECKING:
    from memgrove.remote import RemoteMemory
    from memgrove.memory import Memory

_ROOT_HELP = "Project folder holding .memgrove/ (default: found upwards from the current folder)."
_JSON_HELP = "Print JSON instead of text (errors too: {\"error\": {\"code\", \"message\"}})."
_NO_SERVER_HELP = ("Work in this process even when `memgrove serve` runs for the project or MEMGROVE_URL "
                   "names a server (also MEMGROVE_NO_SERVER=1).")


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
            _close_remote(ctx)

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


def _close_remote(ctx: click.Context) -> None:
    """A server's memory holds kept-alive connections: closed when the command is done."""
    mem = getattr(ctx.obj, "_memory", None)
    if mem is not None and hasattr(mem, "wire"):
        mem.close()


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
        self._memory: Memory | RemoteMemory | None = None

    def memory(self) -> "Memory | RemoteMemory":
        """The project's memory, chosen once: ``MEMGROVE_URL``'s server, its running server's, else
        in this process (``memgrove/client.py``)."""
        if self._memory is None:
            from memgrove.client import open_memory

            self._memory = open_memory(self.root, self.no_server)
        return self._memory

    def local(self) -> "Memory | RemoteMemory":
        """The memory in this process, for what only it does (reindex, doctor); with ``MEMGROVE_URL``,
        the server's (its doctor runs there; reindex says where to run it)."""
        from memgrove.client import open_local, remote_url
        from memgrove.memory import Memory

        if remote_url(self.no_server):
            return self.memory()
        if self._memory is None or not isinstance(self._memory, Memory):
            self._memory = open_local(self.root)
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


# the commands, each module registering its own on the group above
from memgrove import cli_admin, cli_dream, cli_read, cli_write  # noqa: E402,F401


def main() -> None:
    try:
        cli(prog_name="memgrove")
    except BrokenPipeError:  # `memgrove tree | head`: the reader left, not an error
        _reader_left()
        sys.exit(0)


if __name__ == "__main__":
    # `python -m memgrove.cli`: this copy runs as __main__, and the command modules registered
    # their commands on memgrove.cli's group, so that one runs
    from memgrove.cli import main as registered_main

    registered_main()

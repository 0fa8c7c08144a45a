"""The ``memgrove`` command line: a thin layer over ``Memory``.

Each command parses its arguments, calls one library method and renders the
result (text, or JSON with ``--json``). Known errors become one line and exit
status 1 (usage errors 2); unexpected ones too, unless ``MEMGROVE_RAISE_ERRORS``
is set (tests), where they propagate with their traceback. With ``--json`` an
error is one JSON object on stdout, ``{"error": {"code", "message"}}``.

The group's options (``--root``, ``--json``) are taken after the subcommand as
well (``memgrove search x --root DIR``), and ``-h`` is ``--help`` everywhere.

This module holds the group and its error handling; it builds itself from the commands each
command module lists in its ``COMMANDS``: ``read`` (search, query, stats, tree, show, history),
``write`` (curate, undo, restore), ``admin`` (init, reindex, doctor, mcp, serve), ``dream``
(dream, review) and ``vectors_ahead`` (embed, status; and what a command's writes leave for entries'
vectors, handed on after it). Those modules import what they share from ``common``, never this group.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from memgrove.cli import admin, dream, read, ui, vectors_ahead, write
from memgrove.cli.common import JSON_HELP, NO_SERVER_HELP, ROOT_HELP, Failure, State, with_global_options
from memgrove.terminal import dumps, safe
from memgrove.tree.base.errors import MemgroveError, error_body

# the registry: a command module is added here, its commands listed in its COMMANDS
COMMAND_MODULES = (read, write, admin, dream, vectors_ahead, ui)


def _asks_json(args: list[str]) -> bool:
    # decided from the words, not the parse: a usage error stops the parse before --json is read
    words = args[:args.index("--")] if "--" in args else args
    return "--json" in words


def _error_json(exc: click.ClickException) -> dict[str, Any]:
    if isinstance(exc, Failure):
        return exc.body
    if isinstance(exc, click.UsageError):
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        return {"error": {"code": "usage", "message": safe(exc.format_message()) + hint}}
    return {"error": {"code": "error", "message": safe(exc.format_message())}}


class _Group(click.Group):
    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        with_global_options(cmd)
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
            mem = _opened(ctx)
            if mem is not None:     # what its writes left without a vector: handed on, not waited for
                vectors_ahead.after_command(mem)
            _close_remote(ctx)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemgroveError as exc:
            text = safe(exc)
            raise Failure(text, error_body(exc, text)) from None
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
            raise Failure(text, error_body(exc, text)) from None


def _opened(ctx: click.Context) -> Any:
    state = ctx.obj
    return state.opened if isinstance(state, State) else None


def _notices(ctx: click.Context) -> None:
    """What the command had to repair on the way (a damaged cache reset, a stale lock), on
    stderr; ``doctor`` lists them itself."""
    mem = _opened(ctx)
    if mem is None or ctx.invoked_subcommand == "doctor":
        return
    for note in mem.tree.notices:
        try:
            click.echo(f"notice: {safe(note)}", err=True)
        except OSError:
            return


def _close_remote(ctx: click.Context) -> None:
    """A server's memory holds kept-alive connections: closed when the command is done."""
    mem = _opened(ctx)
    if mem is not None and hasattr(mem, "wire"):
        mem.close()


def _reader_left() -> None:
    """`memgrove query ... | head -1`: the reader left, not an error. Output still buffered
    goes to /dev/null, so the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", envvar="MEMGROVE_HOME", metavar="DIR", type=click.Path(file_okay=False), help=ROOT_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP + " Also taken after the command.")
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP + " Also taken after the command.")
@click.version_option(package_name="memgrove")
@click.pass_context
def cli(ctx: click.Context, root: str | None, as_json: bool, no_server: bool) -> None:
    """memgrove: agent-native memory in a tree of markdown files.

    --root and --json are taken after the command as well: memgrove search "x" --root DIR.
    """
    ctx.obj = State(root, as_json, no_server)


for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    try:
        cli(prog_name="memgrove")
    except BrokenPipeError:  # `memgrove tree | head`: the reader left, not an error
        _reader_left()
        sys.exit(0)

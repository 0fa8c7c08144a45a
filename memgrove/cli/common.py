"""What the commands share: the invocation's state (which memory), the ``--json`` option, errors
with a JSON body, and output helpers. The command modules import this, never the group
(``memgrove/cli/app.py``), which imports them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from memgrove.cli.render import wrap  # noqa: F401 - the commands' wrapping, shared with the fast path
from memgrove.terminal import dumps

# Heavy modules (Memory: Whoosh, YAML) are imported where used: with a server running,
# `memgrove query` never loads them (memgrove/cli/which_memory.py).
if TYPE_CHECKING:
    from memgrove.memory import Memory
    from memgrove.remote.memory import RemoteMemory

ROOT_HELP = "Project folder holding .memgrove/ (default: found upwards from the current folder)."
JSON_HELP = "Print JSON instead of text (errors too: {\"error\": {\"code\", \"message\"}})."
NO_SERVER_HELP = ("Work in this process even when `memgrove serve` runs for the project or MEMGROVE_URL "
                  "names a server (also MEMGROVE_NO_SERVER=1).")


class Failure(click.ClickException):
    """An error with its JSON body (``error_body``), for ``--json``."""

    def __init__(self, message: str, body: dict[str, Any]):
        super().__init__(message)
        self.body = body


class State:
    """One invocation's options and the memory it works on (``ctx.obj``)."""

    def __init__(self, root: str | None, as_json: bool = False, no_server: bool = False):
        self.root = root
        self.json = as_json
        self.no_server = no_server
        self._memory: Memory | RemoteMemory | None = None

    @property
    def opened(self) -> "Memory | RemoteMemory | None":
        """The memory if a command opened one (for the notices and the closing after it)."""
        return self._memory

    def memory(self) -> "Memory | RemoteMemory":
        """The project's memory, chosen once: ``MEMGROVE_URL``'s server, its running server's, else
        in this process (``memgrove/cli/which_memory.py``)."""
        if self._memory is None:
            from memgrove.cli.which_memory import open_memory

            self._memory = open_memory(self.root, self.no_server)
        return self._memory

    def local(self) -> "Memory | RemoteMemory":
        """The memory in this process, for what only it does (reindex, doctor); with ``MEMGROVE_URL``,
        the server's (its doctor runs there; reindex says where to run it)."""
        from memgrove.cli.which_memory import open_local, remote_url
        from memgrove.memory import Memory

        if remote_url(self.no_server):
            return self.memory()
        if self._memory is None or not isinstance(self._memory, Memory):
            self._memory = open_local(self.root)
        return self._memory


def with_global_options(cmd: click.Command) -> None:
    """``--root`` and ``--json`` after the subcommand too, meaning what they mean before it."""
    given = {opt for p in cmd.params for opt in getattr(p, "opts", ())}
    if "--root" not in given:
        cmd.params.append(click.Option(["--root"], metavar="DIR", type=click.Path(file_okay=False),
                                       expose_value=False, callback=_root_after, help=ROOT_HELP))
    if "--json" not in given:
        cmd.params.append(click.Option(["--json"], is_flag=True, expose_value=False, callback=json_flag,
                                       help=JSON_HELP))
    if "--no-server" not in given and cmd.name not in ("serve", "mcp", "init", "ui"):
        cmd.params.append(click.Option(["--no-server"], is_flag=True, expose_value=False,
                                       callback=_no_server_after, help=NO_SERVER_HELP))


def _root_after(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    state = ctx.find_object(State)
    if value is not None and state is not None:
        state.root = value


def _no_server_after(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    state = ctx.find_object(State)
    if value and state is not None:
        state.no_server = True


def json_flag(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    state = ctx.find_object(State)
    if state is None:
        return value
    state.json = state.json or value
    return state.json


json_option = click.option("--json", "as_json", is_flag=True, callback=json_flag, help=JSON_HELP)


def console():
    from rich.console import Console

    # no emoji codes either: ":warning:" in a title stays as it is written
    return Console(highlight=False, soft_wrap=False, emoji=False)


def emit_json(data: Any) -> None:
    click.echo(dumps(data))


def progress(description: str):
    """A rich progress bar usable as a ``(done, total)`` callback; silent when not a terminal."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console(), transient=True, disable=not sys.stderr.isatty())
    task = bar.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return bar, update

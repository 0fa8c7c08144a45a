"""``memgrove curate``, ``undo`` and ``restore``: the commands that write the tree, thin
layers over ``Memory.curate``/``ingest``/``learn``, ``Memory.undo`` and ``Memory.restore``.
Listed in ``COMMANDS`` for the group
(``memgrove/cli/app.py``) to add."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memgrove.cli.common import Failure, State, emit_json, json_option, progress
from memgrove.graphs.llm import model_configured
from memgrove.terminal import echo, safe
from memgrove.tree.base.errors import InvalidInput
from memgrove.tree.base.nesting import parse_json

if TYPE_CHECKING:
    from memgrove.tree.writes.operations import OpResult


@click.command()
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
def curate(state: State, text: str | None, files: tuple[str, ...], exclude: tuple[str, ...],
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
        from memgrove.tree.inputs.curator import decode_input

        text = decode_input(raw, "standard input", limit)
    if ops_file:
        _report_ops(mem.curate(_read_ops(ops_file, mem.tree.settings.max_input_bytes)), "ops", as_json)
        return
    if text is None and not files and not conversation:
        raise click.UsageError("give TEXT, -f FILE, --conversation FILE or --ops FILE")
    if verbatim or not model_configured():
        if not verbatim and not as_json:
            echo("no model configured (set MEMGROVE_MODEL): using the verbatim curator", err=True)
        bar, update = progress("curating")
        with bar:
            results = mem.ingest(text=text, files=files, conversation=conversation, window=window, progress=update,
                                 exclude=exclude, system=system)
        _report_ops(results, "verbatim", as_json, skipped=results.skipped)
        return
    report = mem.learn(text=text, files=files, conversation=conversation)
    if not report.stopped:
        if as_json:
            emit_json(report.to_dict())
        else:
            echo(report.summary)
            if report.skipped and report.curator == "llm":
                echo("skipped " + ", ".join(f"{n} {k}" for k, n in report.skipped.items()) + " (read, not curated)")
        return
    # the failure is said once, on the error line, with the way to curate without the model
    message = safe(f"the LLM curator stopped early: {report.stopped}. What it wrote before that is kept; "
                   "to curate without a model, run the same command with --verbatim")
    if as_json:
        emit_json(report.to_dict() | {"error": {"code": "model_failed", "message": message}})
        raise click.exceptions.Exit(1)
    echo(report.account(stopped=False))
    raise Failure(message, {"error": {"code": "model_failed", "message": message}})


def _read_ops(ops_file: str, limit: int) -> Any:
    """The operations of an ``--ops`` file; one larger than the curator takes is refused unread."""
    from memgrove.tree.inputs import curator

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

        emit_json(CurateReport(curator=curator_name, applied=results, skipped=dict(skipped or {})).to_dict())
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


@click.command()
@click.argument("op_id")
@click.option("--force", is_flag=True,
              help="Undo even if the files changed after the operation (what it overwrites stays in the journal).")
@json_option
@click.pass_obj
def undo(state: State, op_id: str, force: bool, as_json: bool) -> None:
    """Restore what operation OP_ID changed (ids from `memgrove history`)."""
    result = state.memory().undo(op_id, force=force)
    if as_json:
        emit_json(result.to_dict())
        return
    echo(f"{result.message} [{result.id}]" if result.id else result.message)


@click.command()
@click.argument("path")
@json_option
@click.pass_obj
def restore(state: State, path: str, as_json: bool) -> None:
    """Bring the archived entry PATH back into the tree (undo its id to archive it again)."""
    result = state.memory().restore(path)
    if as_json:
        emit_json(result.to_dict())
        return
    echo(f"{result.message} [{result.id}]")


# what the group (memgrove/cli/app.py) adds
COMMANDS = [curate, undo, restore]

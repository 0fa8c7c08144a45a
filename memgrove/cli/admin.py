"""``memgrove init``, ``reindex``, ``doctor``, ``mcp`` and ``serve``: setting up, keeping up
and serving a project's memory. Listed in ``COMMANDS`` for the group
(``memgrove/cli/app.py``) to add."""

from __future__ import annotations

import time
from typing import Any

import click

from memgrove.cli.common import State, emit_json, json_option, progress
from memgrove.terminal import echo


@click.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False))
@json_option
@click.pass_obj
def init(state: State, folder: str | None, as_json: bool) -> None:
    """Create .memgrove/ in FOLDER (default: --root or the current folder), with a config.toml
    listing every setting at its default, commented out (an existing one is kept)."""
    from memgrove.config import write_config
    from memgrove.memory import Memory

    mem = Memory.open(folder or state.root or ".", create=True, embed_ahead=False)
    written = write_config(mem.home)
    if as_json:
        emit_json({"home": str(mem.home), "config": str(mem.home / "config.toml"), "config_written": written})
        return
    echo(f"memory ready at {mem.home}")
    echo(f"settings: {mem.home / 'config.toml'}" + (" (every setting at its default, commented out)"
                                                    if written else " (kept as it was)"))


@click.command()
@json_option
@click.pass_obj
def reindex(state: State, as_json: bool) -> None:
    """Rebuild the search index from the files (and, with ranking by meaning on, every entry's vector)."""
    start = time.perf_counter()
    bar, update = progress("indexing")
    mem = state.local()
    with bar:
        n = mem.reindex(progress=update)
    secs = time.perf_counter() - start
    out: dict[str, Any] = {"documents": n, "seconds": round(secs, 3)}
    if mem.tree.settings.semantic_weight > 0:
        bar, update = progress("embedding")
        with bar:
            out["vectors"], out["vectors_dropped"] = mem.embed(progress=update)
        out["vector_seconds"] = round(time.perf_counter() - start - secs, 3)
    if as_json:
        emit_json(out)
        return
    echo(f"indexed {n} documents in {secs:.2f} s")
    if "vectors" in out:
        echo(f"embedded {out['vectors']} entries in {out['vector_seconds']:.2f} s "
             f"({out['vectors_dropped']} stale vectors dropped)")


@click.command()
@click.option("--fix", is_flag=True, help="Repair what is derived: index, context files, temp files.")
@json_option
@click.pass_obj
def doctor(state: State, fix: bool, as_json: bool) -> None:
    """Check that files, index and journal agree; exit 1 if not."""
    rep = state.local().doctor(fix=fix)
    if as_json:
        emit_json(rep.to_dict())
    else:
        status = "consistent" if rep.ok else "INCONSISTENT"
        echo(f"{status}: {rep.entries} entries, {rep.contexts} context files, {rep.indexed} indexed")
        if rep.vectors.get("with_vectors") is not None:
            echo(vectors_line(rep.vectors))
        for label, items in (("problem", rep.problems), ("warning", rep.warnings), ("fixed", rep.fixed),
                             ("notice", rep.notices)):
            for item in items:
                echo(f"  {label}: {item}")
    if not rep.ok:
        raise click.exceptions.Exit(1)


def vectors_line(v: dict) -> str:
    """``doctor``'s line on ranking by meaning: how many entries have their vector, what is pending."""
    from memgrove.cli.vectors_ahead import status_line

    return status_line(v)


@click.command("mcp")
@click.option("--root", "mcp_root", type=click.Path(file_okay=False),
              help="Project folder holding .memgrove/ (default: the global --root, or found upwards).")
@click.pass_obj
def mcp_command(state: State, mcp_root: str | None) -> None:
    """Serve the memory to an MCP client over stdio (Claude Code, Claude Desktop, Cursor...).

    With MEMGROVE_URL (and MEMGROVE_TOKEN) set and no --root here, the tools are that server's:
    the messages are relayed to its /mcp. Standard output carries only the protocol; messages go
    to standard error.
    """
    from memgrove.cli.which_memory import remote_url
    from memgrove.mcp.stdio import serve_stdio

    serve_stdio(mcp_root or state.root, url=None if mcp_root else remote_url())


@click.command()
@click.option("--port", type=int, default=None, help="Port to listen on (default 7437, setting port).")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1, setting host).")
@click.option("--no-auth", is_flag=True, help="Accept requests without the bearer token (loopback hosts only).")
@click.option("--project", "projects", multiple=True, type=click.Path(file_okay=False),
              help="Serve this project too, with its own token (repeatable; setting projects).")
@click.option("--add", "add", multiple=True, type=click.Path(file_okay=False),
              help="Add this project to the server already running for this one, and exit (repeatable).")
@click.option("--replica-of", "replica_of", default=None, metavar="URL",
              help="Serve a read replica of the primary at URL (an empty folder: clones its git remote; "
                   "MEMGROVE_TOKEN holds the primary's token). Writes are forwarded to the primary.")
@click.option("--promote", is_flag=True, help="Turn this read replica into a primary, then serve it.")
@click.pass_obj
def serve(state: State, port: int | None, host: str | None, no_auth: bool, projects: tuple[str, ...],
          add: tuple[str, ...], replica_of: str | None, promote: bool) -> None:
    """Serve this project's memory (and those named with --project) over HTTP: REST, LangServe
    routes for the query, curate and agent graphs, and MCP. Each project has its own bearer token
    in its .memgrove/server.token (readable by you only; MEMGROVE_TOKEN sets this one's) and the
    server registers in its .memgrove/server.json; stop it with Ctrl-C or SIGTERM."""
    from memgrove.server.run import add_to_running, serve as run_server

    for one in add_to_running(state.root, add) if add else ():
        echo(f"serving {one['project']}" + (f", token in {one['token_file']}" if one["token_file"] else ""))
    code = 0 if add else run_server(state.root, host=host, port=port, no_auth=no_auth, projects=projects,
                                    replica_of=replica_of, promote=promote)
    if code:
        raise click.exceptions.Exit(code)


# what the group (memgrove/cli/app.py) adds
COMMANDS = [init, reindex, doctor, mcp_command, serve]

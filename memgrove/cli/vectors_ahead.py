"""Entries' vectors computed ahead after a one-shot command (ranking by meaning), ``memgrove embed``
and ``memgrove status``.

A CLI command exits before a background embedder thread would pay, so its process keeps none
(``embed_ahead=False``, memgrove/cli/which_memory.py). What its writes left without a vector
(``ContextTree.unembedded``) is handed on when the command is done (``after_command``, called by the
group, memgrove/cli/app.py), the first of these that applies:

1. a running ``memgrove serve`` of the project: its background embedder queues them
   (``POST /api/vectors/ahead``);
2. a few (``INLINE_MAX``): computed here, with a progress bar; the model's load (0.25 s) and a few
   entries cost less than a job's process and leave nothing pending for the next search;
3. more: a detached background job (``memgrove embed --background``, tree/meaning/embed_job.py),
   one per tree, which exits once every vector is there.

Nothing happens with meaning off (``semantic_weight = 0``, ``MEMGROVE_SEMANTIC=off``) or with
``embed_job = false`` (the setting); a search that finds vectors missing starts the job too
(``Meaning._cosines``). ``memgrove embed`` computes them in the foreground; ``memgrove status`` says
how far they are.
"""

from __future__ import annotations

import time
from typing import Any

import click

from memgrove.cli.common import State, emit_json, json_option, progress
from memgrove.terminal import echo

# entries a command embeds itself: 0.25 s to load the model and ~0.06 s an entry (a section of
# documentation, on one contended core) keep it under half a second (benchmarks/results/cli_ahead.md)
INLINE_MAX = 4


def after_command(mem: Any) -> str | None:
    """Hand on the vectors this command's writes left (see the module's docstring); never raises.
    Which way: "server", "here", "job", or None (nothing left, meaning off, or no job allowed)."""
    try:
        return _after(mem)
    except Exception:  # noqa: BLE001 - the write stands; the next search or command starts the job
        return None


def _after(mem: Any) -> str | None:
    import sys

    opened = sys.modules.get("memgrove.memory")
    if opened is None:      # no memory in this process (a server answered): nothing written here
        return None
    local = mem if isinstance(mem, opened.Memory) else getattr(mem, "_local_memory", None)
    if local is None:
        return None
    tree = local.tree
    left = sorted(tree.__dict__.get("_unembedded") or ())
    if not left or tree.settings.semantic_weight <= 0 or not tree.settings.embed_job:
        return None
    tree.unembedded.clear()
    if _to_server(mem, tree.home, left):
        return "server"
    if len(left) <= INLINE_MAX and _here(tree, left):
        return "here"
    return "job" if tree.vectors_ahead()["by"] == "job" else None


def _to_server(mem: Any, home: Any, paths: list[str]) -> bool:
    from memgrove.remote.memory import RemoteMemory
    from memgrove.server import registry

    server = mem if isinstance(mem, RemoteMemory) else None
    if server is None:
        info = registry.find_server(home)
        if info is None:
            return False
        from memgrove.cli.which_memory import ServerMemory

        server = ServerMemory(home, info)
    try:
        got = server.vectors_ahead(paths)
    except Exception:  # noqa: BLE001 - gone, refused, an older server: the job does it
        return False
    finally:
        if server is not mem:
            server.close()
    return isinstance(got, dict) and got.get("by") == "embedder"


def _here(tree: Any, paths: list[str]) -> bool:
    from memgrove.tree.meaning.vector_claims import ready_vectors
    from memgrove.tree.base.errors import MemgroveError

    bar, update = progress("embedding")
    try:
        with bar:
            texts = list(dict.fromkeys(tree._meaning_texts(paths).values()))
            update(0, len(texts))
            ready_vectors(texts, tree.meaning_encoder(), tree.vectors)
            update(len(texts), len(texts))
    except MemgroveError:       # no model: the searches say so
        return False
    return True


@click.command()
@click.option("--background", is_flag=True, hidden=True,
              help="Run as the detached job commands start (niced, logging to .memgrove/embed.log).")
@json_option
@click.pass_obj
def embed(state: State, background: bool, as_json: bool) -> None:
    """Compute the vectors entries lack now (ranking by meaning), without rebuilding the index;
    what the background job does after a command that wrote."""
    from memgrove.tree.meaning import embed_job

    tree = _job_tree(state.root) if background else state.local().tree
    if tree.settings.semantic_weight <= 0:
        echo("ranking by meaning is off (semantic_weight = 0): no vectors to compute")
        return
    start = time.time()
    if background:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} embed job {__import__('os').getpid()} started", flush=True)
        try:
            out = embed_job.run_job(tree, tree.home)
        finally:
            tree.close()
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} embed job done: {out}", flush=True)
        return
    bar, update = progress("embedding")
    with bar:
        out = embed_job.run_job(tree, tree.home, progress=update, nice=False)
    if as_json:
        emit_json(out)
    elif not out["ran"]:
        job = embed_job.job_state(tree.home) or {}
        echo(f"a background job (process {job.get('pid', '?')}) is computing them: see `memgrove status`")
    else:
        echo(f"computed {out['computed']} vectors in {time.time() - start:.1f} s")


def _job_tree(root: str | None) -> Any:
    """The tree as the job reads it: no embedder thread, no replication, no recovery (which could
    take the writer lock: the job never does)."""
    from memgrove.tree.base.home import locate_home
    from memgrove.tree.settings import load_settings
    from memgrove.tree.store import ContextTree

    home = locate_home(root)
    return ContextTree(home, load_settings(home), replicate=False, embed_ahead=False)


@click.command()
@json_option
@click.pass_obj
def status(state: State, as_json: bool) -> None:
    """How far entries' vectors are (ranking by meaning): how many have theirs, how many are
    pending, and what computes them (a server's embedder, a background job)."""
    from memgrove.memory import Memory

    mem = state.memory()
    if isinstance(mem, Memory) or hasattr(mem, "_local_home"):     # in-process, or a server on this disk
        tree = (mem if isinstance(mem, Memory) else mem._local()).tree
        v, server = tree.vector_state(exact=True), _served_vectors(tree.home)
    else:                                                          # MEMGROVE_URL's server
        v, server = mem.stats()["vectors"], None
    out = {"vectors": v, "server": server}
    if as_json:
        emit_json(out)
        return
    echo(f"{v['entries']} documents indexed")
    echo(status_line(v, server))


def _served_vectors(home: Any) -> dict[str, Any] | None:
    from memgrove.server import registry

    info = registry.find_server(home)
    if info is None:
        return None
    health = registry.probe(str(info.get("host", "127.0.0.1")), int(info["port"]), timeout=5.0) or {}
    return {"url": info["url"], "pid": info["pid"], "vectors": health.get("vectors")}


def status_line(v: dict[str, Any], server: dict[str, Any] | None = None) -> str:
    """The line on entries' vectors of ``status`` and ``doctor``: how many have theirs, what is
    pending, and who computes it."""
    if not v.get("meaning"):
        return "vectors: ranking by meaning is off (semantic_weight = 0)"
    if "error" in v:
        return f"vectors: not counted ({v['error']})"
    have, missing = v.get("with_vectors"), v.get("missing")
    line = f"vectors: {have} of {have + missing} entries" if have is not None and missing is not None else \
        f"vectors: {v.get('entries', '?')} documents indexed"
    workers = []
    job, backlog = v.get("job"), v.get("backlog")
    if job:
        workers.append(f"a background job (process {job.get('pid', '?')}) has computed {job.get('done', 0)} "
                       f"of the {job.get('found', 0)} it found missing")
    if backlog and backlog.get("running"):
        workers.append(f"the background embedder has {backlog['queued']} queued, "
                       f"{max(backlog['unchecked'], 0)} to look at")
    sv = (server or {}).get("vectors") or {}
    sb = sv.get("backlog") or {}
    if sb.get("running"):
        workers.append(f"memgrove serve (process {server['pid']}) has {sb['queued']} queued, "
                       f"{max(sb['unchecked'], 0)} to look at")
    if missing is None and v.get("pending"):
        line += f" ({v['pending']} pending; " + "; ".join(workers) + ")"
    elif missing:
        line += f" ({missing} missing: ranked by their words until computed; "
        line += "; ".join(workers) if workers else "nothing computes them now: `memgrove embed` does, or the next search"
        line += ")"
    elif workers:
        line += " (" + "; ".join(workers) + ")"
    return line


# what the group (memgrove/cli/app.py) adds
COMMANDS = [embed, status]

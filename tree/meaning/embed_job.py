"""Entries' vectors computed ahead where no process stays to do it: a detached background job, in the
manner of ``git gc --auto``.

A long-lived process (a server, MCP, a program holding a ``Memory``) runs a background embedder
thread (tree/meaning/embedder.py). A one-shot command exits before that thread would pay: after
``memgrove curate`` (the CLI, memgrove/cli/vectors_ahead.py), and when a search of a process
without an embedder finds vectors missing (``Meaning._cosines``), the missing vectors are left
to a job started here (``start_job``): ``python -m memgrove embed --background`` in a new session,
stdin and stdout closed, niced (``NICE``), logging to ``.memgrove/embed.log``. It

- runs one per tree at a time: it holds ``.memgrove/embed.lock`` (flock) for its life; a second one
  exits at once, and ``job_state`` finds the running one by trying that lock (cheap: ``/health``);
- reads entries as a search does and never takes the writer lock (vectors are keyed by their text:
  nothing it stores can be stale, and a write is never kept waiting);
- computes the missing vectors ``BATCH`` texts at a time on one thread (two encoded no faster here:
  4.0-4.4 texts a second either way at load 31), the newest entries first,
  says how far it is in ``.memgrove/embed-job.json`` (``job_state``), then looks again (what was
  written meanwhile) and exits when nothing is missing;
- loses nothing when killed or crashed: vectors are derived, and the next search or command
  starts another.

A command that wants vectors writes ``embed.wanted`` before it looks for a running job, and the job
looks at that stamp after letting its lock go: either the job sees the wish and goes on, or the
command finds the lock free and starts a new job; a wish is never lost between the two.

``embed_job = false`` (a setting) starts nothing automatically; ``MEMGROVE_SEMANTIC=off`` and
``semantic_weight = 0`` neither (nothing to compute).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from ..base.fsio import atomic_write
from .embedder import BATCH, EmbeddingTree
from .vector_claims import ready_vectors

LOCK = "embed.lock"
STATE = "embed-job.json"
LOG = "embed.log"
WANTED = "embed.wanted"
NICE = 10               # the job yields the CPU to the user's commands and searches
ROUNDS = 20             # looks again at most this often (entries written while it ran), then exits
LOG_MAX = 1 << 20       # a log past this size is started afresh
STATE_EVERY_S = 1.0     # how often the job's progress is written
# what ``start_job`` runs: the hidden CLI command that opens the tree and calls ``run_job``
COMMAND = ("-m", "memgrove", "--no-server", "embed", "--background")


def _try_lock(path: Path, shared: bool) -> int | None:
    """An fd holding ``path``'s flock (exclusive, or shared to probe), or None if someone holds it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def job_state(home: Path) -> dict[str, Any] | None:
    """The running job's progress (``pid``, ``started``, ``found``: the missing vectors it found,
    ``done``: those computed so far), or None when none runs. A flock probe and a small JSON read: cheap enough for ``/health``."""
    lock = home / LOCK
    if not lock.exists():
        return None
    fd = _try_lock(lock, shared=True)
    if fd is not None:        # nobody holds it: no job
        os.close(fd)
        return None
    try:
        state = json.loads((home / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    return {"running": True, **(state if isinstance(state, dict) else {})}


def want(home: Path) -> None:
    """Record that vectors are wanted (before looking for a running job: see the module's docstring)."""
    try:
        (home / WANTED).write_text(str(time.time()), encoding="utf-8")
    except OSError:
        pass


def start_job(home: Path) -> bool:
    """Start the background job for the tree in ``home`` unless one runs; True if one was started.
    Never raises: without a job the searches rank missing vectors by their words and compute a few."""
    want(home)
    if job_state(home) is not None:
        return False
    log = home / LOG
    try:
        if log.exists() and log.stat().st_size > LOG_MAX:
            log.unlink()
        out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return False
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGROVE_URL", "MEMGROVE_HOME")}
    cmd = [sys.executable, *COMMAND, "--root", str(home)]
    try:
        # ``sh -c '"$@" &'``: sh exits at once and the job is the init process's child, so no process
        # that starts one (a program holding a memory) is left with a zombie to reap
        sh = subprocess.Popen(["/bin/sh", "-c", '"$@" &', "sh", *cmd], stdin=subprocess.DEVNULL, stdout=out,
                              stderr=out, start_new_session=True, env=env, cwd=str(home), close_fds=True)
        sh.wait(10)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        os.close(out)
    return True


class _Progress:
    def __init__(self, home: Path, report: Callable[[int, int], None] | None):
        self.home, self.report = home, report
        self.started = time.time()
        self.state: dict[str, Any] = {"pid": os.getpid(), "started": round(self.started, 3), "found": 0, "done": 0}
        self._last = 0.0

    def update(self, force: bool = False, **changes: Any) -> None:
        self.state.update(changes, updated=round(time.time(), 3))
        if self.report is not None:
            self.report(self.state["done"], self.state["found"])
        if force or time.monotonic() - self._last >= STATE_EVERY_S:
            self._last = time.monotonic()
            try:
                atomic_write(self.home / STATE, json.dumps(self.state), durable=False)
            except OSError:
                pass


def missing_paths(tree: EmbeddingTree) -> tuple[list[str], dict[str, str], int]:
    """The entries whose current text has no vector yet, newest first (by the file's mtime), with
    their texts, and how many entries were looked at: the matrix of every entry's vector
    (tree/meaning/matrix.py) knows which lack one without reading a file, and brings itself up to
    date incrementally between two rounds, so only the missing entries are read."""
    files = tree.catalog.files()
    matrix = tree._vector_matrix()
    missing = sorted((p for p in matrix.missing() if p in files), key=lambda p: files[p][0], reverse=True)
    texts = tree._meaning_texts(missing)
    return [p for p in missing if p in texts], texts, matrix.counts()[0]


def run_job(tree: EmbeddingTree, home: Path, progress: Callable[[int, int], None] | None = None,
            nice: bool = True) -> dict[str, Any]:
    """Compute every missing vector of ``tree`` holding its job lock, then let it go; what it did
    (``{"ran": False}`` when another job holds the lock)."""
    fd = _try_lock(home / LOCK, shared=False)
    if fd is None:
        return {"ran": False}
    if nice:
        try:
            os.nice(NICE)
        except OSError:
            pass
    done, rounds = 0, 0
    track = _Progress(home, progress)
    try:
        encoder = tree.meaning_encoder()
        while True:
            began = time.time()
            for rounds in range(rounds + 1, ROUNDS + 1):
                missing, texts, _ = missing_paths(tree)
                if not missing:
                    break
                wanted = list(dict.fromkeys(texts[p] for p in missing))
                track.update(force=True, found=done + len(wanted), round=rounds)
                for s in range(0, len(wanted), BATCH):
                    got = ready_vectors(wanted[s:s + BATCH], encoder, tree.vectors)
                    done += sum(t in got for t in wanted[s:s + BATCH])
                    track.update(done=done)
                tree.vectors.checkpoint()
            track.update(force=True, found=done, finished=True)
            os.close(fd)          # then the last look at the wishes: see the module's docstring
            fd = None
            if _wanted_at(home) <= began or rounds >= ROUNDS:
                break
            fd = _try_lock(home / LOCK, shared=False)
            if fd is None:        # another job took over
                break
    finally:
        if fd is not None:
            os.close(fd)
    return {"ran": True, "computed": done, "rounds": rounds, "seconds": round(time.time() - track.started, 2)}


def _wanted_at(home: Path) -> float:
    try:
        return float((home / WANTED).read_text(encoding="utf-8") or 0)
    except (OSError, ValueError):
        return 0.0

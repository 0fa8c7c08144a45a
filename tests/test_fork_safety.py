"""A memory opened with the product's defaults (meaning on: a background embedder thread) and then
forked — gunicorn ``--preload``, Celery's prefork pool, ``multiprocessing`` on Linux — at the worst
moments: during the model's load, during a write, while the embedder encodes, right after opening.
Each child must search and write and finish; the parent must never hang in ``fork()``
(tree/base/forksafe.py, the gate in tree/meaning/embedding.py).

A hang is for ever, so every wait is bounded generously (``CHILD_S``) and only a hang exceeds it;
nothing here compares timings. The tests that hang the parent itself run in a subprocess.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from memgrove import Memory
from memgrove.tree.meaning import embedding
from memgrove.tree.base.model_files import model_available

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not model_available(), reason="the embedding model is not installed")]

CHILD_S = 60.0        # a child that has not searched and written by then hangs
MEANING = {"semantic_weight": "auto"}   # the product's default, named (the suite's default is off)


def _entries(n: int, tag: str = "seed") -> list[dict[str, Any]]:
    words = "postgres orders database index query latency cache replica backup schema".split()
    return [{"op": "ADD", "path": f"{tag}/f{i % 3}/e{i}.md", "title": f"{tag} note {i}",
             "content": f"Postgres for the orders service, note {i}: " + " ".join(words[(i + j) % 10] for j in range(40)),
             "reason": "r"} for i in range(n)]


def _child_work(mem: Memory, tag: str) -> dict[str, Any]:
    """What a forked worker does: a search ranked by meaning (several candidates), a write, its read."""
    hits = mem.search("postgres orders database")
    mem.curate([{"op": "ADD", "path": f"child/forked/{tag}.md", "title": f"Child {tag}",
                 "content": f"Written by the forked child {tag}.", "reason": "fork test"}])
    return {"hits": len(hits), "read": mem.read(f"child/forked/{tag}.md").title,
            "embedder_restarted": mem.tree.embedder is None or mem.tree.embedder.alive()}


def _fork(work: Callable[[], dict[str, Any]]) -> tuple[int, int]:
    """Fork a child that runs ``work`` and writes its result (JSON) to a pipe; (pid, read end)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.write(w, json.dumps(work()).encode())
            code = 0
        except BaseException as exc:  # noqa: BLE001 - the parent reads why
            os.write(w, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _results(children: list[tuple[int, int]], bound: float = CHILD_S) -> list[dict[str, Any]]:
    """Each child's result; a child still running after ``bound`` seconds is killed and fails the test."""
    deadline = time.monotonic() + bound
    out, hung = [], []
    for pid, r in children:
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGABRT)      # pytest's faulthandler shows where it hangs
                time.sleep(1.0)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                hung.append(pid)
                break
            time.sleep(0.05)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        out.append(json.loads(data) if data else {"error": "no answer"})
    assert not hung, f"{len(hung)} of {len(children)} forked children did not finish in {bound:g} s (a hang)"
    return out


def _all_fine(results: list[dict[str, Any]]) -> None:
    errors = [r["error"] for r in results if "error" in r]
    assert not errors, errors
    assert all(r["hits"] > 1 for r in results), results


@pytest.fixture
def fresh_model_load():
    """The model loads anew in this process (a test before may have loaded it)."""
    embedding._loaded.cache_clear()
    yield
    embedding._loaded.cache_clear()


def test_fork_during_the_models_load(tmp_path: Path, fresh_model_load: None) -> None:
    with Memory.open(tmp_path, create=True, embed_ahead=False, **MEANING) as mem:
        mem.curate(_entries(6))
    mem = Memory.open(tmp_path, **MEANING)     # its embedder starts loading the model at once
    try:
        deadline = time.monotonic() + 30
        while not embedding._loading.locked() and mem.tree.encoder is None and time.monotonic() < deadline:
            time.sleep(0.001)
        children = [_fork(lambda i=i: _child_work(mem, f"load{i}")) for i in range(2)]
        results = _results(children)
        _all_fine(results)
        assert all(r["embedder_restarted"] for r in results), results
    finally:
        mem.close()
    with Memory.open(tmp_path, embed_ahead=False, **MEANING) as mem:
        assert {mem.read(f"child/forked/load{i}.md").title for i in range(2)} == {"Child load0", "Child load1"}
        assert mem.doctor().ok


def test_fork_right_after_opening_multiprocessing_pool(tmp_path: Path) -> None:
    """The issue's case: 0 of 3 forked workers' searches answered in 90 s."""
    with Memory.open(tmp_path, create=True, embed_ahead=False, **MEANING) as mem:
        mem.curate(_entries(6))
    global _POOL_MEMORY
    _POOL_MEMORY = Memory.open(tmp_path, **MEANING)
    try:
        with multiprocessing.get_context("fork").Pool(3) as pool:
            pending = [pool.apply_async(_pool_task, (f"pool{i}",)) for i in range(3)]
            results = [p.get(timeout=CHILD_S) for p in pending]
        _all_fine(results)
    finally:
        _POOL_MEMORY.close()
        _POOL_MEMORY = None


_POOL_MEMORY: Memory | None = None


def _pool_task(tag: str) -> dict[str, Any]:
    assert _POOL_MEMORY is not None
    return _child_work(_POOL_MEMORY, tag)


def test_fork_during_writes_and_searches(tmp_path: Path) -> None:
    """Forked while this process's threads write and search: each child searches and writes (the
    writer lock, the catalog's and signals' connections, the index's searcher are the parent's);
    every acknowledged write of the parent and the children is there afterwards."""
    with Memory.open(tmp_path, create=True, embed_ahead=False, **MEANING) as mem:
        mem.curate(_entries(6))
    mem = Memory.open(tmp_path, **MEANING)
    mem.search("postgres orders database")          # the encoder is loaded: the children reuse it
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        k = 0
        while not stop.is_set():
            mem.curate([{"op": "UPSERT", "path": f"parent/writes/w{k}.md", "title": f"Parent {k}",
                         "content": f"Parent write {k} about postgres orders.", "reason": "r"}])
            written.append(f"parent/writes/w{k}.md")
            k += 1

    def searcher() -> None:
        while not stop.is_set():
            mem.search("postgres orders database")

    threads = [threading.Thread(target=writer), threading.Thread(target=searcher)]
    for t in threads:
        t.start()
    try:
        children = []
        for i in range(6):
            time.sleep(0.15)
            children.append(_fork(lambda i=i: _child_work(mem, f"write{i}")))
        results = _results(children)
    finally:
        stop.set()
        for t in threads:
            t.join(CHILD_S)
        mem.close()
    _all_fine(results)
    with Memory.open(tmp_path, embed_ahead=False, **MEANING) as mem:
        for i in range(6):
            assert mem.read(f"child/forked/write{i}.md").title == f"Child write{i}"
        for p in written:
            assert mem.tree.exists(p), p
        assert mem.doctor().ok


PARENT_SCRIPT = textwrap.dedent("""
    import json, os, sys, threading, time
    from memgrove import Memory

    home, forks = sys.argv[1], int(sys.argv[2])
    words = "postgres orders database index query latency cache replica backup schema".split()
    with Memory.open(home, create=True, embed_ahead=False, semantic_weight="auto") as mem:
        mem.curate([{"op": "ADD", "path": f"b/f{i % 5}/e{i}.md", "title": f"Backlog {i}",
                     "content": " ".join(words[(i * j) % 10] for j in range(60)) + f" {i}", "reason": "r"}
                    for i in range(150)])
    mem = Memory.open(home, semantic_weight="auto")     # its embedder catches up with 150 entries
    while mem.tree.encoder is None:
        time.sleep(0.01)
    stop = False

    def search():                    # a thread of the parent encodes questions meanwhile
        while not stop:
            mem.search("postgres orders database latency")

    threading.Thread(target=search, daemon=True).start()
    worst, children = 0.0, []
    for i in range(forks):
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                if i % 5 == 0:       # a few children search and write; the rest only exit
                    hits = mem.search("postgres orders database")
                    mem.curate([{"op": "ADD", "path": f"child/forked/c{i}.md", "title": f"Child {i}",
                                 "content": "Written by a child forked while the embedder encoded.",
                                 "reason": "r"}])
                    os._exit(0 if len(hits) > 1 else 3)
                os._exit(0)
            finally:
                os._exit(1)
        worst = max(worst, time.monotonic() - t0)
        children.append(pid)
        time.sleep(0.02)
    stop = True
    failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in children)
    print(json.dumps({"forks": forks, "worst_fork_s": worst, "failed": failed,
                      "embedding": not mem.tree.embedder.idle()}))
    os._exit(0)
""")


def test_fork_while_the_embedder_encodes(tmp_path: Path) -> None:
    """The parent forks again and again while its embedder and a searching thread are inside matrix
    products: OpenBLAS's fork handler waited for ever for its thread pool (the reliability suite's
    crash section sat in ``fork()``). Run in a subprocess: a hang there is a timeout here."""
    proc = subprocess.Popen([sys.executable, "-c", PARENT_SCRIPT, str(tmp_path / "proj"), "15"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)      # its hung children too
        out, err = proc.communicate()
        pytest.fail(f"the parent hung forking beside the encoding embedder: {out!r} {err!r}"[-3000:])
    assert proc.returncode == 0, err[-3000:]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["failed"] == 0, report


# -- the parts, one at a time ------------------------------------------------------------------

def test_a_lock_held_by_a_thread_is_free_in_the_child() -> None:
    from memgrove.tree.base import forksafe

    lock, held, release = forksafe.lock(), threading.Event(), threading.Event()

    def holder() -> None:
        with lock:
            held.set()
            release.wait(CHILD_S)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(CHILD_S)
    try:
        child = _fork(lambda: {"hits": 2, "got": lock.acquire(timeout=5)})
        [result] = _results([child])
    finally:
        release.set()
        t.join()
    assert result["got"] is True


def test_sqlite_connections_are_not_used_nor_closed_in_the_child(tmp_path: Path) -> None:
    """A child opens connections of its own; the parent's (its main thread's and another thread's)
    are kept, never closed there, and the parent goes on using its own."""
    from memgrove.tree.base import forksafe

    with Memory.open(tmp_path, create=True, embed_ahead=False) as mem:
        mem.curate(_entries(3))
    mem = Memory.open(tmp_path, embed_ahead=False)
    try:
        catalog = mem.tree.catalog
        mine = catalog._db()
        files = len(catalog.files())
        other: list[Any] = []
        t = threading.Thread(target=lambda: other.append(catalog._db()))
        t.start()
        t.join()

        def child() -> dict[str, Any]:
            kept = {id(db) for db in forksafe._kept}
            fresh = catalog._db()
            return {"hits": 2, "fresh": fresh is not mine and id(fresh) not in kept,
                    "kept": id(mine) in kept and id(other[0]) in kept, "files": len(catalog.files())}

        [result] = _results([_fork(child)])
        assert result == {"hits": 2, "fresh": True, "kept": True, "files": files}
        assert catalog._db() is mine and len(catalog.files()) == files
        assert (tmp_path / ".memgrove" / "index" / "catalog.db-wal").exists()
    finally:
        mem.close()


def test_a_finalizer_made_here_only_does_nothing_in_a_child(tmp_path: Path) -> None:
    from memgrove.tree.base import forksafe

    folder = tmp_path / "mine"
    folder.mkdir()
    remove = forksafe.here_only(folder.rmdir)
    [result] = _results([_fork(lambda: (remove(), {"hits": 2})[1])])
    assert result == {"hits": 2} and folder.is_dir()
    remove()
    assert not folder.exists()

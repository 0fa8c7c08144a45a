"""A memory gives back what it holds -- its watcher's inotify instance and threads, every SQLite
connection of every thread, the query cache's -- when it is closed, from any thread, and when it
is dropped without ``close()`` (issue 30, item 5).

inotify instances are 128 per user by default (/proc/sys/fs/inotify/max_user_instances), shared by
every program of the user: a loop that leaked one per memory left editors and other servers without."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import engine_choice
from helpers.watching import inotify_instances
from memgrove import Memory

# counts descriptors and threads in /proc; the watcher there is inotify
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc and inotify")

# Opens, searches until the watcher runs (watch_after=0: at the second check), queries (the query
# cache: every tenth memory, the slowest part to open) and drops or closes memories; counts inotify
# instances, descriptors and Python threads every 25 memories, and the process's threads
# (/proc/self/task: native ones too) after the 25th and the last, once settled: tantivy's
# Index.open starts a thread watching meta.json that ends up to a second after the index is
# dropped. It stops early when the instances grow, so a leak cannot use up the user's instances
# for the other processes on the machine.
CHILD = textwrap.dedent("""
    import json, os, sys, threading, time
    from memgrove import Memory

    def counts(settled=False):
        if settled:
            time.sleep(1.5)
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                pass
        return {"inotify": targets.count("anon_inode:inotify"), "fds": len(targets),
                "threads": len(os.listdir("/proc/self/task")), "open": sorted(targets),
                "named": sorted(t.name for t in threading.enumerate())}

    home, engine, close, n = sys.argv[1], sys.argv[2], sys.argv[3] == "closed", int(sys.argv[4])
    seen, watching = [], 0
    for i in range(1, n + 1):
        m = Memory.open(home, durable=False, engine=engine, watch_after=0)
        m.search("refresh token")
        m.search("redis cache")
        watching += m.tree._watcher is not None and m.tree._watcher.usable
        if i % 10 == 0:
            m.query("where does the cache live")
        if close:
            m.close()
        del m
        if i % 25 == 0:
            seen.append(counts(settled=i in (25, n)))
            if seen[-1]["inotify"] > 5:
                break
    print(json.dumps({"counts": seen, "watching": watching, "opened": i}))
""")


# past the 128 inotify instances a user has by default, so that a leaked one per memory also shows
# as a watcher that could not start; 500 in `make reliability` (its dropped section)
MEMORIES = 150


@pytest.mark.slow
@pytest.mark.parametrize("how", ["dropped", "closed"])
def test_150_memories_opened_and_let_go_leave_nothing_behind(tmp_path, how) -> None:
    engine = engine_choice.chosen()   # make test runs the suite on both engines
    with Memory.open(tmp_path, create=True, durable=False, engine=engine) as m:
        m.ingest(text="Refresh tokens rotate on every use.\n\nThe cache lives in redis.")
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), engine, how, str(MEMORIES)],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    counts = got["counts"]
    assert got["opened"] == MEMORIES and got["watching"] == MEMORIES, got["watching"]   # every memory ran a watcher
    first = counts[0]   # after 25 memories: imports, the first caches, done once per process
    grown = [c for c in counts if c["inotify"] or c["fds"] > first["fds"] + 3 or len(c["named"]) > len(first["named"])]
    assert not grown, (first, grown[0])
    assert counts[-1]["threads"] <= first["threads"] + 2, (first, counts[-1])


def _owned_fds(home: Path) -> list[str]:
    """Descriptors this process holds on files of the memory at ``home`` (its ``.memgrove``)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(home)):
            out.append(target)
    return out


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.ingest(text="Refresh tokens rotate on every use.\n\nThe cache lives in redis.")
        return m.home


def _used_from_threads(m: Memory, pool: ThreadPoolExecutor) -> None:
    """Searches, queries (the query cache) and signals from the pool's threads, which stay alive
    with their connections."""
    def use(i: int) -> None:
        m.search("refresh token")
        m.query(f"where does the cache live {i}")
        m.tree.record_delivery([h.path for h in m.search("redis")])

    list(pool.map(use, range(8)))


def test_close_from_one_thread_closes_the_connections_of_every_thread(seeded) -> None:
    m = Memory.open(seeded.parent, durable=False, watch_after=0)
    with ThreadPoolExecutor(4) as pool:
        _used_from_threads(m, pool)
        assert len(_owned_fds(seeded)) >= 9     # catalog, signals, cache: a database, WAL and -shm each
        m.close()
        assert _owned_fds(seeded) == []
        # each thread opens afresh after a close
        _used_from_threads(m, pool)
        m.close()
        assert _owned_fds(seeded) == []


def test_a_dropped_memory_closes_the_connections_of_every_thread(seeded) -> None:
    m = Memory.open(seeded.parent, durable=False, watch_after=0)
    with ThreadPoolExecutor(4) as pool:
        _used_from_threads(m, pool)
        assert m.tree._watcher is not None
        threads, instances = threading.active_count(), inotify_instances()
        alive = weakref.ref(m.tree)
        gc.disable()   # released as it is dropped, not by a later full collection
        try:
            del m
            assert alive() is None
            assert _owned_fds(seeded) == []
            assert inotify_instances() == instances - 1 and threading.active_count() < threads
        finally:
            gc.enable()

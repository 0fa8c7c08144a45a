"""A memory gives back what it holds -- its watcher's inotify instance and threads, every SQLite
connection of every thread, the query cache's -- when it is closed, from any thread, and when it
is dropped without ``close()`` (issue 30, item 5).

inotify instances are 128 per user by default (/proc/sys/fs/inotify/max_user_instances), shared by
every program of the user: a loop that leaked one per memory left editors and other servers without."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memgrove import Memory


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

"""A replica's server closes its memory only once no follow is under way: ``Replica.stop`` waits for
the follow in progress and no follow starts after it (a tantivy index closed under a follow crashed a
replica's shutdown with SIGSEGV, seen once in a full run of the suite)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from memgrove.server import replica as replica_mod


class _Follower:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.syncs = 0
        self.served = None

    def sync(self) -> None:
        self.syncs += 1
        self.started.set()
        assert self.release.wait(30)


def test_stop_waits_for_the_follow_under_way_and_none_starts_after(tmp_path: Path, monkeypatch) -> None:
    r = replica_mod.Replica(tmp_path, "http://127.0.0.1:9", None)
    follower = _Follower()
    r.follower = follower
    r.interval = 0.01
    monkeypatch.setattr(r, "_wait_for_push", lambda: None)        # no primary here: straight to the next follow
    tree = SimpleNamespace(forward_writes=None)
    monkeypatch.setattr("memgrove.server.forward_writes.PrimaryWriter", lambda *a, **k: object())
    r.start(lambda: SimpleNamespace(tree=tree))
    assert follower.started.wait(10)

    stopped = threading.Event()
    threading.Thread(target=lambda: (r.stop(), stopped.set()), daemon=True).start()
    time.sleep(0.3)
    assert not stopped.is_set(), "stop returned while a follow was still writing into the tree"
    follower.release.set()
    assert stopped.wait(10)
    syncs = follower.syncs
    time.sleep(0.3)
    assert follower.syncs == syncs, "a follow started after stop"

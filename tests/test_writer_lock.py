"""The writer lock: no outage after a killed writer, a full disk or a read-only tree; served in turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memgrove import LockTimeout, Memory
from memgrove.tree.writes.writer_lock import WriterLock

MEMGROVE = [sys.executable, "-m", "memgrove"]


def _children_of(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(name))
    return out


def _hand_written_tree(home: Path, n: int) -> None:
    Memory.open(home, create=True, durable=False).close()
    root = home / ".memgrove" / "tree" / "bulk"
    for i in range(n):
        folder = root / f"t{i // 200}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"w{(i * 7 + k) % 997}" for k in range(60))
        (folder / f"e{i}.md").write_text(f"# Entry {i}\n\nEntry {i} says {words}.\n")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_reindex_with_worker_processes_leaves_no_lock_behind(tmp_path):
    from helpers import engine_choice

    if engine_choice.chosen() != "whoosh":
        pytest.skip("Whoosh's rebuild forks worker processes; tantivy's builds with threads")
    _hand_written_tree(tmp_path, 2400)  # >= 2,000 files: the rebuild forks Whoosh workers
    env = {**os.environ, "MEMGROVE_HOME": str(tmp_path)}
    proc = subprocess.Popen([*MEMGROVE, "reindex"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _children_of(proc.pid)
        if workers:
            break
        time.sleep(0.01)
    assert workers, "the rebuild never forked workers (or finished first)"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    # the workers die with their parent and never held the lock's descriptor
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{w}") and _is_alive(w) for w in workers):
        time.sleep(0.05)
    assert not [w for w in workers if _is_alive(w)], "worker processes outlived the killed reindex"
    lock = WriterLock(tmp_path / ".memgrove" / "write.lock")
    assert not lock.inspect().held
    with Memory.open(tmp_path, lock_timeout=5, durable=False) as mem:
        res = mem.curate([{"op": "ADD", "path": "after/kill/note.md", "content": "written after the kill",
                           "reason": "the lock is free"}])
        assert res[0].status == "added"
        assert mem.doctor(fix=True).ok  # (hand-written folders get their context files)


def _is_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


_FORK_AND_DIE = """
import os, sys, time
from pathlib import Path
from memgrove.tree.writes.writer_lock import WriterLock
lock = WriterLock(Path(sys.argv[1]))
with lock.hold():
    if os.fork() == 0:      # a worker: it would sleep on, holding a copy of the lock's descriptor
        time.sleep(30)
        os._exit(0)
    print("FORKED", flush=True)
    os._exit(0)             # the holder dies without letting go
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_child_forked_while_the_lock_is_held_neither_holds_it_nor_outlives_its_parent(tmp_path):
    path = tmp_path / "write.lock"
    out = subprocess.run([sys.executable, "-c", _FORK_AND_DIE, str(path)], capture_output=True, text=True, timeout=30)
    assert "FORKED" in out.stdout, out.stderr
    with WriterLock(path, timeout=2).hold():
        pass
    assert WriterLock(path).inspect().openers == ()


def test_doctor_sees_a_lock_held_by_no_live_writer(tmp_path, mem):
    import fcntl

    if os.path.exists("/proc/999999"):
        pytest.skip("pid 999999 is alive here")
    lock_file = mem.home / "write.lock"
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.pwrite(fd, b"999999", 0)
    try:
        report = mem.doctor()
        assert not report.ok
        assert any("write lock" in p and "999999" in p for p in report.problems), report.problems
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert mem.doctor().ok


def test_writers_are_served_in_arrival_order(tmp_path):
    path = tmp_path / "write.lock"
    first = WriterLock(path, timeout=10)
    order: list[int] = []
    started = []

    def writer(i: int) -> None:
        lock = WriterLock(path, timeout=10)
        started.append(i)
        with lock.hold():
            order.append(i)

    threads = []
    with first.hold():
        for i in range(6):
            t = threading.Thread(target=writer, args=(i,))
            t.start()
            while len(started) <= i or WriterLock(path).waiting() <= i:
                time.sleep(0.005)
            threads.append(t)
    for t in threads:
        t.join(20)
    assert order == list(range(6))


def test_a_reader_never_jumps_the_queue(tmp_path):
    path = tmp_path / "write.lock"
    holder, waiter = WriterLock(path, timeout=10), WriterLock(path, timeout=10)
    got = []
    with holder.hold():
        t = threading.Thread(target=lambda: waiter.hold().__enter__() or got.append("writer"))
        t.start()
        while holder.waiting() < 1:
            time.sleep(0.005)
    # the holder let go; the waiter is next in line, so an opportunist must not take it first
    with WriterLock(path).try_hold() as took:
        assert not took or got == ["writer"]
    t.join(10)
    assert got == ["writer"]


def test_lock_timeout_still_names_the_holder(tmp_path):
    path = tmp_path / "write.lock"
    with WriterLock(path).hold():
        with pytest.raises(LockTimeout, match=f"process {os.getpid()}.*0.2 s"):
            with WriterLock(path, timeout=0.2).hold():
                pass
    assert WriterLock(path).waiting() == 0  # the timed-out waiter left the queue

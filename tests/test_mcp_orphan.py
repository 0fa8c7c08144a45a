"""``memgrove mcp`` whose client dies mid-call: no orphan keeps the CPU or the writer lock.

The client is a pair of pipes speaking JSON-RPC, so the test can close standard input at the
moment it chooses: once the server holds the tree's writer lock for the call.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.writes.writer_lock import WriterLock

from test_mcp_stdio import _env

pytestmark = pytest.mark.slow

EXIT_BOUND = 60.0     # a hang guard: the process exits within a few seconds of its client


def _start(root: Path, prelude: str = "") -> subprocess.Popen:
    """``memgrove mcp --root ROOT`` as its console script runs it, after ``prelude`` (fault injection)."""
    code = f"{prelude}\nimport sys\nfrom memgrove.cli import main\nsys.argv = ['memgrove', 'mcp', '--root', {str(root)!r}]\nmain()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), cwd=str(root))
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    assert b'"id":1' in proc.stdout.readline()
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def _send(proc: subprocess.Popen, message: dict) -> None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _call(proc: subprocess.Popen, tool: str, arguments: dict) -> None:
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})


def _leave_once_writing(proc: subprocess.Popen, root: Path, *, waiting: bool = False) -> tuple[WriterLock, str]:
    """Close the client's end once the call holds the writer lock (or, ``waiting``, once it waits
    for the lock the test holds); wait for the process to go. Returns the lock and what the
    process wrote to standard error."""
    lock = WriterLock(root / ".memgrove" / "write.lock")
    deadline = time.monotonic() + 120
    while not (lock.waiting() >= 1 if waiting else lock.inspect().held):
        assert proc.poll() is None and time.monotonic() < deadline, "the call never reached the writer lock"
        time.sleep(0.02)
    proc.stdin.close()
    try:
        proc.wait(EXIT_BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        pytest.fail(f"memgrove mcp was still running {EXIT_BOUND:g} s after its client left")
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
    return lock, err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Memory.open(tmp_path / "proj", create=True).close()
    return tmp_path / "proj"


def test_a_dead_clients_write_is_cancelled_and_the_process_exits(root: Path):
    proc = _start(root)
    ops = [{"op": "ADD", "path": f"work/notes/n{i}.md", "title": f"Note {i}", "content": f"body {i}",
            "reason": "test"} for i in range(300)]
    # the test holds the writer lock, so the call waits under way for as long as the test wants
    # (a batch planned while its client dies is cancelled the same way: tests/test_cancel.py)
    with WriterLock(root / ".memgrove" / "write.lock", timeout=10).hold():
        _call(proc, "memgrove_curate", {"operations": ops})
        lock, err = _leave_once_writing(proc, root, waiting=True)
    assert proc.returncode == 0, err[-2000:]
    with lock.hold(timeout=0.0):       # free at once for a fresh writer
        pass
    with Memory.open(root) as mem:
        assert mem.history(limit=None) == []        # cancelled before its commit point: nothing written
        assert not (mem.tree.root / "work").exists()
        assert mem.doctor().ok


HANG = """
import threading
from memgrove.mcp import memory_files
def _stuck(self, *a, **kw):   # a step that never reaches a checkpoint (a read of a stuck disk, say)
    threading.Event().wait()
memory_files.MemoryFiles._rewrite = _stuck
"""


def test_a_worker_that_never_reaches_a_checkpoint_does_not_keep_the_process(root: Path):
    with Memory.open(root) as mem:
        mem.curate([{"op": "ADD", "path": "notes/general/big.md", "title": "Big", "content": "old text",
                     "reason": "seed"}])
    proc = _start(root, prelude=HANG)
    _call(proc, "memory", {"command": "str_replace", "path": "/memories/notes/general/big.md",
                           "old_str": "old text", "new_str": "new text"})
    lock, err = _leave_once_writing(proc, root)
    assert proc.returncode == 1, err[-2000:]
    assert "a call was still running 3 s after its client left; exiting without it" in err
    with lock.hold(timeout=0.0):       # the flock died with the process
        pass
    with Memory.open(root) as mem:
        assert "old text" in mem.tree.read_text("notes/general/big.md")
        assert len(mem.history(limit=None)) == 1
        assert mem.doctor().ok

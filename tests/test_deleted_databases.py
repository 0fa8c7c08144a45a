"""A ``vectors.db`` or ``catalog.db`` deleted under a running process: its connections went on
reading and writing the deleted file for good (``doctor --fix`` found nothing). Each connection now
checks, at most once a second, that its file is still the one at its path, and reopens it (a fresh
file: a catalog is rebuilt from the files, vectors are computed again); ``doctor`` reports it and
``--fix`` fixes it. Recreating one file from several threads at once raised "attempt to write a
readonly database" (SQLite's answer on a moved file, taken for a read-only disk)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.base import sqlite as mg_sqlite
from memgrove.tree.base.sqlite import remove_files
from memgrove.tree.meaning.vectors import Vectors

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart the ingest worker {i} with the drain flag.", "reason": "seed"}
        for i in range(6)]


@pytest.fixture(autouse=True)
def check_at_once(monkeypatch):
    monkeypatch.setattr(mg_sqlite, "CHECK_SECONDS", 0.0, raising=False)   # production: once a second


def rows_on_disk(file: Path, table: str) -> int:
    db = sqlite3.connect(file)
    try:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        db.close()


def test_vectors_deleted_under_the_process_are_written_to_a_new_file(tmp_path: Path):
    store = Vectors(tmp_path / "vectors.db")
    assert store.put_many([("a", b"\0" * 8)])
    remove_files(store.file)
    assert store.put_many([("b", b"\1" * 8)])
    assert store.file.exists() and rows_on_disk(store.file, "vectors") == 1
    assert store.get_many(["a", "b"]) == {"b": b"\1" * 8}
    store.close()


def test_a_catalog_deleted_under_a_running_memory_is_rebuilt(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as mem:
        mem.curate(SEED)
        assert mem.search("drain flag")
        remove_files(mem.tree.catalog.file)
        assert mem.search("drain flag")[0].path.startswith("ops/runbooks/")
        mem.curate([{"op": "ADD", "path": "ops/deploys/canary.md", "content": "Canary first.", "reason": "r"}])
        # the rows are in the file at the path, not in the deleted one
        assert rows_on_disk(mem.tree.catalog.file, "files") == 6 + 1 + 3   # entries and context files
        assert mem.doctor().ok


def test_doctor_reports_a_database_deleted_under_the_process_and_fix_reopens_it(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as mem:
        mem.curate(SEED)
        mem.tree.signals.record_access(["ops/runbooks/r1.md"])
        remove_files(mem.tree.signals.file)
        rep = mem.doctor()
        assert any("signals.db was deleted under this process" in p for p in rep.problems), rep.problems
        mem.tree.signals.record_access(["ops/runbooks/r1.md"])
        remove_files(mem.tree.signals.file)
        remove_files(mem.tree.catalog.file)
        rep = mem.doctor(fix=True)
        assert rep.ok, rep.problems
        fixed = " ".join(rep.fixed)
        assert "reopened signals.db" in fixed and "the catalog (deleted under this process" in fixed, rep.fixed
        assert mem.tree.signals.file.exists() and rows_on_disk(mem.tree.catalog.file, "files") == 6 + 2


def test_threads_recreating_one_deleted_catalog_at_once(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as mem:
        mem.curate(SEED)
        mem.search("drain flag")
        catalog, errors = mem.tree.catalog, []
        start = threading.Barrier(4)

        def work(k: int) -> None:
            try:
                start.wait()
                for j in range(60):
                    if k == 0 and j % 15 == 5:
                        remove_files(catalog.file)
                    elif k == 1:
                        mem.search("drain flag")
                    elif k == 2 and j % 10 == 0:
                        mem.doctor(fix=True)
                    else:
                        catalog.digest()
                        catalog.count()
            except Exception as exc:  # noqa: BLE001 - the test reports it
                errors.append(f"thread {k}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert mem.search("drain flag") and mem.doctor().ok



def test_a_file_removed_while_it_is_being_opened_is_never_taken_for_a_full_disk(tmp_path: Path, monkeypatch):
    """The CI failure behind the test above: a thread opening the catalog while another removed it
    got SQLite's SQLITE_IOERR_FSTAT (or "readonly"), took it for a full disk, and then found no
    file for a view ("does not exist and cannot be created (the disk takes no writes)"). It is a
    file removed under the opener, which ``connect`` opens again. The removal is made to fall at
    the worst moment, just after SQLite created the file (a loop of threads removing and opening
    finds it too, and sometimes SIGBUS: SQLite truncates a -shm another of the process's
    connections maps)."""
    file, identity, removed = tmp_path / "x.db", mg_sqlite.file_identity, []

    def remove_first(path: Path):
        if not removed:
            removed.append(path)
            remove_files(path)
        return identity(path)

    monkeypatch.setattr(mg_sqlite, "file_identity", remove_first)
    db = mg_sqlite.connect(file, "CREATE TABLE IF NOT EXISTS t(a);", timeout=5)
    try:
        assert removed == [file] and not isinstance(db, mg_sqlite.ReadOnlyView)
        db.execute("INSERT INTO t VALUES (1)")
        assert rows_on_disk(file, "t") == 1
    finally:
        db.close()


CHILD = """
import sys, time
from memgrove import Memory
errors = 0
with Memory.open(sys.argv[1], durable=False, embed_ahead=False) as mem:
    mem.search("drain flag")
    print("ready", flush=True)
    end = time.monotonic() + float(sys.argv[2])
    i = 0
    while time.monotonic() < end:
        i += 1
        try:
            assert mem.search("drain flag"), "no hit"
            if i % 5 == 0:
                mem.curate([{"op": "ADD", "path": f"ops/p{sys.argv[3]}/n{i}.md", "content": f"note {i}",
                             "reason": "r"}])
        except Exception as exc:
            errors += 1
            print(f"{type(exc).__name__}: {exc}", flush=True)
sys.exit(1 if errors else 0)
"""


@pytest.mark.slow
def test_processes_recreating_a_catalog_deleted_under_them(tmp_path: Path):
    import subprocess
    import sys
    import time

    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as mem:
        mem.curate(SEED)
        catalog = mem.tree.catalog.file
    children = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), "3", str(k)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in range(2)]
    assert [c.stdout.readline().strip() for c in children] == ["ready", "ready"]
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        time.sleep(0.4)
        remove_files(catalog)
    outs = [c.communicate(timeout=120)[0] for c in children]
    assert [c.returncode for c in children] == [0, 0], outs
    # the children's rows are in the file at the path (they wrote into deleted files for good)
    assert catalog.exists() and rows_on_disk(catalog, "files") >= len(SEED)
    with Memory.open(tmp_path, durable=False, embed_ahead=False) as mem:
        assert mem.doctor().ok


def test_an_owner_collected_while_its_thread_holds_the_connections_lock_does_not_deadlock(tmp_path: Path):
    """A full-suite run hung for good in a fork: ``ThreadConnections._before_fork`` held its lock
    while copying the set of connections, a garbage collection in that copy freed an unreachable
    owner, and the owner's finalizer (``close``) waited for the same lock in the same thread. The
    finalizer is made to run at that moment here (the last reference dropped under the lock)."""
    import weakref

    conns = mg_sqlite.ThreadConnections()
    conns.keep(mg_sqlite.connect(tmp_path / "x.db", "CREATE TABLE IF NOT EXISTS t(a);", timeout=5))

    class Owner:
        pass

    owners = [Owner()]
    weakref.finalize(owners[0], conns.close)

    def collect_under_the_lock() -> None:
        with conns._mutex:   # as _before_fork holds it
            owners.clear()   # the owner goes: its finalizer closes every connection

    t = threading.Thread(target=collect_under_the_lock, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "the finalizer waited for a lock its own thread holds"
    assert conns.mine() is None


def test_a_database_deleted_alone_under_a_holder_is_created_afresh_without_its_old_wal(tmp_path: Path):
    """``rm catalog.db`` while a process holds it leaves the old ``-wal`` and ``-shm``: the next
    process to create the file took them for its own, SQLite failed with SQLITE_IOERR_SHORT_READ,
    and memgrove fell back to a read-only view as on a full disk (the catalog then stayed out of
    step: "doctor after reopen" in the crash suite). The creator now removes them first."""
    import subprocess
    import sys

    file = tmp_path / "catalog.db"
    holder = sqlite3.connect(file, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=WAL")
        holder.execute("PRAGMA wal_autocheckpoint=0")   # its pages stay in the WAL
        holder.execute("CREATE TABLE t(x)")
        holder.executemany("INSERT INTO t VALUES (?)", [(f"old {i}",) for i in range(50)])
        file.unlink()   # the database alone
        opener = ("import sys; from pathlib import Path; from memgrove.tree.base import sqlite as s\n"
                  "db = s.connect(Path(sys.argv[1]), 'CREATE TABLE IF NOT EXISTS t(x);', timeout=5)\n"
                  "db.execute('INSERT INTO t VALUES (1)')\n"
                  "print(type(db).__name__, db.execute('SELECT count(*) FROM t').fetchone()[0])")
        r = subprocess.run([sys.executable, "-c", opener, str(file)], capture_output=True, text=True, timeout=60)
        assert r.stdout.split() == ["Connection", "1"], r.stdout + r.stderr[-1500:]
        assert holder.execute("SELECT count(*) FROM t").fetchone()[0] == 50   # the holder reads on
    finally:
        holder.close()

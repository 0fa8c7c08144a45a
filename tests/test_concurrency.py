"""Real processes against one tree: parallel writers and readers, SIGKILL mid-batch, the writer lock.

The storage contract: every write goes through one writer at a time, readers never
block, and a crash at any instant leaves each entry old or new, never torn,
with the journal and index reconciled at the next open. The children live in
``tests/helpers/concurrency_worker.py``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgrove import LockTimeout, Memory
from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.index.catalog import Catalog, digest_of, scan
from memgrove.tree.base.fsio import TEMP_PREFIX
from memgrove.tree.index.engine import IndexBroken

pytestmark = pytest.mark.slow

WORKER = Path(__file__).parent / "helpers" / "concurrency_worker.py"


# -- child processes ---------------------------------------------------------

class Child:
    """A worker process whose stdout lines can be awaited with a timeout."""

    def __init__(self, mode: str, args: dict, workdir: Path, name: str):
        arg_file = workdir / f"{name}.args.json"
        arg_file.write_text(json.dumps(args))
        env = {k: v for k, v in os.environ.items() if k != "MEMGROVE_HOME"}
        self.err_file = workdir / f"{name}.stderr"
        with self.err_file.open("w") as err:
            self.proc = subprocess.Popen([sys.executable, str(WORKER), mode, f"@{arg_file}"],
                                         stdout=subprocess.PIPE, stderr=err, bufsize=0, env=env)
        self.pid = self.proc.pid
        self._buf = b""

    def wait_line(self, prefix: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            lines = self._buf.split(b"\n")
            for i, raw in enumerate(lines[:-1]):
                line = raw.decode()
                if line.startswith(prefix):
                    self._buf = b"\n".join(lines[i + 1:])
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {prefix!r} from child within {timeout} s; stderr: {self.stderr()}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.proc.wait(5)
                    raise AssertionError(f"child exited ({self.proc.returncode}) before {prefix!r}: {self.stderr()}")
                self._buf += chunk

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        self.proc.wait(10)

    def finish(self, timeout: float = 120.0) -> None:
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.kill()
        assert self.proc.returncode == 0, f"child failed ({self.proc.returncode}): {self.stderr()}"

    def stderr(self) -> str:
        return self.err_file.read_text()[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        self.proc.stdout.close()


@pytest.fixture
def children():
    started: list[Child] = []
    yield started
    for c in started:
        c.close()


def spawn(children: list, mode: str, args: dict, workdir: Path, name: str) -> Child:
    c = Child(mode, args, workdir, name)
    children.append(c)
    return c


def wait_for(cond, timeout: float, what: str, poll: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(poll)


def narrative(text: str) -> str:
    return entry_mod.parse(text).sections.get("Narrative", "").strip()


def assert_index_matches_files(mem: Memory) -> dict:
    """The index holds exactly one document per .md file and was kept in step with them."""
    tree = mem.tree
    files = scan(tree.root)
    assert not any(p.rsplit("/", 1)[-1].startswith(TEMP_PREFIX) for p in files)
    assert tree.engine.count() == len(files), (tree.engine.count(), len(files))
    assert tree.catalog.digest() == digest_of(files), "catalog is out of step with the files"
    for rel in files:
        entry_mod.parse((tree.root / rel).read_text(encoding="utf-8"), where=rel)  # every file parses
    return files


# -- 1. parallel writers and readers -----------------------------------------

N_WRITERS, N_READERS, PER_WRITER = 4, 2, 40


def test_parallel_writers_and_readers_lose_nothing(tmp_path, children):
    home = tmp_path / "proj"
    with Memory.open(home, create=True, durable=False) as mem:
        seed = mem.curate([{"op": "ADD", "path": "seed/notes/seed_note.md", "title": "Seed note",
                            "content": "seed note shared alpha words", "reason": "something to find"}])
    stop = tmp_path / "stop"
    readers = []
    for i in range(N_READERS):
        readers.append(spawn(children, "reader", {"home": str(home), "stop": str(stop), "seed": i,
                                                  "ready": str(tmp_path / f"ready{i}"),
                                                  "out": str(tmp_path / f"reader{i}.json")}, tmp_path, f"reader{i}"))
    wait_for(lambda: all((tmp_path / f"ready{i}").exists() for i in range(N_READERS)), 60, "readers to start")
    writers = [spawn(children, "writer", {"home": str(home), "wid": w, "n": PER_WRITER,
                                          "out": str(tmp_path / f"writer{w}.json")}, tmp_path, f"writer{w}")
               for w in range(N_WRITERS)]
    for w in writers:
        w.finish(timeout=180)
    time.sleep(0.3)  # readers also search the final tree
    stop.touch()
    for r in readers:
        r.finish(timeout=60)

    # readers: never an error, never blocked behind the writers
    for i in range(N_READERS):
        rep = json.loads((tmp_path / f"reader{i}.json").read_text())
        assert rep["errors"] == [], f"reader {i} failed:\n" + "\n".join(rep["errors"][:3])
        assert rep["bad_paths"] == []
        assert rep["rebuilds"] == 0, f"reader {i} found the index broken and rebuilt it"
        assert len(rep["latencies"]) >= 10, "reader barely ran"
        assert max(rep["latencies"]) < 5.0, f"reader {i} waited {max(rep['latencies']):.2f} s for one search"

    expected: dict[str, str | None] = {}
    markers: dict[str, str] = {}
    op_ids: list[str] = [r.id for r in seed]
    for w in range(N_WRITERS):
        rep = json.loads((tmp_path / f"writer{w}.json").read_text())
        expected.update(rep["expected"])
        markers.update(rep["markers"])
        op_ids += rep["ids"]
        assert rep["rebuilds"] == 0, f"writer {w} found the index broken and rebuilt it"
    assert len(expected) == N_WRITERS * PER_WRITER

    with Memory.open(home, durable=False) as mem:
        tree = mem.tree
        files = assert_index_matches_files(mem)  # before anything could reindex
        live = {p for p, c in expected.items() if c is not None} | {"seed/notes/seed_note.md"}
        assert set(tree.entry_paths()) == live
        assert len(files) == len(live) + sum(1 for p in files if p.endswith("/context.md"))
        for path, text in expected.items():
            if text is None:
                assert not tree.exists(path), f"{path} was deleted but is back"
            else:
                assert narrative(tree.read_text(path)) == text, f"{path} lost its last content"

        # the index holds each entry's last content, and nothing of earlier versions
        boosts = tree.settings.boosts()
        for path, text in expected.items():
            marker = markers[path]
            assert text is None or marker in text
            found = [r[0] for r in tree.engine.search(marker, boosts=boosts, limit=5)]
            assert (path not in found) if text is None else (found == [path]), (path, found)
            version = int(marker.rsplit("v", 1)[1])
            for old in range(1, version):
                stale = marker.rsplit("v", 1)[0] + f"v{old}"
                assert path not in [r[0] for r in tree.engine.search(stale, boosts=boosts, limit=5)], (path, stale)
        deleted = [p for p, c in expected.items() if c is None]
        assert len(deleted) == N_WRITERS * 4

        # the journal: exactly one record per applied operation, and it agrees with the files
        records = list(tree.journal.records())
        assert len(op_ids) == len(set(op_ids))
        assert sorted(r.id for r in records) == sorted(op_ids)
        last_after: dict[str, str | None] = {}
        for r in records:
            for ch in r.changes():
                last_after[ch.path] = ch.after
        for path in live:
            assert last_after[path] == tree.read_text(path)
        for path in deleted:
            assert last_after[path] is None
        assert not tree.journal.pending_file.exists()
        assert tree.stray_temp_files() == []

        report = mem.doctor()
        assert report.ok, report.problems
        assert report.entries == len(live)
        assert mem.count() == len(files)


def test_racing_writers_never_overwrite_or_lose_an_update(tmp_path, children):
    """ADD of one path by several processes at once: exactly one wins, the others are told it
    exists. Concurrent UPDATEs of one entry each keep what the others added (no lost update)."""
    home = tmp_path / "proj"
    with Memory.open(home, create=True, durable=False) as mem:
        mem.curate([{"op": "ADD", "path": "race/shared/tally.md", "content": "who was here", "reason": "seed"}])
    go, n, racers = tmp_path / "go", 12, 3
    procs = [spawn(children, "racer", {"home": str(home), "rid": r, "n": n, "go": str(go),
                                       "out": str(tmp_path / f"racer{r}.json")}, tmp_path, f"racer{r}")
             for r in range(racers)]
    time.sleep(0.5)  # let them all import and open the tree, then start together
    go.touch()
    for p in procs:
        p.finish(timeout=120)
    reports = [json.loads((tmp_path / f"racer{r}.json").read_text()) for r in range(racers)]
    with Memory.open(home, durable=False) as mem:
        for k in range(n):
            path = f"race/claims/c_{k}.md"
            winners = [r for r, rep in enumerate(reports) if path in rep["won"]]
            assert len(winners) == 1, (path, winners)
            assert narrative(mem.tree.read_text(path)) == f"claimed by racer {winners[0]}"
        for rep in reports:
            assert len(rep["won"]) + len(rep["lost"]) == n
            assert all("already exists" in msg for msg in rep["lost"]), rep["lost"]
        tags = mem.read("race/shared/tally.md").tags
        assert sorted(tags) == sorted(f"r{r}k{k}" for r in range(racers) for k in range(n))
        adds = [r for r in mem.history(limit=None) if r.op == "ADD" and r.path.startswith("race/claims/")]
        assert len(adds) == n
        assert mem.doctor().ok


OPENS = 150
COMMITS = 10


def test_a_commit_in_another_process_never_looks_like_a_broken_index(tmp_path, children):
    """Each commit replaces the index's table of contents (Whoosh's TOC, tantivy's meta.json) and
    deletes files of the old one: opening the index in that instant must retry, not report the index broken (which sends the reader to the writer lock to rebuild it)."""
    home = tmp_path / "proj"
    with Memory.open(home, create=True, durable=False) as mem:
        mem.curate([{"op": "ADD", "path": "churn/notes/first.md", "content": "churn note", "reason": "seed"}])
        folder, engine_type = mem.tree.engine.folder, type(mem.tree.engine)
    stop = tmp_path / "stop-churning"
    # the writer commits until the reader has opened the index OPENS times while at least COMMITS
    # commits fell among those opens: neither the reader's nor the writer's rate is assumed
    writer = spawn(children, "churn", {"home": str(home), "n": 1_000_000, "seconds": 300, "stop_file": str(stop)},
                   tmp_path, "churn")
    writer.wait_line("START")
    journal = home / ".memgrove" / "journal" / "journal.jsonl"
    failures: list[str] = []
    opened = commits = 0
    while writer.proc.poll() is None and (opened < OPENS or commits <= COMMITS):
        engine = engine_type(folder)  # a cold reader, as every CLI call is
        opened += 1
        try:
            if not engine.exists():
                failures.append("exists() said there is no index")
            if not engine.search("churn note", boosts={}, limit=3):
                failures.append("search found nothing")
        except IndexBroken as exc:
            failures.append(str(exc))
        finally:
            engine.close()
        commits = len(journal.read_bytes().splitlines())
    stop.touch()
    writer.finish(30)
    assert opened >= OPENS and commits > COMMITS, (opened, commits)
    assert failures == [], f"{len(failures)} of {opened} opens failed, e.g. {failures[0]}"


def test_a_long_lived_process_keeps_up_after_another_process_reindexes(tmp_path, children):
    """`memgrove reindex` in a shell while an agent process keeps the tree open: the agent's later
    writes must land in the catalog everyone reads, and its searches must see them."""
    home = tmp_path / "proj"
    with Memory.open(home, create=True, durable=False) as mem:
        mem.curate([{"op": "ADD", "path": f"long/notes/e_{i}.md", "content": f"long lived note {i}",
                     "reason": "seed"} for i in range(10)])
        mem.search("long lived note")
        catalog_file = mem.tree.catalog.file
        for rnd in range(3):
            spawn(children, "reindex", {"home": str(home)}, tmp_path, f"reindex{rnd}").wait_line("REINDEXED")
            added = []
            for k in range(2):  # a few writes, then a search
                path = f"long/notes/r{rnd}_{k}.md"
                mem.curate([{"op": "ADD", "path": path, "content": f"marker lr{rnd}x{k}", "reason": "after reindex"}])
                added.append(path)
            other = Catalog(catalog_file)  # what every other process reads
            try:
                assert other.digest() == digest_of(scan(mem.tree.root)), f"round {rnd}: catalog write lost"
            finally:
                other.close()
            for k, path in enumerate(added):
                assert [h.path for h in mem.search(f"lr{rnd}x{k}")] == [path], f"round {rnd}: stale searcher"
        report = mem.doctor()
        assert report.ok, report.problems


def test_searches_go_on_while_another_process_reindexes(tmp_path, children):
    """A reindex holds the writer lock for as long as the build takes (a minute at 24,000
    entries): searches meanwhile use the old index instead of waiting. Killing the reindex
    halfway leaves a usable index."""
    home = tmp_path / "proj"
    _seed_small(home)
    warm = Memory.open(home, durable=False, lock_timeout=2)
    try:
        assert warm.search("rotating refresh tokens")
        rebuilder = spawn(children, "reindex", {"home": str(home), "pause": True}, tmp_path, "reindex")
        rebuilder.wait_line("PAUSED")
        for reader in (warm, Memory.open(home, durable=False, lock_timeout=2)):
            # the paused rebuild holds the lock for good: a reader that waited for it raises LockTimeout
            hits = reader.search("rotating refresh tokens")
            assert hits
        rebuilder.kill()
        with Memory.open(home, durable=False, lock_timeout=2) as after:
            assert after.search("rotating refresh tokens")
            assert after.doctor().ok
    finally:
        warm.close()


# -- 2. SIGKILL in the middle of a large durable batch ---------------------------

N_CRASH, N_FRESH = 300, 6


def _crash_ops() -> list[list[str]]:
    ops = [[f"crash/part_{i % 3}/e_{i}.md", f"Crash entry {i}", f"Crash entry {i} new content marker cr{i}new"]
           for i in range(N_CRASH)]
    ops += [[f"crash/fresh/n_{i}.md", f"Fresh entry {i}", f"Fresh entry {i} marker fr{i}new"] for i in range(N_FRESH)]
    return ops


@pytest.mark.parametrize("kill_at", [
    "before_pending",        # planned, nothing written: the batch never happened
    "after_pending",         # write-ahead complete, no entry touched yet
    "first_file_changed",    # timed: the parent sees the first entry change, then kills
    "mid_write:150",         # half of the 150th entry's temp file written
    "after_append",          # every file and journal line written, pending.json still there
    "after_clear",           # pending.json removed: the last step of a batch
])
def test_sigkill_mid_batch_leaves_old_or_new_and_recovers(tmp_path, children, kill_at):
    home = tmp_path / "proj"
    ops = _crash_ops()
    with Memory.open(home, create=True, durable=False) as mem:
        seeded = mem.curate([{"op": "ADD", "path": p, "title": t, "content": f"{t} old content marker cr{i}old",
                              "reason": "seed"} for i, (p, t, _) in enumerate(ops[:N_CRASH])])
        old = {p: mem.tree.read_text(p) for p, _, _ in ops[:N_CRASH]}
    old.update({p: None for p, _, _ in ops[N_CRASH:]})
    pending = home / ".memgrove" / "journal" / "pending.json"
    first = home / ".memgrove" / "tree" / ops[0][0]

    pause = None if kill_at == "first_file_changed" else kill_at
    child = spawn(children, "batch", {"home": str(home), "round": 1, "ops": ops, "pause": pause}, tmp_path, "batch")
    child.wait_line("START")
    if pause:
        child.wait_line("PAUSED", timeout=60)
    else:
        wait_for(lambda: first.read_text(encoding="utf-8") != old[ops[0][0]], 60, "the first entry to change",
                 poll=0.001)
    child.kill()
    assert child.proc.returncode == -signal.SIGKILL, "the batch finished before it could be killed"

    # on disk, before anyone repairs anything: every entry is exactly old or exactly new
    journal = home / ".memgrove" / "journal" / "journal.jsonl"
    seed_lines = len(seeded)
    lines = journal.read_text(encoding="utf-8").splitlines()
    had_pending = pending.exists()
    if had_pending:
        batch_records = json.loads(pending.read_text(encoding="utf-8"))["records"]  # never torn
    else:
        batch_records = [json.loads(ln) for ln in lines[seed_lines:]]
    new = {r["path"]: r["after"] for r in batch_records}
    assert set(new) <= set(old)
    for path, after in new.items():
        i = [o[0] for o in ops].index(path)
        assert narrative(after) == ops[i][2], f"the batch's image of {path} is not its new content"
    tree_root = home / ".memgrove" / "tree"
    n_new = 0
    for path, before in old.items():
        p = tree_root / path
        disk = p.read_text(encoding="utf-8") if p.exists() else None
        if disk == before:
            continue
        assert path in new and disk == new[path], f"{path} is neither its old nor its new text (torn or missing)"
        n_new += 1
    temps = [p for p in tree_root.rglob(TEMP_PREFIX + "*")]
    assert not any(Path(rel).name.startswith(TEMP_PREFIX) for rel in scan(tree_root))

    expect_pending = kill_at not in ("before_pending", "after_clear")
    assert had_pending == expect_pending, f"pending.json {'missing' if expect_pending else 'present'}"
    if kill_at in ("before_pending", "after_pending"):
        assert n_new == 0
    elif kill_at in ("after_append", "after_clear"):
        assert n_new == len(ops)
    else:
        assert 0 < n_new < len(ops), n_new
    if kill_at == "mid_write:150":
        assert temps, "the half-written temp file should still be there"
        assert n_new == 149

    # reopen: a complete pending batch is rolled forward, a missing one never happened
    with Memory.open(home, durable=False, lock_timeout=2) as mem:
        tree = mem.tree
        applied = had_pending or kill_at == "after_clear"
        for path, before in old.items():
            text = tree.read_text(path) if tree.exists(path) else None
            assert text == (new[path] if applied else before), path
        if had_pending:
            assert any("interrupted batch" in n for n in tree.notices), tree.notices
            assert any(str(child.pid) in n and "dead process" in n for n in tree.notices), tree.notices
        assert not pending.exists()

        ids = [r.id for r in tree.journal.records()]
        assert len(ids) == len(set(ids)), "a journal record was written twice"
        assert len(ids) == seed_lines + (len(ops) if applied else 0)

        report = mem.doctor()
        assert report.ok, report.problems
        assert report.entries == N_CRASH + (N_FRESH if applied else 0)
        files = assert_index_matches_files(mem)
        assert set(tree.entry_paths()) == {p for p in files if not p.endswith("/context.md")}
        if applied:  # contexts list the new entries
            listing = mem.list("crash/fresh")
            assert sorted(e["path"] for e in listing["entries"]) == sorted(p for p, _, _ in ops[N_CRASH:])
        # a half-written temp file is never searchable as an entry
        hits = mem.search("cr149new fr0new cr0new" if applied else "cr149old cr0old", limit=10)
        assert hits and all(tree.exists(h.path) or h.kind == "context" for h in hits)
        assert all(not Path(h.path).name.startswith(TEMP_PREFIX) for h in hits)
        if temps and had_pending:   # the recovery of the killed batch removed them, under the writer lock
            assert tree.stray_temp_files() == []
        elif temps:                 # no batch to recover: left to the next write, or to doctor --fix
            assert any("temp file" in w for w in report.warnings), report.warnings
            assert mem.doctor(fix=True).ok
            assert tree.stray_temp_files() == []

        # the dead writer's lock does not stop the next writer
        mem.curate([{"op": "UPSERT", "path": "crash/part_0/e_0.md", "content": "after the crash", "reason": "next"}])
        assert any(str(child.pid) in n for n in tree.notices), tree.notices
        assert mem.doctor().ok


# -- 3. the writer lock ----------------------------------------------------------

def _seed_small(home: Path) -> None:
    with Memory.open(home, create=True, durable=False) as mem:
        mem.curate([{"op": "ADD", "path": f"lock/notes/n_{i}.md", "title": f"Lock note {i}",
                     "content": f"lock note {i} about rotating refresh tokens", "reason": "seed"} for i in range(5)])


def test_held_lock_times_out_writers_but_not_readers(tmp_path, children):
    home = tmp_path / "proj"
    _seed_small(home)
    holder = spawn(children, "hold", {"home": str(home), "seconds": 60}, tmp_path, "holder")
    holder.wait_line("HELD")
    with Memory.open(home, lock_timeout=0.5, durable=False) as mem:
        t0 = time.monotonic()
        with pytest.raises(LockTimeout) as err:
            mem.curate([{"op": "ADD", "path": "lock/notes/blocked.md", "content": "x", "reason": "blocked"}])
        waited = time.monotonic() - t0
        assert 0.45 <= waited < 30, waited      # it waited out lock_timeout, and not the holder's 60 s
        msg = str(err.value)
        assert f"process {holder.pid}" in msg and "0.5 s" in msg, msg
        assert not mem.tree.exists("lock/notes/blocked.md")

        # readers are never blocked by the writer, even when the index needs catching up (one
        # that waited for the lock would raise LockTimeout after lock_timeout)
        hits = mem.search("rotating refresh tokens")
        assert hits
        edited = mem.tree.root / "lock/notes/n_0.md"
        edited.write_text(edited.read_text() + "\nhand edited while locked\n", encoding="utf-8")
        assert mem.search("rotating refresh tokens")     # LockTimeout had it waited for the writer
    holder.kill()


def test_writer_waits_for_the_lock_then_proceeds(tmp_path, children):
    home = tmp_path / "proj"
    _seed_small(home)
    holder = spawn(children, "hold", {"home": str(home), "seconds": 1.5}, tmp_path, "holder")
    held_at = float(holder.wait_line("HELD").split()[2])  # the holder's clock: it lets go 1.5 s later
    with Memory.open(home, lock_timeout=30, durable=False) as mem:
        res = mem.curate([{"op": "ADD", "path": "lock/notes/waited.md", "content": "waited", "reason": "wait"}])
        assert time.time() >= held_at + 1.5, "curate did not wait for the holder"
        assert res[0].status == "added"
    holder.wait_line("RELEASED")
    holder.finish(10)


def test_lock_of_a_killed_holder_does_not_block(tmp_path, children):
    home = tmp_path / "proj"
    _seed_small(home)
    holder = spawn(children, "hold", {"home": str(home), "seconds": 60}, tmp_path, "holder")
    holder.wait_line("HELD")
    holder.kill()
    lock_file = home / ".memgrove" / "write.lock"
    assert lock_file.read_text().strip() == str(holder.pid)  # left behind, naming a dead process
    with Memory.open(home, lock_timeout=0.5, durable=False) as mem:
        res = mem.curate([{"op": "ADD", "path": "lock/notes/after_kill.md", "content": "free", "reason": "free"}])
        assert res[0].status == "added"
        assert any(f"dead process {holder.pid}" in n for n in mem.tree.notices), mem.tree.notices
        assert mem.doctor().ok

"""A full disk: every read still answers (nothing a read does needs free space), and a write
either fails cleanly before its commit point or is reported done after it, however much space
is left. Most tests fill a tmpfs of their own (root only; skipped elsewhere)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory, NotWritable
from memgrove.cli import cli

from helpers.full_disk import fill, free, free_pages, small_disk as mount_small_disk

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart the ingest worker number {i} with the drain flag.", "reason": "seed"}
        for i in range(8)]
CANARY = [{"op": "ADD", "path": "ops/deploys/canary.md", "title": "Canary",
           "content": "Canary deploys go to one zone first, then the rest. " * 20, "reason": "after"}]


@pytest.fixture
def small_disk(tmp_path: Path):
    with mount_small_disk(tmp_path) as mnt:
        yield mnt


def seeded(folder: Path) -> None:
    """A memory with entries, an answer cache, signals and a query log, then closed: the next
    open starts without SQLite's -wal/-shm files, as a fresh process does."""
    with Memory.open(folder, create=True, durable=True) as mem:
        mem.curate(SEED)
        mem.query("How do I restart the ingest worker?")
        mem.tree.search("drain flag", record_access=True)


def journal_ids(home: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (home / "journal" / "journal.jsonl").read_text().splitlines()]


def index_files(home: Path) -> set[str]:
    return {p.name for p in (home / "index").iterdir()}


def test_every_read_answers_on_a_full_disk(small_disk):
    seeded(small_disk)
    home = small_disk / ".memgrove"
    indexed = index_files(home)
    fill(small_disk)
    with Memory.open(small_disk) as mem:
        assert mem.search("restart ingest worker")[0].path.startswith("ops/runbooks/")
        assert "drain" in mem.query("How do I restart the ingest worker number 3?").answer
        assert "drain" in mem.query("How do I restart the ingest worker number 3?").answer   # the cache is a miss
        assert mem.show("ops/runbooks/r1.md")["title"] == "Runbook 1"
        assert len(mem.list("ops/runbooks")["entries"]) == 8
        assert len(mem.history()) == 8
        assert mem.stats()["queries"] >= 1
        assert mem.count() == 10
        report = mem.doctor()
        assert report.ok and report.entries == 8, report.to_dict()
    # a reader removed nothing (a failed open once reset the catalog) and left no rebuild behind
    assert index_files(home) - {"catalog.db-wal", "catalog.db-shm"} == indexed
    free(small_disk)
    with Memory.open(small_disk) as mem:
        mem.curate(CANARY)
        assert mem.search("canary zone")[0].path == "ops/deploys/canary.md"
        assert mem.doctor().ok


def test_a_search_by_meaning_answers_on_a_full_disk(small_disk):
    """Entries' vectors are computed and cannot be kept (vectors.db cannot even be created)."""
    seeded(small_disk)
    fill(small_disk)
    with Memory.open(small_disk, semantic_weight=0.5, embed_ahead=False) as mem:   # the search's own work
        for _ in range(2):
            hits = mem.search("how to bring the ingest worker back up")
            assert hits and hits[0].path.startswith("ops/runbooks/")


def test_cli_reads_answer_on_a_full_disk(small_disk):
    seeded(small_disk)
    fill(small_disk)
    runner = CliRunner()

    def run(*args: str) -> dict:
        done = runner.invoke(cli, ["--root", str(small_disk), "--no-server", "--json", *args], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)

    assert run("search", "restart ingest worker")["hits"]
    assert "drain" in run("query", "How do I restart the ingest worker number 5?")["answer"]
    assert run("show", "ops/runbooks/r2.md")["title"] == "Runbook 2"
    assert run("tree")["folders"]
    assert len(run("history")["operations"]) == 8
    assert run("stats")["queries"] >= 1
    assert run("doctor")["ok"]


def test_a_reader_on_a_full_disk_answers_from_the_index_as_it_is(small_disk):
    seeded(small_disk)
    home = small_disk / ".memgrove"
    (home / "tree" / "ops/runbooks/r2.md").write_text("# Runbook 2\n\nPage the zebra on-call first.\n")  # by hand
    indexed = index_files(home)
    fill(small_disk)
    with Memory.open(small_disk) as mem:
        for _ in range(3):
            assert mem.search("restart ingest worker")
            assert not mem.search("zebra")        # the index cannot take the edit in yet
        assert mem.tree.notices == ["the index could not be brought up to date (the disk is full); "
                                    "answers may lag the files"]
        assert index_files(home) - {"catalog.db-wal", "catalog.db-shm"} == indexed   # no rebuild was tried
        free(small_disk)
        assert mem.search("zebra")[0].path == "ops/runbooks/r2.md"   # caught up, same process
        assert mem.doctor().ok


def test_opening_a_full_disk_with_a_journaled_batch_still_pending(small_disk):
    seeded(small_disk)
    home = small_disk / ".memgrove"
    # a writer passed its commit point, then could not finish (its pending.json is left)
    last = [json.loads(line) for line in (home / "journal" / "journal.jsonl").read_text().splitlines()[-2:]]
    (home / "journal" / "pending.json").write_text(json.dumps({"records": last}))
    fill(small_disk)
    with Memory.open(small_disk) as mem:
        assert mem.search("restart ingest worker")
        assert mem.show("ops/runbooks/r7.md")["title"] == "Runbook 7"
        assert mem.doctor().entries == 8
    assert len(set(journal_ids(home))) == len(journal_ids(home)) == 8
    free(small_disk)
    with Memory.open(small_disk) as mem:
        assert not (home / "journal" / "pending.json").exists()
        assert mem.doctor().ok
        assert len(journal_ids(home)) == 8


def test_a_write_on_a_filling_disk_fails_cleanly_or_is_reported_done(small_disk):
    """Space comes back a page at a time: each attempt either fails before its commit point
    (NotWritable, nothing left) or succeeds, even when only the derived files could not follow."""
    seeded(small_disk)
    home = small_disk / ".memgrove"
    outcomes = []
    with Memory.open(small_disk, durable=True) as mem:
        fill(small_disk)
        for _ in range(200):
            assert free_pages(small_disk, 1), "the disk had room for the write long before this"
            journal = (home / "journal" / "journal.jsonl").read_bytes()
            try:
                result = mem.curate(CANARY)
            except NotWritable as exc:
                assert "nothing was written" in str(exc)
                assert (home / "journal" / "journal.jsonl").read_bytes() == journal
                assert not (home / "tree" / "ops/deploys/canary.md").exists()
                assert not (home / "journal" / "pending.failed").exists()
                outcomes.append("refused")
                continue
            assert result[0].status == "added"
            outcomes.append("saved, derived lagging" if any("lag it" in n for n in mem.tree.notices) else "saved")
            break
        assert outcomes[-1].startswith("saved") and "refused" in outcomes, outcomes
        assert mem.read("ops/deploys/canary.md").title == "Canary"
        assert journal_ids(home)[-1] == result[0].id
        free(small_disk)
        mem.curate([{"op": "ADD", "path": "ops/deploys/rollback.md", "title": "Rollback",
                     "content": "Roll back by redeploying the previous tag.", "reason": "after"}])
        assert not (home / "journal" / "pending.json").exists()
        assert mem.search("canary zone")[0].path == "ops/deploys/canary.md"
        assert mem.doctor().ok, mem.doctor().to_dict()
    assert len(journal_ids(home)) == len(set(journal_ids(home))) == len(SEED) + 2


def test_a_failure_past_the_commit_point_reports_the_write_done(tmp_path, monkeypatch):
    """Without a full disk: the index, the catalog and removing pending.json all fail after
    the journal append; the write is reported done, and the next writer only finishes it."""
    mem = Memory.open(tmp_path, create=True, durable=False)
    mem.curate(SEED)
    tree = mem.tree

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tree.catalog, "apply", full)
    monkeypatch.setattr(tree.engine, "write", no_space)
    monkeypatch.setattr(tree.journal, "clear_pending", no_space)
    result = mem.curate(CANARY)
    assert result[0].status == "added"
    assert any("the write is saved" in n for n in tree.notices)
    assert journal_ids(mem.home)[-1] == result[0].id
    assert (mem.home / "journal" / "pending.json").exists()
    monkeypatch.undo()
    # edited by hand before anyone finished the batch: finishing it must not write the entry again
    (tree.root / "ops/deploys/canary.md").write_text("# Canary\n\nOne zone, then all; edited by hand.\n")
    mem.close()
    with Memory.open(tmp_path) as mem:
        assert any("completed an interrupted batch" in n for n in mem.tree.notices)
        assert "edited by hand" in mem.read("ops/deploys/canary.md").body
        assert mem.search("canary zone")[0].path == "ops/deploys/canary.md"
        assert mem.doctor().ok
        assert len(journal_ids(mem.home)) == len(SEED) + 1


def test_a_write_whose_index_catch_up_finds_the_disk_full_is_refused_cleanly(tmp_path, monkeypatch):
    """Before planning, a write brings the index up to date with a hand edit; a full disk there
    (found by the reliability suite's served-disk section: answered 500 OSError) is ``NotWritable``
    with nothing written, and the write goes through once there is room."""
    mem = Memory.open(tmp_path, create=True, durable=False)
    mem.curate(SEED)
    tree = mem.tree
    (tree.root / "ops/runbooks/r0.md").write_text("# Runbook 0\n\nEdited by hand: drain first.\n")

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    ids = journal_ids(mem.home)
    monkeypatch.setattr(tree.engine, "write", no_space)
    with pytest.raises(NotWritable, match="the disk is full"):
        mem.curate(CANARY)
    assert not tree.exists("ops/deploys/canary.md") and journal_ids(mem.home) == ids
    monkeypatch.undo()
    assert mem.curate(CANARY)[0].status == "added"
    assert mem.search("drain first")[0].path == "ops/runbooks/r0.md"
    mem.close()


def test_a_catalog_update_on_a_full_disk_raises_the_disk_error(small_disk):
    """SQLite may roll a transaction back by itself when the disk fills: a ROLLBACK after that
    raised "cannot rollback - no transaction is active" in place of the disk error, which the
    write path then could not tell from a bug (answered 500 by the server)."""
    from memgrove.tree.index.catalog import Upsert

    seeded(small_disk)
    with Memory.open(small_disk) as mem:
        mem.search("drain flag")
        fill(small_disk)
        rows = [Upsert(f"bulk/rows/r{i}.md", "entry", (i, i), "t" * 200, [f"bulk/rows/r{i + 1}.md"], "h" * 64)
                for i in range(20_000)]
        with pytest.raises(sqlite3.OperationalError) as info:
            mem.tree.catalog.apply(rows, [], digest=1)
        assert "rollback" not in str(info.value)
        free(small_disk)
        assert mem.search("drain flag")


def test_the_index_update_after_a_full_disk_reads_the_catalog_as_it_is(tmp_path, monkeypatch):
    """A catalog read on a full disk comes from a view of the file as of its last checkpoint; an
    index update that took its old digest from such a view, then wrote through a connection that
    the returned space allowed, stored a digest no file state has: doctor said "index is out of
    step with the files" for good (found by the reliability suite's served-disk section)."""
    from memgrove.tree.base import sqlite as mg_sqlite
    from memgrove.tree.index.catalog import Catalog

    mem = Memory.open(tmp_path, create=True, durable=False)
    mem.curate(SEED[:4])
    catalog = mem.tree.catalog
    catalog._db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    mem.curate(SEED[4:])                                     # in the WAL only: a view does not see it
    other = sqlite3.connect(catalog.file)                    # another reader: the WAL stays a WAL
    other.execute("SELECT count(*) FROM files").fetchone()
    try:
        catalog.close()
        catalog._conns.keep(mg_sqlite._connect_read_only(catalog.file))   # what a full disk left behind
        assert catalog.digest() != Catalog(catalog.file).digest()         # a view of an older state
        # a long-lived process whose watcher saw no hand edit goes straight to the batch
        monkeypatch.setattr(mem.tree, "_sync_before_write", lambda: None)
        mem.curate(CANARY)                                   # space is back: this write's index update
        assert mem.doctor().ok, mem.doctor().problems
    finally:
        other.close()
        mem.close()

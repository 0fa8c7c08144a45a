"""Cancelling a write through its token (tree/writes/cancel.py): before the commit point it stops and
leaves nothing behind; after it, the write completes and is reported as done."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.writes import operations
from memgrove.tree.writes.cancel import CancelToken, cancelling
from memgrove.tree.base.errors import Cancelled


def _add(i: int, folder: str = "work/notes") -> dict:
    return {"op": "ADD", "path": f"{folder}/n{i}.md", "title": f"Note {i}", "content": f"body {i}", "reason": "test"}


def _left_nothing(mem: Memory, journal_before: int = 0) -> None:
    assert len(mem.history(limit=None)) == journal_before
    assert not mem.tree.journal.pending_file.exists()
    with mem.tree.lock.hold(timeout=0.0):     # free: a fresh writer has it at once
        pass


def test_a_token_cancelled_before_the_write_stops_it_at_once(mem):
    token = CancelToken()
    token.cancel("its client went away")
    with cancelling(token), pytest.raises(Cancelled) as exc:
        mem.curate([_add(1)])
    assert str(exc.value) == ("the write was cancelled before its commit point (its client went away); "
                              "nothing was written")
    assert exc.value.reason == "its client went away"
    assert exc.value.code == "cancelled"
    _left_nothing(mem)
    assert not (mem.tree.root / "work").exists()


def test_a_token_past_its_deadline_cancels_and_says_which_limit(mem):
    with cancelling(CancelToken(0.0, limit="request_timeout")), pytest.raises(Cancelled,
                                                                              match=r"ran past request_timeout \(0 s\)"):
        mem.curate([_add(1)])
    _left_nothing(mem)


def test_no_token_means_never_cancelled(mem):
    with cancelling(None):
        assert [r.status for r in mem.curate([_add(1)])] == ["added"]


def test_a_batch_cancelled_while_it_is_planned_writes_nothing(mem, monkeypatch):
    token = CancelToken()
    planned: list[str] = []
    real = operations.plan_one

    def plan_one(n, *a, **kw):
        if len(planned) == 50:
            token.cancel("test")
        planned.append(n["path"])
        return real(n, *a, **kw)

    monkeypatch.setattr(operations, "plan_one", plan_one)
    with cancelling(token), pytest.raises(Cancelled):
        mem.curate([_add(i) for i in range(200)])
    assert len(planned) == 51           # it stopped at the next operation
    _left_nothing(mem)
    assert not (mem.tree.root / "work").exists()


def test_a_batch_cancelled_between_its_file_writes_restores_every_before_image(mem, monkeypatch):
    mem.curate([_add(i) for i in range(6)])
    before = {p: (mem.tree.root / p).read_text() for p in mem.tree.entry_paths()}
    token = CancelToken()
    real = type(mem.tree)._write_file
    writes = {"n": 0}

    def write_file(self, rel, text, later=None, **kw):
        writes["n"] += 1
        if writes["n"] == 3:
            token.cancel("test")   # the next record's checkpoint stops the batch: two files are written
        return real(self, rel, text, later, **kw)

    monkeypatch.setattr(type(mem.tree), "_write_file", write_file)
    updates = [{"op": "UPDATE", "path": f"work/notes/n{i}.md", "content": f"changed {i}", "reason": "test",
                "replace": True} for i in range(6)]
    with cancelling(token), pytest.raises(Cancelled):
        mem.curate(updates)
    monkeypatch.undo()
    assert writes["n"] >= 3
    assert {p: (mem.tree.root / p).read_text() for p in mem.tree.entry_paths()} == before
    _left_nothing(mem, journal_before=6)


def test_after_the_commit_point_a_cancel_changes_nothing(mem, monkeypatch):
    token = CancelToken()
    real = type(mem.tree)._after_write

    def after_write(self, touched, overrides):
        token.cancel("test")          # the journal holds the batch: it stands and is reported
        return real(self, touched, overrides)

    monkeypatch.setattr(type(mem.tree), "_after_write", after_write)
    with cancelling(token):
        results = mem.curate([_add(1), _add(2)])
    assert [r.status for r in results] == ["added", "added"]
    assert len(mem.history(limit=None)) == 2
    assert mem.search("body")


def test_a_writer_waiting_for_the_lock_leaves_the_queue_when_cancelled(tmp_path: Path):
    with Memory.open(tmp_path / "p", create=True, durable=False, lock_timeout=120) as mem:
        held, release = threading.Event(), threading.Event()

        def holder() -> None:
            with mem.tree.lock.hold():
                held.set()
                release.wait(60)

        other = threading.Thread(target=holder)
        other.start()
        held.wait(10)
        token = CancelToken()
        outcome: list[BaseException | None] = []

        def waiter() -> None:
            try:
                with cancelling(token):
                    mem.curate([_add(1)])
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                outcome.append(exc)

        w = threading.Thread(target=waiter)
        w.start()
        while mem.tree.lock.waiting() == 0 and w.is_alive():
            w.join(0.01)
        token.cancel("its client went away")
        w.join(60)           # a hang guard: it would otherwise wait out lock_timeout (120 s)
        release.set()
        other.join(10)
        assert not w.is_alive() and isinstance(outcome[0], Cancelled), outcome
        assert mem.tree.lock.waiting() == 0
        _left_nothing(mem)


def test_an_ingest_cancelled_between_batches_says_what_it_wrote(mem, monkeypatch):
    token = CancelToken()
    real = type(mem.tree).curate

    def curate(self, ops, **kw):
        out = real(self, ops, **kw)
        token.cancel("its client went away")
        return out

    monkeypatch.setattr(type(mem.tree), "curate", curate)
    conversation = {"id": "c1", "messages": [{"id": str(i), "speaker": "user", "text": f"message {i}",
                                              "time": "2026-01-01T10:00:00Z"} for i in range(6)]}
    with cancelling(token), pytest.raises(Cancelled) as exc:
        mem.ingest(conversation=conversation, batch_size=2)
    assert str(exc.value) == ("the ingest was cancelled after 2 of 6 operations (its client went away); the first 2 "
                              "are written and journaled (see history), the rest is not")
    assert len(mem.history(limit=None)) == 2
    assert not mem.tree.journal.pending_file.exists()

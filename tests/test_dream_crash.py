"""A ``memgrove dream`` killed at any instant can be undone as a run, and undo never reaches past it
(tree/hygiene/dream.py, tree/hygiene/dream_undo.py); operations approved from a run's proposals stay linked to it.

A kill is simulated in a forked child that runs the library call and leaves by ``os._exit`` at the
chosen point: nothing of the run's own clean-up runs, as after a SIGKILL. The test's process then
opens the tree (which completes an interrupted batch) and undoes through the library or the CLI.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.hygiene import dream_state, review
from memgrove.tree.hygiene.dream import dream, undo_run
from memgrove.tree.base.errors import JournalError, OperationConflict
from memgrove.tree.hygiene.findings import Candidate

from helpers.dream_scan import add, duplicate, entries, link

KILLED = 9


def near(kept: str, dup: str) -> Candidate:
    return Candidate("near_duplicate", (kept, dup), "MERGE",
                     ({"op": "MERGE", "path": dup, "merge_into": kept, "reason": "nearly the same"},),
                     "high lexical overlap", 0.75)


N = 6   # notes n0..n5 in two folders; n3 is a copy of n0, n4 nearly n1


def note(i: int) -> str:
    return f"notes/t{i % 2}/n{i}.md"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A tree with one earlier run (a link n1-n2) already applied: what a killed run must never undo."""
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        for i in range(N):
            add(mem, note(i), {3: "Fact 0: the value is 0.", 4: "Fact 1: the value is one."}.get(
                i, f"Fact {i}: the value is {i}."))
        earlier = dream(mem.tree, candidates=[link(note(1), note(2))])
        assert earlier.applied
    return tmp_path / ".memgrove"


def work() -> list[Candidate]:
    """The killed run's candidates: a merge and two links to apply, a near duplicate to ask about."""
    return [duplicate(note(0), note(3)), link(note(0), note(5)), link(note(2), note(5)), near(note(1), note(4))]


def die(*_a, **_k) -> None:
    os._exit(KILLED)


def at_point(point: str) -> Callable[[], None]:
    """Patch, in the child, the instant it dies: ``decide`` (asking the model, before the batch),
    ``pending`` (the run recorded, its write-ahead not yet written), ``files`` (mid-batch: the
    write-ahead written and two files changed, the journal not yet appended), ``derive`` (after
    the commit point), ``queue`` (the batch done, proposals being queued)."""
    from memgrove.tree.writes import journal, write_path

    def patch() -> None:
        if point == "pending":
            journal.Journal.write_pending = die
        elif point == "files":
            real = write_path.WritePath._write_file
            seen = [0]

            def write_file(self, *a, **k):
                seen[0] += 1
                if seen[0] > 2:
                    die()
                return real(self, *a, **k)

            write_path.WritePath._write_file = write_file
        elif point == "derive":
            write_path.WritePath._settle = die
        elif point == "queue":
            review.queue = die
    return patch


def killed_run(home: Path, point: str, run: Callable[[], None] | None = None) -> None:
    """Fork a child that runs dream over ``home`` and dies at ``point``; wait for it (bounded)."""
    pid = os.fork()
    if pid == 0:       # the child: never returns into pytest
        code = 0
        try:
            at_point(point)()
            if run is not None:
                run()
            else:
                with Memory.open(home.parent, durable=False) as mem:
                    dream(mem.tree, candidates=work(), decide=die if point == "decide" else None)
        except BaseException:  # noqa: BLE001 - any way out but the kill is a failure of the test
            code = 3
        os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail(f"the dream child killed at {point!r} did not end within 60 s")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == KILLED, f"the child did not die at {point!r}"


def new_run(home: Path, before: list[str]) -> str:
    [rid] = [r for r in dream_state.run_ids(home) if r not in before]
    return rid


@pytest.mark.parametrize("point", ["decide", "pending"])
def test_a_run_killed_before_its_batch_applied_nothing_and_undo_leaves_the_earlier_run_alone(home, point):
    runs = dream_state.run_ids(home)
    before = entries(home)
    killed_run(home, point)
    rid = new_run(home, runs)                         # recorded before anything else
    with Memory.open(home.parent, durable=False) as mem:
        assert entries(home) == before
        with pytest.raises(JournalError) as err:
            undo_run(mem.tree)
        assert rid in str(err.value) and "applied nothing" in str(err.value)
        assert runs[0] in str(err.value)               # names the earlier run, to undo it by name
        assert entries(home) == before                 # ... and leaves it alone
        assert dream_state.load_run(home, runs[0])["status"] == "done"
        assert dream_state.load_run(home, rid)["status"] == "interrupted"


@pytest.mark.parametrize("point", ["files", "derive", "queue"])
def test_a_run_killed_during_or_after_its_batch_is_completed_and_undone_as_one(home, point):
    runs = dream_state.run_ids(home)
    before = entries(home)
    killed_run(home, point)
    rid = new_run(home, runs)
    with Memory.open(home.parent, durable=False) as mem:
        assert not mem.tree.exists(note(3))            # the batch is whole (rolled forward if cut)
        assert note(5) in mem.tree.read(note(0)).related
        out = undo_run(mem.tree)
    assert out["run"] == rid and out["operations"] == 5 and out["started"]
    assert entries(home) == before                     # the earlier run's link is still there
    assert dream_state.load_run(home, runs[0])["status"] == "done"


def cli_run(home: Path, *args: str):
    return CliRunner().invoke(cli, ["--no-server", "--root", str(home.parent), *args], catch_exceptions=False)


def test_the_cli_names_the_run_it_undoes_after_a_kill_mid_batch(home):
    runs = dream_state.run_ids(home)
    before = entries(home)
    killed_run(home, "files")
    rid = new_run(home, runs)
    res = cli_run(home, "dream", "--undo")
    assert res.exit_code == 0, res.output
    started = dream_state.load_run(home, rid)["started"]
    assert f"undid dream run {rid}" in res.output and started in res.output and "5 operation(s)" in res.output
    assert entries(home) == before


def test_the_cli_says_a_run_killed_before_its_batch_applied_nothing(home):
    runs = dream_state.run_ids(home)
    before = entries(home)
    killed_run(home, "decide")
    rid = new_run(home, runs)
    res = cli_run(home, "dream", "--undo", "--json")
    assert res.exit_code == 1
    message = json.loads(res.output)["error"]["message"]
    assert rid in message and "applied nothing" in message and f"memgrove dream --undo {runs[0]}" in message
    assert entries(home) == before


def test_a_run_that_applied_nothing_is_the_one_undo_names(home):
    """A finished run that applied nothing (all queued): ``--undo`` says so, never reaching past it."""
    runs = dream_state.run_ids(home)
    before = entries(home)
    with Memory.open(home.parent, durable=False) as mem:
        rep = dream(mem.tree, candidates=[near(note(1), note(4))])
        with pytest.raises(JournalError, match=f"dream run {rep.run} .*applied nothing"):
            undo_run(mem.tree)
    assert entries(home) == before and dream_state.load_run(home, runs[0])["status"] == "done"


# -- what a person approved from a run's proposals ---------------------------------------

def test_undo_of_a_run_whose_proposals_were_approved_lists_them_and_reverts_them_when_asked(home):
    before = entries(home)
    with Memory.open(home.parent, durable=False) as mem:
        rep = dream(mem.tree, candidates=[near(note(1), note(4))])     # queued, nothing applied
        [item] = review.pending(mem.tree)
        approved = review.approve(mem.tree, item.id)
        [op_id] = [r["id"] for r in approved.applied[0]["results"]]
        assert not mem.tree.exists(note(4))
        with pytest.raises(JournalError) as err:
            undo_run(mem.tree)
        message = str(err.value)
        assert rep.run in message and op_id in message and "--with-approved" in message
        assert not mem.tree.exists(note(4))                            # nothing reverted unasked
        out = undo_run(mem.tree, with_approved=True)
        assert out["run"] == rep.run and out["approved"] == [op_id] and out["operations"] == 1
        assert entries(home) == before
        with pytest.raises(JournalError, match="already undone"):
            undo_run(mem.tree, with_approved=True)


def test_undo_of_a_run_keeps_what_was_approved_from_it_unless_asked(home):
    with Memory.open(home.parent, durable=False) as mem:
        before = entries(home)
        rep = dream(mem.tree, candidates=[duplicate(note(0), note(3)), near(note(1), note(4))])
        [item] = review.pending(mem.tree)
        [op_id] = [r["id"] for r in review.approve(mem.tree, item.id).applied[0]["results"]]
        out = undo_run(mem.tree)                          # the run's own merge only
        assert out["run"] == rep.run and out["operations"] == 1 and out["approved_kept"] == [op_id]
        assert mem.tree.exists(note(3)) and not mem.tree.exists(note(4))
        out = undo_run(mem.tree, rep.run, with_approved=True)     # then what was approved from it
        assert out["approved"] == [op_id] and out["operations"] == 1
        assert entries(home) == before


def test_the_cli_offers_to_revert_what_was_approved(home):
    before = entries(home)
    with Memory.open(home.parent, durable=False) as mem:
        rep = dream(mem.tree, candidates=[near(note(1), note(4))])
    item = json.loads(cli_run(home, "review", "--json").output)[0]["id"]
    assert cli_run(home, "review", "approve", item).exit_code == 0
    res = cli_run(home, "dream", "--undo")
    assert res.exit_code == 1 and rep.run in res.output and "--with-approved" in res.output
    assert cli_run(home, "dream", "--with-approved").exit_code == 2          # only with --undo
    res = cli_run(home, "dream", "--undo", "--with-approved")
    assert res.exit_code == 0, res.output
    assert f"undid dream run {rep.run}" in res.output and "approved" in res.output
    assert entries(home) == before


def test_an_approval_killed_before_its_batch_links_nothing(home):
    """The link to the run is written before the approved batch: a kill between them leaves ids the
    journal never held, which undo leaves out."""
    with Memory.open(home.parent, durable=False) as mem:
        rep = dream(mem.tree, candidates=[near(note(1), note(4))])
        [item] = review.pending(mem.tree)

    def approve() -> None:
        with Memory.open(home.parent, durable=False) as m:
            review.approve(m.tree, item.id)

    killed_run(home, "pending", approve)
    with Memory.open(home.parent, durable=False) as mem:
        assert mem.tree.exists(note(4))
        with pytest.raises(JournalError, match=f"dream run {rep.run} .*applied nothing"):
            undo_run(mem.tree, with_approved=True)


def test_an_approval_in_the_way_of_the_runs_undo_is_named_and_reverted_with_it(home):
    with Memory.open(home.parent, durable=False) as mem:
        before = entries(home)
        rep = dream(mem.tree, candidates=[link(note(1), note(5)), near(note(1), note(4))])   # both touch n1
        [item] = review.pending(mem.tree)
        [op_id] = [r["id"] for r in review.approve(mem.tree, item.id).applied[0]["results"]]
        with pytest.raises(OperationConflict) as err:
            undo_run(mem.tree)
        assert rep.run in str(err.value) and op_id in str(err.value) and "--with-approved" in str(err.value)
        out = undo_run(mem.tree, with_approved=True)
        assert out["operations"] == 3 and out["approved"] == [op_id]
        assert entries(home) == before

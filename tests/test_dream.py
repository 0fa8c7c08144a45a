"""``memgrove dream`` in the library: what a run applies, asks the model about, queues; its record,
its lock, its budget, and undoing a run exactly (tree/hygiene/dream.py, tree/hygiene/dream_state.py)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memgrove.tree.hygiene import dream as dream_mod, dream_state, review
from memgrove.tree.hygiene.dream import Decision, dream, undo_run
from memgrove.tree.base.errors import DreamRunning, JournalError, OperationConflict
from memgrove.tree.hygiene.findings import Candidate

from helpers.dream_scan import add, duplicate, entries, link

TEXT = "The staging database listens on port 6543 since March 2026."


def near(kept: str, dup: str, confidence: float = 0.75) -> Candidate:
    return Candidate("near_duplicate", (kept, dup), "MERGE",
                     ({"op": "MERGE", "path": dup, "merge_into": kept, "reason": "nearly the same"},),
                     "high lexical overlap", confidence)


@pytest.fixture
def seeded(mem):
    add(mem, "infra/db/staging_port.md", TEXT, sources=[{"kind": "conversation", "ref": "c1#m1"}])
    add(mem, "chats/day1/staging_port_again.md", TEXT, sources=[{"kind": "conversation", "ref": "c2#m7"}])
    add(mem, "infra/db/staging_host.md", "The staging database runs on db-stage-1.")
    add(mem, "infra/db/staging_backup.md", "Staging backups run nightly at 02:00.")
    add(mem, "infra/db/staging_backups.md", "Staging backups run every night at 02:00 UTC.")
    return mem


def test_a_run_applies_duplicates_and_links_and_queues_the_rest(seeded):
    tree = seeded.tree
    cands = [duplicate("infra/db/staging_port.md", "chats/day1/staging_port_again.md"),
             link("infra/db/staging_port.md", "infra/db/staging_host.md"),
             near("infra/db/staging_backups.md", "infra/db/staging_backup.md")]
    rep = dream(tree, candidates=cands)
    status = {r["kind"]: r["status"] for r in rep.candidates}
    assert status == {"duplicate": "applied", "link": "applied", "near_duplicate": "queued"}
    assert not tree.exists("chats/day1/staging_port_again.md")
    kept = tree.read("infra/db/staging_port.md")
    assert {s["ref"] for s in kept.sources} == {"c1#m1", "c2#m7"}            # every source kept
    assert "infra/db/staging_host.md" in kept.related
    assert "infra/db/staging_port.md" in tree.read("infra/db/staging_host.md").related
    assert tree.exists("infra/db/staging_backup.md")                          # queued, not merged
    [item] = review.pending(tree)
    assert item.proposed_by == "dream" and item.run == rep.run
    # the run is recorded with the ids of what it applied, all journaled by "dream"
    run = dream_state.load_run(tree.home, rep.run)
    assert run["applied"] == rep.applied and len(rep.applied) == 3
    assert {r.actor for r in tree.history(limit=3)} == {"dream"}
    assert rep.counts() == {"duplicate": {"found": 1, "applied": 1, "queued": 0},
                            "link": {"found": 1, "applied": 1, "queued": 0},
                            "near_duplicate": {"found": 1, "applied": 0, "queued": 1}}


def test_dry_run_writes_nothing(seeded, snapshot):
    before = snapshot()
    rep = dream(seeded.tree, dry_run=True, candidates=[duplicate("infra/db/staging_port.md",
                                                                 "chats/day1/staging_port_again.md")])
    assert rep.run is None and [r["status"] for r in rep.candidates] == ["found"]
    assert snapshot() == before and not review.pending(seeded.tree)
    assert not dream_state.run_ids(seeded.home)


def test_undo_restores_every_file_of_the_run_byte_for_byte(seeded):
    tree = seeded.tree
    before = entries(tree.home)
    rep = dream(tree, candidates=[duplicate("infra/db/staging_port.md", "chats/day1/staging_port_again.md"),
                                  link("infra/db/staging_port.md", "infra/db/staging_host.md"),
                                  link("infra/db/staging_backup.md", "infra/db/staging_host.md")])
    assert entries(tree.home) != before
    out = undo_run(tree)                       # default: the last run
    assert out["run"] == rep.run and out["status"] == "undone"
    assert entries(tree.home) == before
    assert dream_state.load_run(tree.home, rep.run)["status"] == "undone"
    with pytest.raises(JournalError, match="already undone"):
        undo_run(tree, rep.run)
    # the undo is itself journaled: undoing those UNDOs brings the run back
    assert [r.op for r in tree.history(limit=len(out["undo"]))] == ["UNDO"] * len(out["undo"])


def test_undo_refuses_when_a_file_changed_since_and_force_undoes_anyway(seeded):
    tree = seeded.tree
    before = entries(tree.home)
    rep = dream(tree, candidates=[link("infra/db/staging_port.md", "infra/db/staging_host.md")])
    seeded.curate([{"op": "UPDATE", "path": "infra/db/staging_host.md", "summary": "edited later",
                    "reason": "a later edit"}])
    with pytest.raises(OperationConflict, match=f"cannot undo dream run {rep.run}.*staging_host.md"):
        undo_run(tree)
    assert tree.read("infra/db/staging_host.md").summary == "edited later"   # nothing written
    undo_run(tree, rep.run, force=True)
    assert entries(tree.home) == before


def test_a_rejected_change_is_not_proposed_again(seeded):
    tree = seeded.tree
    c = near("infra/db/staging_backups.md", "infra/db/staging_backup.md")
    dream(tree, candidates=[c])
    review.reject(tree, all_items=True)
    rep = dream(tree, candidates=[near("infra/db/staging_backups.md", "infra/db/staging_backup.md", 0.9)])
    assert [r["status"] for r in rep.candidates] == ["rejected"]
    assert not review.pending(tree)


def test_a_change_already_pending_is_not_queued_twice(seeded):
    tree = seeded.tree
    dream(tree, candidates=[near("infra/db/staging_backups.md", "infra/db/staging_backup.md")])
    rep = dream(tree, candidates=[near("infra/db/staging_backups.md", "infra/db/staging_backup.md")])
    assert rep.candidates[0]["status"] == "queued" and len(review.pending(tree)) == 1


def test_a_candidate_touching_an_entry_merged_by_the_run_is_skipped(seeded):
    tree = seeded.tree
    rep = dream(tree, candidates=[link("chats/day1/staging_port_again.md", "infra/db/staging_host.md"),
                                  duplicate("infra/db/staging_port.md", "chats/day1/staging_port_again.md")])
    by_kind = {r["kind"]: r for r in rep.candidates}
    assert by_kind["duplicate"]["status"] == "applied"
    assert by_kind["link"]["status"] == "skipped" and "merged" in by_kind["link"]["note"]


def test_one_invalid_candidate_does_not_stop_the_others(seeded):
    tree = seeded.tree
    rep = dream(tree, candidates=[link("infra/db/staging_port.md", "infra/db/gone.md"),
                                  link("infra/db/staging_port.md", "infra/db/staging_host.md")])
    assert [r["status"] for r in rep.candidates] == ["failed", "applied"]
    assert "gone.md" in rep.candidates[0]["error"]


def test_the_model_decides_confident_links_and_queues_merges_and_unsure_ones(seeded):
    tree = seeded.tree
    asked = []

    def decide(c: Candidate) -> Decision:
        asked.append(c.paths)
        if c.paths[1] == "infra/db/staging_backup.md":
            return Decision("MERGE", c.ops, 0.95, "the same schedule")           # MERGE waits for review
        if c.paths[1] == "infra/db/staging_host.md":
            return Decision("LINK", (
                {"op": "UPDATE", "path": c.paths[0], "related": [c.paths[1]], "reason": "same database"},), 0.9,
                "both about the staging database")
        return Decision("LINK", ({"op": "UPDATE", "path": c.paths[0], "related": [c.paths[1]],
                                  "reason": "maybe"},), 0.5, "not sure")

    rep = dream(tree, decide=decide, candidates=[
        near("infra/db/staging_backups.md", "infra/db/staging_backup.md"),
        near("infra/db/staging_port.md", "infra/db/staging_host.md"),
        near("infra/db/staging_port.md", "chats/day1/staging_port_again.md")])
    assert len(asked) == 3 and rep.model_calls == 3
    assert [r["status"] for r in rep.candidates] == ["queued", "applied", "queued"]
    assert rep.candidates[1]["action"] == "LINK" and rep.candidates[1]["confidence"] == 0.9
    assert "infra/db/staging_host.md" in tree.read("infra/db/staging_port.md").related
    assert {i.proposed_by for i in review.pending(tree)} == {"model"}


def test_a_skip_from_the_model_is_skipped(seeded):
    rep = dream(seeded.tree, decide=lambda c: Decision("SKIP", (), 0.9, "unrelated"),
                candidates=[near("infra/db/staging_backups.md", "infra/db/staging_backup.md")])
    assert rep.candidates[0]["status"] == "skipped" and not review.pending(seeded.tree)


def test_the_budget_stops_asking_the_model_and_queues_the_rest(seeded):
    ticks = iter(range(0, 1000, 10))
    calls = []

    def decide(c):
        calls.append(c)
        return Decision("SKIP", (), 0.9, "no")

    rep = dream(seeded.tree, decide=decide, budget_s=15, clock=lambda: float(next(ticks)), candidates=[
        near("infra/db/staging_backups.md", "infra/db/staging_backup.md"),
        near("infra/db/staging_port.md", "infra/db/staging_host.md"),
        near("infra/db/staging_port.md", "chats/day1/staging_port_again.md")])
    assert len(calls) == 1 and rep.budget_hit
    assert [r["status"] for r in rep.candidates] == ["skipped", "queued", "queued"]


def test_runs_never_overlap(seeded):
    holding, release = threading.Event(), threading.Event()
    errors = []

    def slow(c):
        holding.set()
        release.wait(10)
        return None

    t = threading.Thread(target=lambda: dream(seeded.tree, decide=slow, candidates=[
        near("infra/db/staging_backups.md", "infra/db/staging_backup.md")]))
    t.start()
    try:
        assert holding.wait(10)
        try:
            dream(seeded.tree, candidates=[])
        except DreamRunning as exc:
            errors.append(exc)
    finally:
        release.set()
        t.join(10)
    assert errors and "already running" in str(errors[0])
    dream(seeded.tree, candidates=[])          # free again once the first is done


def test_idle_gates(tmp_path):
    """Due after dream_idle_hours and dream_min_curations; curations are batches (a time and an actor)."""
    from memgrove import Memory

    ticks = iter(datetime(2026, 3, 1, tzinfo=timezone.utc) + timedelta(minutes=i) for i in range(10_000))
    mem = Memory.open(tmp_path / "p", create=True, durable=False, clock=lambda: next(ticks))
    tree = mem.tree
    now = datetime.now(timezone.utc)
    for i in range(2):
        add(mem, f"notes/n/first_{i}.md", f"first {i}")
    due, why = dream_state.idle_due(tree.home, tree.journal, 12, 3, now)
    assert not due and "2 curation" in why
    add(mem, "notes/n/first_2.md", "first 2")
    assert dream_state.idle_due(tree.home, tree.journal, 12, 3, now)[0]   # never ran, 3 curations
    dream(tree, candidates=[], now=now)
    due, why = dream_state.idle_due(tree.home, tree.journal, 12, 3, now + timedelta(hours=13))
    assert not due and "0 curation" in why
    for i in range(3):
        add(mem, f"notes/n/note_{i}.md", f"note {i}")
    due, why = dream_state.idle_due(tree.home, tree.journal, 12, 3, now + timedelta(hours=1))
    assert not due and "h ago" in why
    assert dream_state.idle_due(tree.home, tree.journal, 12, 3, now + timedelta(hours=13))[0]
    mem.close()


def test_needs_review_by_settings(tree):
    s = tree.settings
    assert dream_mod.needs_review([{"op": "MERGE"}], 0.99, s)
    assert dream_mod.needs_review([{"op": "UPDATE"}], 0.5, s)
    assert not dream_mod.needs_review([{"op": "UPDATE"}], 0.8, s)
    assert not dream_mod.needs_review([{"op": "MERGE"}], 0.9, s.replace(review_ops="DELETE"))


def test_the_dream_candidates_tool_lists_without_changing(seeded, monkeypatch, snapshot):
    import json

    from helpers.dream_scan import fake_scan
    from memgrove.tools import dream_candidates_tool

    fake_scan(monkeypatch, [duplicate("infra/db/staging_port.md", "chats/day1/staging_port_again.md"),
                            near("infra/db/staging_backups.md", "infra/db/staging_backup.md")])
    tool = dream_candidates_tool(seeded)
    before = snapshot()
    out = json.loads(tool.invoke({}))
    assert [c["kind"] for c in out["candidates"]] == ["duplicate", "near_duplicate"]
    assert out["candidates"][0]["ops"][0]["op"] == "MERGE"
    assert [c["kind"] for c in json.loads(tool.invoke({"kinds": ["near_duplicate"]}))["candidates"]] == \
        ["near_duplicate"]
    assert tool.invoke({"kinds": ["nope"]}).startswith("Error: unknown kind")
    assert snapshot() == before


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["dup", "link"]), st.integers(0, 5), st.integers(0, 5)), max_size=8))
def test_any_run_is_undone_byte_for_byte(tmp_path_factory, plan):
    """Runs of overlapping merges and links (some invalid, some touching merged entries): undo
    always brings every entry back exactly."""
    from memgrove import Memory

    paths = [f"notes/t{i % 2}/n{i}.md" for i in range(6)]
    with Memory.open(tmp_path_factory.mktemp("prop"), create=True, durable=False) as mem:
        for i, p in enumerate(paths):
            add(mem, p, f"Fact {i % 3}: the value is {i % 3}.", related=[paths[(i + 1) % 6]] if i % 2 else [])
        before = entries(mem.home)
        cands = [duplicate(paths[a], paths[b]) if kind == "dup" else link(paths[a], paths[b])
                 for kind, a, b in plan if a != b]
        rep = dream(mem.tree, candidates=cands)
        if rep.applied:
            undo_run(mem.tree)
        assert entries(mem.home) == before


def test_archive_candidates_always_wait_and_are_not_sent_to_the_model(seeded):
    asked = []
    archive = Candidate("archive", ("infra/db/staging_backup.md",), "ARCHIVE",
                        ({"op": "ARCHIVE", "path": "infra/db/staging_backup.md", "reason": "never retrieved"},),
                        "never retrieved, low importance, old", 0.9)
    rep = dream(seeded.tree, decide=lambda c: asked.append(c), candidates=[archive])
    assert not asked and [r["status"] for r in rep.candidates] == ["queued"] and not rep.budget_hit


def test_a_real_scan_end_to_end(mem):
    """With tree/hygiene/scan.py: chats said twice become one entry holding both sources, and undo restores them."""
    pytest.importorskip("memgrove.tree.hygiene.scan")
    conv = {"id": "team", "messages": [
        {"id": "m1", "speaker": "Ana", "time": "2026-03-02T09:15:00Z",
         "text": "The staging database listens on port 6543 since March 2026."},
        {"id": "m2", "speaker": "Ben", "time": "2026-03-02T09:16:00Z",
         "text": "Backups of the staging database run nightly at 02:00 UTC."}]}
    again = {"id": "team_export_2", "messages": [dict(m, time="2026-03-09T10:00:00Z") for m in conv["messages"]]}
    mem.ingest(conversation=conv)
    mem.ingest(conversation=again)
    before = entries(mem.home)
    out = mem.dream()
    dups = [c for c in out["candidates"] if c["kind"] == "duplicate"]
    assert len(dups) == 2 and {c["status"] for c in dups} == {"applied"}
    for c in dups:
        kept = mem.read(c["paths"][0])
        assert {s["ref"].split("#")[0] for s in kept.sources} == {"team", "team_export_2"}
        assert not mem.tree.exists(c["paths"][1])
    assert not [c for c in mem.dream(dry_run=True)["candidates"] if c["kind"] == "duplicate"]
    mem.dream(undo=True)
    assert entries(mem.home) == before

"""The review queue (tree/hygiene/review.py): pending items, approve with re-validation, reject remembered."""

from __future__ import annotations

import json

import pytest

from memgrove.tree.hygiene import review
from memgrove.tree.base.errors import InvalidInput, ItemNotFound, ReviewConflict
from memgrove.tree.hygiene.findings import Candidate


def add(mem, path: str, content: str) -> None:
    mem.curate([{"op": "ADD", "path": path, "title": path.rsplit("/", 1)[-1][:-3], "content": content,
                 "reason": "test"}])


def merge(kept: str, dup: str) -> Candidate:
    return Candidate("near_duplicate", (kept, dup), "MERGE",
                     ({"op": "MERGE", "path": dup, "merge_into": kept, "reason": "nearly the same"},),
                     "high lexical overlap", 0.7, {"overlap": 0.9})


@pytest.fixture
def queued(mem):
    add(mem, "ops/backups/nightly.md", "Backups run nightly at 02:00.")
    add(mem, "ops/backups/every_night.md", "Backups run every night at 02:00 UTC.")
    add(mem, "ops/deploys/friday.md", "No deploys on Fridays.")
    add(mem, "ops/deploys/no_friday.md", "We never deploy on a Friday.")
    tree = mem.tree
    a = review.queue(tree, merge("ops/backups/every_night.md", "ops/backups/nightly.md"), proposed_by="dream")
    b = review.queue(tree, merge("ops/deploys/no_friday.md", "ops/deploys/friday.md"), proposed_by="model")
    return mem, a, b


def test_an_item_is_one_json_file_with_the_digests_of_what_it_touches(queued):
    mem, a, _ = queued
    data = json.loads((mem.home / "review" / "pending" / f"{a.id}.json").read_text())
    assert data["candidate"]["kind"] == "near_duplicate" and data["proposed_by"] == "dream"
    assert set(data["before"]) == {"ops/backups/every_night.md", "ops/backups/nightly.md"}
    assert all(len(d) == 16 for d in data["before"].values())
    assert [i.id for i in review.pending(mem.tree)] == [a.id, queued[2].id]
    assert review.show(mem.tree, a.id[:6]) == a            # a prefix is enough
    with pytest.raises(ItemNotFound):
        review.show(mem.tree, "zzzzzz")
    with pytest.raises(ItemNotFound):
        review.show(mem.tree, "../x")


def test_queueing_the_same_change_twice_keeps_one_item(queued):
    mem, a, _ = queued
    again = review.queue(mem.tree, merge("ops/backups/every_night.md", "ops/backups/nightly.md"),
                         proposed_by="dream")
    assert again == a and len(review.pending(mem.tree)) == 2


def test_approve_applies_as_one_journaled_batch_and_leaves_the_queue(queued):
    mem, a, b = queued
    rep = review.approve(mem.tree, all_items=True)
    assert [x["id"] for x in rep.applied] == [a.id, b.id] and not rep.conflicts
    assert not mem.tree.exists("ops/backups/nightly.md") and not mem.tree.exists("ops/deploys/friday.md")
    assert not review.pending(mem.tree)
    recent = mem.tree.history(limit=2)
    assert {r.op for r in recent} == {"MERGE"} and {r.actor for r in recent} == {"review"}
    assert len({r.at for r in recent}) == 1                  # one batch


def test_approve_refuses_an_item_whose_files_changed_since(queued):
    mem, a, b = queued
    mem.curate([{"op": "UPDATE", "path": "ops/backups/nightly.md", "summary": "moved to 03:00",
                 "reason": "a later edit"}])
    with pytest.raises(ReviewConflict, match="ops/backups/nightly.md changed since"):
        review.approve(mem.tree, a.id)
    assert mem.tree.exists("ops/backups/nightly.md")          # never a blind overwrite
    rep = review.approve(mem.tree, all_items=True)           # the others still go
    assert [x["id"] for x in rep.applied] == [b.id] and [x["id"] for x in rep.conflicts] == [a.id]
    assert [i.id for i in review.pending(mem.tree)] == [a.id]


def test_a_hand_edit_is_a_conflict_too(queued):
    mem, a, _ = queued
    p = mem.home / "tree" / "ops" / "backups" / "every_night.md"
    p.write_text(p.read_text() + "\nEdited by hand.\n")
    with pytest.raises(ReviewConflict):
        review.approve(mem.tree, a.id)


def test_reject_is_remembered_by_key(queued):
    mem, a, b = queued
    assert review.reject(mem.tree, a.id) == [a]
    assert [i.id for i in review.pending(mem.tree)] == [b.id]
    assert a.candidate["key"] in review.rejected_keys(mem.home)
    # proposed again: not queued
    assert review.queue(mem.tree, merge("ops/backups/every_night.md", "ops/backups/nightly.md"),
                        proposed_by="dream") is None
    assert review.reject(mem.tree, all_items=True) == [b]
    assert not review.pending(mem.tree)
    assert mem.tree.exists("ops/backups/nightly.md")          # rejecting writes nothing to the tree


def test_bad_calls(queued):
    mem, *_ = queued
    with pytest.raises(InvalidInput):
        review.approve(mem.tree)
    with pytest.raises(InvalidInput):
        review.reject(mem.tree)
    with pytest.raises(InvalidInput):
        review.queue(mem.tree, {"kind": "curate", "paths": [], "ops": []}, proposed_by="model")
    with pytest.raises(InvalidInput):
        review.queue(mem.tree, merge("a/b/c.md", "a/b/d.md"), proposed_by="someone")


def test_an_item_that_no_longer_applies_is_reported(queued):
    mem, *_ = queued
    item = review.queue(mem.tree, review.proposal([{"op": "DELETE", "path": "ops/none/missing.md",
                                                    "reason": "stale"}]), proposed_by="model")
    with pytest.raises(ReviewConflict, match="no longer applies"):
        review.approve(mem.tree, item.id)
    assert item.id in {i.id for i in review.pending(mem.tree)}


def test_both_engines_see_an_approved_merge(queued):
    mem, a, _ = queued
    review.approve(mem.tree, a.id)
    hits = mem.search("backups 02:00")
    assert [h.path for h in hits if h.kind == "entry"] == ["ops/backups/every_night.md"]


def test_approving_all_drops_an_item_whose_entry_another_item_merged_away(queued):
    """Two waiting changes about one entry: the first merges it away, so the second cannot apply as
    proposed. It leaves the queue as obsolete (dream proposes it again over the merged entry)."""
    mem, a, b = queued
    link = review.queue(mem.tree, review.proposal([
        {"op": "UPDATE", "path": "ops/backups/nightly.md", "related": ["ops/deploys/friday.md"],
         "reason": "related"}], kind="link"), proposed_by="dream")
    rep = review.approve(mem.tree, all_items=True)
    assert [x["id"] for x in rep.applied] == [a.id, b.id]
    assert [x["id"] for x in rep.obsolete] == [link.id] and "left the tree" in rep.obsolete[0]["message"]
    assert not review.pending(mem.tree) and not rep.failed

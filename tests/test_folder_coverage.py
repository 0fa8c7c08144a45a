"""Folder coverage in search (``folder_weight``) and the ``keywords`` field.

A folder (a session, a topic) whose entries between them match more of a
question's terms lifts each of its hits; keywords are searchable in a field of
their own without being part of the entry's text.
"""

from __future__ import annotations

import pytest

from memgrove import Memory, MemgroveError
from memgrove.tree.search import with_folder_coverage

SAME = "We went on a hike, the kids loved it."
OPS = [
    # the same words in two sessions; only the first session also speaks of the road trip
    {"op": "ADD", "path": "chat/s1/hike.md", "title": "Mel, 20 October", "content": SAME, "reason": "r"},
    {"op": "ADD", "path": "chat/s1/trip.md", "title": "Mel, 20 October",
     "content": "The road trip this past weekend was long.", "reason": "r"},
    {"op": "ADD", "path": "chat/s2/hike.md", "title": "Mel, 20 October", "content": SAME, "reason": "r"},
    {"op": "ADD", "path": "chat/s2/garden.md", "title": "Mel, 20 October",
     "content": "The garden needs water.", "reason": "r"},
]


def entries(hits):
    return [(h.path, h.score) for h in hits if h.kind == "entry"]


def test_without_folder_weight_equal_entries_score_alike(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, folder_weight=0.0, link_weight=0.0) as m:
        m.curate(OPS)
        scores = dict(entries(m.search("hike after the road trip")))
        assert scores["chat/s1/hike.md"] == pytest.approx(scores["chat/s2/hike.md"])


def test_the_folder_that_covers_the_question_ranks_its_entry_first(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, folder_weight=0.5, link_weight=0.0) as m:
        m.curate(OPS)
        hits = entries(m.search("hike after the road trip"))
        order = [p for p, _ in hits]
        assert order.index("chat/s1/hike.md") < order.index("chat/s2/hike.md")
        scores = dict(hits)
        assert scores["chat/s1/hike.md"] > scores["chat/s2/hike.md"]
        assert "chat/s2/garden.md" not in scores          # coverage reorders hits, it adds none


def test_with_folder_coverage_is_a_pure_rescoring():
    idf = {"hike": 1.0, "road": 2.0, "trip": 1.0}
    raw = [("a/x.md", 10.0, frozenset({"hike"})), ("b/y.md", 10.0, frozenset({"hike"})),
           ("a/z.md", 4.0, frozenset({"road", "trip"}))]
    out = with_folder_coverage(raw, idf, 0.5)
    # folder a covers all of the query (4/4), folder b a quarter of it
    assert out == [("a/x.md", 15.0, frozenset({"hike"})), ("b/y.md", 11.25, frozenset({"hike"})),
                   ("a/z.md", 9.0, frozenset({"road", "trip"}))]
    assert with_folder_coverage(raw, idf, 0.0) == raw
    assert with_folder_coverage([], idf, 0.5) == []


def test_folder_weight_is_checked(tmp_path):
    with pytest.raises(MemgroveError, match="folder_weight must be between 0 and 2"):
        Memory.open(tmp_path, create=True, folder_weight=-0.1)


def test_keywords_are_searchable_but_not_text(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": "chat/s1/a.md", "title": "Ana, 8 May", "content": "My friend got me into it.",
                   "keywords": ["watercolor", "painting"], "reason": "r"},
                  {"op": "ADD", "path": "chat/s1/b.md", "title": "Ana, 9 May", "content": "The lake was cold.",
                   "reason": "r"}])
        hits = entries(m.search("watercolor"))
        assert [p for p, _ in hits] == ["chat/s1/a.md"]
        assert "watercolor" not in m.read("chat/s1/a.md").body
        # changing only the keywords re-indexes the entry
        m.curate([{"op": "UPDATE", "path": "chat/s1/b.md", "keywords": ["swimming"], "reason": "r"}])
        assert [p for p, _ in entries(m.search("swimming"))] == ["chat/s1/b.md"]


def test_signals_still_order_near_ties_under_a_folder_lift(tmp_path):
    # two identical entries in one folder, one of them important: the folder lifts both alike,
    # and importance moves them apart by the same amount (on the 0..1 scale) with or without the lift
    same = "Numbat habitat in the eucalyptus woodland."
    ops = [{"op": "ADD", "path": "wild/life/first.md", "title": "Notes one", "content": same, "reason": "r"},
           {"op": "ADD", "path": "wild/life/second.md", "title": "Notes two", "content": same, "reason": "r"},
           {"op": "ADD", "path": "wild/life/third.md", "title": "Notes three", "content": "Termite mounds.",
            "reason": "r"}]
    gaps, third = {}, {}
    for weight in (0.0, 0.5):
        with Memory.open(tmp_path / str(weight), create=True, durable=False, profile="product", link_weight=0.0,
                         folder_weight=weight) as m:
            m.curate(ops)
            for _ in range(7):
                m.tree.signals.record_update(["wild/life/second.md"])
            hits = entries(m.search("numbat habitat termite"))
            order = [p for p, _ in hits]
            assert order[:2] == ["wild/life/second.md", "wild/life/first.md"]
            scores = dict(hits)
            gaps[weight] = scores["wild/life/second.md"] - scores["wild/life/first.md"]
            third[weight] = scores["wild/life/third.md"]
    # scores are divided by 1 + weight to stay on the 0..1 scale; the gap is otherwise unchanged
    assert gaps[0.5] * 1.5 == pytest.approx(gaps[0.0]) and gaps[0.0] > 0
    # the folder covers the whole question: the weak hit is lifted toward the others
    assert third[0.5] > third[0.0]

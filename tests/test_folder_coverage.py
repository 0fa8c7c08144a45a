"""Folder coverage in search (``folder_weight``) and the ``keywords`` field.

A folder (a session, a topic) whose entries between them match more of a
question's terms lifts each of its hits; keywords are searchable in a field of
their own without being part of the entry's text.
"""

from __future__ import annotations

import pytest

from memgrove import Memory, MemgroveError
from memgrove.tree.ranking import lifts as search
from memgrove.tree.ranking.lifts import with_folder_coverage

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


def test_a_folder_covers_the_query_with_its_best_candidates_only():
    # folder "long" matches each word of the question somewhere among its many weak candidates;
    # folder "short" holds the entries that match it best. Only each folder's best FOLDER_BEST count.
    idf = {"hike": 1.0, "road": 1.0, "trip": 1.0, "kids": 1.0}
    assert search.FOLDER_BEST == 3
    raw = [("short/a.md", 10.0, frozenset({"hike", "road"})), ("long/a.md", 9.0, frozenset({"hike"})),
           ("short/b.md", 8.0, frozenset({"trip"})), ("long/b.md", 3.0, frozenset({"hike"})),
           ("long/c.md", 2.5, frozenset({"hike"})), ("long/d.md", 2.0, frozenset({"road", "trip"})),
           ("long/e.md", 1.0, frozenset({"kids"}))]
    out = dict((p, s) for p, s, _ in with_folder_coverage(raw, idf, 0.5))
    # short: hike road trip (3/4); long: hike, from its best three (1/4), not all four words
    assert out["short/a.md"] == pytest.approx(10.0 + 0.5 * 10.0 * 0.75)
    assert out["long/a.md"] == pytest.approx(9.0 + 0.5 * 10.0 * 0.25)
    # counting every candidate, as before, lifted the long folder's best above the short one's
    every = dict((p, s) for p, s, _ in with_folder_coverage(raw, idf, 0.5, best=len(raw)))
    assert every["long/a.md"] == pytest.approx(9.0 + 0.5 * 10.0)
    assert every["long/a.md"] > every["short/a.md"]
    assert out["long/a.md"] < out["short/a.md"]
    # a muted entry (an AI assistant's) takes no place among a folder's best: long/b, c and d count
    muted = dict((p, s) for p, s, _ in with_folder_coverage(raw, idf, 0.5, {"long/a.md": 0.5}))
    assert muted["long/b.md"] == pytest.approx(3.0 + 0.5 * 10.0 * 0.75)


@pytest.mark.parametrize("best", [None, 100])
def test_a_long_session_that_matches_every_word_by_chance_does_not_outrank_the_answer(tmp_path, monkeypatch, best):
    # session s1 holds the answer; s2 a longer message on the same topic, two more about pottery and,
    # among its many messages, one that happens to say "monthly": between all of them s2 covers the
    # whole question, between its best three (FOLDER_BEST) no more of it than s1
    ops = [{"op": "ADD", "path": "chat/s1/a.md", "title": "Mel", "content": "My pottery class budget.", "reason": "r"},
           {"op": "ADD", "path": "chat/s1/e.md", "title": "Mel", "content": "We walked the dog.", "reason": "r"},
           {"op": "ADD", "path": "chat/s2/b.md", "title": "Mel",
            "content": "The pottery class budget we set, again.", "reason": "r"},
           {"op": "ADD", "path": "chat/s2/c.md", "title": "Mel", "content": "The pottery class was fun.", "reason": "r"},
           {"op": "ADD", "path": "chat/s2/f.md", "title": "Mel", "content": "Pottery glaze colours.", "reason": "r"},
           {"op": "ADD", "path": "chat/s2/d.md", "title": "Mel",
            "content": "The garden, the dog, the lake and the monthly bus pass were all on the list today.",
            "reason": "r"}]
    ops += [{"op": "ADD", "path": f"chat/s2/m{i}.md", "title": "Mel", "content": f"A note about the garden, number {i}.",
             "reason": "r"} for i in range(6)]
    with Memory.open(tmp_path, create=True, durable=False, link_weight=0.0, near_weight=0.0) as m:
        m.curate(ops)
        if best is not None:      # every candidate counted, as before: the long session wins
            monkeypatch.setattr(search, "FOLDER_BEST", best)
        hits = entries(m.search("pottery class budget monthly"))
        order = [p for p, _ in hits]
        assert (order[0] == "chat/s1/a.md") == (best is None), hits


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

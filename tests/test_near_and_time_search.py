"""Search lifts by neighbourhood and time (``near_weight``, ``date_weight``, ``when_weight``) and the
lower rank of an entry that mostly asks (``ask_penalty``).

Each compares two entries with the same words, so their own BM25 scores tie and
only the lift can order them; with the weight at 0 they tie again.
"""

from __future__ import annotations

from datetime import date

import pytest

from memgrove import Memory, MemgroveError
from memgrove.tree.ranking.lifts import with_neighbourhood_coverage
from memgrove.tree.ranking.table import with_lift

GIRL = "I noticed a little girl sitting all alone, so I sat with her."
ONLY_THESE = {"folder_weight": 0.0, "link_weight": 0.0, "near_weight": 0.0, "date_weight": 0.0, "when_weight": 0.0,
              "proximity_weight": 0.0, "ask_penalty": 0.0}


def scores(m, question):
    return {h.path: h.score for h in m.search(question, 20) if h.kind == "entry"}


def raw_scores(m, question):
    """BM25F with the lifts, before normalization (``Hit.bm25``)."""
    return {h.path: h.bm25 for h in m.search(question, 20) if h.kind == "entry"}


def chain_ops():
    # s1: shelter -> filler -> girl (each message links to the next); s2: the same girl message alone
    return [
        {"op": "ADD", "path": "chat/s1/m1.md", "title": "Maria", "content": "The shelter event was packed.",
         "related": ["chat/s1/m2.md"], "reason": "r"},
        {"op": "ADD", "path": "chat/s1/m2.md", "title": "Maria", "content": "It took all afternoon.",
         "related": ["chat/s1/m3.md"], "reason": "r"},
        {"op": "ADD", "path": "chat/s1/m3.md", "title": "Maria", "content": GIRL, "reason": "r"},
        {"op": "ADD", "path": "chat/s2/m1.md", "title": "Maria", "content": GIRL, "reason": "r"},
    ]


def test_an_entry_whose_neighbours_cover_the_question_ranks_first(tmp_path):
    q = "Why did Maria sit with the little girl at the shelter event?"
    with Memory.open(tmp_path, create=True, durable=False, **ONLY_THESE) as m:
        m.curate(chain_ops())
        s = scores(m, q)
        assert s["chat/s1/m3.md"] == pytest.approx(s["chat/s2/m1.md"])
        m.tree.settings = m.tree.settings.replace(near_weight=0.5, near_hops=2)
        s = scores(m, q)
        assert s["chat/s1/m3.md"] > s["chat/s2/m1.md"]     # two links from the shelter message
        m.tree.settings = m.tree.settings.replace(near_hops=1)
        s = scores(m, q)
        assert s["chat/s1/m3.md"] == pytest.approx(s["chat/s2/m1.md"])   # out of reach at one hop


def test_with_neighbourhood_coverage_is_a_pure_rescoring():
    idf = {"girl": 1.0, "shelter": 3.0}
    raw = [("a.md", 8.0, frozenset({"girl"})), ("b.md", 8.0, frozenset({"girl"})), ("c.md", 2.0, frozenset({"shelter"}))]
    out = with_neighbourhood_coverage(raw, idf, 0.5, {"a.md": {"c.md", "x.md"}, "c.md": {"a.md"}})
    # a and c cover all of it together (4/4); b only "girl" (1/4)
    assert [p for p, _, _ in out] == ["a.md", "b.md", "c.md"]
    assert dict((p, s) for p, s, _ in out) == {"a.md": 12.0, "b.md": 9.0, "c.md": 6.0}
    assert with_neighbourhood_coverage(raw, idf, 0.0, {}) == raw


def test_with_lift_adds_a_share_of_the_top_score():
    raw = [("a.md", 10.0, frozenset()), ("b.md", 9.0, frozenset())]
    assert with_lift(raw, {"b.md": 0.2}) == [("b.md", 11.0, frozenset()), ("a.md", 10.0, frozenset())]
    assert with_lift(raw, {}) == raw


def dated(path, at, content="We went hiking with the kids."):
    return {"op": "ADD", "path": path, "title": "Mel", "content": content, "reason": "r",
            "sources": [{"kind": "conversation", "ref": f"c#{path}", "at": at}]}


def test_a_question_naming_a_date_prefers_entries_of_that_day_then_week_then_month(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, **ONLY_THESE) as m:
        m.curate([dated("c/t/a.md", "1:56 pm on 8 May, 2023"), dated("c/t/b.md", "2023-05-12T09:00:00Z"),
                  dated("c/t/c.md", "8:00 pm on 30 May, 2023"), dated("c/t/d.md", "10 am on 8 June, 2023")])
        traits = m.tree.catalog.traits_of(["c/t/a.md", "c/t/d.md"])
        assert {p: t[:4] for p, t in traits.items()} == {"c/t/a.md": (date(2023, 5, 8), False, False, ""),
                                                         "c/t/d.md": (date(2023, 6, 8), False, False, "")}
        assert traits["c/t/a.md"].source == "conversation:c#c/t/a.md" and not traits["c/t/a.md"].standing
        q = "Where did Mel go hiking on 8 May 2023?"
        s = scores(m, q)
        assert max(s.values()) == pytest.approx(min(s.values())) and len(s) == 4   # the same words, no lift
        m.tree.settings = m.tree.settings.replace(date_weight=0.6)
        s = scores(m, q)
        assert s["c/t/a.md"] > s["c/t/b.md"] > s["c/t/c.md"] > s["c/t/d.md"]
        # a month: every day of it alike, nothing outside it
        s = scores(m, "Where did Mel go hiking in May 2023?")
        assert s["c/t/a.md"] == pytest.approx(s["c/t/c.md"]) and s["c/t/c.md"] > s["c/t/d.md"]


def test_an_entry_without_sources_is_dated_by_its_creation(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": "c/t/a.md", "title": "Mel", "content": "Hiking.", "reason": "r"}])
        day = m.tree.catalog.traits_of(["c/t/a.md"])["c/t/a.md"].day
        assert day == date.fromisoformat(m.read("c/t/a.md").created_at[:10])


def test_a_when_question_prefers_entries_that_say_when(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, **ONLY_THESE) as m:
        m.curate([{"op": "ADD", "path": "c/t/a.md", "title": "Cal", "content": "I had a car accident, nobody was hurt.",
                   "reason": "r"},
                  {"op": "ADD", "path": "c/t/b.md", "title": "Cal", "content": "I had a car accident last Friday.",
                   "reason": "r"}])
        assert m.tree.catalog.traits_of(["c/t/a.md", "c/t/b.md"])["c/t/b.md"].timely is True
        m.tree.settings = m.tree.settings.replace(when_weight=0.2)
        s = scores(m, "When did Cal have a car accident?")
        assert s["c/t/b.md"] > s["c/t/a.md"]
        s = scores(m, "What happened to Cal's car?")       # asks no time: no lift
        a, b = s["c/t/a.md"], s["c/t/b.md"]
        m.tree.settings = m.tree.settings.replace(when_weight=0.0)
        s = scores(m, "What happened to Cal's car?")
        assert (s["c/t/a.md"], s["c/t/b.md"]) == pytest.approx((a, b))
        # the catalog follows an edit: the first entry now says when too
        m.curate([{"op": "UPDATE", "path": "c/t/a.md", "content": "I had a car accident two weeks ago.", "reason": "r"}])
        assert m.tree.catalog.traits_of(["c/t/a.md"])["c/t/a.md"].timely is True


def test_an_entry_that_mostly_asks_ranks_below_one_that_says(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, **ONLY_THESE) as m:
        m.curate([{"op": "ADD", "path": "c/t/q.md", "title": "Jon", "content": "Wow! How did the coconut ice cream turn out?",
                   "reason": "r"},
                  {"op": "ADD", "path": "c/t/a.md", "title": "Nate", "content": "The coconut ice cream turned out creamy. "
                   "Do you want some?", "reason": "r"}])
        traits = m.tree.catalog.traits_of(["c/t/q.md", "c/t/a.md"])
        assert (traits["c/t/q.md"].asks, traits["c/t/a.md"].asks) == (True, False)   # 8 of 9 words ask; 4 of 11
        q = "What did Nate think of the coconut ice cream?"
        plain = raw_scores(m, q)
        m.tree.settings = m.tree.settings.replace(ask_penalty=0.1)
        s = raw_scores(m, q)
        assert s["c/t/q.md"] == pytest.approx(0.9 * plain["c/t/q.md"]) and s["c/t/a.md"] == pytest.approx(plain["c/t/a.md"])
        # the catalog follows an edit: the question becomes a statement
        m.curate([{"op": "UPDATE", "path": "c/t/q.md", "content": "The coconut ice cream was a hit.", "reason": "r"}])
        assert m.tree.catalog.traits_of(["c/t/q.md"])["c/t/q.md"].asks is False


@pytest.mark.parametrize("name, value, message", [
    ("near_weight", 2.5, "near_weight must be between 0 and 2"),
    ("date_weight", -1, "date_weight must be between 0 and 2"),
    ("when_weight", 3, "when_weight must be between 0 and 2"),
    ("near_hops", 11, "near_hops must be between 0 and 10"),
    ("ask_penalty", 1.5, "ask_penalty must be between 0 and 1"),
])
def test_settings_are_checked(tmp_path, name, value, message):
    with pytest.raises(MemgroveError, match=message):
        Memory.open(tmp_path, create=True, **{name: value})

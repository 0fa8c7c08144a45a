"""One hop of relations in search (``link_weight``): a hit lends part of its score to its links."""

from __future__ import annotations

import pytest

from memgrove import Memory, MemgroveError

OPS = [
    {"op": "ADD", "path": "chat/s1/q.md", "title": "Ben, 8 May", "content": "What did you paint last weekend?",
     "related": ["chat/s1/a.md"], "reason": "r"},
    {"op": "ADD", "path": "chat/s1/a.md", "title": "Ana, 8 May", "content": "A sunset over the lake, in oils.",
     "reason": "r"},
    {"op": "ADD", "path": "chat/s1/other.md", "title": "Ana, 8 May", "content": "The lake was cold this morning.",
     "reason": "r"},
]


def paths(hits):
    return [h.path for h in hits if h.kind == "entry"]


def test_without_link_weight_only_matching_entries_come_back(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, link_weight=0.0) as m:
        m.curate(OPS)
        assert paths(m.search("paint weekend")) == ["chat/s1/q.md"]


def test_a_linked_reply_comes_back_after_the_matching_question(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, link_weight=0.3) as m:
        m.curate(OPS)
        hits = m.search("paint weekend")
        assert paths(hits) == ["chat/s1/q.md", "chat/s1/a.md"]
        reply = hits[1]
        # found only through the link: no matched terms, so it never decides a tier by itself
        assert (reply.relevance, reply.coverage, reply.matched) == (0.0, 0.0, ())
        assert hits[0].relevance > 0


def test_links_are_followed_both_ways_and_add_to_an_entrys_own_score(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, link_weight=0.5) as m:
        m.curate(OPS)
        # the answer matches "sunset lake" best and lends half its score back to the question
        hits = m.search("sunset lake")
        assert paths(hits)[0] == "chat/s1/a.md"
        assert "chat/s1/q.md" in paths(hits)            # reached backwards from the answer


def test_link_weight_is_checked(tmp_path):
    with pytest.raises(MemgroveError, match="link_weight must be between 0 and 1"):
        Memory.open(tmp_path, create=True, link_weight=1.5)

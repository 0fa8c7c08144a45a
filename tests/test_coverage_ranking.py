"""Coverage of the question by the top of the ranking (``cover_weight``, tree/coverage.py): the best
hits re-picked for what each adds, so a question needing two pieces gets both, from one source or
from several."""

from __future__ import annotations

import pytest

from memgrove import Memory, MemgroveError
from memgrove.tree.ranking.coverage import with_coverage

IDF = {"hike": 2.0, "road": 1.5, "trip": 1.5}
FOLDER = lambda p: p.rsplit("/", 1)[0]   # noqa: E731


def test_hits_from_one_source_give_way_to_the_hit_that_adds_the_missing_term():
    # three near copies about the hike, all in session s1, then the road trip in s2
    order = [("s1/a.md", 0.9), ("s1/b.md", 0.88), ("s1/c.md", 0.86), ("s2/d.md", 0.7)]
    matched = {"s1/a.md": frozenset({"hike"}), "s1/b.md": frozenset({"hike"}), "s1/c.md": frozenset({"hike"}),
               "s2/d.md": frozenset({"road", "trip"})}
    out = [p for p, _ in with_coverage(order, matched, IDF, 0.5, folder=FOLDER)]
    assert out[0] == "s1/a.md"                  # the best match keeps the first place
    assert out[1] == "s2/d.md"                  # the other half of the question before a second copy
    assert sorted(out) == sorted(p for p, _ in order)
    assert [p for p, _ in with_coverage(order, matched, IDF, 0.0, folder=FOLDER)] == [p for p, _ in order]


def test_hits_from_several_sources_that_each_add_something_keep_their_order():
    order = [("s1/a.md", 0.9), ("s2/b.md", 0.8), ("s3/c.md", 0.7)]
    matched = {"s1/a.md": frozenset({"hike"}), "s2/b.md": frozenset({"road"}), "s3/c.md": frozenset({"trip"})}
    assert with_coverage(order, matched, IDF, 0.5, folder=FOLDER) == order


def test_a_new_session_counts_only_with_a_new_term_and_scores_are_kept():
    # b adds no term but comes from another session; c adds nothing; a link-only hit (no terms) stays put
    order = [("s1/a.md", 0.9), ("s1/c.md", 0.85), ("s2/b.md", 0.84), ("s3/linked.md", 0.83)]
    matched = {"s1/a.md": frozenset({"hike", "road", "trip"}), "s1/c.md": frozenset({"hike"}),
               "s2/b.md": frozenset({"hike"}), "s3/linked.md": frozenset()}
    out = with_coverage(order, matched, IDF, 0.5, folder=FOLDER)
    assert out == order                          # nothing adds a term: the scores decide
    scores = dict(out)
    assert scores == dict(order)


def test_a_muted_hit_gains_its_factor_of_the_lift():
    order = [("s1/a.md", 0.9), ("s1/b.md", 0.85), ("s2/d.md", 0.7)]
    matched = {"s1/a.md": frozenset({"hike"}), "s1/b.md": frozenset({"hike"}), "s2/d.md": frozenset({"road", "trip"})}
    # the lift, (3 / 5 + 0.25) x 0.5 = 0.425 of the top, moves d above b; at factor 0.2 it does not
    assert [p for p, _ in with_coverage(order, matched, IDF, 0.5, folder=FOLDER)][1] == "s2/d.md"
    muted = {"s2/d.md": 0.2}
    assert [p for p, _ in with_coverage(order, matched, IDF, 0.5, muted=muted, folder=FOLDER)][1] == "s1/b.md"


def test_only_the_pool_is_repicked_and_only_head_places_are_chosen():
    order = [(f"s1/{i}.md", 1.0 - i / 100) for i in range(6)] + [("s2/x.md", 0.6)]
    matched = {p: frozenset({"hike"}) for p, _ in order}
    matched["s2/x.md"] = frozenset({"road", "trip"})
    assert [p for p, _ in with_coverage(order, matched, IDF, 0.5, folder=FOLDER, pool=4)] == [p for p, _ in order]
    out = [p for p, _ in with_coverage(order, matched, IDF, 0.5, folder=FOLDER, pool=7, head=3)]
    assert out[:3] == ["s1/0.md", "s2/x.md", "s1/1.md"]


def test_a_search_brings_both_pieces_of_a_two_part_question(tmp_path):
    """Through the tree: the hike is told in three messages of one session and the road trip in
    another; "the hike or the road trip" gets the road trip among the best two only with coverage."""
    hike = ["The hike came first, the hike up the ridge.", "Our first hike of the summer, a hike to remember.",
            "First the hike, then a rest after the hike."]
    ops = [{"op": "ADD", "path": f"chat/s1/m{i}.md", "title": "Ana", "content": t, "reason": "r"}
           for i, t in enumerate(hike)]
    ops.append({"op": "ADD", "path": "chat/s2/m1.md", "title": "Ana", "reason": "r", "content":
                "The road trip to the coast, on a sunny weekend, was the best part of the summer for all of us."})
    off = {"folder_weight": 0.0, "link_weight": 0.0, "near_weight": 0.0, "gap_ratio": 0.0, "cover_weight": 0.0}
    q = "Which came first, the hike or the road trip?"
    with Memory.open(tmp_path, create=True, durable=False, **off) as m:
        m.curate(ops)
        plain = [h.path for h in m.search(q, 4) if h.kind == "entry"]
        m.tree.settings = m.tree.settings.replace(cover_weight=0.5)
        covered = [h.path for h in m.search(q, 4) if h.kind == "entry"]
    assert plain[-1] == "chat/s2/m1.md"           # below every copy of the hike
    assert covered[0] == plain[0] and covered[1] == "chat/s2/m1.md"


def test_cover_weight_is_checked(tmp_path):
    with pytest.raises(MemgroveError, match="cover_weight must be between 0 and 2"):
        Memory.open(tmp_path, create=True, cover_weight=3.0)


@pytest.mark.parametrize("question,several", [
    ("Which came first, the hike or the road trip?", True),
    ("How many days between my move and the first client meeting?", True),
    ("What did I say about the budget across our chats?", True),
    ("Can you list the order in which I brought up the features?", True),
    ("What is the name of the greyhound Ana adopted?", False),
    ("When is my dentist appointment?", False),
])
def test_asks_several_reads_the_questions_that_need_several_pieces(question, several):
    from memgrove.tree.ranking.coverage import asks_several
    assert asks_several(question) is several

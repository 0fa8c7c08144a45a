"""Term proximity in search (``proximity_weight``): an entry where the question's neighbouring words
stand close together outranks one that has the same words apart."""

from __future__ import annotations

import pytest

from memgrove import Memory, MemgroveError
from memgrove.tree.text.analysis import analyze, terms
from memgrove.tree.ranking.lifts import proximity, with_proximity

QUESTION = "What deadline did I set for the initial deployment?"
TOGETHER = "chat/s1/m1.md"
APART = "chat/s2/m1.md"
OPS = [
    # the same words; only the first says them together. The second is shorter, so by the words
    # alone it scores higher
    {"op": "ADD", "path": TOGETHER, "title": "User message",
     "content": ("I want the initial deployment live by March 15, that is the deadline I set with the team "
                 "after our long planning call on Monday with everyone from design and support."),
     "reason": "r"},
    {"op": "ADD", "path": APART, "title": "User message",
     "content": "Deadline Friday for a set of unit tests, docs and reviews; initial mockups, logos, colors "
                "and fonts follow, deployment after.",
     "reason": "r"},
]
ONLY_PROXIMITY = {"folder_weight": 0.0, "link_weight": 0.0, "near_weight": 0.0, "date_weight": 0.0,
                  "when_weight": 0.0, "proximity_weight": 0.6}


def idf_of(question: str) -> dict[str, float]:
    return {t: 1.0 for t in terms(question)}


def test_proximity_is_the_share_of_neighbouring_pairs_said_together():
    q = terms("initial deployment deadline")            # pairs: (initial, deployment), (deployment, deadline)
    idf = idf_of("initial deployment deadline")
    assert proximity(q, idf, [analyze("the initial deployment has a deadline")]) == 1.0
    assert proximity(q, idf, [analyze("the initial deployment, then " + "word " * 10 + "a deadline")]) == 0.5
    assert proximity(q, idf, [analyze("initial " + "word " * 10 + "deployment " + "word " * 10 + "deadline")]) == 0.0
    # either order, within the window (stop words are not counted)
    assert proximity(q, idf, [analyze("deadline of the deployment: initial")]) == 1.0
    assert proximity(q, idf, [analyze("initial one two three deployment")], window=4) == 0.5
    assert proximity(q, idf, [analyze("initial one two three four deployment")], window=4) == 0.0


def test_a_pair_never_spans_two_fields():
    q = terms("camping in June")
    idf = idf_of("camping in June")
    # a title ending in a date is not next to the text's first words
    assert proximity(q, idf, [analyze("Mel, 27 June 2023"), analyze("Camping was fun")]) == 0.0
    assert proximity(q, idf, [analyze("Mel"), analyze("Camping in June was fun")]) == 1.0


def test_a_pair_weighs_its_commoner_word():
    q = ["rare", "common", "other"]
    idf = {"rare": 5.0, "common": 1.0, "other": 3.0}
    # (rare, common) weighs 1, (common, other) weighs 1: the rare word does not make its pair count more
    assert proximity(q, idf, [["rare", "common"]]) == pytest.approx(0.5)
    assert proximity(q, idf, [["common", "other"]]) == pytest.approx(0.5)


def test_a_question_of_one_word_or_none_has_no_pairs():
    assert proximity(["deploy"], {"deploy": 2.0}, [["deploy", "deploy"]]) == 0.0
    assert proximity([], {}, [["deploy"]]) == 0.0


def test_with_proximity_reads_only_candidates_that_matched_a_pair():
    q = "initial deployment"
    t = terms(q)
    raw = [("a.md", 2.0, frozenset(t)), ("b.md", 1.5, frozenset(t)), ("c.md", 1.8, frozenset(t[:1]))]
    read = []

    def terms_of(paths):
        read.extend(paths)
        return {"a.md": [analyze("initial " + "x " * 9 + "deployment")], "b.md": [analyze("initial deployment")]}

    out = with_proximity(q, raw, idf_of(q), 0.6, terms_of)
    assert read == ["a.md", "b.md"]                     # c matched one word of the pair: not read
    assert [p for p, _s, _m in out] == ["b.md", "a.md", "c.md"]
    assert dict((p, s) for p, s, _m in out)["b.md"] == pytest.approx(1.5 + 0.6 * 2.0)
    assert with_proximity(q, raw, idf_of(q), 0.0, terms_of) == raw


def test_a_muted_entry_gains_the_lift_times_its_factor():
    q = "initial deployment"
    t = frozenset(terms(q))
    raw = [("a.md", 2.0, t), ("b.md", 1.0, t)]
    out = with_proximity(q, raw, idf_of(q), 0.5, lambda paths: {p: [analyze(q)] for p in paths}, {"b.md": 0.5})
    assert dict((p, s) for p, s, _m in out) == {"a.md": pytest.approx(3.0), "b.md": pytest.approx(1.5)}


@pytest.mark.parametrize("weight", [0.6, 0.0])
def test_the_message_that_says_the_words_together_ranks_first(tmp_path, weight):
    with Memory.open(tmp_path, create=True, durable=False, **{**ONLY_PROXIMITY, "proximity_weight": weight}) as m:
        m.curate(OPS)
        order = [h.path for h in m.search(QUESTION) if h.kind == "entry"]
    assert set(order) == {TOGETHER, APART}
    # by the words alone the other message leads; proximity puts the answer first
    assert order[0] == (TOGETHER if weight else APART)


def test_an_entry_edited_by_hand_is_read_as_it_is_now(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, **ONLY_PROXIMITY) as m:
        m.curate(OPS)
        assert [h.path for h in m.search(QUESTION) if h.kind == "entry"][0] == TOGETHER
        path = m.tree.root / TOGETHER
        path.write_text(path.read_text().replace("the initial deployment live", "the initial designs, the logo, "
                                                 "the reviews and then the final deployment live"))
        assert [h.path for h in m.search(QUESTION) if h.kind == "entry"][0] == APART


def test_proximity_is_off_by_default(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False, **{k: v for k, v in ONLY_PROXIMITY.items()
                                                              if k != "proximity_weight"}) as m:
        m.curate(OPS)
        assert m.tree.settings.proximity_weight == 0.0
        assert [h.path for h in m.search(QUESTION) if h.kind == "entry"][0] == APART


def test_proximity_weight_is_checked(tmp_path):
    with pytest.raises(MemgroveError, match="proximity_weight must be between 0 and 2"):
        Memory.open(tmp_path, create=True, proximity_weight=3)

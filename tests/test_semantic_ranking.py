"""Ranking by meaning (``semantic_weight``): the best hits re-sorted by their score and the cosine of
sentence embeddings, the vectors kept in ``vectors.db``, and the real all-MiniLM-L6-v2 encoder."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from memgrove import Memory, MemgroveError
from memgrove.cli import cli
from memgrove.tree.base import model_files
from memgrove.tree.meaning import embedding
from memgrove.tree.text import standing
from memgrove.tree.index.catalog import Traits
from memgrove.tree.ranking.by_meaning import with_meaning
from memgrove.tree.ranking.rules import rules_for
from memgrove.tree.meaning.vectors import Vectors, key_of

QUESTION = "What did we decide about the database?"
DECISION = "db/choice/postgres.md"
TIPS = "db/tips/indexes.md"
OPS = [
    # by the words, the tips win: "decide" and "database" in the text; the decision says it otherwise
    {"op": "ADD", "path": TIPS, "title": "Index tips",
     "content": "Decide on indexes after looking at the slow query log of the database.", "reason": "r"},
    {"op": "ADD", "path": DECISION, "title": "Database decision",
     "content": "We will go with Postgres for the orders service.", "reason": "r"},
    {"op": "ADD", "path": "food/lunch/place.md", "title": "Lunch",
     "content": "The team likes the ramen place on the corner.", "reason": "r"},
]

# a stand-in encoder whose dimensions are concepts: words of one concept point the same way
CONCEPTS = [{"decide", "decision", "go", "chose"}, {"database", "postgres", "mysql", "sql"},
            {"index", "indexes", "slow", "query", "log"}, {"lunch", "ramen", "food"}]


class ConceptEncoder:
    name = "concepts-1"
    dim = len(CONCEPTS) + 1

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += texts
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, -1] = 0.01    # never the zero vector
            for w in re.findall(r"[a-z]+", t.lower()):
                for c, words in enumerate(CONCEPTS):
                    out[i, c] += w in words
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(OPS)
    return tmp_path


def opened(home: Path, weight: float = 0.5, encoder: ConceptEncoder | None = None, **kw) -> Memory:
    # what a search computes, with no background embedder beside it (tests/test_embed_ahead.py)
    m = Memory.open(home, durable=False, semantic_weight=weight, embed_ahead=False, **kw)
    m.tree.encoder = encoder or ConceptEncoder()
    return m


def paths(m: Memory, q: str = QUESTION) -> list[str]:
    return [h.path for h in m.search(q) if h.kind == "entry"]


# -- the ranking step ------------------------------------------------------------------------------

def test_with_meaning_weighs_the_cosine_against_a_share_of_the_top_score():
    order = [("a", 2.0), ("b", 1.8), ("c", 1.0)]
    cos = {"a": 0.1, "b": 0.2, "c": 0.9}
    # (2 + 0.5·2·0.1) / 1.5 = 1.4, (1.8 + 0.2) / 1.5 = 1.333, (1 + 0.9) / 1.5 = 1.267
    got = with_meaning(order, cos, 0.5)
    assert [p for p, _ in got] == ["a", "b", "c"]
    assert [round(s, 3) for _, s in got] == [1.4, 1.333, 1.267]
    # (2 + 0.2) / 2 = 1.1, (1.8 + 0.4) / 2 = 1.1 (a tie keeps the order), (1 + 1.8) / 2 = 1.4
    assert [p for p, _ in with_meaning(order, cos, 1.0)] == ["c", "a", "b"]
    assert with_meaning(order, cos, 0.0) == order and with_meaning([], cos, 0.5) == []


def test_with_meaning_reorders_only_the_pool_and_never_lifts_past_it():
    order = [("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7)]
    cos = {"a": 0.0, "b": 1.0, "c": 1.0, "d": 1.0}
    got = with_meaning(order, cos, 1.0, pool=2)
    assert [p for p, _ in got] == ["b", "a", "c", "d"]          # c and d are past the pool: no cosine
    assert got[1][1] >= got[2][1]                               # still best first
    # a cosine below zero counts as zero: an unrelated text is not pushed below the lexical order
    assert [p for p, _ in with_meaning(order[:2], {"a": -0.5, "b": 0.0}, 1.0)] == ["a", "b"]


# -- in a tree ---------------------------------------------------------------------------------------

def test_an_entry_that_says_it_in_other_words_comes_first(home):
    with opened(home, 0.0) as m:
        assert paths(m)[:2] == [TIPS, DECISION]
        assert m.tree.encoder.encoded == []                    # off: nothing is encoded
    with opened(home, 0.5) as m:
        assert paths(m)[:2] == [DECISION, TIPS]
        hits = m.search(QUESTION)
        assert hits[0].score >= hits[1].score                  # scores stay best first
        assert hits[0].coverage < hits[1].coverage == 1.0      # each hit keeps its own match (routing reads it)


def test_beyond_the_rules_it_may_bring_a_search_brings_the_one_closest_in_meaning():
    rules = ["r1", "r2", "r3", "r4"]                   # the latest first
    found = [("a", 0.9), ("r3", 0.5), ("b", 0.4)]
    traits = {p: Traits(None, False, False, "user", p, standing.RULE if p.startswith("r") else 0)
              for p in ("a", "b", *rules)}
    near = {"r1": -0.2, "r2": 0.61, "r4": 0.3, "r3": 0.1}
    assert rules_for(found, traits, rules, 2) == ["r3"]                 # without meaning: the ones it found
    assert rules_for(found, traits, rules, 2, near) == ["r3", "r2"]     # and the closest in meaning, last
    assert rules_for(found, traits, rules, 1, near) == ["r2"]           # which takes the last place
    assert rules_for(found, traits, rules, 2, {"r3": 0.9, "r2": 0.5}) == ["r3"]   # found already
    assert rules_for(found, traits, rules, 2, {"r1": -0.1, "r2": 0.0}) == ["r3"]  # no meaning in common
    assert rules_for(found, traits, rules, 4, near) == rules            # at most the limit: all of them
    assert rules_for(found, traits, rules, 0, near) == []


def test_a_rule_said_in_other_words_than_the_question_comes_with_it(tmp_path: Path):
    def msg(i: int, role: str, text: str) -> dict:
        return {"id": str(i), "speaker": role, "role": role, "text": text, "session": "s1", "time": "2024-03-15"}
    talk = [msg(1, "user", "Always mention the connection limits when I ask about Postgres."),
            msg(2, "assistant", "Noted."),
            msg(3, "user", "Never order ramen for the team lunch."),
            msg(4, "assistant", "Understood."),
            msg(5, "user", "The orders database has one primary and two replicas."),
            msg(6, "assistant", "Good setup."),
            msg(7, "user", "The database backups run nightly at two.")]
    question = "How should I set up the database?"       # no word of the rule's: "Postgres" means it
    rule = "conversations/c1/s1/1.md"
    for weight in (0.0, 0.5):
        with Memory.open(tmp_path / str(weight), create=True, durable=False, standing_rules=1,
                         semantic_weight=weight, embed_ahead=False) as m:
            m.tree.encoder = ConceptEncoder()
            m.ingest(conversation={"id": "c1", "messages": talk})
            got = [h.path for h in m.search(question) if h.kind == "entry"]
            assert got and ("conversations/c1/s1/3.md" not in got)   # the other rule: unrelated
            assert (rule in got) == (weight > 0), got


def test_vectors_are_kept_between_searches_and_processes(home):
    enc = ConceptEncoder()
    with opened(home, encoder=enc) as m:
        m.search(QUESTION)
        first = [t for t in enc.encoded if t != QUESTION]
        assert len(first) >= 2 and m.tree.vectors.count() == len(set(first))
        m.search(QUESTION)
        assert [t for t in enc.encoded if t != QUESTION] == first   # only the question again
    enc2 = ConceptEncoder()
    with opened(home, encoder=enc2) as m:
        m.search(QUESTION)
        assert enc2.encoded == [QUESTION]
        # an edited entry is new text: its vector is computed, the old one is not read
        m.curate([{"op": "UPDATE", "path": DECISION, "content": "MySQL was rejected.", "reason": "r"}])
        m.search(QUESTION)
        assert any("MySQL was rejected" in t for t in enc2.encoded)


def test_another_model_never_reads_these_vectors(home):
    with opened(home) as m:
        m.search(QUESTION)
    other = ConceptEncoder()
    other.name = "concepts-2"
    with opened(home, encoder=other) as m:
        m.search(QUESTION)
        assert len([t for t in other.encoded if t != QUESTION]) >= 2


def test_embed_computes_every_vector_and_drops_stale_ones(home):
    enc = ConceptEncoder()
    with opened(home, encoder=enc) as m:
        n, dropped = m.embed()
        assert n == len(m.tree.catalog.files()) and dropped == 0
        assert m.tree.vectors.count() == n
        m.curate([{"op": "DELETE", "path": "food/lunch/place.md", "reason": "r"}])
        n2, dropped = m.embed()
        assert dropped >= 1 and m.tree.vectors.count() == n2
        enc.encoded.clear()
        m.search(QUESTION)
        assert enc.encoded == [QUESTION]                       # nothing left to compute at search


def test_a_damaged_vector_store_is_reset_with_a_notice(home):
    with opened(home) as m:
        m.search(QUESTION)
    (home / ".memgrove" / "vectors.db").write_bytes(b"not a database at all " * 400)
    with opened(home) as m:
        rep = m.doctor()
        assert any(p.startswith("vectors.db is damaged") for p in rep.problems), rep.problems
    (home / ".memgrove" / "vectors.db").write_bytes(b"not a database at all " * 400)
    with opened(home) as m:
        assert paths(m)[:2] == [DECISION, TIPS]
        assert any("reset the damaged vectors.db" in n for n in m.tree.notices), m.tree.notices
        assert m.tree.vectors.count() >= 2 and m.doctor().ok


def test_a_vector_store_that_takes_no_writes_loses_no_search(home):
    store = home / ".memgrove" / "vectors.db"
    store.mkdir()                                              # SQLite cannot open it
    enc = ConceptEncoder()
    with opened(home, encoder=enc) as m:
        assert paths(m)[:2] == [DECISION, TIPS]
        assert paths(m)[:2] == [DECISION, TIPS]
        assert len(enc.encoded) > 2 * 2                        # computed again each time
    assert Vectors(store).put_many([("k", b"1234")]) is False


def test_a_stored_vector_of_the_wrong_width_is_computed_again(home):
    enc = ConceptEncoder()
    text = "Index tips\nDecide on indexes after looking at the slow query log of the database."
    with opened(home, encoder=enc) as m:
        m.tree.vectors.put_many([(key_of(enc.name, text), b"\x00" * 8)])
        m.search(QUESTION)
        assert text in enc.encoded


def test_the_setting_changes_the_trees_fingerprint(home):
    with opened(home, 0.0) as off, opened(home, 0.5) as on:
        assert off.fingerprint() != on.fingerprint()           # no answer cached without it is served with it


def test_bad_settings_and_a_missing_model_say_what_to_do(home, monkeypatch):
    with pytest.raises(MemgroveError, match="semantic_weight must be between 0 and 2"):
        Memory.open(home, semantic_weight=3.0)
    with Memory.open(home, durable=False, embed_ahead=False, semantic_weight=0.5, semantic_model=str(home / "nowhere")) as m:
        with pytest.raises(MemgroveError, match="semantic_model: no folder"):
            m.search(QUESTION)
    (home / "empty").mkdir()
    with Memory.open(home, durable=False, embed_ahead=False, semantic_weight=0.5, semantic_model=str(home / "empty")) as m:
        with pytest.raises(MemgroveError, match="cannot load all-MiniLM-L6-v2 from"):
            m.search(QUESTION)
    monkeypatch.setattr(model_files, "PACKAGE", "no_such_model_package")
    with pytest.raises(MemgroveError, match=r"pip install 'memgrove\[semantic\]'"):
        model_files.model_folder("")
    assert model_files.model_available("") is False


# -- the real encoder (the Makefile installs the model's files) --------------------------------------

REFERENCE = {   # sentence-transformers with torch, normalized: the first six dimensions
    "What did we decide about the database?": [-0.01964, 0.00124, -0.07833, 0.01276, -0.02497, 0.00525],
    "We will go with Postgres for the orders service; MySQL was rejected.":
        [-0.06617, -0.01958, 0.01607, 0.00107, -0.13021, 0.0039],
    "The team likes the ramen place on the corner.": [0.02423, 0.04718, -0.02194, -0.04374, 0.04308, 0.02373],
}


def test_the_encoder_computes_what_sentence_transformers_does():
    # int8 weights: within a few thousandths of torch's numbers (tests/test_encoder_runtime.py holds
    # the cosines to the full-precision vectors: >= 0.99, 0.9995 typical)
    enc = embedding.load_encoder()
    texts = list(REFERENCE)
    v = enc.encode(texts)
    assert v.shape == (3, 384) and enc.dim == 384
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.allclose(v[:, :6], np.array(list(REFERENCE.values())), atol=5e-3)
    # torch's cosines: 0.33125 (the decision), 0.01552 (lunch)
    assert abs(float(v[0] @ v[1]) - 0.33125) < 0.01 and abs(float(v[0] @ v[2]) - 0.01552) < 0.01
    # a text past 256 tokens is cut there, as sentence-transformers cuts it
    long = "word " * 2000
    assert np.allclose(enc.encode([long])[0], enc.encode(["word " * 600])[0], atol=1e-6)
    assert embedding.load_encoder() is enc                     # loaded once per process


def test_reindex_embeds_every_entry_with_the_real_model(home):
    (home / ".memgrove" / "config.toml").write_text("[tree]\nsemantic_weight = 0.5\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["reindex", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["vectors"] == out["documents"] and out["vectors_dropped"] == 0
    db = sqlite3.connect(home / ".memgrove" / "vectors.db")
    widths = {len(b) for (b,) in db.execute("SELECT vec FROM vectors")}
    db.close()
    assert widths == {384 * 4}
    res = CliRunner().invoke(cli, ["search", QUESTION, "--json"])
    assert res.exit_code == 0, res.output
    assert DECISION in res.output

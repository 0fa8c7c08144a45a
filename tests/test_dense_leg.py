"""The dense leg (``dense_k``, tree/ranking/dense.py): the entries closest in meaning to the question,
from the matrix of every entry's vector (tree/meaning/matrix.py), join the word search's candidates.
An entry sharing no word with the question is found; archived and superseded entries are treated as
the word leg treats them; the matrix follows writes of other processes, deletes, archives, supersedes,
a fork and a damaged vectors.db; meaning off ranks exactly as before."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.ranking import dense
from memgrove.tree.meaning.matrix import Matrix

QUESTION = "What did we decide about the database?"
DECISION = "db/choice/postgres.md"      # shares no word with the question (stop words aside)
OPS = [
    {"op": "ADD", "path": DECISION, "title": "Postgres",
     "content": "We will go with Postgres for the orders service.", "reason": "r"},
    {"op": "ADD", "path": "food/lunch/place.md", "title": "Lunch",
     "content": "The team likes the ramen place on the corner.", "reason": "r"},
    {"op": "ADD", "path": "ops/deploy/friday.md", "title": "Deploys",
     "content": "Nobody ships to production on Friday afternoons.", "reason": "r"},
]


def opened(home: Path, **kw) -> Memory:
    kw.setdefault("dense_k", 20)
    kw.setdefault("include_context_hits", False)     # a folder named "db" is close to any database question
    kw.setdefault("semantic_weight", 0.5)
    return Memory.open(home, durable=False, embed_ahead=False, **kw)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as m:
        m.curate(OPS)
    with opened(tmp_path) as m:
        m.embed()
    return tmp_path


def entry_paths(m: Memory, q: str = QUESTION) -> list[str]:
    return [h.path for h in m.search(q) if h.kind == "entry"]


# -- the fusions ------------------------------------------------------------------------------------

def test_score_fusion_adds_the_cosine_on_bm25s_scale_and_brings_the_dense_ones():
    raw = [("a", 10.0, frozenset({"x"})), ("b", 5.0, frozenset({"y"}))]
    got = dense.by_score(raw, [("c", 0.8), ("a", 0.1)], {"a": 0.1, "b": float("nan"), "c": 0.8}, 0.5)
    assert got == [("a", 10.5, frozenset({"x"})), ("b", 5.0, frozenset({"y"})), ("c", 4.0, frozenset())]
    assert dense.by_score([], [("c", 0.5)], {"c": 0.5}, 1.0) == [("c", 0.5, frozenset())]   # no word matched


def test_insert_fusion_leaves_the_words_scores_and_brings_what_they_missed():
    raw = [("a", 10.0, frozenset({"x"})), ("b", 5.0, frozenset({"y"}))]
    near = [("c", 0.8), ("a", 0.9)]
    got = dense.by_score(raw, near, {p: c for p, c in near if p not in {"a", "b"}}, 0.5)
    assert got == [("a", 10.0, frozenset({"x"})), ("b", 5.0, frozenset({"y"})), ("c", 4.0, frozenset())]


def test_rank_fusion_puts_the_best_of_both_legs_on_the_top_score():
    raw = [("a", 10.0, frozenset()), ("b", 5.0, frozenset())]
    got = dense.rrf(raw, [("b", 0.9), ("c", 0.8)], 1.0)
    assert [p for p, _s, _m in got] == ["b", "a", "c"] and got[0][1] == 10.0


# -- the leg ----------------------------------------------------------------------------------------

def test_the_dense_leg_finds_an_entry_that_shares_no_word_with_the_question(home):
    with opened(home, dense_k=0) as m:
        assert DECISION not in entry_paths(m)               # the words alone never find it
    with opened(home) as m:
        assert entry_paths(m)[0] == DECISION
        assert m.tree.vector_counts() == {"entries": len(m.tree.catalog.files()),
                                          "with_vector": len(m.tree.catalog.files()), "pending": 0}


def test_meaning_off_is_the_ranking_of_before_whatever_dense_k(home):
    with opened(home, dense_k=0, semantic_weight=0.0) as m:
        before = [(h.path, round(h.score, 6)) for h in m.search("orders service production")]   # recency moves
    with opened(home, dense_k=50, semantic_weight=0.0) as m:
        assert [(h.path, round(h.score, 6)) for h in m.search("orders service production")] == before
        assert m.tree.encoder is None                      # the leg never loads the model


def test_an_entry_without_its_vector_is_in_the_word_leg_only(home):
    with opened(home) as m:
        m.curate([{"op": "ADD", "path": "db/choice/mysql.md", "title": "MySQL",
                   "content": "MySQL was rejected for the orders service.", "reason": "r"}])
        counts = m.tree.vector_counts()
        assert counts["pending"] == 1
        near = [p for p, _c in m.tree._nearest(QUESTION, 50)]
        assert "db/choice/mysql.md" not in near and DECISION in near
        assert "db/choice/mysql.md" in entry_paths(m, "mysql rejected")


def test_archived_entries_are_in_neither_leg(home):
    with opened(home) as m:
        m.curate([{"op": "ARCHIVE", "path": DECISION, "reason": "stale"}])
        assert DECISION not in [p for p, _c in m.tree._nearest(QUESTION, 50)]
        assert DECISION not in entry_paths(m)
        assert m.tree.vector_counts()["entries"] == len(m.tree.catalog.files())


def test_a_superseded_entry_the_dense_leg_finds_is_placed_as_the_word_legs_would(tmp_path: Path):
    old, new = "db/choice/mysql.md", DECISION
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as m:
        m.curate([OPS[0], OPS[1], {"op": "ADD", "path": old, "title": "MySQL",
                                   "content": "We will go with MySQL for the orders service.", "reason": "r"}])
        m.curate([{"op": "SUPERSEDE", "path": old, "by": new, "reason": "we moved to Postgres"}])
    with opened(tmp_path) as m:
        m.embed()
        by_meaning = entry_paths(m)                          # no word of the question in either
        by_words = entry_paths(m, "orders service go with")  # both found by their words
    for order in (by_meaning, by_words):
        assert order.index(old) == order.index(new) + 1, order
    with opened(tmp_path) as m:
        hit = next(h for h in m.search(QUESTION) if h.path == old)
    assert hit.superseded_by == new and hit.label.startswith("(until ")


# -- the matrix -------------------------------------------------------------------------------------

def test_the_matrix_follows_another_processs_writes_and_vectors(home):
    with opened(home) as reader, opened(home) as writer:
        assert reader.tree.vector_counts()["pending"] == 0
        writer.curate([{"op": "ADD", "path": "db/choice/cache.md", "title": "Cache",
                        "content": "Redis holds the sessions.", "reason": "r"}])
        assert reader.tree.vector_counts()["pending"] == 1           # the new entry, no vector yet
        writer.embed()                                               # another process stores it
        assert reader.tree.vector_counts()["pending"] == 0
        assert "db/choice/cache.md" in [p for p, _c in reader.tree._nearest("where are sessions kept?", 3)]
        writer.curate([{"op": "DELETE", "path": "db/choice/cache.md", "reason": "r"}])
        assert "db/choice/cache.md" not in reader.tree._vector_matrix().paths
        writer.curate([{"op": "UPDATE", "path": DECISION, "content": "Postgres was dropped for SQLite.",
                        "reason": "r"}])
        assert reader.tree.vector_counts()["pending"] == 1           # an edited text has another key
        writer.embed()                                               # drops the old text's vector too
        assert reader.tree.vector_counts()["pending"] == 0


def test_the_matrix_reads_only_what_changed_when_nothing_did(home, monkeypatch):
    with opened(home) as m:
        m.tree.vector_counts()
        reads = []
        monkeypatch.setattr(m.tree.catalog, "meanings", lambda: reads.append(1) or [])
        for _ in range(3):
            m.search(QUESTION)
        assert reads == []


def test_a_damaged_vector_store_is_read_again_once_reset(home):
    with opened(home) as m:
        assert m.tree.vector_counts()["pending"] == 0
        (home / ".memgrove" / "vectors.db").write_bytes(b"not a database at all " * 400)
        for suffix in ("-wal", "-shm"):
            (home / ".memgrove" / f"vectors.db{suffix}").unlink(missing_ok=True)
        m.tree.vectors.close()
        assert entry_paths(m)[0] == DECISION                 # the vectors it held stay: never stale
        m.embed()
        assert m.tree.vector_counts()["pending"] == 0
        assert any("reset the damaged vectors.db" in n for n in m.tree.notices), m.tree.notices


def test_a_forked_child_uses_and_refreshes_the_parents_matrix(home):
    with opened(home) as m:
        m.tree.vector_counts()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(r)
                first = entry_paths(m)[0]
                m.curate([{"op": "ADD", "path": "db/choice/cache.md", "title": "Cache",
                           "content": "Redis holds the sessions.", "reason": "r"}])
                m.embed()
                near = [p for p, _c in m.tree._nearest("where are sessions kept?", 3)]
                os.write(w, json.dumps({"first": first, "near": near}).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        deadline = time.monotonic() + 120
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            assert time.monotonic() < deadline, "the forked child did not finish"
            time.sleep(0.05)
        with os.fdopen(r, "rb") as f:
            got = json.loads(f.read())
        assert got["first"] == DECISION and "db/choice/cache.md" in got["near"]
        assert "db/choice/cache.md" in [p for p, _c in m.tree._nearest("where are sessions kept?", 3)]


def test_the_matrix_reads_everything_again_after_a_prune(home):
    with opened(home) as m:
        matrix = Matrix(m.tree.catalog, m.tree.vectors)
        enc = m.tree.meaning_encoder()
        matrix.refresh(enc.name, enc.dim)
        assert matrix.counts()[1] == matrix.counts()[0]
        m.tree.vectors.prune(set())                          # every vector gone, rowids start again
        m.embed()
        matrix.refresh(enc.name, enc.dim)
        assert matrix.counts()[1] == matrix.counts()[0]


CHILD = """
import sys
import numpy as np
from memgrove import Memory
from memgrove.tree.meaning.vectors import key_for
m = Memory.open(sys.argv[1], durable=False, embed_ahead=False, semantic_weight=0.0)
m.curate([{"op": "ADD", "path": "db/choice/cache.md", "title": "Cache", "content": "Redis holds the sessions.",
           "reason": "r"}])
digest = dict(m.tree.catalog.meanings())["db/choice/cache.md"]
v = (np.ones(int(sys.argv[3])) / np.sqrt(int(sys.argv[3]))).astype(np.float32)
m.tree.vectors.put_many([(key_for(sys.argv[2], digest), v.tobytes())])
m.close()
"""


def test_the_matrix_sees_what_another_process_wrote_and_stored(home):
    import subprocess
    import sys
    with opened(home) as m:
        enc = m.tree.meaning_encoder()
        assert m.tree.vector_counts()["pending"] == 0
        subprocess.run([sys.executable, "-c", CHILD, str(home), enc.name, str(enc.dim)], check=True, timeout=120)
        matrix = m.tree._vector_matrix()
        i = matrix.paths.index("db/choice/cache.md")
        assert matrix.has[i] and m.tree.vector_counts()["pending"] == 0


def test_a_matrix_patched_write_by_write_equals_one_read_afresh(home):
    import numpy as np
    with opened(home) as m:
        enc = m.tree.meaning_encoder()
        patched = m.tree._vector_matrix()
        for ops in ([{"op": "ADD", "path": "db/choice/cache.md", "title": "Cache", "content": "Redis holds sessions.",
                      "reason": "r"}],
                    [{"op": "UPDATE", "path": DECISION, "content": "Postgres was dropped for SQLite.", "reason": "r"}],
                    [{"op": "DELETE", "path": "food/lunch/place.md", "reason": "r"}],
                    [{"op": "ADD", "path": "food/lunch/place.md", "title": "Lunch", "reason": "r",
                      "content": "The team likes the ramen place on the corner."}]):   # its old text: its old vector
            m.curate(ops)
            m.tree._vector_matrix()
            m.embed()
            m.tree._vector_matrix()
        afresh = Matrix(m.tree.catalog, m.tree.vectors)
        afresh.refresh(enc.name, enc.dim)

        def state(mx: Matrix) -> dict:
            return {p: (bool(mx.has[i]), mx.rows[i].tobytes()) for p, i in mx._at.items()}
        assert state(patched) == state(afresh) and patched.counts() == afresh.counts()
        q = enc.encode([QUESTION])[0]
        assert patched.top(q, 5) == afresh.top(q, 5) or \
            np.allclose([c for _p, c in patched.top(q, 5)], [c for _p, c in afresh.top(q, 5)])

"""Searches while entries' vectors are missing (tree/meaning/vector_claims.py): a search computes a few of
them at most, never one another thread is computing, never waits for one, ranks the rest by their
words, and hands them to the background embedder; how far the vectors are is visible in
``Memory.stats()``, ``doctor`` and the server's ``/health``.

The encoders here are stand-ins that count what they are given; nothing compares timings: a
search that waited would wait for an event the test sets only after its bound (20 s) passed.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.meaning import tree_meaning as meaning_mod
from memgrove.tree.ranking.by_meaning import NO_VECTOR, with_meaning
from memgrove.tree.meaning.vector_claims import CLAIMS, SEARCH_EMBEDS, ready_vectors

QUESTION = "orders database"
ENTRIES = 40
BOUND_S = 20.0      # a search that waited for a blocked encoder would exceed it; one that did not, far below
BLOCK_S = 60.0      # how long a blocked encoder waits at most (the test never hangs)


class Counting:
    """A stand-in encoder: counts every text it is given (the question's apart); entry texts wait
    for ``go`` while ``hold`` is set."""

    name, dim = "counting-1", 3

    def __init__(self, hold: bool = False) -> None:
        self.entries: list[str] = []
        self.questions = 0
        self.started = threading.Event()
        self.go = threading.Event()
        if not hold:
            self.go.set()
        self._mutex = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        if texts != [QUESTION]:
            with self._mutex:
                self.entries += texts
            self.started.set()
            assert self.go.wait(BLOCK_S)
        else:
            self.questions += 1
        out = np.ones((len(texts), self.dim), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree of ``ENTRIES`` entries that all match the question, and no vectors."""
    home = tmp_path_factory.mktemp("backlog")
    ops = [{"op": "ADD", "path": f"ops/orders/note-{i:02d}.md", "title": f"Orders note {i}",
            "content": f"The orders database note number {i} says something of its own: {'x' * i}.",
            "reason": "r"} for i in range(ENTRIES)]
    with Memory.open(home, create=True, durable=False, semantic_weight=0.0) as m:
        m.curate(ops)
    return home


@pytest.fixture
def home(built: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(built, tmp_path / "t", symlinks=True)
    return tmp_path / "t"


def opened(home: Path, encoder: Counting) -> Memory:
    m = Memory.open(home, durable=False, semantic_weight=0.5, embed_ahead=False)
    m.tree.encoder = encoder
    return m


class Queue:
    """A stand-in for the background embedder: what it is handed."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def written(self, paths: list[str]) -> None:
        self.paths += paths

    def backlog(self) -> dict:
        return {"queued": len(self.paths), "unchecked": 0, "dropped": 0, "running": True}

    def behind(self) -> bool:
        return self.lagging

    lagging = False      # more to do than a search's share (Embedder.behind): searches compute none

    def close(self) -> None:
        pass


def test_a_search_computes_a_few_missing_vectors_and_hands_the_rest_to_the_embedder(home):
    enc = Counting()
    with opened(home, enc) as m:
        queue = m.tree.embedder = Queue()
        hits = m.search(QUESTION, limit=20)
        assert len(hits) == 20
        assert 0 < len(enc.entries) <= SEARCH_EMBEDS and enc.questions == 1
        assert len(set(enc.entries)) == len(enc.entries)
        # the rest of the pool waits in the embedder's queue, the best-ranked computed first
        assert len(queue.paths) >= 20 - SEARCH_EMBEDS and not set(queue.paths) & {h.path for h in hits[:1]}
        assert m.tree.vector_state(exact=True)["with_vectors"] == len(enc.entries)
        # the next search computes the next few, not the same ones
        m.search(QUESTION, limit=20)
        assert len(enc.entries) == len(set(enc.entries)) <= 2 * SEARCH_EMBEDS


def test_a_search_computes_none_while_the_embedder_has_more_to_do(home):
    enc = Counting()
    with opened(home, enc) as m:
        queue = m.tree.embedder = Queue()
        queue.lagging = True          # a catch-up under way, or more queued than a search's share
        hits = m.search(QUESTION, limit=20)
        assert len(hits) == 20 and enc.entries == [] and enc.questions == 1
        assert len(queue.paths) >= 20          # all of them left to the embedder


def test_a_search_never_waits_for_vectors_another_search_is_computing(home):
    enc = Counting(hold=True)
    with opened(home, enc) as m:
        first: list = []
        a = threading.Thread(target=lambda: first.append(m.search(QUESTION, limit=20)))
        a.start()
        try:
            assert enc.started.wait(BOUND_S)               # the first search computes its few, held
            second: list = []
            b = threading.Thread(target=lambda: second.append(m.search(QUESTION, limit=20)))
            b.start()
            b.join(BOUND_S)
            assert not b.is_alive(), "the second search waited for the first one's vectors"
            assert len(second[0]) == 20
            assert len(enc.entries) <= SEARCH_EMBEDS       # it computed none of them again, nor others
        finally:
            enc.go.set()
            a.join(BLOCK_S)
        assert len(first[0]) == 20
        assert len(enc.entries) == len(set(enc.entries)) <= SEARCH_EMBEDS
    assert CLAIMS.count() == 0                             # every claim let go


def test_a_search_never_waits_for_vectors_the_embedder_is_computing(home):
    enc = Counting(hold=True)
    with opened(home, enc) as m:
        texts = list(m.tree._meaning_texts(sorted(m.tree.catalog.files())).values())
        bulk = threading.Thread(target=ready_vectors, args=(texts, enc, m.tree.vectors))  # as the embedder does
        bulk.start()
        try:
            assert enc.started.wait(BOUND_S)
            held = len(enc.entries)
            searched: list = []
            s = threading.Thread(target=lambda: searched.append(m.search(QUESTION, limit=20)))
            s.start()
            s.join(BOUND_S)
            assert not s.is_alive(), "the search waited for the embedder's vectors"
            assert len(searched[0]) == 20 and len(enc.entries) == held     # and computed none of them
        finally:
            enc.go.set()
            bulk.join(BLOCK_S)
        assert len(enc.entries) == len(set(enc.entries))
        assert m.tree.vector_state(exact=True)["missing"] == 0


def test_a_hit_without_a_vector_is_ranked_by_its_words_neither_favoured_nor_punished():
    order = [("a", 2.0), ("b", 1.8), ("c", 1.0)]
    # b has no vector: it gains the mean lift of the others, (0.1 + 0.9) / 2
    got = dict(with_meaning(order, {"a": 0.1, "b": NO_VECTOR, "c": 0.9}, 1.0))
    assert got["b"] == pytest.approx((1.8 + 2.0 * 0.5) / 2)
    # none has one: the words' order, on the same scale
    assert [p for p, _ in with_meaning(order, dict.fromkeys("abc", NO_VECTOR), 1.0)] == ["a", "b", "c"]
    # with every vector, as before: a cosine below zero counts as zero
    assert dict(with_meaning(order, {"a": -0.5, "b": 0.5, "c": 0.0}, 1.0)) == \
        pytest.approx({"a": 1.0, "b": 1.4, "c": 0.5})


# -- what is ready, where it shows ---------------------------------------------------------------------

def test_stats_and_doctor_say_how_many_entries_have_vectors(home, monkeypatch):
    enc = Counting()
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": enc)
    (home / ".memgrove" / "config.toml").write_text("[tree]\nsemantic_weight = 0.5\n", encoding="utf-8")
    with Memory.open(home, durable=False, embed_ahead=False) as m:
        v = m.stats()["vectors"]
        files = m.tree.catalog.count()
        assert (v["meaning"], v["entries"], v["with_vectors"], v["missing"], v["backlog"]) == \
            (True, files, 0, files, None)
        m.search(QUESTION)
        done = m.stats()["vectors"]["with_vectors"]
        assert 0 < done <= SEARCH_EMBEDS
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(home), "doctor", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["vectors"]["with_vectors"] == done
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(home), "doctor"])
    assert f"vectors: {done} of {files} entries ({files - done} missing" in out.output


def test_health_says_what_the_embedder_has_pending(home, monkeypatch):
    from fastapi.testclient import TestClient

    from memgrove.server.app import create_app
    from memgrove.server.settings import ServerSettings

    enc = Counting(hold=True)                   # the embedder's first batch waits: a backlog stays
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": enc)
    (home / ".memgrove" / "config.toml").write_text("[tree]\nsemantic_weight = 0.5\n", encoding="utf-8")
    app = create_app(home, ServerSettings(allowed_hosts="testserver"), mcp=False)
    try:
        with TestClient(app) as client:
            assert enc.started.wait(BOUND_S)
            v = client.get("/health").json()["vectors"]
            assert v["meaning"] is True and v["entries"] > ENTRIES
            assert v["computing"] >= 1 and v["backlog"]["running"] is True
            assert v["backlog"]["unchecked"] > 0 and v["backlog"]["dropped"] == 0
            # /health reads no entry: it counts from the matrix, with the model the embedder loaded
            assert v["with_vectors"] == 0 and v["missing"] == v["entries"]
            enc.go.set()
    finally:
        enc.go.set()


def test_the_embedder_lets_a_search_on_its_way_claim_first(monkeypatch):
    from memgrove.tree.meaning import vector_claims

    monkeypatch.setattr(vector_claims, "COMING_WAIT_S", BLOCK_S)
    db, keys = "test-lets-searches-first.db", ["k1", "k2", "k3"]
    took: list[list[str]] = []
    bulk = threading.Thread(target=lambda: took.append(CLAIMS.claim(db, keys)))   # as the embedder claims
    with CLAIMS.coming(db):                  # a search reading its candidates, loading the model
        bulk.start()
        bulk.join(0.2)                       # the bulk claim waits for it (a broken one has claimed by now)
        mine = CLAIMS.claim(db, keys[:2], SEARCH_EMBEDS)
    bulk.join(BOUND_S)
    try:
        assert mine == ["k1", "k2"] and took == [["k3"]]
    finally:
        CLAIMS.release(db, keys)


def test_while_searches_run_the_embedder_pauses_between_its_batches(monkeypatch):
    from memgrove.tree.meaning import vector_claims

    pauses: list[float] = []
    monkeypatch.setattr(vector_claims.time, "sleep", pauses.append)
    db = "test-pauses.db"
    began = CLAIMS.give_way(db)
    CLAIMS.bulk_done(db, began, 0.2)                    # a batch of 0.2 s, no search beside it
    began = CLAIMS.give_way(db)
    assert pauses == []                                 # nothing to give way to: at once
    CLAIMS.bulk_done(db, began, 0.2)
    with CLAIMS.coming(db):                             # a search began
        pass
    began = CLAIMS.give_way(db)
    assert pauses == [pytest.approx(vector_claims.YIELD * 0.2)]
    CLAIMS.bulk_done(db, began, 30.0)
    with CLAIMS.coming(db):
        pass
    CLAIMS.give_way(db)
    assert pauses[-1] == vector_claims.YIELD_MAX_S      # bounded: closing waits for it

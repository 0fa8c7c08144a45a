"""Ranking by meaning as the product's default where the model is installed ("auto"), and entries'
vectors computed ahead of the searches by the background embedder of a long-lived process
(tree/meaning/embedder.py): at opening (the encoder, the vectors the tree lacks) and after each write.

The suite ranks without meaning unless a test turns it on (helpers/meaning_choice.py); these tests
run the product's default with the real all-MiniLM-L6-v2 (the Makefile installs it), and the
embedder's with meaning on whatever ``SEMANTIC_DEFAULT`` says. Nothing here
compares timings: a background result is polled for, within a bound.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import meaning_choice

from memgrove import Memory
from memgrove.cli import cli
from memgrove.config import config_template
from memgrove.tree.base import model_files
from memgrove.tree.meaning import embedder as embedder_mod, embedding
from memgrove.tree.settings import SEMANTIC_DEFAULT, SEMANTIC_ENV, TreeSettings, ranking_digest
from memgrove.tree.meaning.vectors import key_of

WAIT_S = 120.0     # a bound for background work on a loaded machine, never a measurement
DECISION = "db/choice/postgres.md"
OPS = [
    {"op": "ADD", "path": "db/tips/indexes.md", "title": "Index tips",
     "content": "Decide on indexes after looking at the slow query log of the database.", "reason": "r"},
    {"op": "ADD", "path": DECISION, "title": "Database decision",
     "content": "We will go with Postgres for the orders service.", "reason": "r"},
    {"op": "ADD", "path": "food/lunch/place.md", "title": "Lunch",
     "content": "The team likes the ramen place on the corner.", "reason": "r"},
]


@pytest.fixture
def product(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trees get the product's default semantic_weight ("auto") in this test."""
    meaning_choice.product_default(monkeypatch)


@pytest.fixture
def meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trees rank by meaning unless told otherwise: the product's default where it turns meaning on
    (``SEMANTIC_DEFAULT``), else 0.5."""
    meaning_choice.product_default(monkeypatch)
    if not SEMANTIC_DEFAULT:
        meaning_choice._set_default(0.5)


def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, f"not within {WAIT_S:.0f} s: {what}"
        time.sleep(0.02)


def embedders() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memgrove-embedder"]


def stored(m: Memory, paths: list[str] | None = None) -> bool:
    """Every entry of ``paths`` (default: every file the index holds) has its vector in vectors.db."""
    tree = m.tree
    texts = tree._meaning_texts(paths or sorted(tree.catalog.files()))
    name = embedding.load_encoder().name
    return len(tree.vectors.get_many([key_of(name, t) for t in texts.values()])) == len(set(texts.values()))


# -- the default ------------------------------------------------------------------------------------

def test_the_default_is_on_where_the_model_is_installed_and_off_where_not(tmp_path, product, monkeypatch):
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as m:
        assert m.tree.settings.semantic_weight == SEMANTIC_DEFAULT      # 0.5 unless the default is flipped off
        m.curate(OPS)
        on = m.fingerprint()
    # what the cache keys see is the value in effect: the same as naming it
    assert ranking_digest(TreeSettings()) == ranking_digest(TreeSettings(semantic_weight=SEMANTIC_DEFAULT))
    monkeypatch.setattr(model_files, "model_available", lambda given="": False)
    with Memory.open(tmp_path, durable=False) as m:
        assert m.tree.settings.semantic_weight == 0.0 and m.tree.embedder is None
        assert [h.path for h in m.search("database")]                # no error: ranked by words
        assert (m.fingerprint() != on) == (SEMANTIC_DEFAULT > 0)
    # a weight the user names is kept, model or not (a search then says what to install)
    assert TreeSettings(semantic_weight=0.3).semantic_weight == 0.3


def test_memgrove_semantic_off_keeps_auto_off_here_and_in_started_processes(tmp_path, product, monkeypatch):
    monkeypatch.setenv(SEMANTIC_ENV, "off")
    assert TreeSettings().semantic_weight == 0.0
    assert TreeSettings(semantic_weight=0.3).semantic_weight == 0.3     # a weight named still counts
    with Memory.open(tmp_path, create=True, durable=False) as m:
        assert m.tree.settings.semantic_weight == 0.0 and m.tree.embedder is None
    # a process it starts (a server, a worker) inherits the switch; the suite's own default is not there
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = "from memgrove.tree.settings import TreeSettings; print(TreeSettings().semantic_weight)"
    child = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert child.stdout.strip() == "0.0", child.stderr
    env[SEMANTIC_ENV] = ""
    child = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert child.stdout.strip() == str(float(SEMANTIC_DEFAULT)), child.stderr


def test_auto_can_be_written_and_the_template_says_it(tmp_path, monkeypatch):
    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as m:
        home = m.home
    (home / "config.toml").write_text('[tree]\nsemantic_weight = "auto"\n', encoding="utf-8")
    with Memory.open(tmp_path, durable=False, embed_ahead=False) as m:          # the suite's default is 0
        assert m.tree.settings.semantic_weight == SEMANTIC_DEFAULT
    monkeypatch.setattr(model_files, "model_available", lambda given="": False)
    with Memory.open(tmp_path, durable=False, embed_ahead=False) as m:
        assert m.tree.settings.semantic_weight == 0.0
    (home / "config.toml").write_text('[tree]\nsemantic_weight = "on"\n', encoding="utf-8")
    with pytest.raises(Exception, match='semantic_weight .* must be a number or "auto"'):
        Memory.open(tmp_path)
    assert '# semantic_weight = "auto"' in config_template()


def test_model_available_looks_without_importing(tmp_path):
    assert model_files.model_available("") is True                 # the test venv installs the model
    assert model_files.model_available(str(tmp_path)) is True      # a folder named: its loading will tell
    assert model_files.model_available(str(tmp_path / "nowhere")) is False


# -- the background embedder --------------------------------------------------------------------------

def test_a_write_gets_its_vectors_in_the_background_and_close_stops_the_thread(tmp_path, meaning):
    with Memory.open(tmp_path, create=True, durable=False) as m:
        assert m.tree.embedder is not None and len(embedders()) == 1
        until(lambda: m.tree.encoder is not None, "the encoder loaded at opening")
        m.curate(OPS)
        until(lambda: stored(m, [op["path"] for op in OPS]), "the written entries' vectors")
        until(lambda: stored(m), "the context files' vectors too")
        assert m.tree.notices == []
    assert embedders() == []                                     # no thread outlives its tree


def test_a_search_right_after_a_write_ranks_with_meaning(tmp_path, meaning):
    question = "database choice"       # by the words, the folder's overview; by meaning, the decision
    with Memory.open(tmp_path / "a", create=True, durable=False, semantic_weight=0.0) as m:
        m.curate(OPS)
        assert [h.path for h in m.search(question)][0] == "db/choice/context.md"
    with Memory.open(tmp_path / "b", create=True, durable=False) as m:
        m.curate(OPS)
        first = m.search(question)                               # whatever the embedder has done by now
        until(lambda: stored(m), "every vector")
        later = m.search(question)
        # the same ranking; a vector's last bits depend on the texts it was batched with (1e-8)
        assert [h.path for h in first] == [h.path for h in later] and first[0].path == DECISION
        assert [h.score for h in first] == pytest.approx([h.score for h in later], abs=1e-6)


def test_a_tree_from_before_meaning_gets_its_vectors_without_a_search(tmp_path, meaning):
    with Memory.open(tmp_path, create=True, durable=False, semantic_weight=0.0) as m:
        m.curate(OPS)
    with Memory.open(tmp_path, durable=False) as m:
        until(lambda: stored(m), "the catch-up at opening")


def test_a_failing_encoder_never_fails_a_write_and_leaves_a_notice(tmp_path, meaning, monkeypatch):
    def broken(self, texts, batch=16):
        raise RuntimeError("no BLAS today")

    monkeypatch.setattr(embedding.MiniLM, "encode", broken)
    with Memory.open(tmp_path, create=True, durable=False) as m:
        res = m.curate(OPS)
        assert [r.status for r in res] == ["added"] * 3 and (m.home / "tree" / DECISION).exists()
        until(lambda: any("not computed ahead (RuntimeError: no BLAS today)" in n for n in m.tree.notices),
              "the notice")
        assert m.tree.embedder.alive()                            # it goes on with the next writes
    assert embedders() == []


class Gate:
    """An encoder that waits for ``open`` before each batch, counting the texts it was given."""

    name, dim = "gate-1", 4

    def __init__(self) -> None:
        self.open = threading.Event()
        self.started = threading.Event()
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.started.set()
        assert self.open.wait(WAIT_S)
        self.texts += texts
        return np.tile(np.array([[1.0, 0, 0, 0]], dtype=np.float32), (len(texts), 1))


def gated(m: Memory) -> Gate:
    """A background embedder on ``m`` whose batches wait for the gate (opened without one)."""
    gate = Gate()
    m.tree.encoder = gate
    m.tree.embedder = embedder_mod.Embedder(m.tree)
    return gate


def test_close_finishes_at_most_the_batch_under_way(tmp_path, monkeypatch):
    with Memory.open(tmp_path, create=True, durable=False, semantic_weight=0.5, embed_ahead=False) as m:
        m.curate(OPS)
        gate = gated(m)
        assert gate.started.wait(WAIT_S)                         # the catch-up's first batch waits
        emb = m.tree.embedder
        emb.close(timeout=0.05)
        assert emb.alive()                                       # bounded: it did not wait for the batch
        gate.open.set()
        until(lambda: not emb.alive(), "the thread ends after its batch")
        assert len(gate.texts) == embedder_mod.BATCH             # and took no other
    assert embedders() == []


def test_writes_coalesce_by_path_and_an_overflow_is_left_to_the_searches(tmp_path, monkeypatch):
    monkeypatch.setattr(embedder_mod, "QUEUE_MAX", 2)
    with Memory.open(tmp_path, create=True, durable=False, semantic_weight=0.5, embed_ahead=False) as m:
        m.curate(OPS)
        gate = gated(m)
        assert gate.started.wait(WAIT_S)                         # busy with the catch-up's first batch
        emb = m.tree.embedder
        emb.written(["a/b/1.md", "a/b/2.md", "a/b/1.md"])
        assert list(emb._work.waiting) == ["a/b/1.md", "a/b/2.md"] and emb.dropped == 0
        emb.written(["a/b/3.md", "a/b/2.md", "a/b/4.md"])
        assert emb.dropped == 2
        gate.open.set()
        until(lambda: not emb._work.waiting, "the queue taken")
        # the dropped ones are a search's to compute, as any missing vector is
        m.tree.settings = m.tree.settings.replace(semantic_weight=0.5)
        assert m.search("database")


def test_a_dropped_memory_ends_its_embedder(tmp_path, meaning):
    m = Memory.open(tmp_path, create=True, durable=False)
    until(lambda: m.tree.encoder is not None, "the encoder loaded")
    assert len(embedders()) == 1
    del m
    gc.collect()
    until(lambda: embedders() == [], "the thread of a tree no one holds ends")


# -- who runs one ------------------------------------------------------------------------------------

def test_the_cli_runs_none_and_reindex_embeds_every_entry(tmp_path, meaning):
    with Memory.open(tmp_path, create=True, durable=False, semantic_weight=0.0) as m:
        m.curate(OPS)
    out = CliRunner().invoke(cli, ["--no-server", "reindex", "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["vectors"] == got["documents"] > 3 and embedders() == []
    with Memory.open(tmp_path, durable=False, embed_ahead=False) as m:
        assert stored(m)


def test_the_server_loads_the_encoder_before_any_search(tmp_path, meaning):
    from fastapi.testclient import TestClient

    from memgrove.server.app import create_app
    from memgrove.server.settings import ServerSettings

    with Memory.open(tmp_path, create=True, durable=False, embed_ahead=False) as m:
        m.curate(OPS)
    app = create_app(tmp_path, ServerSettings(allowed_hosts="testserver"), mcp=False)
    inner = app
    while not hasattr(inner, "state"):                           # the guards around the FastAPI app
        inner = inner.app
    with TestClient(app):
        mem = inner.state.projects.memory_for()
        assert mem.tree.embedder is not None
        until(lambda: mem.tree.encoder is not None, "the encoder loaded with no search")
        until(lambda: stored(mem), "the catch-up")
    assert embedders() == []

"""Entries' vectors computed ahead after a one-shot command (tree/meaning/embed_job.py,
memgrove/cli/vectors_ahead.py): the detached job computes every missing vector and exits, one job
per tree at a time, a running server takes them instead, a CLI search computes none while the job
runs (and loads no model while few entries have a vector), status and stats say how far they are,
nothing starts with meaning off, and a forked child starts the job as a process would.

The job is a real detached process running the real model: every wait for it is bounded
(``JOB_S``), and a job still running when a test ends is killed (``reaped``): none outlives the
suite. Nothing compares timings.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.cli import vectors_ahead
from memgrove.tree.base.model_files import model_available
from memgrove.tree.meaning import embed_job
from memgrove.tree.meaning import tree_meaning as meaning_mod
from memgrove.tree.meaning.vector_claims import SEARCH_EMBEDS

JOB_S = 180.0          # a job on a few dozen entries that has not finished by then is stuck
MEANING_ON = "[tree]\nsemantic_weight = 0.5\nembed_job = true\n"
real_model = pytest.mark.skipif(not model_available(), reason="the embedding model is not installed")


class Counting:
    """A stand-in encoder that counts the entry texts it is given (the question's apart)."""

    name, dim = "counting-1", 3

    def __init__(self) -> None:
        self.entries: list[str] = []
        self.questions = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0].startswith("orders"):
            self.questions += 1
        else:
            self.entries += texts
        out = np.ones((len(texts), self.dim), dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _ops(n: int, tag: str = "note") -> list[dict]:
    return [{"op": "ADD", "path": f"ops/orders/{tag}-{i:02d}.md", "title": f"Orders {tag} {i}",
             "content": f"The orders database {tag} number {i} says something of its own: {'x' * i}.",
             "reason": "r"} for i in range(n)]


def _tree(folder: Path, n: int = 12, config: str = MEANING_ON) -> Path:
    """A project of ``n`` entries curated without meaning (no vector), then meaning named on."""
    with Memory.open(folder, create=True, durable=False, semantic_weight=0.0, embed_ahead=False) as m:
        m.curate(_ops(n))
    (folder / ".memgrove" / "config.toml").write_text(config, encoding="utf-8")
    return folder


@pytest.fixture
def reaped():
    """Homes whose job is killed if still running when the test ends (a failure must not leak one)."""
    homes: list[Path] = []
    yield homes
    for home in homes:
        state = embed_job.job_state(home)
        if state and state.get("pid"):
            try:
                os.kill(int(state["pid"]), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _until_done(home: Path) -> None:
    """Wait (bounded) for the job to take its lock and let it go."""
    deadline = time.monotonic() + JOB_S
    while time.monotonic() < deadline:
        log = home / embed_job.LOG
        if embed_job.job_state(home) is None and log.exists() and "done" in log.read_text():
            return
        time.sleep(0.2)
    raise AssertionError(f"the job did not finish in {JOB_S} s: {(home / embed_job.LOG).read_text()}")


def _exact(home: Path) -> dict:
    with Memory.open(home, durable=False, embed_ahead=False) as m:
        return m.tree.vector_state(exact=True)


@real_model
def test_after_curate_the_detached_job_computes_every_missing_vector_and_exits(tmp_path, reaped):
    root = _tree(tmp_path / "p", n=3)
    home = root / ".memgrove"
    reaped.append(home)
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(8):
        (docs / f"page{i}.md").write_text(f"# Page {i}\n\nThe scheduler page {i} explains retries.\n\n"
                                          f"## Details\n\nBackoff doubles each time, note {i}.\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "curate", "--verbatim", "-f", str(docs)])
    assert out.exit_code == 0, out.output
    _until_done(home)
    v = _exact(home)
    assert v["missing"] == 0 and v["with_vectors"] == v["entries"] > 8, v
    assert "embed job done" in (home / embed_job.LOG).read_text()


@real_model
def test_only_one_job_per_tree_at_a_time(tmp_path, reaped):
    root = _tree(tmp_path / "p", n=4)
    home = root / ".memgrove"
    reaped.append(home)
    fd = embed_job._try_lock(home / embed_job.LOCK, shared=False)     # as a running job holds it
    assert fd is not None
    try:
        assert embed_job.job_state(home) is not None
        assert embed_job.start_job(home) is False
        with Memory.open(root, durable=False, embed_ahead=False) as m:
            assert embed_job.run_job(m.tree, home, nice=False) == {"ran": False}
        assert not (home / embed_job.LOG).exists()      # nothing was started
    finally:
        os.close(fd)
    assert embed_job.job_state(home) is None
    with Memory.open(root, durable=False, embed_ahead=False) as m:
        got = embed_job.run_job(m.tree, home, nice=False)
    assert got["ran"] and got["computed"] == _exact(home)["entries"]


def test_a_few_entries_are_embedded_by_the_command_itself(tmp_path, monkeypatch, reaped):
    enc = Counting()
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": enc)
    root = _tree(tmp_path / "p", n=2)
    reaped.append(root / ".memgrove")
    started = []
    monkeypatch.setattr(embed_job, "start_job", lambda home: started.append(home) or True)
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "curate", "--verbatim", "a fact about orders"])
    assert out.exit_code == 0, out.output
    made = len(enc.entries)         # the entry, and the context files it changed (they are ranked too)
    assert 1 <= made <= vectors_ahead.INLINE_MAX and not started      # computed here, nothing started
    assert any(t.startswith("a fact about orders") for t in enc.entries)
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps(_ops(vectors_ahead.INLINE_MAX + 1, "more")), encoding="utf-8")
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "curate", "--ops", str(ops)])
    assert out.exit_code == 0, out.output
    assert len(enc.entries) == made and started      # more than a few: left to the job


@pytest.mark.parametrize("off", ["weight", "env", "setting"])
def test_nothing_is_started_with_meaning_or_the_job_off(tmp_path, monkeypatch, off):
    config = {"weight": "[tree]\nsemantic_weight = 0\nembed_job = true\n",
              "env": "[tree]\nsemantic_weight = \"auto\"\nembed_job = true\n",
              "setting": "[tree]\nsemantic_weight = 0.5\nembed_job = false\n"}[off]
    if off == "env":
        monkeypatch.setenv("MEMGROVE_SEMANTIC", "off")
    root = _tree(tmp_path / "p", n=2, config=config)
    started = []
    monkeypatch.setattr(embed_job, "start_job", lambda home: started.append(home) or True)
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": Counting())
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps(_ops(vectors_ahead.INLINE_MAX + 3, "more")), encoding="utf-8")
    for args in (["curate", "--ops", str(ops)], ["search", "orders database"]):
        out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), *args])
        assert out.exit_code == 0, out.output
    assert not started and not (root / ".memgrove" / embed_job.LOCK).exists()


def test_a_cli_search_computes_no_vector_while_the_job_runs_and_loads_no_model_for_few(tmp_path, monkeypatch):
    root = _tree(tmp_path / "p", n=20)
    home = root / ".memgrove"
    started = []
    monkeypatch.setattr(embed_job, "start_job", lambda h: started.append(h) or False)

    def no_model(model=""):
        raise AssertionError("a search loaded the model while few entries have a vector")

    monkeypatch.setattr(meaning_mod, "load_encoder", no_model)
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "search", "orders database"])
    assert out.exit_code == 0, out.output
    assert started                                   # no vector at all: the job is asked for, no model loaded
    enc = Counting()
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": enc)
    with Memory.open(root, durable=False, embed_ahead=False) as m:     # half the entries get a vector
        texts = list(m.tree._meaning_texts(sorted(m.tree.catalog.files())).values())
        from memgrove.tree.meaning.vector_claims import ready_vectors
        ready_vectors(texts[:len(texts) * 3 // 4], enc, m.tree.vectors)
    enc.entries.clear()
    fd = embed_job._try_lock(home / embed_job.LOCK, shared=False)     # a job runs
    try:
        out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "search", "orders database"])
        assert out.exit_code == 0, out.output
        assert enc.entries == [] and enc.questions == 0      # beside the job: no model, none computed
        with Memory.open(root, durable=False, embed_ahead=False) as m:
            m.tree.meaning_encoder()                           # a process that has the model loaded
            m.search("orders database")
        assert enc.entries == [] and enc.questions == 1      # ranks with what exists, computes none
    finally:
        os.close(fd)
    (home / "config.toml").write_text("[tree]\nsemantic_weight = 0.5\nembed_job = false\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "search", "orders database"])
    assert out.exit_code == 0, out.output
    assert 0 < len(enc.entries) <= SEARCH_EMBEDS              # no job: a handful at most


def test_status_stats_and_health_say_how_far_vectors_are(tmp_path, monkeypatch):
    enc = Counting()
    monkeypatch.setattr(meaning_mod, "load_encoder", lambda model="": enc)
    root = _tree(tmp_path / "p", n=6)
    home = root / ".memgrove"
    fd = embed_job._try_lock(home / embed_job.LOCK, shared=False)
    (home / embed_job.STATE).write_text(json.dumps({"pid": 4242, "found": 8, "done": 3}), encoding="utf-8")
    try:
        out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "status", "--json"])
        assert out.exit_code == 0, out.output
        v = json.loads(out.output)["vectors"]
        assert (v["with_vectors"], v["missing"], v["pending"]) == (0, v["entries"], 5)
        assert v["job"]["pid"] == 4242
        out = CliRunner().invoke(cli, ["--no-server", "--root", str(root), "status"])
        assert f"vectors: 0 of {v['entries']} entries ({v['entries']} missing" in out.output
        assert "a background job (process 4242) has computed 3 of the 8" in out.output
        with Memory.open(root, durable=False, embed_ahead=False) as m:
            cheap = m.tree.vector_state()          # /health's: no entry read, no model
            assert "with_vectors" not in cheap and cheap["pending"] == 5 and cheap["job"]["pid"] == 4242
            assert m.stats()["vectors"]["missing"] == v["entries"]
    finally:
        os.close(fd)
    with Memory.open(root, durable=False, embed_ahead=False) as m:
        assert m.tree.vector_state()["job"] is None and m.tree.vector_state()["pending"] is None


@real_model
def test_a_running_server_takes_the_vectors_of_a_cli_write(tmp_path, reaped):
    from helpers.memgrove_server import start_server, stop_server

    root = _tree(tmp_path / "p", n=3)
    home = root / ".memgrove"
    reaped.append(home)
    srv = start_server(root)
    try:
        deadline = time.monotonic() + JOB_S
        docs = tmp_path / "docs"
        docs.mkdir()
        for i in range(vectors_ahead.INLINE_MAX + 2):
            (docs / f"page{i}.md").write_text(f"# Page {i}\n\nThe cache page {i} explains eviction.\n",
                                              encoding="utf-8")
        out = CliRunner().invoke(cli, ["--root", str(root), "curate", "--verbatim", "-f", str(docs)])
        assert out.exit_code == 0, out.output
        while time.monotonic() < deadline:
            v = srv.http().get("/api/stats").json()["vectors"]
            if v["missing"] == 0:
                break
            time.sleep(0.5)
        assert v["missing"] == 0, v
        assert not (home / embed_job.LOG).exists()       # the server's embedder did it, no job
        health = srv.http(token=None).get("/health").json()["vectors"]
        assert (health["pending"], health["job"], health["entries"]) == (0, None, v["entries"])
    finally:
        assert stop_server(srv) == 0, srv.log_text()


@real_model
def test_a_forked_child_starts_the_job_and_finishes(tmp_path, reaped):
    root = _tree(tmp_path / "p", n=6)
    home = root / ".memgrove"
    reaped.append(home)
    with Memory.open(root, durable=False, embed_ahead=False) as m:
        m.search("orders database")        # no vector yet: the job is asked for, no model here
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                m.search("orders database note")
                m.curate(_ops(2, "child"))
                code = 0
            finally:
                os._exit(code)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError("the forked child hung")
        assert os.waitstatus_to_exitcode(status) == 0
    _until_done(home)
    assert _exact(home)["missing"] in (0, 2)      # the child's two: written after the job's last look, maybe

"""The CLI through a running ``memgrove serve``: the same output and exit codes as in-process
for query, search, curate, show, tree, history, undo and stats (errors included), ``--no-server``
and ``MEMGROVE_NO_SERVER``, stale registrations, writes never applied twice, and a client path
that imports no Whoosh, LangChain or FastAPI.

One server (a subprocess on a free port of 127.0.0.1) serves project ``a``; project ``b`` is
seeded the same and has no server, for the writes. The CLI runs in this process (CliRunner)
with ``Memory.open`` made to fail, so a command that answers was answered by the server.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.memgrove_server import free_port, server_env, start_server, stop_server

from memgrove import Memory
from memgrove.cli import cli
from memgrove.cli.which_memory import ServerMemory
from memgrove.server import registry

FACTS = [
    ("auth/jwt/refresh_rotation.md", "Refresh token rotation", "Refresh tokens rotate on every use; reuse revokes the family."),
    ("infra/deploy/tuesday.md", "Deploy day", "The billing service is deployed every Tuesday at 10:00."),
    ("infra/db/pool.md", "Database pool", "The Postgres connection pool holds 20 connections per worker."),
]
OPS = [{"op": "ADD", "path": "infra/db/replica.md", "title": "Read replica",
        "content": "The read replica lags at most five seconds.", "reason": "ops review"}]
BAD_OPS = [{"op": "ADD", "path": "../escape.md", "title": "x", "content": "y", "reason": "z"},
           {"op": "FROB", "path": "a/b.md", "reason": "z"}]


def _seed(folder: Path) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": p, "title": t, "content": c, "reason": "seed"} for p, t, c in FACTS])
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("cli-server")
    srv = start_server(_seed(base / "a"))
    try:
        yield srv
    finally:
        assert stop_server(srv) == 0, srv.log_text()


@pytest.fixture
def a(served) -> Path:
    return served.project          # the CLI reads the token from .memgrove/server.token


@pytest.fixture
def b(tmp_path: Path) -> Path:
    return _seed(tmp_path / "b")


def run(root: Path, *args: str, no_server: bool = False, inputs: str | None = None) -> tuple[int, str]:
    words = ["--root", str(root), *(["--no-server"] if no_server else []), *args]
    res = CliRunner(env={"COLUMNS": "100"}).invoke(cli, words, input=inputs)
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.output


def norm(text: str, *roots: Path) -> str:
    for r in roots:
        text = text.replace(str(r), "<project>")
    text = re.sub(r"\d+(\.\d+)? ms", "N ms", text)
    text = re.sub(r'"latency_ms": [\d.]+', '"latency_ms": N', text)
    text = re.sub(r"\b\d{8}T\d{6}[\w-]*\b", "<id>", text)          # journal ids
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "<time>", text)


READS = [
    ("query", "postgres connection pool"), ("query", "postgres connection pool", "--verbose"),
    ("query", "postgres connection pool", "--json"), ("query", ""), ("query", " ", "--json"),
    ("search", "connection pool"), ("search", "refresh", "--json"), ("search", ""), ("search", "pool", "-n", "300"),
    ("show", "infra/db/pool.md"), ("show", ".memgrove/tree/infra/db/pool.md"), ("show", "infra/db/pool.md", "--json"),
    ("show", "nope/none/x.md"), ("show", "../x.md", "--json"), ("show", "infra"),
    ("tree",), ("tree", "infra"), ("tree", "--json"), ("tree", "nope"), ("tree", "../up", "--json"),
    ("history",), ("history", "--json"), ("history", "--path", "infra"), ("history", "-n", "1"),
    ("stats",), ("stats", "--json"),
    ("undo", "20000101T000000Z-nope"), ("undo", "20000101T000000Z-nope", "--json"),
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a) or "-")
def test_reads_through_the_server_match_in_process(a, args, monkeypatch):
    if args[0] == "query":                   # both answer from the same, warm cache
        run(a, *args[:2], no_server=True)
    local = run(a, *args, no_server=True)
    with monkeypatch.context() as m:
        m.setattr(Memory, "open", classmethod(lambda *x, **k: pytest.fail("opened in-process")))
        if args[:3] == ("search", "pool", "-n"):
            m.undo()                         # more than the server's 200 results: searched here
        remote = run(a, *args)
    assert remote[0] == local[0], (remote, local)
    mine, theirs = norm(remote[1], a), norm(local[1], a)
    assert mask_scores(mine, theirs) == mask_scores(theirs, mine)


SCORE = re.compile(r"(?<![\d.])[01]\.\d{3,}\b")


def mask_scores(text: str, other: str) -> str:
    """``text`` with its scores masked, once each equals ``other``'s within 0.001: recency decays
    between the two calls, and a score on a rounding boundary (0.9975) prints 0.998, then 0.997."""
    mine, theirs = SCORE.findall(text), SCORE.findall(other)
    assert len(mine) == len(theirs) and all(abs(float(x) - float(y)) <= 0.0011 for x, y in zip(mine, theirs)), \
        (mine, theirs)
    return SCORE.sub("<score>", text)


WRITES = [
    ("curate", "--ops", "{ops}"), ("curate", "--ops", "{ops}", "--json"),
    ("curate", "--ops", "{bad}"), ("curate", "--ops", "{bad}", "--json"),
    ("curate", "The staging cluster runs in eu-west-1."), ("curate", "The canary runs in us-east-2.", "--json"),
    ("curate", "-"), ("curate", "--ops", "{notalist}"), ("curate", "--ops", "{oddlist}"),
]


@pytest.mark.parametrize("args", WRITES, ids=lambda a: " ".join(a))
def test_writes_through_the_server_match_in_process(a, b, args, tmp_path, monkeypatch):
    files = {"{ops}": OPS, "{bad}": BAD_OPS, "{notalist}": {"op": "ADD"}, "{oddlist}": [1, "x"]}
    words = []
    for w in args:
        if w in files:
            f = tmp_path / (w.strip("{}") + ".json")
            f.write_text(json.dumps(files[w]), encoding="utf-8")
            w = str(f)
        words.append(w)
    stdin = "The standby region is eu-central-1.\n" if "-" in args else None
    before, before_b = _journal_size(a), _journal_size(b)
    with monkeypatch.context() as m:
        m.setattr(Memory, "open", classmethod(lambda *x, **k: pytest.fail("opened in-process")))
        remote = run(a, *words, inputs=stdin)
    local = run(b, *words, inputs=stdin)
    try:
        assert remote[0] == local[0], (remote, local)
        assert norm(remote[1], a, b) == norm(local[1], a, b)
        # the same entries written through the server as in-process, once
        assert _new_paths(a, before) == _new_paths(b, before_b)
    finally:
        _undo_new(a, before)


def test_undo_through_the_server_matches_in_process(a, b, monkeypatch):
    before = _journal_size(a)
    for root in (a, b):
        with Memory.open(root) as m:
            m.curate(OPS)
    ids = [_history(root)[0]["id"] for root in (a, b)]
    with monkeypatch.context() as m:
        m.setattr(Memory, "open", classmethod(lambda *x, **k: pytest.fail("opened in-process")))
        remote = run(a, "undo", ids[0])
        again = run(a, "undo", ids[0], "--json")           # nothing left to undo: the error, same as here
    local = run(b, "undo", ids[1])
    local_again = run(b, "undo", ids[1], "--json")
    assert (remote[0], local[0]) == (0, 0)
    assert norm(remote[1], a, b) == norm(local[1], a, b)
    assert again[0] == local_again[0] and norm(again[1]) == norm(local_again[1])
    assert not (a / ".memgrove/tree/infra/db/replica.md").exists()
    assert _journal_size(a) == before + 2


def test_no_server_option_and_environment_work_in_process(a, monkeypatch):
    def fail(*x: Any, **k: Any):
        raise AssertionError("asked the server")

    monkeypatch.setattr(ServerMemory, "_send", fail)
    for words, env in ((["--no-server", "search", "pool"], None), (["search", "pool", "--no-server"], None),
                       (["search", "pool"], "1")):
        if env:
            monkeypatch.setenv("MEMGROVE_NO_SERVER", env)
        code, out = run(a, *words)
        assert code == 0 and "infra/db/pool.md" in out, out
    monkeypatch.delenv("MEMGROVE_NO_SERVER")
    with pytest.raises(AssertionError, match="asked the server"):
        run(a, "search", "pool")                           # without either: the server is asked


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("stale", ["dead pid", "live pid, port closed", "not json"])
def test_stale_registration_falls_back_in_process_silently(b, stale):
    reg = registry.registration_path(b / ".memgrove")
    info = {"pid": _dead_pid() if stale == "dead pid" else os.getpid(), "host": "127.0.0.1",
            "port": free_port(), "auth": True, "token_file": None, "project": str(b)}
    reg.write_text("{not json" if stale == "not json" else json.dumps(info), encoding="utf-8")
    code, out = run(b, "search", "connection pool")
    assert code == 0 and "infra/db/pool.md" in out and "server" not in out.lower()
    code, out = run(b, "curate", "--ops", str(_ops_file(b)))
    assert code == 0 and "1 added" in out
    assert (b / ".memgrove/tree/infra/db/replica.md").exists()


class _Broken(http.server.BaseHTTPRequestHandler):
    """A 'server' of this process: /health as this pid; a write answered 500, or dropped unanswered."""

    mode = "error"

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._json(200, {"status": "ok", "pid": os.getpid()})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).seen.append(self.path)
        if self.mode == "drop":
            self.connection.shutdown(2)       # the server died with the write in hand
            return
        self._json(500, {"error": {"code": "internal", "message": "internal error (OSError); see the server's log"}})

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize("mode", ["error", "drop"])
def test_a_failed_write_is_reported_never_applied_in_process(b, mode):
    handler = type("H", (_Broken,), {"mode": mode, "seen": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        registry.register(b / ".memgrove", {"pid": os.getpid(), "host": "127.0.0.1", "port": httpd.server_address[1],
                                            "auth": False, "token_file": None, "project": str(b)})
        code, out = run(b, "curate", "--ops", str(_ops_file(b)))
        code_json, out_json = run(b, "curate", "--ops", str(_ops_file(b)), "--json")
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)
    assert handler.seen == ["/api/curate", "/api/curate"]
    assert code == 1 and code_json == 1
    expected = "internal error (OSError)" if mode == "error" else "the write may have been applied"
    assert expected in out
    assert json.loads(out_json)["error"]["code"] == ("internal" if mode == "error" else "server_unreachable")
    assert not (b / ".memgrove/tree/infra/db/replica.md").exists()     # not applied here instead


def test_the_client_path_imports_no_whoosh_langchain_or_fastapi(a, served):
    probe = ("import json, sys\nfrom memgrove.cli import cli\n"
             "for words in (['query', 'postgres connection pool'], ['search', 'pool'], ['show', 'infra/db/pool.md'],"
             " ['tree'], ['history'], ['stats']):\n"
             "    try:\n        cli(['--root', sys.argv[1], *words], standalone_mode=False)\n"
             "    except SystemExit:\n        pass\n"
             "print(json.dumps(sorted(sys.modules)))\n")
    env = server_env()
    env.pop("MEMGROVE_RAISE_ERRORS", None)
    out = subprocess.run([sys.executable, "-c", probe, str(a)], env=env, capture_output=True, text=True,
                         timeout=120, cwd=a)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "infra/db/pool.md" in out.stdout
    heavy = sorted({m for m in loaded if m.split(".")[0] in
                    ("whoosh", "langchain", "langchain_core", "langgraph", "fastapi", "starlette", "uvicorn")})
    assert heavy == []
    # the tree was never opened here: the server answered
    assert "memgrove.memory" not in loaded and "memgrove.tree.store" not in loaded


# -- helpers ----------------------------------------------------------------------------------

def _ops_file(root: Path) -> Path:
    f = root.parent / f"ops-{root.name}.json"
    f.write_text(json.dumps(OPS), encoding="utf-8")
    return f


def _journal_size(root: Path) -> int:
    with Memory.open(root) as m:
        return len(m.history(limit=None))


def _history(root: Path) -> list[dict]:
    with Memory.open(root) as m:
        return [r.to_json() for r in m.history(limit=None)]


def _new_paths(root: Path, before: int) -> list[str]:
    hist = _history(root)
    return sorted(r["path"] for r in hist[:len(hist) - before])


def _undo_new(root: Path, before: int) -> None:
    """Leave the served project as the next test expects it."""
    with Memory.open(root) as m:
        for r in m.history(limit=None)[:len(m.history(limit=None)) - before]:
            if r.op != "UNDO":
                m.undo(r.id, force=True)

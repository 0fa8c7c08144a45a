"""The remote client against servers that answer badly (reliability/bad_servers.py, on 127.0.0.1):
every call ends within its ``timeout`` (plus slack) with the library's own error -- ``ServerTimeout``
for a silent or dripping server, ``BadReply`` for a reply too large, not JSON, or of another shape --
through ``Memory.connect``, the store over HTTP and the CLI with ``MEMGROVE_URL``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.remote.memory import BadReply, ServerTimeout
from memgrove.tree.base.errors import InvalidInput, MemgroveError
from reliability.bad_servers import BadServer

TIMEOUT = 1.0
SLACK = 15.0        # generous (a shared machine); a hang takes 600 s
ADD = {"op": "ADD", "path": "notes/a.md", "title": "A", "content": "a", "reason": "r"}

CALLS: dict[str, Callable[[Any], Any]] = {
    "search": lambda m: m.search("x"),
    "query": lambda m: m.query("what?"),
    "read": lambda m: m.read("notes/a.md"),
    "list": lambda m: m.list(),
    "history": lambda m: m.history(),
    "count": lambda m: m.count(),
    "fingerprint": lambda m: m.fingerprint(),
    "doctor": lambda m: m.doctor(),
    "review": lambda m: m.review(),
    "links": lambda m: m.tree.links("notes/a.md"),
    "terms": lambda m: m.tree.engine.terms("refresh tokens"),
    "idf": lambda m: m.tree.engine.idf(["refresh"]),
    "entries": lambda m: m.tree.entry_count(),
    "settings": lambda m: m.tree.settings,
    "curate": lambda m: m.curate([ADD]),
    "undo": lambda m: m.undo("op-1"),
    "ingest": lambda m: m.ingest(text="a note"),
    "queue": lambda m: m.queue_review([ADD]),
}


def _ends_with(error: type[MemgroveError], call: Callable[[], Any]) -> MemgroveError:
    started = time.monotonic()
    with pytest.raises(error) as raised:
        call()
    took = time.monotonic() - started
    assert took < TIMEOUT + SLACK, f"took {took:.1f} s"
    return raised.value


@pytest.mark.parametrize("kind", ["silent", "slow"])
def test_a_silent_or_dripping_server_times_out_within_the_call_timeout(kind):
    with BadServer(kind) as srv, Memory.connect(srv.url, "t", timeout=TIMEOUT) as mem:
        err = _ends_with(ServerTimeout, lambda: mem.search("x"))
        assert f"did not answer /api/search within {TIMEOUT:g} s" in str(err)
        if kind == "silent":
            err = _ends_with(ServerTimeout, lambda: mem.curate([ADD]))
            assert "the write may have been applied" in str(err)


@pytest.mark.parametrize("kind", ["huge", "endless"])
def test_a_reply_past_the_limit_is_refused_without_reading_it_all(kind):
    with BadServer(kind) as srv, Memory.connect(srv.url, "t", timeout=60) as mem:
        for call in ("search", "curate"):
            err = _ends_with(BadReply, lambda: CALLS[call](mem))
            assert "past the client's limit of 67,108,864 bytes" in str(err)
        # what came over the wire: at most the limit and the socket buffers, never the gigabyte
        assert srv.sent < 200 * 2**20
    with BadServer("endless") as srv, Memory.connect(srv.url, "t", max_reply=2**20) as mem:
        _ends_with(BadReply, lambda: mem.search("x"))


@pytest.mark.parametrize("kind", ["deep", "not_json", "list", "missing", "wrong"])
def test_a_reply_not_json_or_of_another_shape_is_bad_reply(kind):
    with BadServer(kind) as srv:
        for name, call in CALLS.items():
            with Memory.connect(srv.url, "t", timeout=TIMEOUT) as mem:     # nothing cached from the last call
                try:
                    err = _ends_with(BadReply, lambda: call(mem))
                except BaseException as exc:
                    raise AssertionError(f"{name}: {type(exc).__name__}: {exc}") from exc
                assert srv.url in str(err) and err.code == "bad_reply", (name, err)


@pytest.mark.parametrize("kind", ["silent", "endless", "list", "missing", "wrong"])
def test_the_store_over_http_ends_with_the_library_errors(kind):
    from memgrove.store.remote import RemoteContextTreeStore

    error = {"silent": ServerTimeout}.get(kind, BadReply)
    with BadServer(kind) as srv, RemoteContextTreeStore(srv.url, token="t", timeout=TIMEOUT) as store:
        if kind != "silent":
            _ends_with(error, lambda: store.get(("notes",), "a"))
        _ends_with(error, lambda: store.put(("notes",), "a", {"text": "a"}))


@pytest.mark.parametrize("kind", ["silent", "huge", "deep", "list", "missing"])
def test_the_cli_with_memgrove_url_says_one_line(kind, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with BadServer(kind) as srv:
            env = {"MEMGROVE_URL": srv.url, "MEMGROVE_TOKEN": "t", "MEMGROVE_TIMEOUT": str(TIMEOUT)}
            started = time.monotonic()
            res = CliRunner().invoke(cli, ["search", "refresh tokens"], env=env, catch_exceptions=False)
            assert time.monotonic() - started < TIMEOUT + SLACK
    finally:
        os.chdir(old)
    lines = res.output.strip().splitlines()
    assert res.exit_code == 1 and len(lines) == 1, res.output
    assert lines[0].startswith("Error: memgrove serve at") and "Traceback" not in res.output
    assert not (Path(tmp_path) / ".memgrove").exists()


def test_settings_of_the_client_are_checked():
    with pytest.raises(InvalidInput, match="MEMGROVE_TIMEOUT"):
        os.environ["MEMGROVE_TIMEOUT"] = "soon"
        try:
            Memory.connect("http://127.0.0.1:9", "t")
        finally:
            del os.environ["MEMGROVE_TIMEOUT"]
    with pytest.raises(InvalidInput, match="timeout"):
        Memory.connect("http://127.0.0.1:9", "t", timeout=0)
    with pytest.raises(InvalidInput) as bad:
        Memory.connect("http://ann:s3cret@127.0.0.1:9", "t")
    assert "s3cret" not in str(bad.value) and "***@127.0.0.1:9" in str(bad.value)
    with pytest.raises(InvalidInput):
        Memory.connect("http://127.0.0.1:port", "t")


@pytest.mark.parametrize("kind", ["silent", "slow", "huge", "endless", "deep", "list", "missing"])
def test_the_fast_path_of_the_cli_says_one_line(kind, tmp_path, monkeypatch, capsys):
    """``memgrove search`` beside a registered server (memgrove/cli/fastpath.py): /health answers as
    the server, then the search is answered badly."""
    from memgrove.cli import fastpath
    from memgrove.server import registry

    Memory.open(tmp_path / "b", create=True).close()
    monkeypatch.setenv("MEMGROVE_TIMEOUT", str(TIMEOUT))
    with BadServer(kind, health={"pid": os.getpid()}) as srv:
        registry.register(tmp_path / "b" / ".memgrove", {"pid": os.getpid(), "host": "127.0.0.1", "port": srv.port,
                                                         "auth": False, "token_file": None,
                                                         "project": str(tmp_path / "b")})
        started = time.monotonic()
        code = fastpath.run(["--root", str(tmp_path / "b"), "search", "pool"])
        assert time.monotonic() - started < TIMEOUT + SLACK
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.startswith(f"Error: memgrove serve at {srv.url}") and err.count("\n") == 1, err
    word = {"silent": "did not answer", "slow": "did not answer", "huge": "past the client's limit",
            "endless": "past the client's limit", "deep": "not JSON", "list": "another shape"}.get(kind, "another shape")
    assert word in err, err


def test_the_fast_path_leaves_a_replica_it_has_no_token_for_to_the_click_cli(tmp_path, monkeypatch):
    from memgrove.cli import fastpath
    from memgrove.server import registry

    Memory.open(tmp_path / "r", create=True).close()
    monkeypatch.delenv("MEMGROVE_TOKEN", raising=False)
    (tmp_path / "r" / ".memgrove" / "replica.json").write_text('{"primary": "http://127.0.0.1:9", "remote": "x"}')
    with BadServer("silent", health={"pid": os.getpid()}) as srv:
        registry.register(tmp_path / "r" / ".memgrove", {"pid": os.getpid(), "host": "127.0.0.1", "port": srv.port,
                                                         "auth": True, "token_file": None,
                                                         "project": str(tmp_path / "r")})
        assert fastpath.run(["--root", str(tmp_path / "r"), "search", "pool"]) is None
        assert srv.requests == 0

"""``ContextTreeStore(url=...)`` against a real ``memgrove serve`` on 127.0.0.1: what only the remote
store has (the conformance suite, tests/test_store_conformance.py, runs the shared behaviour on it).

Its writes are the server's curate batches (journaled, undoable, one batch one generation), its
errors are the in-process exceptions, ``MEMGROVE_URL`` makes ``ContextTreeStore()`` and the
``langgraph.json`` store remote, and several processes of one LangGraph app share one memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from helpers.memgrove_server import server_env, start_server, stop_server
from helpers.store_server import StoreServer
from langgraph.store.base import PutOp

from memgrove import ContextTreeStore, Memory
from memgrove.store.tree_store import server_store
from memgrove.store.remote import RemoteContextTreeStore, ServerError, ServerUnreachable, remote_from_env
from memgrove.tree.base.errors import BatchRejected, InvalidInput, OperationConflict

HELPERS = Path(__file__).resolve().parent / "helpers"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory):
    with StoreServer(tmp_path_factory.mktemp("store_remote")) as s:
        yield s


def test_writes_are_the_servers_curate_batches(srv: StoreServer, tmp_path: Path) -> None:
    project = tmp_path / "p"
    with srv.store(project) as s:
        s.put(("m",), "k", {"text": "first words"})
        s.put(("m",), "k", {"text": "second words"})
        s.delete(("m",), "k")
        with Memory.open(project) as m:
            records = m.history(3)
            assert [r.op for r in records] == ["DELETE", "UPSERT", "UPSERT"]
            assert {r.actor for r in records} == {"langgraph-store"}
            m.undo(records[0].id)                                       # the delete, undone
        gen = project / ".memgrove" / "generation"
        before = int(gen.read_text())
        s.batch([PutOp(("bulk", f"n{i % 3}"), f"k{i}", {"i": i}) for i in range(30)])
        assert int(gen.read_text()) == before + 1                      # one batch, one write
        assert s.get(("m",), "k").value == {"text": "second words"}
        assert [h.key for h in s.search(("m",), query="second words")] == ["k"]
    text = (project / ".memgrove" / "tree" / "bulk" / "n1" / "k1.md").read_text(encoding="utf-8")
    assert "key: k1" in text                                           # an entry of the served tree


def test_errors_are_the_in_process_exceptions(srv: StoreServer, tmp_path: Path) -> None:
    project = tmp_path / "p"
    with srv.store(project) as s:
        r = srv.server.http(token=(project / ".memgrove" / "server.token").read_text().strip()).post(
            "/api/curate", json={"operations": [{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Rotation",
                                                 "content": "Refresh tokens rotate.", "reason": "seed"}]})
        assert r.status_code == 200, r.text
        assert s.get(("auth", "jwt"), "rotation").value["title"] == "Rotation"
        with pytest.raises(OperationConflict, match="does not overwrite"):
            s.put(("auth", "jwt"), "rotation", {"text": "overwritten"})
        with pytest.raises(BatchRejected, match="NUL"):
            s.put(("m",), "k", {"x": "a\x00b"})                        # refused by the server's curate
        with pytest.raises(InvalidInput, match="not JSON-serializable"):
            s.put(("m",), "k", {"x": object()})                         # refused before anything is sent
        with pytest.raises(InvalidInput, match="not JSON-serializable"):
            s.search(("m",), filter={"when": object()})
        with pytest.raises(ServerError) as bad:
            s.search(("m",), limit=5000)
        assert bad.value.code == "invalid_request" and "1000" in str(bad.value)
        assert s.get(("m",), "k") is None
    with ContextTreeStore(url=srv.url, token="not-the-token") as wrong:
        with pytest.raises(ServerError) as denied:
            wrong.get(("m",), "k")
        assert denied.value.code == "unauthorized"


def test_the_wire_error_codes_come_back_as_classes() -> None:
    from memgrove.store.errors import InvalidNamespace, NotSupported
    from memgrove.store.remote import error_of

    def back(code: str, **extra):
        return error_of({"error": {"code": code, "message": "m", **extra}}, 400, "http://x")

    assert type(back("operation_conflict")) is OperationConflict
    assert type(back("invalid_input")) is InvalidInput
    assert isinstance(back("invalid_namespace"), InvalidNamespace)
    assert isinstance(back("not_supported"), NotImplementedError) and isinstance(back("not_supported"), NotSupported)
    rejected = back("batch_rejected", errors=["one", "two"])
    assert isinstance(rejected, BatchRejected) and rejected.errors == ["one", "two"]
    odd = back("something_new")
    assert isinstance(odd, ServerError) and odd.code == "something_new"


def test_a_server_that_is_not_there_is_unreachable(tmp_path: Path) -> None:
    from helpers.memgrove_server import free_port

    with ContextTreeStore(url=f"http://127.0.0.1:{free_port()}", token="t") as s:
        with pytest.raises(ServerUnreachable, match="not reachable"):
            s.put(("m",), "k", {"x": 1})
        with pytest.raises(ServerUnreachable):
            s.get(("m",), "k")
    with pytest.raises(InvalidInput, match="http"):
        ContextTreeStore(url="127.0.0.1:8765")


def test_memgrove_url_makes_the_store_remote(srv: StoreServer, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    token = srv.add_project(project)
    monkeypatch.setenv("MEMGROVE_URL", srv.url)
    monkeypatch.setenv("MEMGROVE_TOKEN", token)
    assert remote_from_env() == (srv.url, token)
    with ContextTreeStore() as s:
        assert isinstance(s, RemoteContextTreeStore) and repr(s) == f"ContextTreeStore(url={srv.url!r})"
        s.put(("env",), "k", {"text": "through the server"})
    assert (project / ".memgrove" / "tree" / "env").is_dir()
    with server_store() as s:                                   # langgraph.json's store
        assert isinstance(s, RemoteContextTreeStore)
        assert s.get(("env",), "k").value == {"text": "through the server"}
    with ContextTreeStore(tmp_path / "local") as s:                # a folder given stays local
        assert not isinstance(s, RemoteContextTreeStore) and s.get(("env",), "k") is None
    with pytest.raises(TypeError, match="not both"):
        ContextTreeStore(tmp_path / "local", url=srv.url)
    monkeypatch.delenv("MEMGROVE_URL")
    assert remote_from_env() is None
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path / "home"))
    with ContextTreeStore() as s:                                  # no URL: the memory here
        assert not isinstance(s, RemoteContextTreeStore)


def test_the_token_of_the_project_served_here_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    Memory.open(project, create=True).close()
    server = start_server(project)
    try:
        monkeypatch.delenv("MEMGROVE_TOKEN", raising=False)
        monkeypatch.setenv("MEMGROVE_HOME", str(project))
        with ContextTreeStore(url=server.url) as s:                # its .memgrove/server.token
            s.put(("m",), "k", {"x": 1})
            assert s.get(("m",), "k").value == {"x": 1}
    finally:
        assert stop_server(server) == 0, server.log_text()


def test_a_write_past_request_timeout_writes_nothing(tmp_path: Path) -> None:
    from memgrove.tree.writes.writer_lock import WriterLock

    project = tmp_path / "p"
    Memory.open(project, create=True).close()
    (project / ".memgrove" / "config.toml").write_text("[server]\nrequest_timeout = 2\n")
    server = start_server(project)
    try:
        with ContextTreeStore(url=server.url, token=server.token) as s:
            with WriterLock(server.home / "write.lock", timeout=10).hold():    # the server's write waits
                with pytest.raises(ServerError) as late:
                    s.batch([PutOp(("slow",), f"k{i}", {"i": i}) for i in range(50)])
                assert s.search(("slow",)) == []                                # reads are not queued
            assert late.value.code == "timeout" and "nothing was written" in str(late.value)
            s.put(("quick",), "k", {"i": 0})
            assert s.search(("slow",)) == [] and [i.key for i in s.search(("quick",))] == ["k"]
    finally:
        assert stop_server(server) == 0, server.log_text()


def test_a_body_over_the_limit_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    Memory.open(project, create=True).close()
    (project / ".memgrove" / "config.toml").write_text("[server]\nmax_body_bytes = 100000\n")
    server = start_server(project)
    try:
        with ContextTreeStore(url=server.url, token=server.token) as s:
            with pytest.raises(ServerError) as big:
                s.put(("m",), "k", {"text": "x" * 200_000})
            assert big.value.code == "too_large"
            assert s.get(("m",), "k") is None
    finally:
        assert stop_server(server) == 0, server.log_text()


@pytest.mark.parametrize("workers", [3])
def test_app_processes_share_one_memory(srv: StoreServer, tmp_path: Path, workers: int) -> None:
    """Several processes of one LangGraph app (``store=ContextTreeStore()``, ``MEMGROVE_URL`` set),
    writing at once: each sees every item of the others, and the server's journal holds them all."""
    project = tmp_path / "shared"
    token = srv.add_project(project)
    env = server_env(MEMGROVE_URL=srv.url, MEMGROVE_TOKEN=token, MEMGROVE_HOME=str(tmp_path / "nowhere"))
    n = 8
    procs = [subprocess.Popen([sys.executable, str(HELPERS / "store_app_worker.py"), f"w{w}", str(n), str(workers),
                               "async" if w % 2 else "sync"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(workers)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-4000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    every = sorted(f"w{w}-{i}" for w in range(workers) for i in range(n))
    for out in outs:
        assert out["repr"] == f"ContextTreeStore(url={srv.url!r})"
        assert out["keys"] == every                                     # each sees all the others' items
        assert out["found"] == {f"w{w}": sorted(f"w{w}-{i}" for i in range(n)) for w in range(workers)}
    assert not (tmp_path / "nowhere" / ".memgrove").exists()           # no worker opened a memory of its own
    with Memory.open(project) as m:
        ops = m.history(None)
        assert len(ops) == workers * n and {r.actor for r in ops} == {"langgraph-store"}


def test_abatch_runs_off_the_event_loop(srv: StoreServer, tmp_path: Path) -> None:
    import asyncio

    async def run(s) -> list:
        await asyncio.gather(*(s.aput(("a",), f"k{i}", {"i": i}) for i in range(6)))
        return sorted(i.key for i in await s.asearch(("a",), limit=10))

    with srv.store(tmp_path / "p") as s:
        assert asyncio.run(run(s)) == [f"k{i}" for i in range(6)]


def test_the_route_is_documented_in_openapi(srv: StoreServer) -> None:
    r = httpx.get(f"{srv.url}/openapi.json", headers={"Authorization": f"Bearer {srv.server.token}"},
                  trust_env=False, timeout=10)
    assert r.status_code == 200 and "/api/store/batch" in r.json()["paths"]


def test_env_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGROVE_URL", "  ")
    assert remote_from_env() is None
    monkeypatch.setenv("MEMGROVE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("MEMGROVE_TOKEN", raising=False)
    assert remote_from_env() == ("http://127.0.0.1:9", None)
    assert os.environ["MEMGROVE_URL"]


def test_the_route_refuses_what_langgraph_refuses(srv: StoreServer, tmp_path: Path) -> None:
    """What the client checks before sending, the server checks again: any HTTP client may call it."""
    project = tmp_path / "p"
    c = srv.server.http(token=srv.add_project(project))

    def send(*ops: dict) -> httpx.Response:
        return c.post("/api/store/batch", json={"ops": list(ops)})

    r = send({"op": "put", "namespace": ["a.b"], "key": "k", "value": {"x": 1}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_namespace", r.text
    r = send({"op": "put", "namespace": ["a"], "key": "k", "value": {"x": 1}, "ttl": 5})
    assert r.status_code == 400 and r.json()["error"]["code"] == "not_supported", r.text
    r = send({"op": "drop_everything", "namespace": ["a"]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
    r = send({"op": "search", "namespace_prefix": ["a"], "filter": {"n": {"$regex": "x"}}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_input", r.text
    assert not (project / ".memgrove" / "tree" / "a").exists()
    r = send({"op": "put", "namespace": ["a"], "key": "k", "value": {"x": 1}}, {"op": "get", "namespace": ["a"], "key": "k"},
             {"op": "list_namespaces"}, {"op": "search", "namespace_prefix": ["a"]})
    assert r.status_code == 200, r.text
    put, got, spaces, found = r.json()["results"]
    assert put is None and got is None and spaces == []           # reads see the tree before the batch's writes
    assert found == []
    [item] = send({"op": "search", "namespace_prefix": ["a"]}).json()["results"][0]
    assert set(item) == {"namespace", "key", "value", "created_at", "updated_at", "score"}
    assert item["namespace"] == ["a"] and item["value"] == {"x": 1} and item["score"] is None


def test_a_store_outlives_a_restart_of_its_server(tmp_path: Path) -> None:
    project = tmp_path / "p"
    Memory.open(project, create=True).close()
    server = start_server(project, "--no-auth")
    with ContextTreeStore(url=server.url) as s:
        try:
            s.put(("m",), "k", {"text": "before the restart"})
        finally:
            assert stop_server(server) == 0, server.log_text()
        with pytest.raises(ServerUnreachable):
            s.get(("m",), "k")
        server = start_server(project, "--no-auth", port=server.port)
        try:
            assert s.get(("m",), "k").value == {"text": "before the restart"}     # a new connection, same store
            s.put(("m",), "k2", {"text": "after it"})
            assert sorted(i.key for i in s.search(("m",))) == ["k", "k2"]
        finally:
            assert stop_server(server) == 0, server.log_text()

"""``memgrove serve``'s life: registration, graceful stop on SIGTERM/SIGINT (the write in
flight finishes, exit 0, registration removed), SIGKILL mid-curation (the next start
recovers and every acknowledged curation is there), stale registrations, refused starts,
``MEMGROVE_TOKEN``, and the client-side finder that imports nothing heavy.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from helpers.memgrove_server import free_port, server_env, start_server, stop_server

from memgrove import Memory
from memgrove.server import registry

pytestmark = pytest.mark.slow


def _project(tmp_path: Path, name: str = "proj") -> Path:
    folder = tmp_path / name
    Memory.open(folder, create=True).close()
    return folder


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _assert_stopped_cleanly(srv, sig: int) -> None:
    assert stop_server(srv, sig) == 0, srv.log_text()
    assert not (srv.home / "server.json").exists()
    assert not (srv.home / "server.token").exists()
    assert registry.find_server(srv.home) is None


def test_sigterm_finishes_the_write_in_flight(tmp_path: Path):
    srv = start_server(_project(tmp_path))
    docs = [{"name": f"doc{i}.txt", "text": f"Widget {i} is blue and weighs {i} grams."} for i in range(30)]
    result: dict = {}

    def post() -> None:
        try:
            result["r"] = srv.client.post("/api/ingest", json={"files": docs}, timeout=60)
        except httpx.HTTPError as exc:   # pragma: no cover - reported by the assertion below
            result["error"] = exc

    try:
        t = threading.Thread(target=post)
        t.start()
        deadline = time.monotonic() + 10
        # the write has started once its first batch is journaled
        while not (srv.home / "journal" / "journal.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        srv.process.send_signal(signal.SIGTERM)
        t.join(60)
        assert srv.process.wait(30) == 0, srv.log_text()
        assert "error" not in result, result
        r = result["r"]
        assert r.status_code == 200, r.text
        assert len(r.json()["results"]) == 30
        with Memory.open(srv.project) as m:
            assert len(m.history(limit=None)) == 30
            assert m.doctor().ok
        assert not (srv.home / "server.json").exists()
    finally:
        stop_server(srv)       # it exited by itself: this closes its clients' sockets


def test_sigkill_mid_curation_loses_nothing_acknowledged(tmp_path: Path):
    project = _project(tmp_path)
    srv = start_server(project)
    acked: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        c = httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {srv.token}"}, timeout=10,
                         trust_env=False)
        i = 0
        while not stop.is_set():
            path = f"crash/test/entry_{i}.md"
            try:
                r = c.post("/api/curate", json={"operations": [{
                    "op": "ADD", "path": path, "title": f"Entry {i}", "content": f"Fact number {i}.",
                    "reason": "crash test"}]})
            except httpx.HTTPError:
                break
            if r.status_code == 200:
                acked.append(path)
            i += 1
        c.close()

    threads = [threading.Thread(target=writer)]
    threads[0].start()
    deadline = time.monotonic() + 120   # a wait for 8 writes, not a rate
    while len(acked) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(srv.process.pid, signal.SIGKILL)
    srv.process.wait(10)
    stop_server(srv)           # dead already: closes its clients' sockets
    stop.set()
    threads[0].join(20)
    assert len(acked) >= 8
    assert json.loads((srv.home / "server.json").read_text())["pid"] == srv.process.pid   # left behind
    assert registry.find_server(srv.home) is None                                          # ... and ignored

    again = start_server(project)
    try:
        reg = json.loads((again.home / "server.json").read_text())
        assert reg["pid"] == again.process.pid
        for path in acked:
            r = again.client.get(f"/api/entries/{path}")
            assert r.status_code == 200, (path, r.text)
        hist = {h["path"] for h in again.client.get("/api/history", params={"limit": 0}).json()["operations"]}
        assert set(acked) <= hist
        assert again.client.get("/api/doctor").json()["ok"] is True
    finally:
        assert stop_server(again) == 0


def test_stale_registrations_are_ignored_and_replaced(tmp_path: Path):
    project = _project(tmp_path)
    home = project / ".memgrove"
    port = free_port()
    registry.register(home, {"pid": _dead_pid(), "host": "127.0.0.1", "port": port, "auth": True})
    assert registry.find_server(home) is None
    # a live process that is not a server on that port (ours)
    registry.register(home, {"pid": os.getpid(), "host": "127.0.0.1", "port": port, "auth": True})
    assert registry.find_server(home) is None
    registry.register(home, {"pid": "garbage"})   # type: ignore[dict-item]
    assert registry.find_server(home) is None
    (home / "server.json").write_text("{not json", encoding="utf-8")
    assert registry.find_server(home) is None

    srv = start_server(project, port=port)
    try:
        found = registry.find_server(home)
        assert found is not None and found["pid"] == srv.process.pid
        assert found["url"] == f"http://127.0.0.1:{port}" and found["token"] == srv.token
        r = httpx.get(f"{found['url']}/api/tree", headers={"Authorization": f"Bearer {found['token']}"},
                      trust_env=False)
        assert r.status_code == 200
    finally:
        _assert_stopped_cleanly(srv, signal.SIGTERM)


def test_second_server_for_a_live_one_is_refused_and_sigint_stops_cleanly(tmp_path: Path):
    project = _project(tmp_path)
    srv = start_server(project)
    try:
        out = subprocess.run([sys.executable, "-m", "memgrove", "--root", str(project), "serve", "--port",
                              str(free_port())], env=server_env(), capture_output=True, text=True, timeout=60)
        assert out.returncode == 1
        assert f"a server (pid {srv.process.pid}) already serves this project" in out.stderr
        assert registry.find_server(srv.home)["pid"] == srv.process.pid
    finally:
        _assert_stopped_cleanly(srv, signal.SIGINT)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10"])
def test_no_auth_off_loopback_is_refused(tmp_path: Path, host: str):
    project = _project(tmp_path)
    out = subprocess.run([sys.executable, "-m", "memgrove", "--root", str(project), "serve", "--host", host,
                          "--no-auth", "--port", str(free_port())], env=server_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    assert "--no-auth is allowed on a loopback host only" in out.stderr
    assert not (project / ".memgrove" / "server.json").exists()


def test_memgrove_token_sets_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    srv = start_server(_project(tmp_path), env={"MEMGROVE_TOKEN": "s3cret-token-from-env"})
    try:
        reg = json.loads((srv.home / "server.json").read_text())
        assert reg["auth"] is True and reg["token_file"] is None
        assert not (srv.home / "server.token").exists()          # a secret given is not copied to disk
        assert srv.http(token="s3cret-token-from-env").get("/api/tree").status_code == 200
        assert srv.http(token=None).get("/api/tree").status_code == 401
        monkeypatch.setenv("MEMGROVE_TOKEN", "s3cret-token-from-env")
        assert registry.find_server(srv.home)["token"] == "s3cret-token-from-env"
    finally:
        assert stop_server(srv) == 0


def test_finder_imports_nothing_heavy():
    code = ("import sys, memgrove.server.registry as r; r.find_server('/nonexistent/.memgrove'); "
            "print(sorted(m for m in ('whoosh', 'yaml', 'diskcache', 'fastapi', 'uvicorn', 'starlette', 'langserve', "
            "'langchain', 'langchain_core', 'langgraph', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=server_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

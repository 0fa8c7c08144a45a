"""``memgrove ui``: with no server running it starts one in the background and prints a one-time
sign-in link; with one running it uses it. The link signs a browser in once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx

from memgrove import Memory
from helpers.memgrove_server import free_port, server_env, start_server, stop_server


def _ui(project, *args: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "memgrove", "--root", str(project), "ui", "--no-open", "--json", *args],
                       env=server_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(r.stdout)


def _signed_in(link: str) -> httpx.Response:
    with httpx.Client(follow_redirects=True, timeout=30, trust_env=False) as c:
        return c.get(link)


def test_memgrove_ui_starts_a_server_when_none_runs_and_signs_in_once(tmp_path):
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate([{"op": "ADD", "path": "notes/misc/hello.md", "title": "Hello page", "content": "Hi.",
                   "reason": "seed"}])
    out = _ui(tmp_path, "--port", str(free_port()))
    try:
        assert out["started"] is True and "/ui/login?code=" in out["url"]
        page = _signed_in(out["url"])
        assert page.status_code == 200 and page.url.path == "/ui/tree" and "Notes" in page.text
        assert _signed_in(out["url"]).status_code == 401          # used once
        again = _ui(tmp_path)
        assert again["started"] is False and again["pid"] == out["pid"]
    finally:
        os.kill(out["pid"], signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (tmp_path / ".memgrove" / "server.json").exists():
            time.sleep(0.2)
    assert not (tmp_path / ".memgrove" / "server.json").exists()


def test_memgrove_ui_uses_the_server_already_running(tmp_path):
    Memory.open(tmp_path, create=True, durable=False).close()
    srv = start_server(tmp_path)
    try:
        out = _ui(tmp_path)
        assert out["started"] is False and out["pid"] == srv.process.pid
        assert out["url"].startswith(srv.url + "/ui/login?code=")
        assert _signed_in(out["url"]).url.path == "/ui/tree"
    finally:
        assert stop_server(srv) == 0

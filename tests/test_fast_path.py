"""The console script's fast path (memgrove/cli/fastpath.py): ``memgrove query`` and ``search``
through a running ``memgrove serve`` print what the click CLI prints through the same server
(text, ``--verbose``, ``--json``, errors and exit codes), import neither click nor
``http.client``, and hand every other command line to the click CLI unchanged.

Both are run as a user runs them: the console script next to this interpreter, and
``python -m memgrove.cli`` (the click CLI), as subprocesses against one real server.
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
from helpers.memgrove_server import free_port, inherited_env, start_server, stop_server

from memgrove import Memory
from memgrove.cli import fastpath
from memgrove.server import registry

SCRIPT = Path(sys.executable).parent / "memgrove"
FACTS = [
    ("auth/jwt/refresh_rotation.md", "Refresh token rotation", "Refresh tokens rotate on every use; reuse revokes the family."),
    ("infra/deploy/tuesday.md", "Deploy day", "The billing service is deployed every Tuesday at 10:00."),
    ("infra/db/pool.md", "Database pool", "The Postgres connection pool holds 20 connections per worker."),
    ("infra/db/replica.md", "Read replica \x1b[31mred\x1b[0m", "The read replica lags at most five seconds; "
     "the connection pool of the replica holds 10 connections."),
]


def _seed(folder: Path) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": p, "title": t, "content": c, "reason": "seed"} for p, t, c in FACTS])
        m.curate([{"op": "ARCHIVE", "path": "infra/deploy/tuesday.md", "reason": "old"}])
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    srv = start_server(_seed(tmp_path_factory.mktemp("fast-path") / "a"))
    try:
        yield srv
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def _env(**extra: str) -> dict[str, str]:
    return {**inherited_env(), "COLUMNS": "100", **extra}


def cli(cmd: list[str], cwd: Path, **env: str) -> tuple[int, str, str]:
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=_env(**env), timeout=120)
    return out.returncode, out.stdout, out.stderr


def fast(project: Path, *words: str, **env: str) -> tuple[int, str, str]:
    return cli([str(SCRIPT), *words], project, **env)


def click_cli(project: Path, *words: str, **env: str) -> tuple[int, str, str]:
    return cli([sys.executable, "-m", "memgrove.cli", *words], project, **env)


def norm(text: str) -> str:
    text = re.sub(r"\d+(\.\d+)? ms", "N ms", text)
    text = re.sub(r'"latency_ms": [\d.]+', '"latency_ms": N', text)
    # a score may move in its last digit between two calls (recency decays)
    return re.sub(r"(?<![\d.])\d\.\d{3,}\b", "<score>", text)


CASES = [
    ("query", "postgres connection pool"), ("query", "postgres connection pool", "--verbose"),
    ("query", "postgres connection pool", "-v", "--json"), ("--json", "query", "refresh token reuse"),
    ("query", "read replica lag"), ("query", ""), ("query", " ", "--json"),
    ("query", "what is the weather on the moon"),
    ("search", "connection pool"), ("search", "connection pool", "--json"), ("search", "pool", "-n", "1"),
    ("search", "pool", "--limit=1", "--json"), ("search", "pool", "-n1"), ("search", "replica"),
    ("search", "billing tuesday", "--include-archived"), ("search", "billing tuesday"),
    ("search", "zebra unicorn"), ("search", ""), ("search", "", "--json"),
    ("search", "20 connections per worker?", "--root", "."),
]


@pytest.mark.parametrize("words", CASES, ids=lambda w: " ".join(w) or "-")
def test_the_fast_path_prints_what_the_click_cli_prints(served, words):
    a = served.project
    if "query" in words:                     # both then answer from the same, warm cache
        click_cli(a, *words)
    code, out, err = click_cli(a, *words)
    fcode, fout, ferr = fast(a, *words, PYTHONPROFILEIMPORTTIME="1")
    imported = {line.split("|")[-1].strip() for line in ferr.splitlines() if line.startswith("import time:")}
    assert "click" not in imported and "http.client" not in imported, "fell back to the click CLI"
    ferr = "\n".join(line for line in ferr.splitlines() if not line.startswith("import time:"))
    assert (fcode, norm(fout), ferr.strip()) == (code, norm(out), err.strip())


def test_terminal_text_is_escaped_and_json_is_the_same(served):
    code, out, _ = fast(served.project, "search", "replica", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and hits[0]["title"] == "Read replica \x1b[31mred\x1b[0m"   # JSON escapes, loads back
    code, out, _ = fast(served.project, "search", "replica")
    assert "\x1b" not in out and "Read replica \\x1b[31mred\\x1b[0m" in out


@pytest.mark.parametrize("words", [
    ("search", "pool", "-n", "300"), ("search", "pool", "-n", "0"), ("search", "pool", "--no-server"),
    ("--no-server", "query", "pool"), ("query", "--help"), ("query",), ("query", "a", "b"), ("tree",),
    ("search", "pool", "--", "x"), ("query", "pool", "--limit", "3"), ("--version",), ()])
def test_what_the_fast_path_does_not_know_goes_to_the_click_cli(served, words, capsys):
    assert fastpath.run(["--root", str(served.project), *words]) is None
    assert capsys.readouterr() == ("", "")


def test_the_click_cli_answers_what_the_fast_path_passes_on(served):
    a = served.project
    for words in (("search", "pool", "-n", "300"), ("query", "pool", "--no-server"), ("stats", "--json"),
                  ("search", "pool", "-n", "0")):
        click_cli(a, *words)                 # a query's second asking is cached: both see it cached
        code, out, err = click_cli(a, *words)
        fcode, fout, ferr = fast(a, *words)
        assert (fcode, norm(fout), ferr) == (code, norm(out), err)


@pytest.mark.parametrize("env", [{"MEMGROVE_NO_SERVER": "1"}, {"MEMGROVE_URL": "http://127.0.0.1:9"}])
def test_the_environment_can_turn_the_fast_path_off(served, env, monkeypatch, capsys):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert fastpath.run(["--root", str(served.project), "search", "pool"]) is None


def test_without_a_server_the_console_script_works_in_process(tmp_path):
    b = _seed(tmp_path / "b")
    assert fastpath.run(["--root", str(b), "search", "pool"]) is None
    code, out, err = fast(b, "search", "connection pool")
    assert (code, norm(out), err) == (lambda r: (r[0], norm(r[1]), r[2]))(click_cli(b, "search", "connection pool"))
    assert code == 0 and "infra/db/pool.md" in out


@pytest.mark.parametrize("stale", ["dead pid", "port closed", "another process answers", "not json"])
def test_a_stale_registration_goes_to_the_click_cli(tmp_path, stale):
    b = _seed(tmp_path / "b")
    pid = os.getpid()
    if stale == "dead pid":
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        p.wait()
        pid = p.pid
    port = free_port()
    httpd = None
    if stale == "another process answers":
        httpd = _serve(_handler(pid=pid + 1))
        port = httpd.server_address[1]
    info = {"pid": pid, "host": "127.0.0.1", "port": port, "auth": False, "token_file": None, "project": str(b)}
    registry.registration_path(b / ".memgrove").write_text("{x" if stale == "not json" else json.dumps(info))
    try:
        assert fastpath.run(["--root", str(b), "search", "pool"]) is None
        if httpd is not None:
            assert httpd.RequestHandlerClass.seen == ["/health"]      # asked who it is, nothing more
    finally:
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()


@pytest.mark.parametrize("answer", ["error", "not json", "chunked", "http/1.0"])
def test_what_a_server_answers_is_read_whatever_its_framing(tmp_path, answer, capsys):
    """Errors become the click CLI's line and status; chunked and one-request-per-connection
    servers are read too (uvicorn sends a length and keeps the connection)."""
    b = _seed(tmp_path / "b")
    handler = _handler(pid=os.getpid(), mode=answer)
    httpd = _serve(handler)
    registry.register(b / ".memgrove", {"pid": os.getpid(), "host": "127.0.0.1", "port": httpd.server_address[1],
                                        "auth": False, "token_file": None, "project": str(b)})
    try:
        code = fastpath.run(["--root", str(b), "search", "pool"])
        json_code = fastpath.run(["--root", str(b), "search", "pool", "--json"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    out, err = capsys.readouterr()
    assert handler.seen == ["/health", "/api/search?q=pool&limit=11"] * 2
    if answer == "error":
        assert (code, json_code) == (1, 1)
        assert err == "Error: no index \\x1b here\n"
        assert json.loads(out) == {"error": {"code": "index_error", "message": "no index \\x1b here"}}
    elif answer == "not json":
        assert (code, json_code) == (1, 1)
        assert err.startswith("Error: memgrove serve at http://127.0.0.1:") and "with something not JSON" in err
    else:
        assert (code, json_code) == (0, 0) and err == ""
        assert "infra/db/pool.md" in out and json.loads(out[out.index("{"):])["hits"][0]["path"] == "infra/db/pool.md"


def test_a_server_that_does_not_answer_sends_the_command_to_the_click_cli(tmp_path, capsys):
    b = _seed(tmp_path / "b")
    handler = _handler(pid=os.getpid(), mode="drop")
    httpd = _serve(handler)
    registry.register(b / ".memgrove", {"pid": os.getpid(), "host": "127.0.0.1", "port": httpd.server_address[1],
                                        "auth": False, "token_file": None, "project": str(b)})
    try:
        assert fastpath.run(["--root", str(b), "query", "pool"]) is None
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert capsys.readouterr() == ("", "")


def test_parse_reads_the_words_as_click_does():
    p = fastpath.parse
    assert p(["query", "q"])["text"] == "q"
    assert p(["--root", "/x", "--json", "search", "q", "-n", "3", "--include-archived"]) == {
        "command": "search", "root": "/x", "json": True, "verbose": False, "limit": 3, "archived": True, "text": "q"}
    assert p(["search", "q", "--root=/y", "--limit=4"])["root"] == "/y"
    assert p(["query", "q", "--root", "/a", "--root", "/b"])["root"] == "/b"     # the last wins, as in click
    for words in (["search", "q", "-n", "-1"], ["search", "q", "-n", "x"], ["search", "q", "-n", "٣"],
                  ["query", "q", "--root"], ["query", "q", "--root", "--json"], ["query", "-"], ["query", "-x"],
                  ["search", "q", "-v"], ["query", "q", "--include-archived"], ["query", "q", "-h"]):
        assert p(words) is None, words


def test_find_home_finds_the_folder_locate_home_finds(tmp_path, monkeypatch):
    from memgrove.tree.base.home import locate_home

    monkeypatch.delenv("MEMGROVE_HOME", raising=False)
    b = _seed(tmp_path / "b")
    (b / "sub" / "deeper").mkdir(parents=True)
    for start in (b, b / "sub" / "deeper", b / ".memgrove"):
        assert fastpath.find_home(str(start)) == str(locate_home(start))
    monkeypatch.chdir(b / "sub")
    assert fastpath.find_home(None) == str(locate_home(None))
    monkeypatch.setenv("MEMGROVE_HOME", str(b))
    monkeypatch.chdir(tmp_path)
    assert fastpath.find_home(None) == str(b / ".memgrove")
    assert fastpath.find_home(str(tmp_path)) is None                        # no project there
    assert fastpath.find_home(str(b / "sub" / ".." / "sub")) is None        # `..`: the click CLI decides
    link = tmp_path / "link"
    link.mkdir()
    (link / ".memgrove").symlink_to(b / ".memgrove")
    assert fastpath.find_home(str(link)) is None                            # refused in-process, with its error


# -- a stand-in server of this process ---------------------------------------------------------
def _handler(pid: int, mode: str = "ok") -> Any:
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0" if mode == "http/1.0" else "HTTP/1.1"
        seen: list[str] = []

        def log_message(self, *a: Any) -> None:
            pass

        def do_GET(self) -> None:
            type(self).seen.append(self.path)
            if self.path == "/health":
                return self._send(200, json.dumps({"status": "ok", "pid": pid}).encode())
            if mode == "drop":
                self.connection.shutdown(2)
                return
            if mode == "error":
                return self._send(500, json.dumps({"error": {"code": "index_error",
                                                             "message": "no index \x1b here"}}).encode())
            if mode == "not json":
                return self._send(502, b"<html>bad gateway</html>")
            hit = {"path": "infra/db/pool.md", "title": "Database pool", "score": 1.0, "excerpt": "pool"}
            self._send(200, json.dumps({"query": "pool", "hits": [hit]}).encode(), chunked=mode == "chunked")

        do_POST = do_GET

        def _send(self, status: int, body: bytes, chunked: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for part in (body[:7], body[7:]):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
                return
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return H


def _serve(handler: Any) -> http.server.ThreadingHTTPServer:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd

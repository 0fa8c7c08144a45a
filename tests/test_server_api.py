"""The REST API of ``memgrove serve`` over a real socket: every route, auth on and off,
Host/Origin refusal, the body limit, two projects on one server, the error shapes.

Two servers per module: one with a token (project A, a second project B beside it) and one
with ``--no-auth``. Both run as subprocesses on free ports of 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.memgrove_server import Server, start_server, stop_server

from memgrove import Memory
from memgrove.server.errors import RequestTimeout, status_of
from memgrove.server.projects import Projects

BODY_LIMIT = 64 * 1024

FACTS = [
    ("auth/jwt/refresh_rotation.md", "Refresh token rotation", "Refresh tokens rotate on every use; reuse revokes the family."),
    ("infra/deploy/tuesday.md", "Deploy day", "The billing service is deployed every Tuesday at 10:00."),
    ("infra/db/pool.md", "Database pool", "The Postgres connection pool holds 20 connections per worker."),
]


def _seed(folder: Path, facts=FACTS) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": p, "title": t, "content": c, "reason": "seed"} for p, t, c in facts])
    (folder / ".memgrove" / "config.toml").write_text(f"[server]\nmax_body_bytes = {BODY_LIMIT}\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("serve")
    a = _seed(base / "a")
    b = _seed(base / "b", [("notes/b/only_b.md", "Only in B", "Project B keeps its own notes about kiwis.")])
    c = _seed(base / "c")
    auth = start_server(a, "--project", str(b))
    try:
        open_ = start_server(c, "--no-auth")
    except BaseException:
        stop_server(auth)
        raise
    try:
        yield {"auth": auth, "open": open_, "b": b}
    finally:
        codes = stop_server(auth), stop_server(open_)
        assert codes == (0, 0), (codes, auth.log_text(), open_.log_text())


@pytest.fixture
def srv(servers) -> Server:
    return servers["auth"]


# every route but /health, with a request that succeeds on a seeded project
ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/api/tree", None),
    ("GET", "/api/tree?folder=infra", None),
    ("GET", "/api/entries/infra/db/pool.md", None),
    ("GET", "/api/search?q=connection+pool", None),
    ("POST", "/api/query", {"question": "postgres connection pool"}),
    ("POST", "/api/curate", {"operations": [{"op": "UPSERT", "path": "auth/routes/probe.md", "title": "Probe",
                                             "content": "A probe entry.", "reason": "auth probe"}]}),
    ("POST", "/api/ingest", {"text": "The staging cluster runs in eu-west-1."}),
    ("GET", "/api/history", None),
    ("GET", "/api/stats", None),
    ("GET", "/api/doctor", None),
    ("POST", "/api/doctor/fix", None),
    ("GET", "/openapi.json", None),
    ("GET", "/docs", None),
    ("POST", "/query/invoke", {"input": {"question": "postgres connection pool"}}),
    ("GET", "/query/input_schema", None),
]


def _call(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    return client.request(method, path, json=body) if body is not None else client.request(method, path)


def test_health_answers_without_a_token(srv: Server):
    r = srv.http(token=None).get("/health")
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ok" and r.json()["pid"] == srv.process.pid


def test_a_401_says_where_the_token_file_is(srv: Server):
    """A shell whose MEMGROVE_HOME names the project has no .memgrove/ in its current folder: the
    refusal must say which file holds the token, not only that one is missing."""
    r = srv.http(token=None).get("/api/tree")
    assert r.status_code == 401
    assert str(srv.home / "server.token") in r.json()["error"]["message"], r.text


@pytest.mark.parametrize("method,path,body", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_every_route_needs_the_token(srv: Server, method: str, path: str, body: Any):
    for client in (srv.http(token=None), srv.http(token="wrong-token")):
        r = _call(client, method, path, body)
        assert r.status_code == 401, (path, r.status_code, r.text)
        assert r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
    r = _call(srv.client, method, path, body)
    assert r.status_code == 200, (path, r.text)


@pytest.mark.parametrize("method,path,body", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_no_auth_server_answers_every_route_without_a_token(servers, method: str, path: str, body: Any):
    srv = servers["open"]
    r = _call(srv.http(token=None), method, path, body)
    assert r.status_code == 200, (path, r.text)


def test_token_file_is_private_and_registered(srv: Server):
    tok = srv.home / "server.token"
    assert tok.stat().st_mode & 0o777 == 0o600
    reg = json.loads((srv.home / "server.json").read_text())
    assert reg["pid"] == srv.process.pid and reg["port"] == srv.port and reg["host"] == "127.0.0.1"
    assert reg["token_file"] == str(tok) and reg["auth"] is True and reg["started"]
    assert (srv.home / "server.json").stat().st_mode & 0o777 == 0o600


def test_tree_and_entries(srv: Server):
    top = srv.client.get("/api/tree").json()
    assert {f["path"] for f in top["folders"]} >= {"auth", "infra"}
    infra = srv.client.get("/api/tree", params={"folder": "infra"}).json()
    assert {f["path"] for f in infra["folders"]} == {"infra/db", "infra/deploy"}
    e = srv.client.get("/api/entries/infra/db/pool.md").json()
    assert e["path"] == "infra/db/pool.md" and e["title"] == "Database pool"
    assert "20 connections per worker" in e["text"]


@pytest.mark.parametrize("path,status,code", [
    ("/api/entries/infra/db/missing.md", 404, "invalid_path"),
    ("/api/tree?folder=nowhere/at_all", 404, "invalid_path"),
    ("/api/entries/..%2F..%2Fetc/passwd.md", 400, "invalid_path"),
    ("/api/entries/%2Fetc/x/passwd.md", 400, "invalid_path"),
    ("/api/no/such/route", 404, "not_found"),
    ("/api/search", 400, "invalid_request"),
])
def test_errors_have_the_shape_and_status(srv: Server, path: str, status: int, code: str):
    r = srv.client.get(path)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and isinstance(err["message"], str) and "\n" not in err["message"]


def test_search(srv: Server):
    r = srv.client.get("/api/search", params={"q": "billing deployed tuesday", "limit": 3}).json()
    assert r["hits"][0]["path"] == "infra/deploy/tuesday.md"
    assert set(r["hits"][0]) >= {"path", "title", "score", "excerpt"}


def test_query_returns_what_memory_query_returns(srv: Server):
    q = "postgres connection pool workers"
    got = srv.client.post("/api/query", json={"question": q}).json()
    with Memory.open(srv.project) as m:
        local = m.query(q).to_dict()       # asked again: from the cache the server filled
    assert set(got) == set(local)
    assert got["tier"] == 2 and local["tier"] == 0 and local["cached"]
    assert got["text"] == local["text"] and got["sources"] == local["sources"] == ["infra/db/pool.md"]


def test_curate_history_undo(srv: Server):
    op = {"op": "ADD", "path": "team/people/ana.md", "title": "Ana", "content": "Ana owns the auth service.",
          "reason": "told by Ana"}
    r = srv.client.post("/api/curate", json={"operations": [op]})
    assert r.status_code == 200, r.text
    [res] = r.json()["results"]
    assert res["status"] == "added" and res["id"]
    assert (srv.home / "tree" / "team" / "people" / "ana.md").is_file()

    again = srv.client.post("/api/curate", json={"operations": [op]})      # ADD onto an existing entry
    assert again.status_code == 400 and again.json()["error"]["code"] == "batch_rejected", again.text
    assert again.json()["error"]["errors"]

    hist = srv.client.get("/api/history", params={"path": "team/people/ana.md"}).json()["operations"]
    assert [h["id"] for h in hist] == [res["id"]] and hist[0]["reason"] == "told by Ana"

    upd = srv.client.post("/api/curate", json={"operations": [{
        "op": "UPDATE", "path": "team/people/ana.md", "content": "Ana owns auth and billing.", "reason": "news"}]})
    assert upd.status_code == 200, upd.text
    conflict = srv.client.post("/api/undo", json={"id": res["id"]})       # the ADD: changed since
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "operation_conflict", conflict.text
    undone = srv.client.post("/api/undo", json={"id": upd.json()["results"][0]["id"]})
    assert undone.status_code == 200 and undone.json()["status"] == "undone", undone.text
    assert "Ana owns the auth service." in srv.client.get("/api/entries/team/people/ana.md").json()["text"]

    unknown = srv.client.post("/api/undo", json={"id": "20990101T000000-deadbeef00"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "journal_error", unknown.text


def test_curate_rejects_a_bad_batch_whole(srv: Server):
    r = srv.client.post("/api/curate", json={"operations": [
        {"op": "ADD", "path": "ok/fine/entry.md", "title": "Fine", "content": "x", "reason": "r"},
        {"op": "ADD", "path": "../escape.md", "title": "Bad", "content": "x", "reason": "r"}]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "batch_rejected", r.text
    assert not (srv.home / "tree" / "ok").exists()
    assert srv.client.post("/api/curate", json={"ops": []}).json()["error"]["code"] == "invalid_request"


def test_ingest_text_files_and_conversation(srv: Server):
    r = srv.client.post("/api/ingest", json={
        "text": "The on-call rota changes every Monday.",
        "files": [{"name": "runbook.md", "text": "# Runbook\n\n## Restart\n\nRestart the worker with systemctl.\n"}],
        "conversation": {"id": "chat1", "messages": [
            {"id": "m1", "speaker": "Ana", "text": "Where do the backups go?", "time": "2026-03-02T09:15:00Z"},
            {"id": "m2", "speaker": "Ben", "text": "Backups go to the cold storage bucket nightly.",
             "time": "2026-03-02T09:16:00Z"}]}})
    assert r.status_code == 200, r.text
    paths = [x["path"] for x in r.json()["results"]]
    assert any(p.startswith("files/runbook/") for p in paths), paths
    assert any(p.startswith("conversations/chat1/") for p in paths), paths
    restart = next(p for p in paths if p.startswith("files/runbook/"))
    assert "systemctl" in srv.client.get(f"/api/entries/{restart}").json()["text"]
    hits = srv.client.get("/api/search", params={"q": "backups cold storage"}).json()["hits"]
    assert hits and hits[0]["path"].startswith("conversations/chat1/")
    empty = srv.client.post("/api/ingest", json={})
    assert empty.status_code == 400 and empty.json()["error"]["code"] == "invalid_input"


def test_stats_and_doctor(srv: Server):
    srv.client.post("/api/query", json={"question": "refresh token rotation reuse"})
    stats = srv.client.get("/api/stats").json()
    assert stats["queries"] >= 1 and stats["tiers"]
    doc = srv.client.get("/api/doctor").json()
    assert doc["ok"] is True and doc["entries"] >= 3
    assert srv.client.post("/api/doctor/fix").json()["ok"] is True


def test_openapi_lists_the_routes(srv: Server):
    paths = srv.client.get("/openapi.json").json()["paths"]
    for p in ("/health", "/api/tree", "/api/entries/{path}", "/api/search", "/api/query", "/api/curate",
              "/api/ingest", "/api/history", "/api/undo", "/api/stats", "/api/doctor", "/query/invoke",
              "/curate/invoke", "/agent/invoke"):
        assert p in paths, p


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{{port}}", "attacker.test:80", "10.0.0.5:{port}",
                                  "localhost:1", "127.0.0.1:{port}@evil.com", "127.0.0.1:{port}.evil.com",
                                  "localhost:{port}:80", "localhost:", "[::1]x:{port}", "local host:{port}"])
def test_foreign_host_header_is_refused(srv: Server, host: str):
    host = host.format(port=srv.port)
    for path in ("/health", "/api/tree"):
        r = srv.client.get(path, headers={"Host": host})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", (host, r.text)


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "localhost"])
def test_loopback_host_header_is_accepted(srv: Server, host: str):
    assert srv.client.get("/api/tree", headers={"Host": host.format(port=srv.port)}).status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "https://attacker.test:443", "null",
                                    "http://localhost:1", "chrome-extension://abcdef",
                                    "http://127.0.0.1:{port}.evil.com", "http://evil.com@127.0.0.1:{port}",
                                    "http://127.0.0.1:{port}@evil.com", "http://127.0.0.1:{port}/path", "http://[::1"])
def test_foreign_origin_is_refused(srv: Server, origin: str):
    origin = origin.format(port=srv.port)
    r = srv.client.post("/api/curate", headers={"Origin": origin}, json={"operations": [
        {"op": "ADD", "path": "pwned/by/page.md", "title": "x", "content": "x", "reason": "x"}]})
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", (origin, r.text)
    assert not (srv.home / "tree" / "pwned").exists()


def test_own_origin_is_accepted(srv: Server):
    r = srv.client.get("/api/tree", headers={"Origin": f"http://127.0.0.1:{srv.port}"})
    assert r.status_code == 200, r.text


def test_body_limit(srv: Server):
    big = {"text": "word " * (BODY_LIMIT // 4)}
    r = srv.client.post("/api/ingest", json=big)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large", r.text

    def chunks():                     # no Content-Length: counted as it arrives
        for _ in range(BODY_LIMIT // 1024 + 8):
            yield b" " * 1024
    r = srv.client.post("/api/ingest", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large", r.text
    assert srv.client.get("/health").status_code == 200


def test_two_projects_on_one_server(servers, srv: Server):
    b: Path = servers["b"]
    b_token = (b / ".memgrove" / "server.token").read_text().strip()
    assert b_token != srv.token
    client_b = srv.http(token=b_token)
    op = {"op": "ADD", "path": "notes/b/second.md", "title": "Second B note", "content": "Kiwis ripen in May.",
          "reason": "project B"}
    r = client_b.post("/api/curate", headers={"X-Memgrove-Project": str(b)}, json={"operations": [op]})
    assert r.status_code == 200, r.text
    assert (b / ".memgrove" / "tree" / "notes" / "b" / "second.md").is_file()
    assert not (srv.home / "tree" / "notes" / "b").exists()
    hits = client_b.get("/api/search", params={"q": "kiwis", "project": str(b)}).json()["hits"]
    assert {h["path"] for h in hits} == {"notes/b/only_b.md", "notes/b/second.md"}
    assert client_b.get("/api/search", params={"q": "kiwis"}).json()["hits"] == hits    # B's token: B
    assert srv.client.get("/api/search", params={"q": "kiwis"}).json()["hits"] == []
    assert client_b.get("/api/entries/notes/b/only_b.md", headers={"X-Memgrove-Project": str(b)}).status_code == 200
    assert srv.client.get("/api/entries/notes/b/only_b.md").status_code == 404
    missing = srv.client.get("/api/tree", params={"project": str(b.parent / "nowhere")})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "tree_not_found", missing.text


def test_concurrent_curations_all_land_and_queries_keep_answering(srv: Server):
    n = 12

    async def main() -> tuple[list[httpx.Response], list[httpx.Response]]:
        async with httpx.AsyncClient(base_url=srv.url, headers={"Authorization": f"Bearer {srv.token}"},
                                     timeout=30.0, trust_env=False) as c:
            writes = [c.post("/api/curate", json={"operations": [{
                "op": "ADD", "path": f"load/many/entry_{i}.md", "title": f"Entry {i}",
                "content": f"Load entry number {i}.", "reason": "concurrency"}]}) for i in range(n)]
            reads = [c.get("/api/search", params={"q": "connection pool"}) for _ in range(n)]
            got = await asyncio.gather(*writes, *reads)
            return list(got[:n]), list(got[n:])

    writes, reads = asyncio.run(main())
    assert all(w.status_code == 200 for w in writes), [w.text for w in writes if w.status_code != 200]
    assert all(r.status_code == 200 and r.json()["hits"] for r in reads)
    ids = {w.json()["results"][0]["id"] for w in writes}
    hist = srv.client.get("/api/history", params={"path": "load/many", "limit": 0}).json()["operations"]
    assert {h["id"] for h in hist} == ids and len(hist) == n


def test_requests_past_the_timeout_answer_504():
    # what a write past request_timeout answers: tests/test_server_cancel.py
    assert status_of(RequestTimeout("x")) == 504


def test_the_server_runs_on_the_suites_engine(srv: Server):
    """A tantivy run of the suite (MEMGROVE_TEST_ENGINE) starts its servers on tantivy too: the
    index the server last built is the suite's engine's."""
    from helpers import engine_choice

    assert srv.client.get("/api/search?q=postgres").status_code == 200
    assert engine_choice.index_engine(srv.project / ".memgrove") == engine_choice.chosen()

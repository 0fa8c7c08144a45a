"""A server serves the projects it was started for, each with its own token, and nothing else.

One real ``memgrove serve`` (a subprocess on 127.0.0.1) for project ``a``, started with
``--project b``; ``c`` is a memgrove project beside them that it does not serve. Every way a
request can name a project (REST header and parameter, LangServe, MCP's ``project`` argument and
header) is tried with every token: a project not served is 404 and its ``.memgrove/`` is left
byte for byte as it was (no index, cache, signals or token made there); another project's token
is 403; the owner adds ``c`` while the server runs and ``c`` then answers to its own token only.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from helpers.memgrove_server import Server, start_server, stop_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from memgrove import Memory
from memgrove.cli import cli


def _seed(folder: Path, path: str, words: str) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": path, "title": words.split()[0], "content": words, "reason": "seed"}])
    return folder


def snapshot(folder: Path) -> dict[str, Any]:
    """Every file under ``folder`` with its bytes and mode, every folder and link: what 'unchanged' means."""
    out: dict[str, Any] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            st = p.lstat()
            out[str(p.relative_to(folder))] = (st.st_mode, p.read_bytes() if p.is_file() and not p.is_symlink()
                                               else os.readlink(p) if p.is_symlink() else None)
    return out


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("served")
    a = _seed(base / "a", "infra/db/pool.md", "Pool: the Postgres pool holds 20 connections.")
    b = _seed(base / "b", "notes/b/kiwis.md", "Kiwis: project B grows kiwis.")
    c = _seed(base / "c", "notes/c/secret.md", "Secret: project C keeps its secrets about plums.")
    d = _seed(base / "d", "notes/d/plums.md", "Plums: project D added while serving sorts plums.")
    (base / "link_to_c").symlink_to(c)
    srv = start_server(a, "--project", str(b))
    try:
        yield {"srv": srv, "a": a, "b": b, "c": c, "d": d, "base": base,
               "b_token": (b / ".memgrove" / "server.token").read_text().strip()}
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def names_of_c(env: dict[str, Any]) -> list[str]:
    """Every way of naming ``c`` (the server's working folder is ``base``)."""
    c, base = env["c"], env["base"]
    return [str(c), str(c / ".memgrove"), "c", "./c", "../" + base.name + "/c", str(base / "a" / ".." / "c"),
            "/proc/self/cwd/c", str(base / "link_to_c"), str(c / "notes" / "c"), "~/../../" + str(c)]


def test_each_served_project_has_its_own_private_token(env):
    srv, b = env["srv"], env["b"]
    tok_b = b / ".memgrove" / "server.token"
    assert tok_b.stat().st_mode & 0o777 == 0o600 and env["b_token"] != srv.token
    reg = json.loads((b / ".memgrove" / "server.json").read_text())
    assert reg["pid"] == srv.process.pid and reg["port"] == srv.port and reg["project"] == str(b.resolve())
    assert reg["token_file"] == str(tok_b) and reg["served_by"] == str(env["a"].resolve())
    owner = srv.home / "server.owner-token"
    assert owner.stat().st_mode & 0o777 == 0o600


def test_a_token_reaches_its_own_project_only(env):
    srv, a, b = env["srv"], env["a"], env["b"]
    as_b = srv.http(token=env["b_token"])
    # without a name, a token's project is its own
    assert [h["path"] for h in as_b.get("/api/search", params={"q": "kiwis"}).json()["hits"]] == ["notes/b/kiwis.md"]
    assert srv.client.get("/api/search", params={"q": "kiwis"}).json()["hits"] == []
    for client, other in ((srv.client, b), (as_b, a)):
        for how in ({"headers": {"X-Memgrove-Project": str(other)}}, {"params": {"project": str(other)}}):
            r = client.get("/api/tree", **how)
            assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text
        r = client.post("/api/curate", headers={"X-Memgrove-Project": str(other)}, json={"operations": [
            {"op": "ADD", "path": "pwned/by/other.md", "title": "x", "content": "x", "reason": "x"}]})
        assert r.status_code == 403, r.text
        assert not (other / ".memgrove" / "tree" / "pwned").exists()
        r = client.post("/query/invoke", headers={"X-Memgrove-Project": str(other)},
                        json={"input": {"question": "kiwis"}})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text


def test_a_project_not_served_is_not_found_and_left_untouched(env):
    srv, c = env["srv"], env["c"]
    before = snapshot(c)
    for client in (srv.client, srv.http(token=env["b_token"])):
        for name in names_of_c(env):
            for route in ("/api/tree", "/api/search?q=plums", "/api/doctor", "/api/history", "/api/stats"):
                r = client.get(route, headers={"X-Memgrove-Project": name})
                assert r.status_code == 404 and r.json()["error"]["code"] == "tree_not_found", (name, route, r.text)
            r = client.get("/api/entries/notes/c/secret.md", params={"project": name})
            assert r.status_code == 404 and "plums" not in r.text, (name, r.text)
            r = client.post("/api/curate", params={"project": name}, json={"operations": [
                {"op": "ADD", "path": "pwned/by/name.md", "title": "x", "content": "x", "reason": "x"}]})
            assert r.status_code == 404, (name, r.text)
            r = client.post("/query/invoke", headers={"X-Memgrove-Project": name}, json={"input": {"question": "plums"}})
            assert r.status_code == 404 and "plums" not in r.text.replace(name, ""), (name, r.text)
    assert snapshot(c) == before


@pytest.mark.parametrize("name", ["x" * 5000, "/" + "a/" * 3000, "/proc/1/root/etc", "/proc/1/root/" + "b" * 300,
                                  "bad\x7fname", "/dev/null", "/", "%00"])
def test_odd_project_names_are_a_clear_404(env, name: str):
    r = env["srv"].client.get("/api/tree", params={"project": name})
    assert r.status_code == 404 and r.json()["error"]["code"] == "tree_not_found", r.text
    assert len(r.json()["error"]["message"]) < 600


def _mcp(srv: Server, token: str, calls: list[tuple[str, dict[str, Any]]], headers: dict[str, str] | None = None):
    async def main() -> list[Any]:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}", **(headers or {})}, timeout=30,
                                     trust_env=False) as client:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=client) as (read, write, _):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    return [await s.call_tool(name, args) for name, args in calls]

    return asyncio.run(main())


def test_mcp_tools_reach_the_tokens_project_only(env):
    srv, a, b, c = env["srv"], env["a"], env["b"], env["c"]
    before = snapshot(c)
    mine, other, unserved, via_header = _mcp(srv, env["b_token"], [
        ("memgrove_search", {"query": "kiwis"}),
        ("memgrove_search", {"query": "pool", "project": str(a)}),
        ("memgrove_read", {"path": "notes/c/secret.md", "project": str(c)}),
        ("memgrove_curate", {"operations": [{"op": "ADD", "path": "pwned/by/mcp.md", "content": "x",
                                             "reason": "x"}], "project": "/proc/self/cwd/c"}),
    ])
    assert not mine.isError and "notes/b/kiwis.md" in mine.content[0].text
    assert other.isError and other.structuredContent["error"]["code"] == "forbidden", other
    assert unserved.isError and unserved.structuredContent["error"]["code"] == "tree_not_found", unserved
    assert "plums" not in unserved.content[0].text
    assert via_header.isError and via_header.structuredContent["error"]["code"] == "tree_not_found"
    [by_header] = _mcp(srv, srv.token, [("memgrove_list", {})], headers={"X-Memgrove-Project": str(b)})
    assert by_header.isError and by_header.structuredContent["error"]["code"] == "forbidden", by_header
    assert snapshot(c) == before


def test_the_owner_adds_a_project_while_serving(env, tmp_path: Path):
    srv, d = env["srv"], env["d"]
    for token in (srv.token, env["b_token"], None):         # no project's token is the owner's
        r = srv.http(token=token).post("/owner/projects", json={"project": str(d)})
        assert r.status_code == 401, r.text
    owner = (srv.home / "server.owner-token").read_text().strip()
    assert srv.http(token=owner).get("/api/tree").status_code == 401       # nor does the owner's reach a project
    bad = srv.http(token=owner).post("/owner/projects", json={"project": str(tmp_path / "nothing_here")})
    assert bad.status_code == 404 and bad.json()["error"]["code"] == "tree_not_found", bad.text

    res = CliRunner().invoke(cli, ["--root", str(env["a"]), "serve", "--add", str(d)])
    assert res.exit_code == 0 and f"serving {d.resolve()}" in res.output, res.output
    d_token = (d / ".memgrove" / "server.token").read_text().strip()
    assert (d / ".memgrove" / "server.token").stat().st_mode & 0o777 == 0o600
    assert d_token not in (srv.token, env["b_token"], owner)
    hits = srv.http(token=d_token).get("/api/search", params={"q": "plums"}).json()["hits"]
    assert [h["path"] for h in hits] == ["notes/d/plums.md"]
    r = srv.client.get("/api/search", params={"q": "plums", "project": str(d)})
    assert r.status_code == 403, r.text
    listed = srv.http(token=owner).get("/owner/projects").json()["projects"]
    assert [p["project"] for p in listed] == [str(x.resolve()) for x in (env["a"], env["b"], d)]

    # the CLI in d finds the server (d's registration) and sends d's token; in b, b's
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Memory, "open", classmethod(lambda *x, **k: pytest.fail("opened in-process")))
        res = CliRunner().invoke(cli, ["--root", str(d), "search", "plums"])
        assert res.exit_code == 0 and "notes/d/plums.md" in res.output, res.output
        res = CliRunner().invoke(cli, ["--root", str(env["b"]), "search", "kiwis"])
        assert res.exit_code == 0 and "notes/b/kiwis.md" in res.output, res.output


def test_projects_from_the_config_then_stop_then_a_refused_start(tmp_path: Path):
    a = _seed(tmp_path / "a", "infra/db/pool.md", "Pool: twenty connections.")
    b = _seed(tmp_path / "b", "notes/b/kiwis.md", "Kiwis: project B grows kiwis.")
    (a / ".memgrove" / "config.toml").write_text('[server]\nprojects = "../b"\n', encoding="utf-8")
    srv = start_server(a)
    try:
        b_token = (b / ".memgrove" / "server.token").read_text().strip()
        hits = srv.http(token=b_token).get("/api/search", params={"q": "kiwis"}).json()["hits"]
        assert [h["path"] for h in hits] == ["notes/b/kiwis.md"]
    finally:
        assert stop_server(srv) == 0, srv.log_text()
    for home in (a / ".memgrove", b / ".memgrove"):       # registrations and tokens go with the server
        assert not {"server.json", "server.token", "server.owner-token"} & {p.name for p in home.iterdir()}
    srv = start_server(a, "--project", str(tmp_path / "nowhere"), wait=False)
    assert srv.process.wait(90) == 1
    assert "cannot serve" in srv.log_text() and "nowhere" in srv.log_text()
    assert not {"server.json", "server.token", "server.owner-token"} & {p.name for p in (b / ".memgrove").iterdir()}

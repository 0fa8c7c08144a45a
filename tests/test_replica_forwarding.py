"""What a read replica forwards, and to which project; its primary's URL; the CLI in its folder;
a remote whose HEAD names another branch than the one the primary pushes.

Real ``memgrove serve`` processes on 127.0.0.1 (helpers/memgrove_server.py), bare git repositories
in tmp_path as remotes, as in test_replication.py.
"""

from __future__ import annotations

import json
import os
import shutil

import httpx
import pytest
from click.testing import CliRunner
from helpers.memgrove_server import start_server, stop_server
from test_replication import ADD, bare, git, project, until

from memgrove import Memory

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"), pytest.mark.slow]
OTHER = {"op": "ADD", "path": "notes/other/meant.md", "title": "Meant for the other project",
         "content": "This write names the second served project.", "reason": "names q"}


def _stop(*servers) -> None:
    for srv in servers:
        if srv is not None and srv.process.poll() is None:
            assert stop_server(srv) == 0, srv.log_text()


def _entries(folder) -> set[str]:
    with Memory.open(folder) as m:
        return {h.path for h in m.search("second served project", 5)}


@pytest.mark.parametrize("auth", [True, False], ids=["tokens", "no-auth"])
def test_a_write_through_a_replica_reaches_the_project_it_names(tmp_path, auth):
    """A primary serving p and q, a replica of p: a write naming q through the replica is what the
    primary makes of it -- refused with p's token (403), applied to q without tokens -- never p's."""
    remote = bare(tmp_path / "remote.git")
    p = project(tmp_path / "p", remote, push_interval=0.2, pull_interval=0.5)
    q = tmp_path / "q"
    Memory.open(q, create=True).close()
    flags = () if auth else ("--no-auth",)
    env = {"MEMGROVE_TOKEN": "shared-token"} if auth else {}
    primary = replica = None
    try:
        primary = start_server(p, "--project", str(q), *flags, env=env)
        (tmp_path / "r").mkdir()
        replica = start_server(tmp_path / "r", "--replica-of", primary.url, *flags, env=env)
        primary.token = replica.token = "shared-token" if auth else None
        info = json.loads((replica.home / "replica.json").read_text())
        assert info["project"] == str(p.resolve())           # what it follows, as the primary named it
        for how in ({"headers": {"X-Memgrove-Project": str(q)}}, {"params": {"project": str(q)}}):
            r = replica.client.post("/api/curate", json={"operations": [OTHER]}, **how)
            direct = primary.client.post("/api/curate", json={"operations": [OTHER]}, **how) if auth else None
            if auth:      # p's token names p: the primary refuses q, through the replica as directly
                assert r.status_code == direct.status_code == 403, (r.text, direct.text)
                assert r.json() == direct.json()
            else:
                assert r.status_code == 200, r.text
                break
        assert "notes/other/meant.md" not in _entries(p)       # never in the primary's own project
        assert ("notes/other/meant.md" in _entries(q)) is (not auth)
        # a write naming nothing, or the replica's own folder, is the followed project's
        for how in ({}, {"headers": {"X-Memgrove-Project": str(tmp_path / "r")}}):
            op = {**ADD, "path": f"auth/jwt/rotation{len(how)}.md"}
            r = replica.client.post("/api/curate", json={"operations": [op]}, **how)
            assert r.status_code == 200 and r.json()["results"][0]["status"] == "added", r.text
        with Memory.open(p) as m:
            assert m.tree.exists("auth/jwt/rotation0.md") and m.tree.exists("auth/jwt/rotation1.md")
    finally:
        _stop(replica, primary)


def test_a_primary_url_with_credentials_is_refused_and_never_shown(tmp_path):
    from memgrove.server.replica import Replica, ReplicaRefused, ask_primary

    (tmp_path / "r").mkdir()
    with pytest.raises(ReplicaRefused) as refused:
        Replica.prepare(tmp_path / "r", "http://ann:s3cret@127.0.0.1:9", "t")
    assert "s3cret" not in str(refused.value) and "http://***@127.0.0.1:9" in str(refused.value)
    assert "MEMGROVE_TOKEN" in str(refused.value)
    assert not (tmp_path / "r" / ".memgrove").exists()
    # through the CLI: one line, no password
    res = CliRunner().invoke(__import__("memgrove.cli", fromlist=["cli"]).cli,
                             ["--root", str(tmp_path / "r"), "serve", "--replica-of", "http://ann:s3cret@127.0.0.1:9"],
                             env={"MEMGROVE_TOKEN": "t", "MEMGROVE_RAISE_ERRORS": ""})
    assert res.exit_code != 0 and "s3cret" not in res.output and "user:password" in res.output, res.output
    # the Host header a replica sends is host:port, whatever the URL holds
    import socket
    import threading

    got = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                got.append(conn.recv(65536))
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")

        t = threading.Thread(target=answer, daemon=True)
        t.start()
        ask_primary(f"http://ann:s3cret@127.0.0.1:{port}", "/api/replication", "t", timeout=10)
        t.join(10)
    assert f"Host: 127.0.0.1:{port}\r\n".encode() in got[0] and b"s3cret" not in got[0]


def test_a_bare_remote_on_master_and_the_cli_in_a_replicas_folder(tmp_path, monkeypatch):
    """The primary's remote made by a plain ``git init --bare`` (HEAD names master, the primary
    pushes main): the replica serves the primary's entries. In the replica's folder, the plain CLI
    reads (no token file there); a write says where writes go, or goes there with the token."""
    from memgrove.cli import cli

    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote))
    git("--git-dir", str(remote), "symbolic-ref", "HEAD", "refs/heads/master")    # whatever git's default
    primary = replica = None
    try:
        primary = start_server(project(tmp_path / "p", remote, push_interval=0.2, pull_interval=0.5),
                               env={"MEMGROVE_TOKEN": "shared-token"})
        primary.token = "shared-token"
        until(lambda: httpx.get(f"{primary.url}/health").json()["replication"].get("unpushed") == 0,
              what="the primary's first push")
        # what the primary pushed is what a clone of the remote checks out (its HEAD follows the push)
        until(lambda: git("--git-dir", str(remote), "symbolic-ref", "HEAD").strip() == "refs/heads/main",
              what="the remote's HEAD on the pushed branch")
        git("clone", "-q", str(remote), str(tmp_path / "clone"))
        assert (tmp_path / "clone" / "tree" / "infra" / "db" / "pool.md").exists()
        (tmp_path / "r").mkdir()
        replica = start_server(tmp_path / "r", "--replica-of", primary.url, env={"MEMGROVE_TOKEN": "shared-token"})
        replica.token = "shared-token"
        assert (replica.home / "tree" / "infra" / "db" / "pool.md").exists()
        hits = replica.client.get("/api/search", params={"q": "Postgres pool"}).json()["hits"]
        assert hits and hits[0]["path"] == "infra/db/pool.md"

        monkeypatch.delenv("MEMGROVE_HOME", raising=False)
        monkeypatch.delenv("MEMGROVE_TOKEN", raising=False)
        monkeypatch.chdir(tmp_path / "r")

        def run(*args: str, **env: str):
            return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

        res = run("search", "Postgres pool", "--json")
        assert res.exit_code == 0 and json.loads(res.output)["hits"][0]["path"] == "infra/db/pool.md", res.output
        ops = tmp_path / "ops.json"
        ops.write_text(json.dumps([ADD]))
        res = run("curate", "--ops", str(ops))
        lines = res.output.strip().splitlines()
        assert res.exit_code == 1 and len(lines) == 1 and "read replica" in lines[0], res.output
        assert "MEMGROVE_TOKEN" in lines[0] and "bearer token" not in lines[0]
        assert not (replica.home / "journal" / "journal.jsonl").exists()        # nothing applied here
        res = run("curate", "--ops", str(ops), "--json", MEMGROVE_TOKEN="shared-token")  # through the replica
        assert res.exit_code == 0 and json.loads(res.output)["applied"][0]["status"] == "added", res.output
        with Memory.open(tmp_path / "p") as m:
            assert m.tree.exists("auth/jwt/rotation.md")
    finally:
        _stop(replica, primary)


@pytest.mark.parametrize("kind", ["silent", "slow", "endless"])
def test_a_primary_answering_badly_ends_a_forwarded_write_in_time(kind):
    """What the replica asks its primary (a forwarded write, the wait for a push) ends within its timeout."""
    import time

    from memgrove.server.replica import ask_primary
    from memgrove.tree.base.errors import PrimaryUnreachable
    from reliability.bad_servers import BadServer

    with BadServer(kind) as srv:
        started = time.monotonic()
        with pytest.raises(PrimaryUnreachable, match="the write may have been applied"):
            ask_primary(srv.url, "/api/curate", "t", method="POST", body=b"{}", timeout=2.0)
        assert time.monotonic() - started < 15

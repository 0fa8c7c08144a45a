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

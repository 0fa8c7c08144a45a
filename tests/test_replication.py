"""Git replication of a primary (tree/replication/replicator.py): every batch a commit, pushed within
``push_interval``; a failed push reported in /health and doctor and retried, writes unaffected;
a commit someone else pushed pulled in, searchable and journaled; a conflict refused, reported,
and nothing lost; kill -9 mid-load loses no acknowledged write.

Real ``memgrove serve`` processes on 127.0.0.1, a bare git repository in tmp_path as the remote.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from helpers.memgrove_server import start_server, stop_server

from memgrove import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
WAIT = 30.0      # generous: the machine is shared; the tests assert what happens, not how fast


def git(*args: str, cwd: Path | None = None) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Ann", GIT_AUTHOR_EMAIL="ann@example.com",
               GIT_COMMITTER_NAME="Ann", GIT_COMMITTER_EMAIL="ann@example.com", GIT_TERMINAL_PROMPT="0")
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def bare(path: Path) -> Path:
    git("init", "-q", "--bare", "-b", "main", str(path))
    return path


def project(folder: Path, remote: Path, **settings: object) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": "infra/db/pool.md", "title": "Database pool",
                   "content": "The Postgres pool holds 20 connections per worker.", "reason": "seed"}])
    lines = ["[replication]", f'remote = "{remote}"']
    lines += [f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in settings.items()]
    (folder / ".memgrove" / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def until(check, timeout: float = WAIT, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout:.0f} s")


def remote_log(remote: Path) -> str:
    res = subprocess.run(["git", f"--git-dir={remote}", "log", "--format=%H%n%B", "main"], capture_output=True,
                         text=True, timeout=30)
    return res.stdout if res.returncode == 0 else ""


def remote_file(remote: Path, path: str, ref: str = "main") -> str | None:
    res = subprocess.run(["git", f"--git-dir={remote}", "show", f"{ref}:{path}"], capture_output=True, text=True,
                         timeout=30)
    return res.stdout if res.returncode == 0 else None


ADD = {"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Refresh token rotation",
       "content": "Refresh tokens rotate on every use.", "reason": "security review"}


def test_a_batch_becomes_a_commit_pushed_within_push_interval(tmp_path):
    remote = bare(tmp_path / "remote.git")
    srv = start_server(project(tmp_path / "p", remote, push_interval=0.5))
    try:
        op_id = srv.client.post("/api/curate", json={"operations": [ADD]}).json()["results"][0]["id"]
        log = until(lambda: op_id in remote_log(remote) and remote_log(remote), what="the push")
        assert "security review" in log and "ADD auth/jwt/rotation.md" in log
        assert "Refresh tokens rotate" in remote_file(remote, "tree/auth/jwt/rotation.md")
        assert remote_file(remote, "tree/infra/db/pool.md") is not None     # the tree as it was
        assert remote_file(remote, "index/catalog.db") is None              # nothing derived
        health = until(lambda: (h := httpx.get(f"{srv.url}/health").json())["replication"]["unpushed"] == 0 and h)
        assert health["role"] == "primary" and health["lag_seconds"] == 0
        assert health["commit"] == git("--git-dir", str(remote), "rev-parse", "main").strip()
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def test_a_failed_push_is_reported_retried_and_never_fails_a_write(tmp_path):
    remote = tmp_path / "later.git"            # not there yet
    srv = start_server(project(tmp_path / "p", remote, push_interval=0.2))
    try:
        r = srv.client.post("/api/curate", json={"operations": [ADD]})
        assert r.status_code == 200 and r.json()["results"][0]["status"] == "added"
        health = until(lambda: (h := httpx.get(f"{srv.url}/health").json())["replication"].get("push_error") and h,
                       what="a push error in /health")
        assert health["replication"]["unpushed"] >= 1 and "push_error_since" in health["replication"]
        doctor = srv.client.get("/api/doctor").json()
        assert any("pushing to" in w and "fails since" in w for w in doctor["warnings"]), doctor
        assert srv.client.get("/api/search", params={"q": "refresh token"}).json()["hits"]   # reads go on
        bare(remote)                           # the remote comes back: the retry pushes
        until(lambda: "security review" in remote_log(remote), what="the retried push")
        health = until(lambda: (h := httpx.get(f"{srv.url}/health").json())["replication"]["unpushed"] == 0 and h)
        assert "push_error" not in health["replication"]
        assert not any("pushing to" in w for w in srv.client.get("/api/doctor").json()["warnings"])
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def edit_on_a_clone(remote: Path, work: Path, files: dict[str, str], message: str) -> str:
    if not work.exists():
        git("clone", "-q", str(remote), str(work))
    else:
        git("pull", "-q", "--no-rebase", cwd=work)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", message, cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


ENTRY = """---
title: On-call rota
summary: Who carries the pager.
---
# On-call rota

The pager rotates weekly; Priya carries it in the first week of the quarter.
"""


def test_a_commit_pushed_by_someone_else_is_pulled_searchable_and_journaled(tmp_path):
    remote = bare(tmp_path / "remote.git")
    srv = start_server(project(tmp_path / "p", remote, push_interval=0.3, pull_interval=0.3))
    try:
        until(lambda: remote_log(remote), what="the first push")
        sha = edit_on_a_clone(remote, tmp_path / "clone", {"tree/team/oncall/rota.md": ENTRY}, "rota by hand")
        hits = until(lambda: srv.client.get("/api/search", params={"q": "pager rotates Priya"}).json()["hits"],
                     what="the pulled entry in search")
        assert hits[0]["path"] == "team/oncall/rota.md"
        ops = srv.client.get("/api/history", params={"path": "team/oncall/rota.md"}).json()["operations"]
        pulled = next(o for o in ops if o["op"] == "PULL")
        assert pulled["actor"] == "git" and sha[:12] in pulled["reason"] and "Ann" in pulled["reason"]
        # the primary's branch now holds the remote's commit, and its own listing of the new folder
        until(lambda: "team/oncall" in (remote_file(remote, "tree/team/oncall/context.md") or "") or
              remote_file(remote, "tree/team/oncall/context.md"), what="the folder's context pushed")
        assert git("--git-dir", str(remote), "merge-base", "--is-ancestor", sha, "main") == ""
        # a pulled change is undone like any operation
        undone = srv.client.post("/api/undo", json={"id": pulled["id"]}).json()
        assert undone["status"] == "undone"
        assert not srv.client.get("/api/search", params={"q": "pager rotates Priya"}).json()["hits"]
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def test_a_conflict_is_refused_reported_and_nothing_is_lost(tmp_path):
    remote = bare(tmp_path / "remote.git")
    # no pulls of its own: the conflict surfaces when its push is refused, deterministically
    srv = start_server(project(tmp_path / "p", remote, push_interval=0.3, pull_interval=3600.0))
    try:
        until(lambda: "Database pool" in (remote_file(remote, "tree/infra/db/pool.md") or ""), what="the seed pushed")
        theirs = ENTRY.replace("On-call rota", "Database pool").replace("Priya", "REMOTE-VERSION")
        sha = edit_on_a_clone(remote, tmp_path / "clone", {"tree/infra/db/pool.md": theirs}, "pool by hand")
        r = srv.client.post("/api/curate", json={"operations": [
            {"op": "UPDATE", "path": "infra/db/pool.md", "content": "The pool holds LOCAL-VERSION connections.",
             "replace": True, "reason": "tuning"}]})
        assert r.status_code == 200
        health = until(lambda: (h := httpx.get(f"{srv.url}/health").json())["replication"]["conflicts"] and h,
                       what="the conflict report")
        conflict = health["replication"]["conflicts"][0]
        assert conflict["remote_commit"] == sha and conflict["paths"][0]["path"] == "tree/infra/db/pool.md"
        assert conflict["branch"] in conflict["message"] and "kept" in conflict["message"]
        # local wins in the tree; the remote's version is on the named branch, there too
        assert "LOCAL-VERSION" in srv.client.get("/api/entries/infra/db/pool.md").json()["text"]
        until(lambda: "REMOTE-VERSION" in (remote_file(remote, "tree/infra/db/pool.md", conflict["branch"]) or ""),
              what="the conflict branch pushed")
        until(lambda: "LOCAL-VERSION" in (remote_file(remote, "tree/infra/db/pool.md") or ""), what="main pushed")
        assert git("--git-dir", str(remote), "merge-base", "--is-ancestor", sha, "main") == ""
        warnings = srv.client.get("/api/doctor").json()["warnings"]
        assert any(conflict["branch"] in w and "refused" in w for w in warnings), warnings
        assert "conflict" in srv.log_text()
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def test_kill_9_mid_load_loses_no_acknowledged_write(tmp_path):
    """Every write the server acknowledged is in the journal and, once a restarted server caught
    up, in the remote; the remote never holds a write that was not acknowledged or journaled."""
    remote = bare(tmp_path / "remote.git")
    folder = project(tmp_path / "p", remote, push_interval=0.2)
    srv = start_server(folder)
    acked: list[tuple[str, str]] = []
    stop = threading.Event()

    def load(worker: int) -> None:
        with srv.http() as c:
            for i in range(10_000):
                if stop.is_set():
                    return
                path = f"load/w{worker}/e{i}.md"
                try:
                    r = c.post("/api/curate", json={"operations": [
                        {"op": "ADD", "path": path, "title": f"Load {worker} {i}", "content": f"entry {worker} {i}",
                         "reason": f"load {worker} {i}"}]})
                except httpx.HTTPError:
                    return
                if r.status_code == 200:
                    acked.append((r.json()["results"][0]["id"], path))

    threads = [threading.Thread(target=load, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    until(lambda: len(acked) >= 15, what="some acknowledged writes")
    srv.process.send_signal(signal.SIGKILL)
    srv.process.wait(10)
    stop.set()
    for t in threads:
        t.join(30)
    journaled = {r.id for r in Memory.open(folder).history(limit=None)}
    assert {i for i, _ in acked} <= journaled
    srv = start_server(folder)
    try:
        def all_pushed() -> bool:
            listed = subprocess.run(["git", f"--git-dir={remote}", "ls-tree", "-r", "--name-only", "main"],
                                    capture_output=True, text=True).stdout.split()
            return all(f"tree/{p}" in listed for _, p in acked)
        until(all_pushed, what="every acknowledged write in the remote")
    finally:
        assert stop_server(srv) == 0, srv.log_text()


# -- read replicas (memgrove serve --replica-of) ---------------------------------------------------

@pytest.fixture
def primary_and_replica(tmp_path):
    remote = bare(tmp_path / "remote.git")
    primary = start_server(project(tmp_path / "p", remote, push_interval=0.2, pull_interval=0.5),
                           env={"MEMGROVE_TOKEN": "shared-token"})
    primary.token = "shared-token"
    replica = None
    try:
        (tmp_path / "r").mkdir()
        replica = start_server(tmp_path / "r", "--replica-of", primary.url, env={"MEMGROVE_TOKEN": "shared-token"})
        replica.token = "shared-token"
        yield primary, replica, remote
    finally:
        for srv in (replica, primary):
            if srv is not None and srv.process.poll() is None:
                assert stop_server(srv) == 0, srv.log_text()


def test_a_replica_clones_follows_and_serves_reads(primary_and_replica):
    primary, replica, remote = primary_and_replica
    health = httpx.get(f"{replica.url}/health").json()
    assert health["role"] == "replica" and health["commit"]
    assert replica.client.get("/api/search", params={"q": "Postgres pool"}).json()["hits"][0]["path"] == "infra/db/pool.md"
    op = primary.client.post("/api/curate", json={"operations": [ADD]}).json()["results"][0]
    assert op["status"] == "added"
    hits = until(lambda: replica.client.get("/api/search", params={"q": "refresh tokens rotate"}).json()["hits"],
                 what="the primary's write on the replica")
    assert hits[0]["path"] == "auth/jwt/rotation.md"
    health = until(lambda: (h := httpx.get(f"{replica.url}/health").json())["lag_seconds"] == 0 and h)
    assert health["commit"] == httpx.get(f"{primary.url}/health").json()["commit"]
    answer = replica.client.post("/api/query", json={"question": "How do refresh tokens rotate?"}).json()
    assert answer["tier"] <= 2 and "rotate" in answer["answer"]


def test_a_write_on_a_replica_is_forwarded_to_the_primary(primary_and_replica):
    primary, replica, remote = primary_and_replica
    r = replica.client.post("/api/curate", json={"operations": [ADD]})
    assert r.status_code == 200 and r.json()["results"][0]["status"] == "added"
    op_id = r.json()["results"][0]["id"]
    assert any(o["id"] == op_id for o in primary.client.get("/api/history").json()["operations"])
    assert any(o["id"] == op_id for o in replica.client.get("/api/history").json()["operations"])   # the primary's
    # what the primary answers, the replica answers: a refused batch is the same 400 and body
    bad = replica.client.post("/api/curate", json={"operations": [{"op": "ADD", "path": "../x.md", "reason": "r"}]})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "batch_rejected"
    assert replica.http(token="wrong").post("/api/curate", json={"operations": [ADD]}).status_code == 401
    until(lambda: replica.client.get("/api/search", params={"q": "refresh tokens rotate"}).json()["hits"],
          what="the forwarded write back on the replica")
    # the replica's own tree takes no batch: its journal stays empty
    assert not (replica.home / "journal" / "journal.jsonl").exists()


def test_with_the_primary_gone_reads_work_and_writes_fail_503_then_promote(primary_and_replica, tmp_path):
    primary, replica, remote = primary_and_replica
    primary.process.send_signal(signal.SIGKILL)
    primary.process.wait(10)
    assert replica.client.get("/api/search", params={"q": "Postgres pool"}).json()["hits"]
    r = replica.client.post("/api/curate", json={"operations": [ADD]})
    assert r.status_code == 503 and r.json()["error"]["code"] == "primary_unreachable"
    assert not replica.client.get("/api/search", params={"q": "refresh tokens rotate"}).json()["hits"]
    assert not (replica.home / "journal" / "journal.jsonl").exists()      # nothing applied here
    assert httpx.get(f"{replica.url}/health").json()["replication"]["primary_reachable"] is False
    # the primary comes back: writes through the replica work again
    back = start_server(tmp_path / "p", port=primary.port, env={"MEMGROVE_TOKEN": "shared-token"})
    back.token = "shared-token"
    try:
        r = until(lambda: (x := replica.client.post("/api/curate", json={"operations": [ADD]})).status_code == 200 and x,
                  what="a write through the replica once the primary is back")
        assert r.json()["results"][0]["status"] == "added"
    finally:
        assert stop_server(back) == 0, back.log_text()
    # promote: the replica becomes the primary of the same remote
    assert stop_server(replica) == 0, replica.log_text()
    until(lambda: "auth/jwt/rotation.md" in subprocess.run(
        ["git", f"--git-dir={remote}", "ls-tree", "-r", "--name-only", "main"], capture_output=True, text=True).stdout)
    promoted = start_server(replica.project, "--promote", env={"MEMGROVE_TOKEN": "shared-token"})
    promoted.token = "shared-token"
    try:
        assert httpx.get(f"{promoted.url}/health").json()["role"] == "primary"
        assert promoted.client.get("/api/search", params={"q": "refresh tokens rotate"}).json()["hits"]
        op = promoted.client.post("/api/curate", json={"operations": [
            {"op": "ADD", "path": "infra/db/failover.md", "title": "Failover", "content": "The replica was promoted.",
             "reason": "failover drill"}]}).json()["results"][0]
        assert op["status"] == "added"
        until(lambda: "failover drill" in remote_log(remote), what="the promoted primary's push")
    finally:
        assert stop_server(promoted) == 0, promoted.log_text()


def over_mcp(srv, calls):
    """``calls(session)`` on the server's ``/mcp``, with its token: what it returns."""
    pytest.importorskip("memgrove.mcp")
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main():
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {srv.token}"}, timeout=60,
                                     trust_env=False) as client:
            async with streamable_http_client(f"{srv.url}/mcp", http_client=client) as (read, write, _):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    return await calls(s)

    return asyncio.run(main())


def test_mcp_writes_on_a_replica_land_on_the_primary_and_come_back(primary_and_replica):
    primary, replica, remote = primary_and_replica

    async def calls(s):
        curated = await s.call_tool("memgrove_curate", {"operations": [ADD]})
        created = await s.call_tool("memory", {"command": "create", "path": "/memories/notes/replica/hello.md",
                                               "file_text": "# Hello\nwritten on the replica's MCP"})
        return curated, created

    curated, created = over_mcp(replica, calls)
    assert not curated.isError and not created.isError, (curated.content, created.content)
    op_id = curated.structuredContent["applied"][0]["id"]
    on_primary = primary.client.get("/api/history").json()["operations"]
    assert any(o["id"] == op_id for o in on_primary)                        # the primary's own operation
    assert any(o["reason"] == "memory tool: create /memories/notes/replica/hello.md" for o in on_primary)
    assert not (replica.home / "journal" / "journal.jsonl").exists()      # nothing applied on the replica itself
    until(lambda: replica.client.get("/api/search", params={"q": "refresh tokens rotate"}).json()["hits"],
          what="the MCP write back on the replica")
    until(lambda: replica.client.get("/api/search", params={"q": "written replica MCP"}).json()["hits"],
          what="the memory tool's file back on the replica")
    # the journal is the primary's: the replica's history tool lists the operation, and undoes it there
    listed = over_mcp(replica, lambda s: s.call_tool("memgrove_history", {"limit": 5}))
    assert not listed.isError and op_id in [o["id"] for o in listed.structuredContent["operations"]]
    # the review queue is the primary's: a change queued there is listed by the replica's tool
    queued = primary.client.post("/api/review/queue", json={"operations": [
        {"op": "DELETE", "path": "infra/db/pool.md", "reason": "a model thinks it is stale"}]}).json()["item"]
    listed = over_mcp(replica, lambda s: s.call_tool("memgrove_review", {"action": "list"}))
    assert not listed.isError and [i["id"] for i in listed.structuredContent["items"]] == [queued["id"]]
    # what the primary refuses, the replica's tool answers: the same error
    bad = over_mcp(replica, lambda s: s.call_tool("memgrove_curate", {"operations": [
        {"op": "ADD", "path": "../x.md", "content": "x", "reason": "r"}]}))
    assert bad.isError and bad.structuredContent["error"]["code"] == "batch_rejected"
    undone = over_mcp(replica, lambda s: s.call_tool("memgrove_undo", {"op_id": op_id}))
    assert not undone.isError and undone.structuredContent["status"] == "undone", undone.content
    newest = primary.client.get("/api/history").json()["operations"][0]
    assert (newest["op"], newest["actor"]) == ("UNDO", "mcp")              # the actor travels with the forwarded undo
    assert not (replica.home / "journal" / "journal.jsonl").exists()


def test_an_mcp_write_on_a_replica_with_the_primary_gone_is_primary_unreachable(primary_and_replica):
    primary, replica, remote = primary_and_replica
    primary.process.send_signal(signal.SIGKILL)
    primary.process.wait(10)
    out = over_mcp(replica, lambda s: s.call_tool("memgrove_curate", {"operations": [ADD]}))
    assert out.isError and out.structuredContent["error"]["code"] == "primary_unreachable", out.content
    assert not (replica.home / "journal" / "journal.jsonl").exists()      # nothing applied here
    assert not (replica.home / "tree" / "auth" / "jwt" / "rotation.md").exists()
    assert replica.client.get("/api/search", params={"q": "Postgres pool"}).json()["hits"]   # reads go on


def test_a_replica_tree_sends_every_write_to_its_forwarder_and_applies_none(tmp_path):
    """In-process: ``forward_writes`` takes curate, undo, curate_groups and undo_all; a dead primary
    is ``PrimaryUnreachable`` through ``PrimaryWriter``."""
    from memgrove.server.forward_writes import PrimaryWriter
    from memgrove.tree.base.errors import PrimaryUnreachable, ReadOnlyReplica

    folder = project(tmp_path / "p", bare(tmp_path / "remote.git"))
    (folder / ".memgrove" / "replica.json").write_text('{"primary": "http://127.0.0.1:9", "remote": "x"}')
    sent = []
    with Memory.open(folder) as mem:
        with pytest.raises(ReadOnlyReplica):
            mem.curate([ADD])
        mem.tree.forward_writes = lambda kind, **args: sent.append((kind, args)) or ["from the primary"]
        assert mem.curate([ADD]) == ["from the primary"]
        assert mem.undo("op-1") == ["from the primary"]
        mem.tree.curate_groups([[ADD]])
        mem.tree.undo_all(["op-1", "op-2"])
        assert [k for k, _ in sent] == ["curate", "undo", "curate_groups", "undo_all"]
        assert sent[0][1]["ops"] == [ADD] and sent[1][1]["op_id"] == "op-1"
        mem.dream()
        mem.review()
        mem.review_approve("abcd")
        assert [k for k, _ in sent[4:]] == ["dream", "review", "review_approve"]
        import socket

        with socket.socket() as s:     # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mem.tree.forward_writes = PrimaryWriter(f"http://127.0.0.1:{port}", "t")
        with pytest.raises(PrimaryUnreachable, match="nothing was applied"):
            mem.curate([ADD])
        assert not mem.tree.exists("auth/jwt/rotation.md")
        assert [r.reason for r in mem.tree.history()] == ["seed"]      # its own journal: untouched


def test_files_the_tree_cannot_take_are_refused_and_kept_on_a_branch(tmp_path):
    """In-process (the library replicates too): a pushed config.toml, a hidden file and a symlink
    never reach .memgrove/; the entry beside them is taken."""
    remote = bare(tmp_path / "remote.git")
    folder = project(tmp_path / "p", remote, push_interval=0.2, pull_interval=0.2)
    mem = Memory.open(folder)
    try:
        assert mem.tree.replication.start()
        until(lambda: remote_log(remote), what="the first push")
        work = tmp_path / "clone"
        git("clone", "-q", str(remote), str(work))
        (work / "config.toml").write_text("[tree]\nengine = 'nope'\n")
        (work / "tree" / "team" / "oncall").mkdir(parents=True)
        (work / "tree" / "team" / "oncall" / ".hidden.md").write_text("x")
        os.symlink("/etc/passwd", work / "tree" / "team" / "oncall" / "passwd.md")
        (work / "tree" / "team" / "oncall" / "rota.md").write_text(ENTRY)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", "mixed", cwd=work)
        git("push", "-q", "origin", "HEAD:main", cwd=work)
        until(lambda: mem.search("pager rotates Priya"), what="the good file pulled")
        status = until(lambda: (s := mem.tree.replication.status())["conflicts"] and s, what="the refusal report")
        refused = {p["path"]: p["why"] for p in status["conflicts"][0]["paths"]}
        assert set(refused) == {"config.toml", "tree/team/oncall/.hidden.md", "tree/team/oncall/passwd.md"}
        assert "symlink" in refused["tree/team/oncall/passwd.md"]
        assert "engine" not in (folder / ".memgrove" / "config.toml").read_text()
        assert not (folder / ".memgrove" / "tree" / "team" / "oncall" / "passwd.md").exists()
        assert any(r.op == "PULL" for r in mem.history(path="team/oncall/rota.md"))
    finally:
        mem.close()


def test_what_a_replica_forwards():
    from memgrove.server.replica import is_write

    for method, path in [("POST", "/api/curate"), ("POST", "/api/ingest"), ("POST", "/api/undo"),
                         ("POST", "/api/dream"), ("POST", "/api/review/approve"), ("POST", "/api/review/reject"),
                         ("POST", "/api/doctor/fix"), ("PUT", "/api/store/items"), ("DELETE", "/api/store/items"),
                         ("GET", "/api/history"), ("GET", "/api/review"), ("GET", "/api/review/abcd")]:
        assert is_write(method, path), (method, path)
    for method, path in [("GET", "/api/search"), ("POST", "/api/query"), ("GET", "/api/tree"), ("GET", "/health"),
                         ("GET", "/api/doctor"), ("POST", "/api/store/items/search"), ("GET", "/api/stats")]:
        assert not is_write(method, path), (method, path)


def test_promote_names_the_remote_and_keeps_the_other_settings(tmp_path):
    from memgrove.server.replica import set_replication
    from memgrove.tree.replication.settings import load_replication_settings
    from memgrove.tree.settings import load_settings

    home = tmp_path / ".memgrove"
    home.mkdir()
    (home / "config.toml").write_text('[tree]\ntitle_boost = 5.0\n\n[replication]\nremote = "old"\npush_interval = 2.0\n')
    set_replication(home, "/srv/memory.git", "main")
    s = load_replication_settings(home)
    assert (s.remote, s.branch, s.push_interval) == ("/srv/memory.git", "main", 2.0)
    assert load_settings(home).title_boost == 5.0
    (home / "config.toml").unlink()
    set_replication(home, "https://u:p@example.com/m.git", "trunk")
    assert load_replication_settings(home).branch == "trunk"


def test_credentials_in_a_remote_url_are_never_shown():
    from memgrove.tree.base.credentials import redact

    assert redact("git push failed: https://ann:s3cret@example.com/m.git") == "git push failed: https://***@example.com/m.git"
    assert redact("/srv/memory.git") == "/srv/memory.git"

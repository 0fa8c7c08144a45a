"""The deployment files (Dockerfile, compose.yaml, deploy/entrypoint.sh, docs/deploy.md) run as
processes: the entry point's primary and replica on 127.0.0.1, a bare git repository in tmp_path as
the remote, as the compose file wires them; and the compose file names only what the image and the
entry point provide. (Docker itself is not run here: the machines that run the suite have no daemon.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from helpers.memgrove_server import Server, free_port, server_env, stop_server, wait_ready

ROOT = Path(__file__).resolve().parents[1]
ENTRYPOINT = ROOT / "deploy" / "entrypoint.sh"
TOKEN = "deploy-test-token"
WAIT = 60.0       # the replica follows every pull_interval (5 s by default) on a shared machine

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("sh") is None,
                                reason="git and sh are needed")


def entrypoint(folder: Path, *args: str, **env: str) -> Server:
    """``deploy/entrypoint.sh ARGS`` in ``folder`` as the image runs it, on a free loopback port (the
    options given after the role override the image's ``--host 0.0.0.0 --port 7437``)."""
    port = free_port()
    log = folder.parent / f"{folder.name}.log"
    environ = server_env(MEMGROVE_TOKEN=TOKEN, **env)
    environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environ.get('PATH', '')}"
    folder.mkdir(exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(["sh", str(ENTRYPOINT), *args, "--host", "127.0.0.1", "--port", str(port)],
                                cwd=folder, env=environ, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    srv = Server(proc, folder, port, log, token=TOKEN)
    wait_ready(srv)
    return srv


def until(check, what: str):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{what} did not happen within {WAIT:.0f} s")


def test_the_entrypoints_primary_and_replica_share_one_memory(tmp_path):
    remote = tmp_path / "remote" / "tree.git"          # made by the primary's entry point
    primary = entrypoint(tmp_path / "primary", "primary", MEMGROVE_REMOTE=str(remote))
    replica = None
    try:
        assert (remote / "HEAD").exists()
        config = (primary.home / "config.toml").read_text(encoding="utf-8")
        assert f'remote = "{remote}"' in config
        assert httpx.get(f"{primary.url}/health").json()["role"] == "primary"
        replica = entrypoint(tmp_path / "replica", "replica", MEMGROVE_PRIMARY=primary.url)
        assert httpx.get(f"{replica.url}/health").json()["role"] == "replica"
        add = {"op": "ADD", "path": "ops/deploy/region.md", "title": "Deploy region",
               "content": "Production runs in eu-west-3 since March.", "reason": "deploy test"}
        r = replica.client.post("/api/curate", json={"operations": [add]})      # forwarded to the primary
        assert r.status_code == 200 and r.json()["results"][0]["status"] == "added", r.text
        assert primary.client.get("/api/search", params={"q": "eu-west-3"}).json()["hits"]
        hits = until(lambda: replica.client.get("/api/search", params={"q": "eu-west-3"}).json()["hits"],
                     "the write back on the replica")
        assert hits[0]["path"] == "ops/deploy/region.md"
    finally:
        for srv in (replica, primary):
            if srv is not None and srv.process.poll() is None:
                assert stop_server(srv) == 0, srv.log_text()


def test_the_entrypoint_refuses_to_serve_every_interface_without_a_token(tmp_path):
    environ = server_env()
    environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environ.get('PATH', '')}"
    res = subprocess.run(["sh", str(ENTRYPOINT), "primary"], cwd=tmp_path, env=environ, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode != 0 and "MEMGROVE_TOKEN" in res.stderr
    assert not (tmp_path / ".memgrove").exists()


def test_the_compose_file_uses_what_the_image_and_entrypoint_provide():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    script = ENTRYPOINT.read_text(encoding="utf-8")
    services = compose["services"]
    assert {"primary", "replica-1", "replica-2", "app"} <= set(services)
    roles = set(re.findall(r"^\s+([a-z]+)\)$", script, re.M))
    stages = set(re.findall(r"^FROM \S+ AS (\S+)$", dockerfile, re.M))
    assert "deploy/entrypoint.sh" in dockerfile
    for name, svc in services.items():
        build = svc["build"]
        target = build.get("target") if isinstance(build, dict) else None
        if target:
            assert target in stages, name
            assert svc["environment"]["MEMGROVE_URL"].startswith("http://")
            host = svc["environment"]["MEMGROVE_URL"].split("//")[1].split(":")[0]
            assert host in services, f"{name} points at a service that is not in the file: {host}"
            continue
        role = svc["command"][0]
        assert role in roles, name
        env = svc["environment"]
        assert "MEMGROVE_TOKEN" in env
        if role == "replica":
            host = env["MEMGROVE_PRIMARY"].split("//")[1].split(":")[0]
            assert services[host]["command"] == ["primary"]
            # a replica clones the remote the primary names, so it must see the same path
            remote = services[host]["environment"]["MEMGROVE_REMOTE"]
            mounts = {v.split(":")[1] for v in svc["volumes"]}
            assert any(remote.startswith(m + "/") for m in mounts), name


def test_the_deploy_page_names_the_files_it_documents():
    page = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    for name in ("Dockerfile", "compose.yaml", "deploy/entrypoint.sh", "MEMGROVE_URL", "--replica-of", "--promote"):
        assert name in page, name
    variables = set(re.findall(r"\$\{?(MEMGROVE_[A-Z_]+)", ENTRYPOINT.read_text(encoding="utf-8")))
    assert variables and all(f"`{v}`" in page for v in variables)

"""The store of ``langgraph.json`` (``store.path``) served by the real ``langgraph dev``: the
server's ``/store`` routes read and write the Context Tree of ``MEMGROVE_HOME``.

The server is started as in ``test_langgraph_dev.py`` (a subprocess on a free port of 127.0.0.1,
stopped by the fixture); its memory holds the sample conversation, so the store also shows
entries it did not write.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from test_langgraph_dev import DevServer, running

from memgrove import Memory


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory):
    with running(tmp_path_factory.mktemp("store_server")) as server:
        yield server


def test_the_server_uses_the_context_tree_store(dev: DevServer) -> None:
    c = dev.client
    value = {"text": "Prefers dark mode in the editor", "importance": 3, "tags": ["ui"]}
    r = c.put("/store/items", json={"namespace": ["memories", "user_1"], "key": "editor", "value": value})
    assert r.status_code == 204, f"{r.status_code} {r.text}\n{dev.log_text()}"
    assert "Using custom store" in dev.log_text(tail=10**7)

    # the item is an entry of the tree of MEMGROVE_HOME, written through the journal
    path = dev.tree / "memories" / "user_1" / "editor.md"
    assert path.is_file(), sorted(p.name for p in dev.tree.iterdir())
    assert "## text\n\nPrefers dark mode in the editor" in path.read_text(encoding="utf-8")
    with Memory.open(dev.home) as m:
        assert m.history(1)[0].actor == "langgraph-store"
        assert m.search("dark mode editor")[0].path == "memories/user_1/editor.md"

    r = c.get("/store/items", params={"namespace": "memories.user_1", "key": "editor"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["value"] == value and got["namespace"] == ["memories", "user_1"] and got["key"] == "editor"

    c.put("/store/items", json={"namespace": ["memories", "user_2"], "key": "editor",
                                "value": {"text": "Prefers light mode"}})
    r = c.post("/store/items/search", json={"namespace_prefix": ["memories"], "query": "dark mode", "limit": 5})
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [i["namespace"] for i in items] == [["memories", "user_1"], ["memories", "user_2"]]   # "mode" alone
    assert 1 > items[0]["score"] > items[1]["score"] > 0

    r = c.post("/store/items/search", json={"namespace_prefix": ["memories"], "filter": {"importance": {"$gte": 3}}})
    assert [i["namespace"] for i in r.json()["items"]] == [["memories", "user_1"]]

    r = c.post("/store/namespaces", json={"prefix": ["memories"]})
    assert r.status_code == 200, r.text
    assert sorted(map(tuple, r.json()["namespaces"])) == [("memories", "user_1"), ("memories", "user_2")]

    # the memory the server already held is visible too (read-only), under its folders
    r = c.post("/store/items/search", json={"namespace_prefix": ["conversations"], "query": "token family"})
    hits = r.json()["items"]
    assert hits and hits[0]["namespace"][:2] == ["conversations", "team_chat"], json.dumps(hits)[:500]

    r = c.request("DELETE", "/store/items", json={"namespace": ["memories", "user_2"], "key": "editor"})
    assert r.status_code == 204, r.text
    assert c.get("/store/items", params={"namespace": "memories.user_2", "key": "editor"}).json() is None
    with Memory.open(dev.home) as m:
        assert m.history(1)[0].op == "DELETE"


def test_the_server_refuses_a_ttl_and_bad_namespaces(dev: DevServer) -> None:
    c = dev.client
    # the server turns the store's NotImplementedError (LangGraph's TTL refusal) into a 500 and
    # drops the connection it came on: a connection of its own keeps the shared client usable
    with httpx.Client(base_url=c.base_url, timeout=10.0, trust_env=False) as once:
        r = once.put("/store/items", json={"namespace": ["memories", "x"], "key": "k", "value": {"a": 1}, "ttl": 5})
    assert r.status_code == 500
    assert not (dev.tree / "memories" / "x").exists()
    r = c.put("/store/items", json={"namespace": ["a.b"], "key": "k", "value": {"a": 1}})
    assert r.status_code == 422, r.text


# -- MEMGROVE_URL: the store of langgraph.json is the memory a memgrove serve serves ---------

@pytest.fixture(scope="module")
def dev_over_url(tmp_path_factory: pytest.TempPathFactory):
    """``langgraph dev`` whose environment names a ``memgrove serve`` (``MEMGROVE_URL``,
    ``MEMGROVE_TOKEN``) beside a ``MEMGROVE_HOME`` of its own: the store must be the server's."""
    import subprocess
    import sys

    from helpers.memgrove_server import start_server, stop_server
    from helpers.openai_server import serve
    from test_langgraph_dev import free_port, server_config, server_env, stop, wait_ready

    folder = tmp_path_factory.mktemp("store_url")
    # the memgrove serve's project and log outside the folder langgraph dev watches (a change there reloads it)
    project, home = tmp_path_factory.mktemp("store_url_served") / "served", folder / "home"
    Memory.open(project, create=True).close()
    Memory.open(home, create=True).close()
    srv = start_server(project)
    try:
        with serve() as llm:
            env = {**server_env(home, llm), "MEMGROVE_URL": srv.url, "MEMGROVE_TOKEN": srv.token}
            (folder / "server").mkdir()
            log = folder / "server.log"
            cmd = [sys.executable, "-m", "langgraph_cli", "dev", "--no-browser", "--host", "127.0.0.1",
                   "--port", str(free_port()), "--config", str(server_config(folder))]
            with open(log, "wb") as out:
                process = subprocess.Popen(cmd, cwd=folder / "server", env=env, stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
            dev = DevServer(process, log, home, llm)
            try:
                # memgrove's routes joined to langgraph dev's (langgraph.json's http.app) guard all of them
                # with MEMGROVE_TOKEN: one token for the deployment's memory
                deadline = time.monotonic() + 60
                while dev.api_port() is None and process.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.1)
                if dev.api_port() is not None:
                    dev.client = httpx.Client(base_url=f"http://127.0.0.1:{dev.api_port()}", timeout=30.0,
                                              trust_env=False, headers={"Authorization": f"Bearer {srv.token}"})
                wait_ready(dev)
                yield dev, srv
            finally:
                stop(dev)
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def test_with_memgrove_url_the_studio_store_is_the_servers(dev_over_url) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from memgrove import ContextTreeStore

    dev, srv = dev_over_url
    c = dev.client

    def put(i: int) -> int:
        return c.put("/store/items", json={"namespace": ["studio", "notes"], "key": f"k{i}",
                                           "value": {"text": f"Studio note {i} about kiwis"}}).status_code

    with ThreadPoolExecutor(8) as pool:                  # the server's requests at once
        assert list(pool.map(put, range(12))) == [204] * 12, dev.log_text()
    assert "Using custom store" in dev.log_text(tail=10**7)
    assert len(list((srv.home / "tree" / "studio" / "notes").glob("k*.md"))) == 12     # in the served tree
    assert not (dev.tree / "studio").exists()                                           # not in MEMGROVE_HOME

    with ContextTreeStore(url=srv.url, token=srv.token) as remote:    # another process of the same memory
        assert remote.get(("studio", "notes"), "k3").value == {"text": "Studio note 3 about kiwis"}
        remote.put(("studio", "notes"), "from_elsewhere", {"text": "Written beside Studio, about plums"})
    r = c.post("/store/items/search", json={"namespace_prefix": ["studio"], "query": "plums", "limit": 5})
    assert r.status_code == 200, r.text
    assert [i["key"] for i in r.json()["items"]] == ["from_elsewhere"]

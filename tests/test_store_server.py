"""The store of ``langgraph.json`` (``store.path``) served by the real ``langgraph dev``: the
server's ``/store`` routes read and write the Context Tree of ``MEMGROVE_HOME``.

The server is started as in ``test_langgraph_dev.py`` (a subprocess on a free port of 127.0.0.1,
stopped by the fixture); its memory holds the sample conversation, so the store also shows
entries it did not write.
"""

from __future__ import annotations

import json

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

"""A conformance suite for LangGraph stores, run on ``InMemoryStore`` (the reference: every
shared test passes on it), on ``ContextTreeStore`` and on ``ContextTreeStore(url=...)``, the same
store over HTTP against a real ``memgrove serve`` on 127.0.0.1 (one server per module, a fresh
project per test: tests/helpers/store_server.py).

Written from LangGraph's documented ``BaseStore`` semantics and its own store tests
(``libs/checkpoint/tests/test_store.py``, the SQLite and Postgres store tests of
langchain-ai/langgraph). Where ``ContextTreeStore`` differs on purpose (docs/store.md), the
difference is tested as such at the end of this file, on the store that has it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from helpers.store_server import StoreServer

from memgrove import ContextTreeStore, Memory
from memgrove.tree.base.errors import InvalidInput, OperationConflict


@pytest.fixture(scope="module")
def store_server(tmp_path_factory: pytest.TempPathFactory):
    with StoreServer(tmp_path_factory.mktemp("store_server")) as srv:
        yield srv


@pytest.fixture(params=["InMemoryStore", "ContextTreeStore", "remote"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "InMemoryStore":
        yield InMemoryStore()
    elif request.param == "remote":
        with request.getfixturevalue("store_server").store(tmp_path / "remote") as s:
            yield s
    else:
        with ContextTreeStore(tmp_path / "project") as s:
            yield s


@pytest.fixture
def local_tree_store(tmp_path: Path):
    """The in-process store only: tests reading its files or its ``Memory``."""
    with ContextTreeStore(tmp_path / "project") as s:
        yield s


@pytest.fixture(params=["local", "remote"])
def make_tree_store(request: pytest.FixtureRequest, tmp_path: Path):
    """``make(**kw)``: a ``ContextTreeStore`` in-process, or over HTTP; closed after the test."""
    made = []

    def make(**kw):
        s = (request.getfixturevalue("store_server").store(tmp_path / "remote", **kw) if request.param == "remote"
             else ContextTreeStore(tmp_path / "project", **kw))
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


@pytest.fixture
def tree_store(make_tree_store):
    """A ``ContextTreeStore``, in-process and over HTTP: its documented differences hold both ways."""
    return make_tree_store()


def keys(items) -> list[str]:
    return [i.key for i in items]


# -- put / get / delete -----------------------------------------------------

def test_put_get_round_trip(store: BaseStore) -> None:
    value = {"text": "Prefers dark mode", "n": 3, "ratio": 0.25, "ok": True, "none": None,
             "tags": ["a", "b"], "nested": {"deep": {"list": [1, {"x": "y"}]}}}
    store.put(("memories", "user_1"), "editor", value)
    item = store.get(("memories", "user_1"), "editor")
    assert isinstance(item, Item)
    assert item.value == value
    assert item.namespace == ("memories", "user_1") and item.key == "editor"
    assert isinstance(item.created_at, datetime) and isinstance(item.updated_at, datetime)
    assert item.updated_at >= item.created_at
    assert item.dict()["namespace"] == ["memories", "user_1"]


def test_get_missing_is_none(store: BaseStore) -> None:
    assert store.get(("memories",), "nothing") is None
    store.put(("memories",), "k", {"a": 1})
    assert store.get(("memories",), "other") is None
    assert store.get(("memories", "deeper"), "k") is None
    assert store.get(("other",), "k") is None


def test_put_replaces_the_whole_value(store: BaseStore) -> None:
    ns = ("docs",)
    store.put(ns, "k", {"a": "first", "b": 1})
    first = store.get(ns, "k")
    store.put(ns, "k", {"c": "second"})
    item = store.get(ns, "k")
    assert item.value == {"c": "second"}        # 'a' and 'b' are gone, not merged
    assert item.updated_at >= first.updated_at


def test_delete(store: BaseStore) -> None:
    ns = ("docs", "x")
    store.put(ns, "k", {"a": 1})
    store.put(ns, "other", {"a": 2})
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    assert store.get(ns, "other").value == {"a": 2}
    store.delete(ns, "k")                        # deleting what is not there is no error
    store.delete(("never",), "seen")
    assert keys(store.search(ns)) == ["other"]


def test_keys_and_namespaces_are_exact(store: BaseStore) -> None:
    """Different texts are different items, however alike their folder names would look."""
    variants = [("users", "Bob"), ("users", "bob"), ("users", "BOB "), ("Users", "bob"), ("users", "b-o-b"),
                ("users", "b/o/b"), ("users", "b", "o", "b")]
    for i, ns in enumerate(variants):
        store.put(ns, "k", {"i": i})
    for k in ("key", "Key", "key ", "k/e/y", "k..ey", "../../key", "context", "x_h0123456789ab", "日本語", ""):
        store.put(("keys",), k, {"k": k})
    for i, ns in enumerate(variants):
        assert store.get(ns, "k").value == {"i": i}
    for k in ("key", "Key", "key ", "k/e/y", "k..ey", "../../key", "context", "x_h0123456789ab", "日本語", ""):
        assert store.get(("keys",), k).value == {"k": k}
    assert len(store.search(("keys",), limit=100)) == 10


def test_namespace_depths(store: BaseStore) -> None:
    spaces = [("a",), ("a", "b"), ("a", "b", "c"), ("a", "b", "c", "d"), ("a", "b", "c", "d", "e", "f", "g")]
    for ns in spaces:
        store.put(ns, "k", {"depth": len(ns)})
    for ns in spaces:
        assert store.get(ns, "k").value == {"depth": len(ns)}
    assert sorted(store.list_namespaces(prefix=("a",))) == sorted(spaces)
    assert sorted(i.value["depth"] for i in store.search(("a", "b", "c"))) == [3, 4, 7]


@pytest.mark.parametrize("namespace", [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo"),
                                       ("..",), ("a", ".."), ("x", 3)])
def test_invalid_namespaces_are_refused(store: BaseStore, namespace: tuple) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"a": 1})
    with pytest.raises(InvalidNamespaceError):
        asyncio.run(store.aput(namespace, "k", {"a": 1}))


def test_langgraph_root_only_refused_by_put(store: BaseStore) -> None:
    doc = {"foo": "bar"}
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])   # past the public put: allowed
    assert store.get(("langgraph", "foo"), "bar").value == doc
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


def test_ttl_is_refused_with_langgraphs_error(store: BaseStore) -> None:
    assert store.supports_ttl is False
    with pytest.raises(NotImplementedError, match="TTL is not supported"):
        store.put(("a",), "k", {"x": 1}, ttl=5)
    with pytest.raises(NotImplementedError, match="TTL is not supported"):
        asyncio.run(store.aput(("a",), "k", {"x": 1}, ttl=5))
    store.put(("a",), "k", {"x": 1}, ttl=None)   # None is "no TTL": fine
    assert store.get(("a",), "k").value == {"x": 1}


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12),
                      children, max_size=4),
    max_leaves=12)
_values = st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                                  max_size=12), _json, max_size=6)
_texts = st.sampled_from(["plain", "", "two\nlines", "trailing\n", "\nleading", "## heading\ninside", "# title",
                          "```\nunclosed fence\n## x", "---\nfront: matter\n---", "yes", "null", "2024-01-01",
                          "0x1F", "1_000", "  spaces  ", "tab\there", "\r\nwindows\r\n", "\u2028sep", "é ü 日本",
                          "- **fact**: x", "> quote"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(value=_values, text=_texts, other=_texts)
def test_any_json_value_round_trips(store: BaseStore, value: dict, text: str, other: str) -> None:
    value = {**value, "text": text, "note": other}
    store.put(("round", "trip"), "k", value)
    assert json.dumps(store.get(("round", "trip"), "k").value, sort_keys=True) == json.dumps(value, sort_keys=True)


# -- search -------------------------------------------------------------------

def test_search_prefix_is_segment_bounded(store: BaseStore) -> None:
    store.put(("a",), "1", {"v": 1})
    store.put(("a", "b"), "2", {"v": 2})
    store.put(("ab",), "3", {"v": 3})
    store.put(("ab", "a"), "4", {"v": 4})
    store.put(("b", "a"), "5", {"v": 5})
    assert sorted(keys(store.search(("a",)))) == ["1", "2"]
    assert sorted(keys(store.search(("ab",)))) == ["3", "4"]
    assert sorted(keys(store.search(("a", "b")))) == ["2"]
    assert sorted(keys(store.search(()))) == ["1", "2", "3", "4", "5"]
    assert store.search(("a", "b", "c")) == []


def test_search_limit_offset(store: BaseStore) -> None:
    for i in range(12):
        store.put(("docs",), f"d{i:02d}", {"i": i})
    assert len(store.search(("docs",))) == 10              # the default limit
    first = keys(store.search(("docs",), limit=5))
    second = keys(store.search(("docs",), limit=5, offset=5))
    third = keys(store.search(("docs",), limit=5, offset=10))
    assert len(first) == len(second) == 5 and len(third) == 2
    assert sorted(first + second + third) == [f"d{i:02d}" for i in range(12)]
    assert store.search(("docs",), offset=12) == []


@pytest.mark.parametrize("flt, expected", [
    ({"color": "red"}, [1, 3]),
    ({"color": {"$eq": "red"}}, [1, 3]),
    ({"color": {"$ne": "red"}}, [2, 4]),
    ({"score": {"$gt": 4.0}}, [1, 2, 4]),
    ({"score": {"$gte": 4.5}}, [1, 4]),
    ({"score": {"$lt": 4.0}}, [3]),
    ({"score": {"$lte": 4.2}}, [2, 3]),
    ({"score": {"$gt": 3.0, "$lt": 4.5}}, [2, 3]),
    ({"color": "red", "score": {"$gt": 4.0}}, [1]),
    ({"meta": {"size": "L"}}, [1, 2]),
    ({"tags": ["x", "y"]}, [3]),
    ({"tags": ["y", "x"]}, []),
    ({"flag": True}, [4]),
    ({"color": "purple"}, []),
])
def test_search_filters(store: BaseStore, flt: dict, expected: list[int]) -> None:
    docs = {1: {"color": "red", "score": 4.5, "meta": {"size": "L"}, "tags": ["x"], "flag": False},
            2: {"color": "blue", "score": 4.2, "meta": {"size": "L", "w": 1}, "tags": [], "flag": False},
            3: {"color": "red", "score": 3.8, "meta": {"size": "S"}, "tags": ["x", "y"], "flag": False},
            4: {"color": "green", "score": 4.6, "meta": {}, "tags": ["y"], "flag": True}}
    for i, doc in docs.items():
        store.put(("products",), str(i), doc)
    assert sorted(int(k) for k in keys(store.search(("products",), filter=flt))) == expected


def test_search_without_query_has_no_score(store: BaseStore) -> None:
    store.put(("docs",), "k", {"text": "anything"})
    [hit] = store.search(("docs",))
    assert hit.score is None
    assert hit.value == {"text": "anything"} and hit.namespace == ("docs",)


# -- list_namespaces (LangGraph's own cases) ---------------------------------

def _put_all(store: BaseStore, namespaces) -> None:
    store.batch([PutOp(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(namespaces)])


def test_list_namespaces_basic(store: BaseStore) -> None:
    _put_all(store, [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
                     ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")])
    ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == ab
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [("a", "b", "c"), ("a", "b", "d"),
                                                                             ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == ab[2:]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]


def test_list_namespaces_prefix_is_segment_bounded(store: BaseStore) -> None:
    _put_all(store, [("a",), ("ab",), ("a", "b"), ("abc", "d")])
    assert sorted(store.list_namespaces(prefix=("a",))) == [("a",), ("a", "b")]
    assert store.list_namespaces(prefix=("ab",)) == [("ab",)]


def test_list_namespaces_with_wildcards(store: BaseStore) -> None:
    _put_all(store, [("users", "123"), ("users", "456"), ("users", "789", "settings"), ("admin", "users", "789"),
                     ("guests", "123"), ("guests", "456", "preferences")])
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [("users", "123"), ("users", "456"),
                                                                    ("users", "789", "settings")]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination(store: BaseStore) -> None:
    _put_all(store, [("namespace", f"sub_{i:02d}") for i in range(20)])
    for offset in (0, 5, 15):
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == \
            [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]


def test_list_namespaces_max_depth(store: BaseStore) -> None:
    _put_all(store, [("a", "b", "c", "d"), ("a", "b", "c", "e"), ("a", "b", "f"), ("a", "g"), ("h", "i", "j", "k")])
    assert sorted(store.list_namespaces(max_depth=2)) == [("a", "b"), ("a", "g"), ("h", "i")]


def test_list_namespaces_empty_store(store: BaseStore) -> None:
    assert store.list_namespaces() == []
    store.put(("a", "b"), "k", {"x": 1})
    assert store.list_namespaces() == [("a", "b")]


# -- batch and async ------------------------------------------------------------

def test_batch_results_in_op_order(store: BaseStore) -> None:
    store.put(("n",), "old", {"v": 0})
    out = store.batch([
        PutOp(("n",), "k", {"v": 1}),
        GetOp(("n",), "old"),
        SearchOp(("n",)),
        ListNamespacesOp(match_conditions=(), limit=10),
        PutOp(("n",), "k", {"v": 2}),     # the last put of a key wins
        GetOp(("n",), "k"),               # reads see the store as it was before the batch
    ])
    assert out[0] is None and out[4] is None
    assert out[1].value == {"v": 0}
    assert keys(out[2]) == ["old"]
    assert out[3] == [("n",)]
    assert out[5] is None
    assert store.get(("n",), "k").value == {"v": 2}


def test_async_methods(store: BaseStore) -> None:
    async def run() -> None:
        await store.aput(("a", "b"), "k", {"text": "hello"})
        assert (await store.aget(("a", "b"), "k")).value == {"text": "hello"}
        assert keys(await store.asearch(("a",))) == ["k"]
        assert await store.alist_namespaces() == [("a", "b")]
        results = await asyncio.gather(*(store.aput(("a", "c"), f"k{i}", {"i": i}) for i in range(5)))
        assert results == [None] * 5
        assert len(await store.asearch(("a", "c"))) == 5
        await store.adelete(("a", "b"), "k")
        assert await store.aget(("a", "b"), "k") is None

    asyncio.run(run())


# -- ContextTreeStore: documented differences and what only it has ---------------

def test_tree_search_ranks_by_bm25_with_scores(tree_store: ContextTreeStore) -> None:
    """InMemoryStore without an embedding index ignores ``query``; the tree searches its words."""
    s = tree_store
    s.put(("memories", "u1"), "a", {"text": "Prefers dark mode in the editor"})
    s.put(("memories", "u1"), "b", {"text": "Deploys on Fridays, dark mode or not"})
    s.put(("memories", "u1"), "c", {"text": "Lives in Lisbon"})
    s.put(("memories", "u2"), "d", {"text": "Prefers dark mode in the editor too"})
    hits = s.search(("memories", "u1"), query="dark mode editor")
    assert keys(hits)[0] == "a" and set(keys(hits)) == {"a", "b"}     # 'c' does not match; u2 is outside
    assert all(0 < h.score < 1 for h in hits)
    assert hits[0].score > hits[1].score
    assert keys(s.search(("memories", "u1"), query="dark mode", limit=1, offset=1)) == keys(hits)[1:2]
    assert keys(s.search(("memories",), query="editor", filter={"text": {"$ne": "x"}}, limit=5)) != []
    ref = InMemoryStore()
    ref.put(("memories", "u1"), "c", {"text": "Lives in Lisbon"})
    assert keys(ref.search(("memories", "u1"), query="dark mode")) == ["c"]   # the reference ignores the query


def test_tree_index_chooses_searched_fields(tree_store: ContextTreeStore) -> None:
    s = tree_store
    s.put(("d",), "all", {"title": "zebra", "body": "giraffe"})
    s.put(("d",), "none", {"title": "zebra", "body": "giraffe"}, index=False)
    s.put(("d",), "title_only", {"title": "zebra", "body": "giraffe"}, index=["title"])
    s.put(("d",), "nested", {"meta": {"note": "okapi"}, "body": "giraffe"}, index=["meta.note"])
    assert sorted(keys(s.search(("d",), query="zebra"))) == ["all", "title_only"]
    assert sorted(keys(s.search(("d",), query="giraffe"))) == ["all"]
    assert keys(s.search(("d",), query="okapi")) == ["nested"]
    assert sorted(keys(s.search(("d",)))) == ["all", "nested", "none", "title_only"]   # listing sees every item
    for k in ("all", "none", "title_only", "nested"):
        assert s.get(("d",), k).value == ({"meta": {"note": "okapi"}, "body": "giraffe"} if k == "nested"
                                          else {"title": "zebra", "body": "giraffe"})


def test_tree_store_default_index_fields(make_tree_store) -> None:
    s = make_tree_store(index=["summary"])
    s.put(("d",), "k", {"summary": "walrus", "body": "narwhal"})
    assert keys(s.search(("d",), query="walrus")) == ["k"]
    assert s.search(("d",), query="narwhal") == []


def test_tree_items_are_readable_entries(local_tree_store: ContextTreeStore) -> None:
    s = local_tree_store
    s.put(("memories", "user_1"), "editor", {"text": "Prefers dark mode.\n\nAlso large fonts.", "importance": 3})
    path = s.memory.home / "tree" / "memories" / "user_1" / "editor.md"
    text = path.read_text(encoding="utf-8")
    assert "## text\n\nPrefers dark mode.\n\nAlso large fonts.\n" in text    # markdown a person reads
    assert "importance: 3" in text
    entry = s.memory.read("memories/user_1/editor.md")
    assert entry.title == "Prefers dark mode."                              # its first line, not the key
    assert s.memory.search("large fonts")[0].path == "memories/user_1/editor.md"


def test_tree_untrusted_segments_stay_inside(local_tree_store: ContextTreeStore, tmp_path: Path) -> None:
    s = local_tree_store
    hostile = [("/etc", "passwd"), ("~root",), ("C:\\Windows",), ("a/b/c/d/e",), ("\\\\server\\share",),
               ("x" * 5000,), ("_private",), ("-rf",), ("nul\x01ctl",)]
    for ns in hostile:
        s.put(ns, "../../../escape", {"text": "x"})
        assert s.get(ns, "../../../escape").value == {"text": "x"}
    root = s.memory.home / "tree"
    written = [p for p in tmp_path.rglob("*.md") if ".memgrove" in p.parts]
    assert written and all(root in p.parents for p in written)
    assert all(len(part) <= 80 for p in written for part in p.relative_to(root).parts)
    assert sorted(s.list_namespaces()) == sorted(hostile)


def test_tree_put_and_delete_are_journaled_and_undoable(local_tree_store: ContextTreeStore) -> None:
    s = local_tree_store
    s.put(("m",), "k", {"text": "first"})
    s.put(("m",), "k", {"text": "second"})
    s.delete(("m",), "k")
    records = s.memory.history(3)
    assert [r.op for r in records] == ["DELETE", "UPSERT", "UPSERT"]
    assert {r.actor for r in records} == {"langgraph-store"}
    s.memory.undo(records[0].id)
    assert s.get(("m",), "k").value == {"text": "second"}


def test_tree_batch_of_puts_is_one_curate_batch(local_tree_store: ContextTreeStore) -> None:
    s = local_tree_store
    s.put(("warm",), "up", {"i": 0})
    journal = s.memory.home / "journal" / "journal.jsonl"
    gen = s.memory.home / "generation"
    before, lines = int(gen.read_text()), len(journal.read_text().splitlines())
    s.batch([PutOp(("bulk", f"n{i % 3}"), f"k{i}", {"i": i}) for i in range(30)] + [PutOp(("bulk", "n0"), "k0", None)])
    assert int(gen.read_text()) == before + 1                        # one write, one generation
    assert len(journal.read_text().splitlines()) == lines + 29       # k0's put and delete: only the delete
    assert s.get(("bulk", "n0"), "k0") is None and s.get(("bulk", "n1"), "k1").value == {"i": 1}


def test_tree_keeps_created_at_on_update(local_tree_store: ContextTreeStore) -> None:
    """InMemoryStore resets created_at on every put; the tree keeps the entry's createdAt."""
    s = local_tree_store
    s.put(("m",), "k", {"v": 1})
    path = next((s.memory.home / "tree" / "m").rglob("k.md"))
    created = s.get(("m",), "k").created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(path.read_text().replace(f"createdAt: '{created}'", "createdAt: '2020-01-01T00:00:00Z'"))
    s.put(("m",), "k", {"v": 2})
    item = s.get(("m",), "k")
    assert item.created_at.year == 2020 and item.updated_at.year >= 2026


def test_tree_refuses_to_overwrite_other_entries(local_tree_store: ContextTreeStore) -> None:
    s = local_tree_store
    s.memory.curate([{"op": "ADD", "path": "auth/jwt/refresh_rotation.md", "title": "Refresh token rotation",
                      "content": "Refresh tokens rotate on every use.", "reason": "learned in review"}])
    item = s.get(("auth", "jwt"), "refresh_rotation")               # visible, read-only
    assert item.value["title"] == "Refresh token rotation"
    assert "rotate on every use" in item.value["content"]
    assert ("auth", "jwt") in s.list_namespaces()
    assert keys(s.search(("auth",), query="refresh tokens rotate")) == ["refresh_rotation"]
    with pytest.raises(OperationConflict, match="does not overwrite"):
        s.put(("auth", "jwt"), "refresh_rotation", {"text": "overwritten"})
    with pytest.raises(OperationConflict):
        s.delete(("auth", "jwt"), "refresh_rotation")
    assert "rotate on every use" in s.memory.read("auth/jwt/refresh_rotation.md").body


def _nested(levels: int) -> dict:
    value: dict = {"a": 1}
    inner = value
    for _ in range(levels):
        inner["x"] = inner = {}
    return value


@pytest.mark.parametrize("bad, message", [
    (_nested(100_000), r"^the value nests lists or objects more than 32 levels deep; give flat JSON$"),
    ({"x": float("nan")}, "not JSON-serializable"),
    ({"x": object()}, "not JSON-serializable"),
    ({"x": "\ud800"}, "lone surrogate"),
    ({"x": "a\x00b"}, "NUL"),
])
def test_tree_refuses_values_no_file_can_hold(tree_store: ContextTreeStore, bad: dict, message: str) -> None:
    from memgrove import MemgroveError

    with pytest.raises(MemgroveError, match=message):
        tree_store.put(("m",), "k", bad)
    assert tree_store.get(("m",), "k") is None


def test_tree_refuses_what_inmemory_lets_through(tree_store: ContextTreeStore) -> None:
    s = tree_store
    with pytest.raises(InvalidNamespaceError):
        s.batch([PutOp((), "k", {"a": 1})])
    with pytest.raises(NotImplementedError, match="TTL"):
        s.batch([PutOp(("a",), "k", {"a": 1}, ttl=5.0)])
    with pytest.raises(InvalidInput, match="NUL"):
        s.put(("a",), "k\x00", {"a": 1})
    with pytest.raises(InvalidInput, match="operator"):
        s.search(("a",), filter={"n": {"$regex": "x"}})
    s.put(("a",), "k", {"n": "text"})
    assert s.search(("a",), filter={"n": {"$gt": 1}}) == []          # InMemoryStore raises TypeError here
    assert s.search(("a",), filter={"missing": {"$lt": 1}}) == []


def test_tree_lists_only_namespaces_holding_items(tree_store: ContextTreeStore) -> None:
    """InMemoryStore keeps listing a namespace whose last item was deleted; the tree (like the
    SQLite and Postgres stores) lists the namespaces that hold items."""
    tree_store.put(("a", "b"), "k", {"x": 1})
    tree_store.delete(("a", "b"), "k")
    assert tree_store.list_namespaces() == []
    ref = InMemoryStore()
    ref.put(("a", "b"), "k", {"x": 1})
    ref.delete(("a", "b"), "k")
    assert ref.list_namespaces() == [("a", "b")]


def test_tree_lists_newest_first(tree_store: ContextTreeStore) -> None:
    """Without a query, the tree lists the most recently written items first (as SqliteStore and
    PostgresStore order by updated_at); InMemoryStore lists in insertion order."""
    for k in ("a", "b", "c"):
        tree_store.put(("m",), k, {"k": k})
    tree_store.put(("m",), "a", {"k": "a2"})
    assert keys(tree_store.search(("m",))) == ["a", "c", "b"]
    assert keys(tree_store.search(("m",), limit=1, offset=1)) == ["c"]
    assert keys(tree_store.search(("m",), filter={"k": {"$ne": "c"}}, offset=1)) == ["b"]
    ref = InMemoryStore()
    for k in ("a", "b", "c"):
        ref.put(("m",), k, {"k": k})
    ref.put(("m",), "a", {"k": "a2"})
    assert keys(ref.search(("m",))) == ["a", "b", "c"]


def test_tree_json_normalization(tree_store: ContextTreeStore) -> None:
    """Values come back as JSON gives them back (as from the SQLite and Postgres stores)."""
    tree_store.put(("m",), "k", {"t": (1, 2), "d": {1: "one"}})
    assert tree_store.get(("m",), "k").value == {"t": [1, 2], "d": {"1": "one"}}


def test_tree_sees_hand_edits(local_tree_store: ContextTreeStore) -> None:
    s = local_tree_store
    s.put(("m",), "k", {"text": "original words"})
    path = next((s.memory.home / "tree" / "m").rglob("k.md"))
    path.write_text(path.read_text().replace("original words", "edited by hand"))
    assert s.get(("m",), "k").value == {"text": "edited by hand"}
    assert keys(s.search(("m",), query="edited hand")) == ["k"]


def test_tree_store_over_an_open_memory(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path, create=True)
    with ContextTreeStore(mem) as s:
        s.put(("m",), "k", {"text": "shared"})
    assert mem.search("shared")[0].path.startswith("m/")            # the store did not close it
    mem.close()

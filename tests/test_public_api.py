"""The public API: what ``memgrove`` exports, and that importing it is cheap."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

import memgrove
import memgrove.tree
from memgrove import Memory, MemgroveError, TreeNotFound

EXPECTED_ALL = [
    "Answer",
    "BadReply",
    "BatchRejected",
    "Cancelled",
    "chat_model",
    "ContextTreeStore",
    "DoctorReport",
    "DreamRunning",
    "Entry",
    "EntryNotFound",
    "Hit",
    "InvalidEntry",
    "InvalidInput",
    "InvalidPath",
    "ItemNotFound",
    "JournalError",
    "JournalRecord",
    "LockTimeout",
    "MemgroveError",
    "Memory",
    "NotWritable",
    "OperationConflict",
    "OperationNotFound",
    "OpResult",
    "PrimaryUnreachable",
    "QuestionTooLong",
    "ReadOnlyReplica",
    "RemoteMemory",
    "ReviewConflict",
    "ServerError",
    "ServerTimeout",
    "ServerUnreachable",
    "TreeNotFound",
    "TreeOutside",
    "TreeSettings",
    "__version__",
]

ERRORS = ["BatchRejected", "Cancelled", "DreamRunning", "EntryNotFound", "InvalidEntry", "InvalidInput", "InvalidPath",
          "ItemNotFound", "JournalError", "LockTimeout", "NotWritable", "OperationConflict", "OperationNotFound",
          "PrimaryUnreachable", "QuestionTooLong", "ReadOnlyReplica", "ReviewConflict", "TreeNotFound", "TreeOutside"]


def test_all_is_pinned() -> None:
    assert memgrove.__all__ == EXPECTED_ALL
    for name in memgrove.__all__:
        assert hasattr(memgrove, name), name
    assert isinstance(memgrove.__version__, str) and memgrove.__version__


def test_graphs_and_tools_all_are_pinned() -> None:
    import memgrove.graphs
    import memgrove.tools

    assert memgrove.graphs.__all__ == ["build_query_graph", "build_curate_graph", "build_memory_agent",
                                       "recall_node", "remember_node"]
    assert sorted(memgrove.tools.__all__) == ["NoMemory", "curate_tool", "dream_candidates_tool", "knowledge_tools",
                                              "memory_from_context", "memory_tools", "open_memory"]
    for name in memgrove.graphs.__all__ + memgrove.tools.__all__:
        assert getattr(memgrove.graphs, name, None) or getattr(memgrove.tools, name, None)


def test_connect_gives_a_remote_memory_with_memorys_methods() -> None:
    remote = Memory.connect("http://127.0.0.1:9", "token")     # nothing is sent until a method is called
    assert isinstance(remote, memgrove.RemoteMemory)
    public = {n for n in vars(Memory) if not n.startswith("_")} - {"open", "connect", "pipeline"}
    assert public - set(dir(remote)) == set()
    assert issubclass(memgrove.ServerUnreachable, MemgroveError) and issubclass(memgrove.ServerError, MemgroveError)


def test_a_remote_memory_loads_nothing_heavy() -> None:
    # (Memory itself imports the tree: RemoteMemory is what a thin client imports)
    mods = _imported_after("from memgrove import RemoteMemory; RemoteMemory('http://127.0.0.1:9', 't')")
    assert [m for m in mods if m.split(".")[0] in ("whoosh", "yaml", "diskcache", "langchain", "langgraph",
                                                    "fastapi")] == []


def test_graph_names(mem) -> None:
    assert mem.graph("query").name == "memgrove-query"
    assert mem.graph("curate").name == "memgrove-curate"
    assert mem.graph("agent").name == "memgrove-agent"
    with pytest.raises(ValueError, match="available: 'query', 'curate', 'agent'"):
        mem.graph("nope")


def test_tree_all_names_resolve() -> None:
    for name in memgrove.tree.__all__:
        assert hasattr(memgrove.tree, name), name
    assert memgrove.tree.ContextTree.__module__ == "memgrove.tree.store"


def test_every_error_the_tree_raises_is_exported() -> None:
    # a caller catches what the memory raises by name (``except memgrove.PrimaryUnreachable``)
    import inspect

    from memgrove.tree.base import errors

    defined = {name for name, cls in vars(errors).items()
               if inspect.isclass(cls) and issubclass(cls, MemgroveError) and cls.__module__ == errors.__name__}
    assert defined - {"MemgroveError"} == set(ERRORS)


def test_errors_form_one_hierarchy() -> None:
    for name in ERRORS:
        cls = getattr(memgrove, name)
        assert issubclass(cls, MemgroveError), name
        assert cls.__doc__ and cls.__doc__.strip(), name
        assert name in memgrove.tree.base.errors.__doc__
    err = memgrove.BatchRejected(["op 1: a", "op 2: b"])
    assert err.errors == ["op 1: a", "op 2: b"]
    assert str(err) == "batch rejected, nothing written (2 invalid operations): op 1: a; op 2: b"
    assert str(memgrove.BatchRejected(["op 1: a"])) == "batch rejected, nothing written: op 1: a"


def test_results_are_frozen_dataclasses() -> None:
    for cls in (memgrove.Hit, memgrove.OpResult, memgrove.JournalRecord, memgrove.TreeSettings):
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]


def test_py_typed_is_shipped() -> None:
    assert (Path(memgrove.__file__).parent / "py.typed").is_file()
    assert (Path(memgrove.tree.__file__).parent / "py.typed").is_file()


def _imported_after(statement: str) -> list[str]:
    code = f"import sys, json; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_import_memgrove_is_cheap() -> None:
    mods = _imported_after("from memgrove import Memory")
    heavy = [m for m in mods if m.split(".")[0] in ("langchain", "langchain_core", "langchain_openai", "langgraph",
                                                     "openai")]
    assert heavy == []
    assert "memgrove" in mods and "memgrove.memory" in mods


def test_the_package_alone_loads_nothing_until_a_name_is_used() -> None:
    # a client of a running server (memgrove.server.registry) pays for neither Whoosh nor YAML
    mods = _imported_after("import memgrove, memgrove.server.registry")
    assert [m for m in mods if m.split(".")[0] in ("whoosh", "yaml", "diskcache")] == []
    assert "memgrove.memory" not in mods


def test_tree_is_a_plain_library() -> None:
    mods = _imported_after("import memgrove.tree, memgrove.tree.store, memgrove.tree.inputs.curator")
    heavy = [m for m in mods if m.split(".")[0] in ("langchain", "langchain_core", "langchain_openai", "langgraph",
                                                     "click", "rich", "fastapi", "typer")]
    assert heavy == []


def test_a_cold_query_in_process_loads_only_what_answering_needs(tmp_path) -> None:
    # a one-shot `memgrove query` with no server: no asyncio (Whoosh's cached_property
    # dependency pulled it in), no curator, input formats, placement or doctor
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        searched = {"whoosh": "whoosh.reading", "tantivy": "memgrove.tree.index.tantivy_engine"}[mem.tree.engine.name]
    code = ("import sys, json; from memgrove.cli import main; sys.argv = ['memgrove', '--root', "
            f"{str(tmp_path)!r}, '--no-server', 'query', 'deploy steps', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    mods = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert searched in mods and "memgrove.tree.store" in mods      # it did search
    assert {"asyncio", "memgrove.tree.inputs.curator", "memgrove.tree.doctor",
            "memgrove.tree.inputs.conversation_formats", "memgrove.tree.inputs.placement"} & mods == set()


def test_whoosh_gets_a_cached_property_and_the_package_stays_whole() -> None:
    code = ("import sys, memgrove.tree.index.whoosh_engine, whoosh.reading, functools; "
            "assert whoosh.reading.cached_property is functools.cached_property; "
            "assert 'asyncio' not in sys.modules; "
            "import cached_property as cp; print(cp.threaded_cached_property.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cached_property"   # its other names load the real package


def test_memory_context_manager_and_home(tmp_path) -> None:
    with Memory.open(tmp_path / "proj", create=True, durable=False) as m:
        assert m.home == tmp_path / "proj" / ".memgrove"
        assert (m.home / "tree").is_dir() and (m.home / "journal").is_dir()
        m.curate([{"op": "ADD", "path": "a/b/c.md", "title": "C", "content": "c", "reason": "r"}])
    with Memory.open(tmp_path / "proj") as m:
        assert m.read("a/b/c.md").title == "C"


def test_open_finds_the_tree_upwards_like_git(tmp_path) -> None:
    Memory.open(tmp_path / "proj", create=True).close()
    deep = tmp_path / "proj" / "src" / "pkg"
    deep.mkdir(parents=True)
    with Memory.open(deep) as m:
        assert m.home == tmp_path / "proj" / ".memgrove"
    with Memory.open(tmp_path / "proj" / ".memgrove") as m:
        assert m.home == tmp_path / "proj" / ".memgrove"


def test_open_uses_memgrove_home(tmp_path, monkeypatch) -> None:
    Memory.open(tmp_path / "elsewhere", create=True).close()
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path / "elsewhere"))
    with Memory.open() as m:
        assert m.home == tmp_path / "elsewhere" / ".memgrove"


def test_open_without_create(tmp_path) -> None:
    with pytest.raises(TreeNotFound):
        Memory.open(tmp_path / "missing")
    (tmp_path / "fake" / ".memgrove").mkdir(parents=True)
    with pytest.raises(TreeNotFound, match="not a memgrove folder"):
        Memory.open(tmp_path / "fake" / ".memgrove")


def test_show_and_list(mem) -> None:
    mem.curate([{"op": "ADD", "path": "a/b/x.md", "title": "X", "summary": "sx", "content": "x",
                 "sources": [{"kind": "text", "ref": "r"}], "reason": "r"},
                {"op": "ADD", "path": "a/b/y.md", "title": "Y", "content": "y", "related": ["a/b/x.md"],
                 "reason": "r"}])
    shown = mem.show("a/b/x.md")
    assert shown["path"] == "a/b/x.md" and shown["title"] == "X" and shown["summary"] == "sx"
    assert shown["text"] == (mem.home / "tree/a/b/x.md").read_text()
    assert shown["links"] == [] and shown["backlinks"] == ["a/b/y.md"]
    assert shown["sources"] == [{"kind": "text", "ref": "r"}]
    assert mem.show("a/b/y.md")["links"] == ["a/b/x.md"]
    assert mem.show("a/b/context.md")["title"] == "B"
    with pytest.raises(memgrove.InvalidPath, match="no entry at a/b/z.md"):
        mem.show("a/b/z.md")


def test_doctor_report_to_dict(mem) -> None:
    mem.curate([{"op": "ADD", "path": "a/b/x.md", "title": "X", "content": "x", "reason": "r"}])
    d = mem.doctor().to_dict()
    assert d == {"ok": True, "entries": 1, "contexts": 2, "indexed": 3, "problems": [], "warnings": [],
                 "fixed": [], "notices": [],
                 "vectors": {"meaning": False, "entries": 3, "computing": 0, "backlog": None, "job": None,
                             "pending": None}}


def test_tree_fixture_is_the_memory_tree(tree, mem) -> None:
    assert tree is mem.tree
    assert tree.root == mem.home / "tree"
    assert tree.settings.durable is False

"""The shape of the code, checked: no import cycle anywhere in the package, the tree's layers import
downward only, the tree is a plain library, its folders stay small, and each part of ``memgrove/``
keeps to its place -- the CLI's commands apart from the group, the remote client apart from
``Memory``, the graphs and tools below ``Memory`` (docs/architecture.md).

Every import counts, wherever it stands: at the top, inside a function, or under
``TYPE_CHECKING`` (a cycle of type-only imports is still two modules that must know each other)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# source folder -> the package it installs as (pyproject.toml's package-dir)
ROOTS = {"memgrove": "memgrove", "tree": "memgrove.tree", "tools": "memgrove.tools", "graphs": "memgrove.graphs"}

# The tree's layers, lowest first: a module may import its own layer and the ones before it.
# tree/__init__.py names the public API lazily and stands above them all.
LAYERS = ["base", "text", "entries", "settings", "index", "meaning", "ranking", "writes", "inputs", "replication",
          "store", "hygiene", "doctor"]
# what the tree, a plain library, never imports
NOT_IN_TREE = ("langchain", "langgraph", "click", "fastapi", "starlette", "uvicorn", "mcp", "rich", "httpx")
MAX_LINES = 450
MAX_MODULES_PER_FOLDER = 20
MAX_TREE_TOP_MODULES = 5   # __init__, store, settings, doctor and one to spare


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in ROOTS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of this package that ``name`` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import module` imports the module; `from module import name` the module
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def _layer(name: str) -> str | None:
    """The tree layer of a module of memgrove.tree (None for the package itself)."""
    parts = name.split(".")[2:]
    return parts[0] if parts else None


def test_no_import_cycle_anywhere():
    # package __init__ modules that re-export their children lazily are left out: a child
    # importing a sibling through its package would otherwise be a cycle of one package
    assert _cycles() == []


def test_the_tree_imports_downward_only():
    wrong = []
    for name, deps in GRAPH.items():
        if not name.startswith("memgrove.tree.") or (layer := _layer(name)) is None:
            continue
        for dep in deps:
            if not dep.startswith("memgrove.tree"):
                wrong.append(f"{name} imports {dep}, outside the tree")
            elif (other := _layer(dep)) is None:
                wrong.append(f"{name} imports memgrove.tree itself")
            elif LAYERS.index(other) > LAYERS.index(layer):
                wrong.append(f"{name} ({layer}) imports {dep} ({other}), a layer above it")
    assert wrong == []


def test_every_tree_module_is_in_a_declared_layer():
    assert {_layer(n) for n in MODULES if n.startswith("memgrove.tree.")} <= set(LAYERS)


def test_the_tree_is_a_plain_library():
    wrong = []
    for name, path in MODULES.items():
        if not name.startswith("memgrove.tree"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            roots = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
            wrong += [f"{name} imports {r}" for r in roots if r.split(".")[0] in NOT_IN_TREE]
    assert wrong == []


def test_small_files_and_folders():
    long = [f"{p.relative_to(REPO)}: {n} lines" for p in MODULES.values()
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    per_folder: dict[Path, int] = defaultdict(int)
    for path in MODULES.values():
        if path.name != "__init__.py":
            per_folder[path.parent] += 1
    crowded = [f"{f.relative_to(REPO)}: {n} modules" for f, n in per_folder.items() if n > MAX_MODULES_PER_FOLDER]
    assert long == [] and crowded == []
    top = sorted(p.name for p in (REPO / "tree").glob("*.py"))
    assert len(top) <= MAX_TREE_TOP_MODULES, top


@pytest.mark.parametrize("package", sorted(n for n, p in MODULES.items() if p.name == "__init__.py"
                                            and n.startswith("memgrove.tree.")))
def test_each_tree_package_says_what_it_owns_and_may_use(package: str):
    doc = " ".join((ast.get_docstring(ast.parse(MODULES[package].read_text())) or "").split())
    assert len(doc.split()) >= 40, f"{package}: a paragraph on what it owns and what it may use"
    assert "may use" in doc or "uses" in doc or "imports" in doc, package


# -- memgrove/ around the tree ------------------------------------------------------------------
# Packages whose ``__init__`` is a public face above their own modules (it may import what imports
# those modules): a module of the package never imports its face.
FACES = ("memgrove.cli", "memgrove.remote", "memgrove.store", "memgrove.tools", "memgrove.graphs")
# what sits above the graphs' and tools' modules (it builds them and hands Memory in), so they never
# import it: these packages, and the public faces (memgrove, memgrove.tools, memgrove.graphs)
ABOVE_GRAPHS = ("memgrove.memory", "memgrove.remote", "memgrove.cli", "memgrove.server", "memgrove.mcp",
                "memgrove.store")
FACES_ABOVE_GRAPHS = ("memgrove", "memgrove.tools", "memgrove.graphs")
# langgraph.json's graphs, over a Memory they open: an entry point, not a part
ENTRY_POINTS = {"memgrove.graphs.deployment"}


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_module_imports_its_own_package_face():
    wrong = [f"{name} imports {face}" for face in FACES for name, deps in GRAPH.items()
             if name.startswith(face + ".") and face in deps]
    assert wrong == []


def test_cli_commands_never_import_the_group():
    # the group (cli/app.py) builds itself from each command module's COMMANDS: a registry, not
    # commands importing the CLI they register into. Left out: the group, and what starts it (the
    # console script, fastpath.py, and `python -m memgrove.cli`)
    starters = ("memgrove.cli.app", "memgrove.cli.fastpath", "memgrove.cli.__main__")
    commands = [n for n in MODULES if n.startswith("memgrove.cli.") and n not in starters]
    wrong = [f"{n} imports memgrove.cli.app" for n in commands if "memgrove.cli.app" in GRAPH[n]]
    assert wrong == []
    assert {"memgrove.cli.read", "memgrove.cli.write", "memgrove.cli.admin", "memgrove.cli.dream"} <= \
        GRAPH["memgrove.cli.app"]


def test_nothing_below_the_cli_imports_it():
    # `python -m memgrove` starts it, and is started by nothing
    wrong = [f"{n} imports {d}" for n, deps in GRAPH.items() if not _under(n, "memgrove.cli")
             and n != "memgrove.__main__" for d in deps if _under(d, "memgrove.cli")]
    assert wrong == []


def test_the_remote_client_stands_apart_from_memory():
    # Memory.connect constructs RemoteMemory and hands Memory in; the client never imports it back,
    # nor the CLI, the server, MCP or the store adapter built over it
    banned = ("memgrove.memory", "memgrove.cli", "memgrove.server", "memgrove.mcp", "memgrove.store")
    wrong = [f"{n} imports {d}" for n, deps in GRAPH.items() if _under(n, "memgrove.remote")
             for d in deps if any(_under(d, b) for b in banned) or d == "memgrove"]
    assert wrong == []


def test_graphs_and_tools_stay_below_memory():
    wrong = []
    for name, deps in GRAPH.items():
        if not (name.startswith("memgrove.graphs.") or name.startswith("memgrove.tools.")) or name in ENTRY_POINTS:
            continue
        wrong += [f"{name} imports {d}" for d in deps
                  if d in FACES_ABOVE_GRAPHS or any(_under(d, above) for above in ABOVE_GRAPHS)]
    assert wrong == []


def test_the_tree_imports_nothing_of_memgrove_outside_it():
    wrong = [f"{n} imports {d}" for n, deps in GRAPH.items() if _under(n, "memgrove.tree")
             for d in deps if not _under(d, "memgrove.tree")]
    assert wrong == []


@pytest.mark.parametrize("package", sorted(n for n, p in MODULES.items() if p.name == "__init__.py"
                                            and n.count(".") == 1 and not n.startswith("memgrove.tree")
                                            and n not in ("memgrove.data",)))
def test_each_memgrove_package_says_what_it_owns_and_may_use(package: str):
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text())) or ""
    assert len(doc.split()) >= 40, f"{package}: a paragraph on what it owns and what it may use"
    assert "may use" in doc, package

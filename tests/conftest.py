"""Shared fixtures: every test gets its own memory under ``tmp_path``.

``MEMGROVE_HOME`` points at ``tmp_path`` so nothing can touch a real
``.memgrove/``, no model is configured unless a test sets one, and ``MEMGROVE_RAISE_ERRORS`` makes unexpected exceptions
surface as tracebacks instead of one-line messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from memgrove import Memory

from helpers import engine_choice, meaning_choice, socket_origin  # noqa: E402 - before any tree is opened

engine_choice.apply()
meaning_choice.apply()
engine_choice.export()
socket_origin.install()


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    socket_origin.report_to_pytest()     # after pytest's own hook is in place


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The modules on ``engine_choice.BOTH`` run once per engine (module-scoped, so that a module's
    tests run on one engine, then on the other)."""
    engines = engine_choice.engines()
    if metafunc.module.__name__ in engine_choice.BOTH and len(engines) > 1:
        metafunc.parametrize("suite_engine", engines, indirect=True, scope="module")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A module-scoped fixture of a module on ``BOTH`` must take ``suite_engine``: otherwise
    what it opened on the first engine would be reused by the tests of the second."""
    for item in items:
        if item.module.__name__ not in engine_choice.BOTH:
            continue
        defs = item._fixtureinfo.name2fixturedefs
        for name in item.fixturenames:
            shared = [d for d in defs.get(name, ()) if d.scope != "function" and name != "suite_engine"
                      and d.baseid.startswith("tests")]
            if shared and not _takes_engine(name, defs):
                raise pytest.UsageError(f"{item.module.__name__} runs on both engines (engine_choice.BOTH) "
                                        f"but its {shared[-1].scope}-scoped fixture {name!r} does not take "
                                        "suite_engine: both engines' tests would share it")


def _takes_engine(name: str, defs: dict, seen: frozenset[str] = frozenset()) -> bool:
    if name == "suite_engine":
        return True
    return any(_takes_engine(arg, defs, seen | {name}) for d in defs.get(name, ()) for arg in d.argnames
               if arg not in seen)


@pytest.fixture(scope="module", autouse=True)
def suite_engine(request: pytest.FixtureRequest):
    """The engine of this module's trees: the parameter for a module on ``engine_choice.BOTH``,
    otherwise the suite's (``MEMGROVE_TEST_ENGINE``, Whoosh by default)."""
    engine = getattr(request, "param", None)
    if engine is None:
        yield engine_choice.chosen()
        return
    with engine_choice.used(engine):
        yield engine


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    socket_origin.running(item.nodeid)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGROVE_HOME", str(tmp_path))
    monkeypatch.setenv("MEMGROVE_RAISE_ERRORS", "1")
    # a model or a memory server configured on the developer's machine must not reach the tests
    for name in ("MEMGROVE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MEMGROVE_URL", "MEMGROVE_TOKEN",
                 "MEMGROVE_SEMANTIC"):
        monkeypatch.delenv(name, raising=False)
    # tiktoken downloads an encoding at its first use: the benchmarks' token counts fall back
    # to characters / 4 instead of reaching the network
    try:
        import tiktoken
    except ImportError:
        return

    def offline(name: str):
        raise ConnectionError(f"tests are offline: tiktoken's {name!r} encoding is not downloaded")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)


@pytest.fixture
def mem(tmp_path: Path):
    m = Memory.open(tmp_path, create=True, durable=False)
    yield m
    m.close()


@pytest.fixture
def tree(mem: Memory):
    """The ``ContextTree`` behind ``mem``."""
    return mem.tree


def tree_files(home: Path) -> dict[str, bytes]:
    """Every file under ``.memgrove/tree/`` (relative path -> bytes)."""
    root = home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def snapshot(mem: Memory) -> Callable[[], dict[str, bytes]]:
    """``snapshot()`` -> the tree's files and the journal, to compare before/after."""

    def take() -> dict[str, bytes]:
        state = tree_files(mem.home)
        journal = mem.home / "journal" / "journal.jsonl"
        state["<journal>"] = journal.read_bytes() if journal.exists() else b""
        return state

    return take



# -- the query pipeline (tests/test_query_*.py) ----------------------------------

# A small memory whose questions route to known tiers (see QUESTIONS).
QUERY_SEED = [
    {"op": "ADD", "path": "auth/jwt/rotation.md", "title": "JWT refresh token rotation",
     "content": "Refresh tokens rotate on every use. The old refresh token is revoked after a 30 second grace period.",
     "reason": "seed"},
    {"op": "ADD", "path": "infra/db/postgres_version.md", "title": "Postgres version",
     "content": "Production runs Postgres 16 on the primary cluster since March 2024.", "reason": "seed"},
    {"op": "ADD", "path": "team/people/ana.md", "title": "Ana leads payments",
     "content": "Ana leads the payments team and owns the billing service. Ben handles search.", "reason": "seed"},
    {"op": "ADD", "path": "releases/notes/release_2023.md", "title": "Release 2023",
     "content": "The 2023 release moved invoices to the new ledger format.", "reason": "seed"},
    {"op": "ADD", "path": "releases/notes/release_2024.md", "title": "Release 2024",
     "content": "The 2024 release added audit trails to the ledger.", "reason": "seed"},
]

# question -> the tier it routes to on QUERY_SEED (fresh, no cache)
QUESTIONS = {
    "direct": "How do refresh tokens rotate?",
    "llm": "who owns billing",
    "agent": "Who leads the payments team and what database does billing use?",
}


@pytest.fixture
def qmem(tmp_path: Path):
    """A memory seeded with QUERY_SEED (no model: tiers 3-4 answer extractively)."""
    m = Memory.open(tmp_path, create=True, durable=False)
    m.curate(QUERY_SEED)
    yield m
    m.close()


@pytest.fixture
def openai_server():
    """A local OpenAI-protocol server (tests/helpers/openai_server.py); queue replies with ``.queue``."""
    from helpers.openai_server import serve

    with serve() as srv:
        yield srv

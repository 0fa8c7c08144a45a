"""The engine a test runs on: both engines for the modules that exercise one (``BOTH``), Whoosh for
the rest; ``MEMGROVE_TEST_ENGINE=tantivy`` (``make test-tantivy``) runs every test on tantivy only.

Read only by the tests. It changes the default of ``TreeSettings.engine`` in this process
(conftest) and, through ``engine_site/sitecustomize.py`` on ``PYTHONPATH``, in the processes the
tests start. Only the constructor's default changes: the documented default (the dataclass
field, which the README and ``config.toml`` template show) stays "whoosh".

A module on ``BOTH`` runs twice in the one ``make test``, its tests parametrized by the conftest's
module-scoped ``suite_engine`` ([whoosh] and [tantivy] in their ids), so both CPUs stay busy to the
end instead of waiting for a second run. A module runs on both when what it checks goes through the
index: search, ranking, the index staying in step with the files (sync, the catalog, rebuilds), the
index's writes on a full or read-only disk, processes sharing one index. A module whose behaviour
is the same whatever the index (the CLI's plumbing, the server and its auth, MCP, the remote client,
the curator, the journal, config, packaging, the docs, the benchmarks' scripts) runs once.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

VARIABLE = "MEMGROVE_TEST_ENGINE"
SITE = Path(__file__).parent / "engine_site"


# the test modules (tests/<name>.py) that run on both engines; see the docstring for the rule
BOTH = frozenset({
    # the engines, their analysis and their search
    "test_index_search", "test_multilingual", "test_analyzer_exceptions", "test_bounds",
    "test_public_api",
    # ranking over the engine's scores, terms and positions
    "test_assistant_chat_ranking", "test_coverage_ranking", "test_folder_coverage",
    "test_linked_search", "test_near_and_time_search", "test_proximity", "test_role_ranking",
    "test_semantic_ranking", "test_validity", "test_ranking_pipeline",
    # the index in step with the files and the cache: sync, catalog, rebuilds, repair
    "test_query_cache", "test_stale_answers", "test_scan_fallback", "test_self_repair",
    "test_doctor_fix_report", "test_deleted_databases", "test_properties", "test_linear_build",
    "test_archive", "test_journal_undo", "test_operations",
    # the index's writes on a full or read-only disk, under kills, shared by processes and threads
    "test_disk_faults", "test_disk_full", "test_disk_full_refusals", "test_writer_lock",
    "test_concurrency", "test_dropped_memory", "test_replica_shutdown",
    # this mechanism itself
    "test_suite_engines",
})
# test_engine_contract runs once: each of its tests runs both engines itself


def chosen() -> str:
    return os.environ.get(VARIABLE, "") or "whoosh"


def engines() -> tuple[str, ...]:
    """The engines a module on ``BOTH`` runs on: both, unless ``MEMGROVE_TEST_ENGINE`` names one."""
    from memgrove.tree.settings import ENGINES

    return (chosen(),) if os.environ.get(VARIABLE) else tuple(ENGINES)


@contextmanager
def used(engine: str) -> Iterator[None]:
    """Inside, trees whose settings name no engine use ``engine``, in this process and in the
    processes it starts (they read ``MEMGROVE_TEST_ENGINE`` through engine_site)."""
    from memgrove.tree.settings import TreeSettings

    saved, was = TreeSettings.__init__.__defaults__, os.environ.get(VARIABLE)
    os.environ[VARIABLE] = engine
    set_default("engine", engine)
    try:
        yield
    finally:
        TreeSettings.__init__.__defaults__ = saved
        if was is None:
            del os.environ[VARIABLE]
        else:
            os.environ[VARIABLE] = was


def apply() -> None:
    """Make ``chosen()`` the engine of every tree whose settings do not name one."""
    from memgrove.tree.settings import ENGINES

    engine = chosen()
    if engine not in ENGINES:
        raise SystemExit(f"{VARIABLE}={engine!r}: use one of {', '.join(ENGINES)}")
    set_default("engine", engine)


def set_default(name: str, value: object) -> None:
    """``TreeSettings(...)``'s default for the field ``name`` becomes ``value`` (in this process);
    the dataclass field, which the docs and the config template show, stays as it is."""
    from memgrove.tree.settings import TreeSettings

    init = TreeSettings.__init__
    names = [f.name for f in dataclasses.fields(TreeSettings)]
    defaults = list(init.__defaults__)
    # every field has a default, so __defaults__ lines up with the fields
    defaults[names.index(name) - len(names) + len(defaults)] = value
    init.__defaults__ = tuple(defaults)


def export() -> None:
    """Let processes started by the tests pick the same engine (and meaning: meaning_choice.py)."""
    paths = [str(SITE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def index_engine(home: Path) -> str:
    """The engine that last built the index of the memory at ``home`` (its ``.memgrove``), from
    the format the catalog records ("tantivy-14"): which engine a started process really ran."""
    from memgrove.tree.index.catalog import Catalog

    cat = Catalog(home / "index" / "catalog.db")
    try:
        return (cat.get_meta("format") or "").split("-")[0]
    finally:
        cat.close()

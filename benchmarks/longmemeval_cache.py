"""LongMemEval's memgrove side: each haystack curated once into a memory kept in a cache folder (keyed by the
haystack, the variant and the curator's version), then opened read-only for its question."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from harness.retrievers import MemgroveRetriever, Variant
from harness.stats import timed


CACHE_FORMAT = 1
# what the harness keeps of a curated memory (under .memgrove/): not the journal (undo only; ~1/8 of the size),
# the query cache or the query log (a fresh memory has neither worth keeping)
_CACHE_SKIP = {"journal", "cache", "query-log.jsonl"}
CURATIONS = Counter()   # "curated": Memory.ingest calls made by this process (tests read it)


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "memgrove-bench" / "longmemeval"


def curator_version() -> str:
    """sha256 of the verbatim curator's source, memgrove's version and the tree's index format: a change to
    any of them re-curates (a memory whose index format is stale would be reindexed on every open)."""
    import memgrove
    from memgrove.tree.inputs import curator
    from memgrove.tree import store

    h = hashlib.sha256(Path(curator.__file__).read_bytes())
    for part in sorted(Path(curator.__file__).parent.glob("verbatim_*.py")):  # the curator's code since its split
        h.update(part.read_bytes())
    h.update(str(memgrove.__version__).encode())
    h.update(str(getattr(store, "INDEX_FORMAT", "")).encode())
    return h.hexdigest()[:12]


def haystack_sha(q: dict[str, Any]) -> str:
    keep = {k: q[k] for k in ("question_id", "haystack_session_ids", "haystack_dates", "haystack_sessions")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def cache_key(q: dict[str, Any], variant: Variant, curator: str) -> str:
    spec = json.dumps({"format": CACHE_FORMAT, "haystack": haystack_sha(q), "curator": curator,
                       "window": variant.window, "tree": variant.tree}, sort_keys=True)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(q["question_id"]))[:60] or "q"
    return f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}"


def curate_memory(conv: dict[str, Any], workdir: Path, variant: Variant) -> dict[str, Any]:
    """A fresh memory in ``workdir`` holding ``conv``, curated verbatim; closed when this returns."""
    from memgrove import Memory

    CURATIONS["curated"] += 1
    mem = Memory.open(workdir, create=True, **{"durable": False, **variant.tree})
    try:
        ops, seconds = timed(lambda: len(mem.ingest(conversation=conv, window=variant.window)))
        entries = mem.tree.entry_count()
    finally:
        mem.close()
    return {"seconds": round(seconds, 3), "ops": ops, "entries": entries}


def _skip_in_home(directory: str, names: list[str]) -> set[str]:
    return _CACHE_SKIP & set(names) if Path(directory).name == ".memgrove" else set()


def prepare_memory(q: dict[str, Any], conv: dict[str, Any], variant: Variant, cache_root: Path | None,
                   use_cache: bool, curator: str) -> tuple[Path, dict[str, Any], bool]:
    """A temp dir holding the question's curated memory (copied from the cache, or curated now and stored
    there); the caller queries it and removes it. Returns (dir, curation info, came from the cache)."""
    workdir = Path(tempfile.mkdtemp(prefix="memgrove-lme-"))
    entry = cache_root / cache_key(q, variant, curator) if cache_root is not None else None
    try:
        if entry is not None and use_cache and (entry / "meta.json").exists():
            t0 = time.perf_counter()
            shutil.copytree(entry / "memory", workdir, dirs_exist_ok=True)
            meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
            return workdir, {**meta["curation"], "load_seconds": round(time.perf_counter() - t0, 3)}, True
        curation = curate_memory(conv, workdir, variant)
        if entry is not None:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.parent / f".tmp-{entry.name}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(workdir, tmp / "memory", ignore=_skip_in_home)
            meta = {"question_id": q["question_id"], "curator": curator, "window": variant.window,
                    "tree": variant.tree, "haystack_sha256": haystack_sha(q), "curation": curation,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)
            try:
                os.replace(tmp, entry)
            except OSError:   # another run stored it meanwhile: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
        return workdir, curation, False
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def open_retriever(workdir: Path, conv_id: str, variant: Variant, prefetch_limit: int,
                   curation: dict[str, Any]) -> MemgroveRetriever:
    """The query graph over the memory in ``workdir`` (removed when the retriever closes)."""
    from memgrove import Memory
    from memgrove.graphs.settings import load_query_settings

    mem = Memory.open(workdir, **{"durable": False, **variant.tree})
    try:
        settings = load_query_settings(mem.tree.home, prefetch_limit=prefetch_limit, **variant.query)
        graph = mem.graph("query", model=None, settings=settings)
    except BaseException:
        mem.close()
        raise
    return MemgroveRetriever(mem, graph, conv_id, workdir, curation)

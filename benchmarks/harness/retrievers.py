"""The systems the conversational benchmarks compare, behind one interface: a retriever is called with a
question and returns :class:`Retrieved` (items in rank order, each a sequence of per-turn segments, and the
latency), and is closed after its conversation. ``BM25Retriever`` is the flat baseline (bm25s over turns or
sessions, built by each dataset's loader); ``memgrove_system`` curates a conversation into a fresh memory and
queries it through the query graph, in one of the ``VARIANTS``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from harness import metrics as rm

DEFAULT_PREFETCH = 50
DEFAULT_VARIANT = "verbatim-w1"


@dataclass
class Retrieved:
    items: list[rm.Item]
    latency_ms: float
    info: dict[str, Any] = field(default_factory=dict)


class BM25Retriever:
    """Flat BM25 (bm25s defaults) over ``items``, each indexed by its text; ranked best first, ties by corpus
    order, zero-score items not returned."""

    def __init__(self, items: list[rm.Item], texts: list[str]):
        import bm25s

        self.items = items
        self.bm25 = bm25s.BM25()
        self.bm25.index([rm.word_tokens(t) for t in texts], show_progress=False)
        self.vocab = self.bm25.vocab_dict

    def __call__(self, question: str) -> Retrieved:
        t0 = time.perf_counter()
        q = [t for t in rm.word_tokens(question) if t in self.vocab]
        ranked: list[rm.Item] = []
        if q:
            scores = self.bm25.get_scores(q)
            order = sorted((i for i in range(len(self.items)) if scores[i] > 0), key=lambda i: (-float(scores[i]), i))
            ranked = [self.items[i] for i in order]
        return Retrieved(ranked, (time.perf_counter() - t0) * 1000)

    def close(self) -> None:
        pass


# -- memgrove ---------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_NARRATIVE = re.compile(r"^## Narrative[ \t]*\n", re.M)
_NEXT_SECTION = re.compile(r"^## ", re.M)
_TITLE = re.compile(r"\A# [^\n]*\n+|\A")
_MESSAGE = re.compile(r"^\*\*[^*\n]+\*\*")


def entry_body(text: str) -> str:
    """An entry file's text without its YAML frontmatter."""
    return _FRONTMATTER.sub("", text, count=1).strip("\n")


def source_ids(sources: Sequence[dict[str, Any]], conv_id: str) -> list[str]:
    out = []
    for s in sources or []:
        ref = str(s.get("ref", "")) if isinstance(s, dict) else str(s)
        cid, sep, mid = ref.rpartition("#")
        if sep and cid == conv_id and mid and mid not in out:
            out.append(mid)
    return out


def entry_segments(body: str, ids: list[str]) -> tuple[tuple[rm.Segment, ...], str]:
    """Per-turn segments of an entry body and how they were made: "split" (one Narrative paragraph per
    source, header words on the first, trailer on the last), "even" (words split evenly) or "none"."""
    if not ids:
        return (rm.Segment("", rm.word_count(body), body),), "none"
    if len(ids) == 1:  # one message: the whole entry is its segment
        return (rm.Segment(ids[0], rm.word_count(body), body),), "split"
    m = _NARRATIVE.search(body) or (None if _NEXT_SECTION.search(body) else _TITLE.match(body))
    if m:  # the Narrative section, or a body of prose alone (written without its heading)
        start = m.end()
        nxt = _NEXT_SECTION.search(body, start)
        end = nxt.start() if nxt else len(body)
        paras: list[str] = []
        for p in re.split(r"\n\s*\n", body[start:end].strip("\n")):
            if not p.strip():
                continue
            if _MESSAGE.match(p) or not paras:
                paras.append(p)
            else:  # a message's own blank line: still the same message
                paras[-1] += "\n\n" + p
        if len(paras) == len(ids) and all(_MESSAGE.match(p) for p in paras):
            texts = list(paras)
            texts[0] = body[:start] + texts[0]
            texts[-1] = texts[-1] + ("\n\n" + body[end:] if body[end:].strip() else "")
            return rm.segments_from_texts(zip(ids, texts)), "split"
    return rm.even_segments(ids, body), "even"


@dataclass(frozen=True)
class Variant:
    """A way to build the memgrove system, chosen by name with ``--variant``."""

    name: str
    description: str
    window: int = 1
    curator: str = "verbatim"                       # "verbatim" (Memory.ingest) or "llm" (Memory.learn)
    query: dict[str, Any] = field(default_factory=dict)   # QuerySettings overrides (besides prefetch_limit)
    tree: dict[str, Any] = field(default_factory=dict)    # TreeSettings overrides (Memory.open)
    fresh_signals: bool = False                     # forget the signals each question's retrieval recorded
    dream: bool = False                             # memgrove dream (no model) + approve the queue after curating


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("verbatim-w1", "verbatim curator, one entry per message; product settings"),
    Variant("verbatim-w3", "verbatim curator, one entry per 3 consecutive messages of a session", window=3),
    *[Variant(f"verbatim-w1-links{int(w * 100)}", f"verbatim-w1 with link_weight {w}: a hit lends {w} of its "
              "score to the previous and next message", tree={"link_weight": w}) for w in (0.1, 0.2, 0.3, 0.5)],
    Variant("verbatim-w1-benchmark-profile", "verbatim-w1 with the tree's ranking profile 'benchmark' (pure BM25F "
            "relevance, no importance/recency, no access bonus: query order cannot change rankings)",
            tree={"profile": "benchmark"}),
    Variant("verbatim-w1-fresh-signals", "verbatim-w1 (product profile), but after each question the harness "
            "forgets the importance signals that question's retrieval recorded (`mem.tree.signals.forget`), so "
            "every question is ranked as the first one was: the product ranking without its drift",
            fresh_signals=True),
    Variant("verbatim-w1-dream", "verbatim-w1, then `memgrove dream` without a model and every queued change "
            "approved (duplicates merged, links added, superseded facts closed): is any evidence lost?", dream=True),
    Variant("verbatim-w3-fresh-signals", "verbatim-w3 with fresh signals per question (see verbatim-w1-fresh-signals)",
            window=3, fresh_signals=True),
)}


class MemgroveRetriever:
    """A memgrove memory over one conversation, queried through the query graph."""

    def __init__(self, mem: Any, graph: Any, conv_id: str, workdir: Path | None, curation: dict[str, Any],
                 fresh_signals: bool = False, settings: Any = None):
        self.mem, self.graph, self.conv_id, self.workdir = mem, graph, conv_id, workdir
        self.settings = settings          # the query graph's QuerySettings (for the tier-3 context)
        self.count_tokens: Any = None     # curate_cost.TokenCounter, made at the first question
        self.fresh_signals = fresh_signals
        self.curation = curation
        self.bodies: dict[str, tuple[tuple[rm.Segment, ...], str]] = {}
        self.segmenting: Counter = Counter()

    def item(self, hit: dict[str, Any]) -> rm.Item:
        path = hit["path"]
        if path not in self.bodies:
            body = entry_body(self.mem.tree.read_text(path))
            self.bodies[path] = entry_segments(body, source_ids(hit.get("sources", []), self.conv_id))
            self.segmenting[self.bodies[path][1]] += 1
        return rm.Item(self.bodies[path][0], key=path)

    def __call__(self, question: str) -> Retrieved:
        t0 = time.perf_counter()
        # the graph's public output is its answer; the harness also reads the search hits it ranked
        state = self.graph.invoke({"question": question}, output_keys=["answer", "hits"])
        ms = (time.perf_counter() - t0) * 1000
        hits = state.get("hits") or []
        if self.fresh_signals:  # untimed: undo its +3 importance (the verbatim curator leaves no signals)
            self.mem.tree.signals.forget([h["path"] for h in hits])
        entries = [h for h in hits if h.get("kind", "entry") == "entry"]
        ans = state.get("answer") or {}
        return Retrieved([self.item(h) for h in entries], ms,
                         {"tier": ans.get("tier"), "reported_ms": ans.get("latency_ms"), "cached": ans.get("cached"),
                          "hits": len(hits), "entries": len(entries), "scores": [h.get("score") for h in entries],
                          **self.llm_context_tokens(hits)})

    def llm_context_tokens(self, hits: list[dict[str, Any]]) -> dict[str, int]:
        """Untimed: the size of the entries tier 3 would send an LLM for these hits (``context_block``,
        each entry's reader view), and of the same entries as whole files (what it sent before)."""
        if self.settings is None or not hits:
            return {}
        from harness.tokens import TokenCounter
        from memgrove.graphs.llm_tiers import context_block
        from memgrove.tree.ranking.hits import hit_from_dict
        self.count_tokens = self.count_tokens or TokenCounter()
        sent, used = context_block(self.mem.tree, [hit_from_dict(h) for h in hits], self.settings)
        files = "\n\n".join(f"=== {p} ===\n{self.mem.tree.read_text(p)[: self.settings.direct_max_chars]}"
                             for p in used)
        return {"context_tokens": self.count_tokens(sent), "context_tokens_files": self.count_tokens(files),
                "token_method": self.count_tokens.method}

    def close(self) -> None:
        self.mem.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def with_tree_overrides(variant: Variant, pairs: Sequence[str]) -> Variant:
    """``variant`` with ``KEY=VALUE`` [tree] overrides (``--tree``, for ablations) added and named."""
    if not pairs:
        return variant
    extra: dict[str, Any] = {}
    for kv in pairs:
        key, _, value = kv.partition("=")
        try:  # a number, true/false, a list or a quoted string; else the word itself (engine=tantivy)
            extra[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            extra[key.strip()] = value
    return dataclasses.replace(variant, tree={**(variant.tree or {}), **extra},
                               name=variant.name + "".join(f"+{k}={v}" for k, v in extra.items()))


def memgrove_system(conv: dict[str, Any], *, window: int = 1, curator: str = "verbatim",
                    prefetch_limit: int = DEFAULT_PREFETCH, query_overrides: dict[str, Any] | None = None,
                    tree_overrides: dict[str, Any] | None = None, model: Any = None,
                    workdir: Path | None = None, fresh_signals: bool = False,
                    dream: bool = False) -> MemgroveRetriever:
    """Curate ``conv`` (memgrove conversation format) into a fresh temp memory and return its retriever.

    ``curator``: "verbatim" = ``Memory.ingest(conversation=conv, window=window)``; "llm" = ``Memory.learn``
    with ``model``. The query graph gets ``prefetch_limit`` and ``query_overrides`` on top of the defaults
    (``load_query_settings``); no model (tiers 3-4 answer extractively). ``tree_overrides`` go to
    ``Memory.open`` (the harness always passes ``durable=False``: no fsync per write). ``fresh_signals``:
    after each question, forget the importance signals its retrieval recorded (a diagnostic, see VARIANTS).
    ``dream``: after curating, ``Memory.dream`` without a model and the whole review queue approved.
    """
    from memgrove import Memory
    from memgrove.graphs.settings import load_query_settings

    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="memgrove-bench-")) if own else workdir
    mem = Memory.open(workdir, create=True, **{"durable": False, **(tree_overrides or {})})
    try:
        t0 = time.perf_counter()
        if curator == "verbatim":
            ops = len(mem.ingest(conversation=conv, window=window))
            extra: dict[str, Any] = {}
        elif curator == "llm":
            if model is None:
                raise ValueError("the LLM curator needs a model")
            report = mem.learn(conversation=conv, model=model)
            ops = len(getattr(report, "applied", []) or [])
            extra = {"curator_reported": getattr(report, "curator", None)}
        else:
            raise ValueError(f"unknown curator {curator!r}")
        seconds = time.perf_counter() - t0
        if dream:
            entries_before = mem.tree.entry_count()
            run = mem.dream(use_model=False)
            approved = mem.review_approve(all=True)
            extra["dream"] = {"entries_before": entries_before, "applied": sum(c["status"] == "applied"
                                                                              for c in run["candidates"]),
                              "queued_then_approved": len(approved["applied"])}
        settings = load_query_settings(mem.tree.home, prefetch_limit=prefetch_limit, **(query_overrides or {}))
        graph = mem.graph("query", model=None, settings=settings)
    except BaseException:
        mem.close()
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    curation = {"seconds": round(seconds, 3), "ops": ops, "entries": mem.tree.entry_count(), **extra}
    return MemgroveRetriever(mem, graph, str(conv["id"]), workdir if own else None, curation, fresh_signals, settings)


@contextlib.contextmanager
def env_without(*names: str) -> Iterator[None]:
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)

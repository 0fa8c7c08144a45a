"""The tiers of the query pipeline as plain functions (no LangChain, no LangGraph).

The CLI fast path, ``Memory.query`` and the graph nodes all call these, so an
answer from tiers 0–2 costs no LangChain import. Only tiers 3–4 need a model;
they live in ``graphs/llm_tiers.py``.

    question ─► tier 0 exact cache ─► tier 1 fuzzy cache ─► retrieve ─► route ─┬─ out_of_domain
                                                                               ├─ direct  (tier 2)
                                                                               ├─ llm     (tier 3)
                                                                               └─ agent   (tier 4)
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memgrove.tree.cache import QueryCache, normalize_query
from memgrove.tree.fsio import append_line
from memgrove.tree.search import Hit

from .settings import QuerySettings

NOT_IN_MEMORY = "not in memory"
NO_LLM = "No LLM is configured (set MEMGROVE_MODEL, and OPENAI_API_KEY / OPENAI_BASE_URL)"


@dataclass(frozen=True)
class Answer:
    """What the pipeline answered. ``text`` is markdown: Summary / Details / Sources / Gaps."""

    question: str
    text: str
    tier: int
    sources: list[str] = field(default_factory=list)
    top_score: float = 0.0
    latency_ms: float = 0.0
    cached: bool = False
    out_of_domain: bool = False
    llm: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Answer":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})


# -- tiers 0 and 1 -------------------------------------------------------------

# The cache is derived: one that cannot be opened (a read-only or full disk) is a miss.
_UNAVAILABLE = (OSError, sqlite3.OperationalError)


def tier0_exact(cache: QueryCache, question: str, fingerprint: str) -> dict[str, Any] | None:
    try:
        item = cache.get_exact(question, fingerprint)
    except _UNAVAILABLE:
        return None
    return None if item is None else item["answer"]


def tier1_fuzzy(cache: QueryCache, question: str, fingerprint: str, s: QuerySettings) -> dict[str, Any] | None:
    try:
        found = cache.get_fuzzy(question, fingerprint, threshold=s.fuzzy_threshold, min_tokens=s.fuzzy_min_tokens)
    except _UNAVAILABLE:
        return None
    return None if found is None else found[0]["answer"]


def from_cache(answer: dict[str, Any], question: str, tier: int, started: float) -> Answer:
    a = Answer.from_dict(answer)
    return Answer(question=question, text=a.text, tier=tier, sources=a.sources, top_score=a.top_score,
                  latency_ms=elapsed_ms(started), cached=True, out_of_domain=a.out_of_domain, llm=a.llm)


# -- retrieval and routing -----------------------------------------------------

def confidence(h: Hit) -> float:
    """How well one entry answers the question: BM25 relevance × query-term coverage."""
    return h.relevance * h.coverage


def top_scores(hits: list[Hit]) -> tuple[float, float]:
    """Confidence of the best and second-best entry (0 when absent)."""
    scores = sorted((confidence(h) for h in hits), reverse=True)
    return (scores[0] if scores else 0.0, scores[1] if len(scores) > 1 else 0.0)


def route(hits: list[Hit], query_terms: list[str], entry_count: int, s: QuerySettings) -> str:
    """``"out_of_domain"``, ``"direct"`` (tier 2), ``"llm"`` (tier 3) or ``"agent"`` (tier 4).

    Out-of-domain uses ByteRover's rule on the plain relevance ŝ = s/(1+s):
    nothing matches strongly, or no match shares a 4+ letter query term. The
    tier thresholds apply to ``confidence`` (ŝ × coverage), because ŝ alone
    saturates and sent nearly every question to tier 2.
    """
    top, second = top_scores(hits)
    if not hits:
        return "out_of_domain" if entry_count >= s.ood_min_entries else "agent"
    if entry_count >= s.ood_min_entries:
        best_rel = max(h.relevance for h in hits)
        if best_rel < s.ood_score:
            return "out_of_domain"
        long_terms = {t for t in query_terms if len(t) >= s.ood_term_chars}
        if not any(long_terms & set(h.matched) for h in hits) and best_rel < s.ood_term_score:
            return "out_of_domain"
    if top >= s.direct_score and (len(hits) == 1 or top >= s.direct_strong or top - second >= s.direct_gap):
        return "direct"
    if top >= s.llm_score:
        return "llm"
    return "agent"


# -- answers without an LLM ----------------------------------------------------

def _entry_body(tree, path: str, limit: int) -> str:
    try:
        entry = tree.read(path)
        text = entry.sections.get("Narrative") or entry.body
    except Exception:  # noqa: BLE001 - a vanished entry: fall back to the excerpt
        return ""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


def format_answer(summary: str, details: list[str], sources: list[str], gaps: str) -> str:
    parts = ["## Summary", summary.strip(), "", "## Details"]
    parts += details or ["(none)"]
    parts += ["", "## Sources"] + ([f"- {p}" for p in sources] or ["- (none)"])
    parts += ["", "## Gaps", gaps.strip() or "none"]
    return "\n".join(parts)


def evidence_answer(tree, hits: list[Hit], s: QuerySettings, gaps: str) -> tuple[str, list[str]]:
    """The best entries quoted verbatim, as an answer: tier 2, and tiers 3–4 without an LLM."""
    chosen = [h for h in hits if h.kind == "entry"][: s.direct_max_entries] or hits[: s.direct_max_entries]
    details, sources = [], []
    for h in chosen:
        body = _entry_body(tree, h.path, s.direct_max_chars) or h.excerpt
        refs = ", ".join(src.get("ref", "") for src in h.sources if src.get("ref"))
        details.append(f"### {h.title}\n`{h.path}`" + (f" — source {refs}" if refs else "") + f"\n\n{body}\n")
        sources.append(h.path)
    top = chosen[0]
    summary = top.summary or top.excerpt
    headline = top.title if not summary or summary in top.title else f"{top.title}: {summary}"
    return format_answer(headline,
                         details, sources, gaps), sources


def direct_answer(tree, question: str, hits: list[Hit], s: QuerySettings, started: float) -> Answer:
    hits = sorted(hits, key=confidence, reverse=True)
    text, sources = evidence_answer(
        tree, hits, s, "Quoted from memory without an LLM; the entries above are the evidence as written.")
    return Answer(question=question, text=text, tier=2, sources=sources, top_score=top_scores(hits)[0],
                  latency_ms=elapsed_ms(started))


def out_of_domain_answer(question: str, hits: list[Hit], started: float) -> Answer:
    text = format_answer(
        f"Not in memory: nothing stored matches this question closely enough ({NOT_IN_MEMORY}).", [], [],
        "The memory holds no entry about this. Curate the knowledge first, then ask again.")
    return Answer(question=question, text=text, tier=2, sources=[], top_score=top_scores(hits)[0],
                  latency_ms=elapsed_ms(started), out_of_domain=True)


def extractive_answer(tree, question: str, hits: list[Hit], s: QuerySettings, tier: int, started: float,
                      error: str | None) -> Answer:
    """Tiers 3–4 when no LLM is configured or the LLM failed: the best evidence, said plainly."""
    why = f"The LLM call failed ({error}); " if error else f"{NO_LLM}; "
    if not hits:
        text = format_answer(f"{why}no stored entry matches this question.", [], [],
                             "Nothing in memory matches; no answer could be composed.")
        sources: list[str] = []
    else:
        text, sources = evidence_answer(
            tree, hits, s, why + "these are the most relevant entries, quoted; they may not fully answer the question.")
    return Answer(question=question, text=text, tier=tier, sources=sources, top_score=top_scores(hits)[0],
                  latency_ms=elapsed_ms(started), error=error)


# -- after an answer -------------------------------------------------------------

def remember(cache: QueryCache, log_file: Path, answer: Answer, fingerprint: str) -> None:
    """Cache a fresh answer and log every answer.

    Not cached: cache hits, errors, and tier 3–4 evidence given without an LLM
    (once a model is configured, the question deserves a real answer).
    """
    # both are derived and best effort: a full or read-only disk must not cost the answer
    if not answer.cached and not answer.error and (answer.tier <= 2 or answer.llm):
        try:
            cache.put(answer.question, fingerprint, answer.to_dict())
        except _UNAVAILABLE:
            pass
    try:
        log_query(log_file, answer)
    except OSError:
        pass


def log_query(log_file: Path, a: Answer) -> None:
    record = {"at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "question": a.question,
              "tier": a.tier, "latency_ms": round(a.latency_ms, 3), "cached": a.cached, "top_score": round(a.top_score, 4),
              "sources": a.sources, "out_of_domain": a.out_of_domain, "llm": a.llm, "error": a.error}
    append_line(log_file, json.dumps(record, ensure_ascii=False), durable=False)


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


__all__ = [
    "Answer", "NOT_IN_MEMORY", "NO_LLM", "direct_answer", "elapsed_ms", "evidence_answer", "extractive_answer",
    "format_answer", "from_cache", "log_query", "normalize_query", "out_of_domain_answer", "remember", "route",
    "tier0_exact", "tier1_fuzzy", "top_scores",
]

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
import re
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memgrove.tree.index.cache import QueryCache, normalize_query
from memgrove.tree.base.fsio import append_line
from memgrove.tree.base.question_bound import logged
from memgrove.tree.ranking.hits import Hit
from memgrove.tree.entries.validity import current_first

from . import answer_pick
from .current import recorded as answer_recorded, statements as answer_current
from .evidence import (FURTHER, NEAR_CHARS, PICK_CHARS, _clip, _entry_text, chosen_hits,  # noqa: F401 - their home
                       closed_labels, contexts_of, evidence_of, evidence_of_paths, further_look, messages_around,
                       recorded_in, said_of, times_of)
from .current.when import asks_past, asks_state, time_of
from .answer import Answer, short_answer, tier_label  # noqa: F401 - their home before answer.py
from .settings import QuerySettings

NOT_IN_MEMORY = "not in memory"
NO_LLM = "No LLM is configured (set MEMGROVE_MODEL, and OPENAI_API_KEY / OPENAI_BASE_URL)"


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
    return Answer.from_dict({**answer, "question": question, "tier": tier, "latency_ms": elapsed_ms(started),
                             "cached": True, "error": None})


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

def format_answer(summary: str, details: list[str], sources: list[str], gaps: str) -> str:
    parts = ["## Summary", summary.strip(), "", "## Details"]
    parts += details or ["(none)"]
    parts += ["", "## Sources"] + ([f"- {p}" for p in sources] or ["- (none)"])
    parts += ["", "## Gaps", gaps.strip() or "none"]
    return "\n".join(parts)


def first_sentence_rule(hit: Hit) -> str:
    """What led the answer before ``answer_pick``: the top entry's title and first sentence
    (its summary). Kept for ``benchmarks/answer_first.py``, which measures both."""
    summary = hit.summary or hit.excerpt
    return hit.title if not summary or summary in hit.title else f"{hit.title}: {summary}"


def pick_answer(tree, question: str, bodies: list[str], contexts: list[str] = (),
                said: list[str] = (), labels: list[str] = (), before: list[tuple[str, str]] = (),
                after: list[tuple[str, str]] = (), times: list[datetime | None] | None = None) -> str:
    """The sentence of ``bodies`` (the chosen entries' texts, best first; ``contexts``: their
    titles and paths) that answers ``question`` (``answer_pick.answer_text``). ``said``: per body,
    who said it and when (a conversation message's title, "Ana, 2 March 2026"), added after the
    sentence: the answer to "when did Ana …" is often that day, not a word of what she said.
    ``labels``: per body, a closed fact's "(until …; since then: …)" (tree/entries/validity.py), added
    after the sentence. ``before``, ``after``: per body, the message it replies to and the reply to
    it, with their titles (``messages_around``), or ``("", "")``. ``times``: per body, when it was
    said or written (``times_of``; by default the day ``said`` names): of statements giving one
    subject different values, the one that answers is the newest, or for a question about the past
    the one that held then (``answer_current.plan``)."""
    return current_answer(tree, question, bodies, contexts, said, labels, before, after, times)[0]


def current_answer(tree, question: str, bodies: list[str], contexts: list[str] = (), said: list[str] = (),
                   labels: list[str] = (), before: list[tuple[str, str]] = (), after: list[tuple[str, str]] = (),
                   times: list[datetime | None] | None = None, optional: int = 0,
                   recorded: list = (), echoes: list[bool] = ()) -> tuple[str, list[int]]:
    """``pick_answer``'s answer and the order of the chosen entries it was picked in (the entry with
    the statement that answers first among those about its subject). The last ``optional`` entries
    are found beyond the chosen ones (``further_look``): one is quoted and listed only when it holds
    the statement that answers. ``recorded``: the statements dream recorded as replaced
    (``answer_recorded.recorded_of``)."""
    if times is None:
        times = [time_of((), None, "", s) for s in said]
    p = answer_current.plan(question, bodies, times, said, labels, _weights(tree), optional, echoes)
    p = answer_recorded.with_recorded(p, question, recorded)
    if p.changed or optional:
        def ordered(xs):
            xs = list(xs)
            return [xs[i] for i in p.order if i < len(xs)]
        bodies, labels = ordered(p.bodies), ordered(p.labels)
        contexts, said, before, after = ordered(contexts), ordered(said), ordered(before), ordered(after)
        # a message around a chosen one may hold a statement that no longer answers (or, for the past, a newer one)
        before = [(p.without(b), t) for b, t in before]
        after = [(p.without(b), t) for b, t in after]
    asked = _question_terms(tree, question)
    text = _picked(tree, asked, question, bodies, contexts, said, labels, before, after)
    lead = p.lead(question, text) if p.changed else None
    if lead is not None:
        # the picker chose a sentence about something else that matches as few of the question's words:
        # the statement giving the subject its value (then) is quoted instead, as the picker shows one
        i = p.order.index(lead.body)
        text = _picked(tree, asked, question, [answer_current.quotable(lead)], contexts[i:i + 1], said[i:i + 1],
                       labels[i:i + 1], [], []) or text
    for sentence, label in p.quoted_labels.items():
        if sentence in text and "(until " not in text:
            text = f"{text} {label}"
    return text, p.order


def _weights(tree):
    """How rare a subject word is in the memory (its idf), asked of the index once per word."""
    known: dict[str, float] = {}

    def weight(term: str) -> float:
        if term not in known:
            try:
                known.update(tree.engine.idf([term], fields=("content",)))
            except Exception:  # noqa: BLE001 - an index being rebuilt: every word weighs the same
                known[term] = 1.0
        return known.get(term, 1.0)
    return weight


def _question_terms(tree, question: str) -> tuple[list[str], dict[str, float]]:
    """The question's analyzed terms and their idf, as a sentence's words are weighed."""
    terms = tree.engine.terms(question)
    try:
        # a sentence's words are weighed as the text's: a word missing from titles ("use") is not rare
        idf = tree.engine.idf(terms, fields=("content",)) if terms else {}
    except Exception:  # noqa: BLE001 - an index being rebuilt: every term weighs the same
        idf = {}
    return terms, idf


def _picked(tree, asked: tuple[list[str], dict[str, float]], question: str, bodies: list[str], contexts: list[str],
            said: list[str], labels: list[str], before: list[tuple[str, str]], after: list[tuple[str, str]]) -> str:
    terms, idf = asked
    return answer_pick.answer_text(question, terms, idf, [b[:PICK_CHARS] for b in bodies], tree.engine.terms,
                                   contexts, said, labels, [(b[-NEAR_CHARS:], t) for b, t in before],
                                   [(b[:NEAR_CHARS], t) for b, t in after])


def evidence_answer(tree, question: str, hits: list[Hit], s: QuerySettings,
                    gaps: str) -> tuple[str, str, list[str], list[dict[str, Any]]]:
    """The best entries, quoted, led by the sentence that answers: tier 2, and tiers 3–4 without
    an LLM. Returns ``(answer, text, sources, evidence)``."""
    read: dict = {}
    evidence, bodies = evidence_of(tree, hits, s, read)
    chosen = chosen_hits(hits, s)
    # what holds now, or held then: only such a question is answered by the current value
    timed = asks_state(question) or asks_past(question)
    more = further_look(tree, question, hits, chosen, s, read) if timed else ([], [], [])
    evidence, bodies, chosen = evidence + more[0], bodies + more[1], chosen + more[2]
    said = said_of(hits, evidence)
    labels = closed_labels(tree, chosen, bodies)
    for e, h, lab in zip(evidence, chosen, labels):
        if h.label and lab != h.label and e["text"].startswith(h.label):
            e["text"] = lab + e["text"][len(h.label):]
    before, after = messages_around(tree, evidence[:len(evidence) - len(more[0])], said)
    before, after = before + [("", "")] * len(more[0]), after + [("", "")] * len(more[0])
    answer, order = current_answer(tree, question, bodies, contexts_of(evidence), said, labels, before, after,
                                   times=times_of(tree, chosen, said, read) if timed else [None] * len(chosen),
                                   optional=len(more[0]), recorded=recorded_in(chosen, read) if timed else [],
                                   echoes=[any(src.get("role") == "assistant" for src in h.sources) for h in chosen])
    answer = answer or first_sentence_rule(chosen[0])
    # the entry holding the value that answers comes first among those about its subject
    evidence = [evidence[i] for i in order if i < len(evidence)]
    details = [f"### {e['title']}\n`{e['path']}`" + (f" — source {', '.join(e['refs'])}" if e["refs"] else "")
               + f"\n\n{e['text']}\n" for e in evidence]
    sources = [e["path"] for e in evidence]
    return answer, format_answer(answer, details, sources, gaps), sources, evidence


def direct_answer(tree, question: str, hits: list[Hit], s: QuerySettings, started: float) -> Answer:
    # a fact a newer entry replaced stays below it, however well its words match (tree/entries/validity.py)
    hits = current_first(question, sorted(hits, key=confidence, reverse=True))
    answer, text, sources, evidence = evidence_answer(
        tree, question, hits, s, "Quoted from memory without an LLM; the entries above are the evidence as written.")
    return Answer(question=question, answer=answer, text=text, tier=2, sources=sources, evidence=evidence,
                  top_score=top_scores(hits)[0], latency_ms=elapsed_ms(started))


def out_of_domain_answer(question: str, hits: list[Hit], started: float) -> Answer:
    summary = f"Not in memory: nothing stored matches this question closely enough ({NOT_IN_MEMORY})."
    text = format_answer(summary, [], [],
                         "The memory holds no entry about this. Curate the knowledge first, then ask again.")
    return Answer(question=question, answer=summary, text=text, tier=2, sources=[], top_score=top_scores(hits)[0],
                  latency_ms=elapsed_ms(started), out_of_domain=True)


def extractive_answer(tree, question: str, hits: list[Hit], s: QuerySettings, tier: int, started: float,
                      error: str | None) -> Answer:
    """Tiers 3–4 when no LLM is configured or the LLM failed: the best evidence, said plainly."""
    why = f"The LLM call failed ({error}); " if error else f"{NO_LLM}; "
    evidence: list[dict[str, Any]] = []
    if not hits:
        answer = f"{why}no stored entry matches this question."
        text = format_answer(answer, [], [], "Nothing in memory matches; no answer could be composed.")
        sources: list[str] = []
    else:
        answer, text, sources, evidence = evidence_answer(
            tree, question, hits, s,
            why + "these are the most relevant entries, quoted; they may not fully answer the question.")
    return Answer(question=question, answer=answer, text=text, tier=tier, sources=sources, evidence=evidence,
                  top_score=top_scores(hits)[0], latency_ms=elapsed_ms(started), error=error)


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
    record = {"at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "question": logged(a.question),
              "tier": a.tier, "latency_ms": round(a.latency_ms, 3), "cached": a.cached, "top_score": round(a.top_score, 4),
              "sources": a.sources, "out_of_domain": a.out_of_domain, "llm": a.llm, "error": a.error}
    append_line(log_file, json.dumps(record, ensure_ascii=False), durable=False)


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


__all__ = [
    "Answer", "NOT_IN_MEMORY", "NO_LLM", "direct_answer", "elapsed_ms", "evidence_answer", "extractive_answer",
    "evidence_of_paths", "first_sentence_rule", "format_answer", "from_cache", "log_query", "normalize_query",
    "out_of_domain_answer", "pick_answer", "remember", "route", "short_answer", "tier0_exact", "tier_label", "tier1_fuzzy",
    "top_scores",
]

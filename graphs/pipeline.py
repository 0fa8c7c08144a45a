"""The query pipeline without LangGraph: tiers 0–2 called directly.

``QueryPipeline.answer`` is what ``Memory.query`` and ``memgrove query`` run:
an answer from the caches or BM25 imports no LangChain. Only a question that
needs tiers 3–4 with a model configured imports them (``llm_tiers``), and the
LangGraph graph in ``query.py`` calls the same methods from its nodes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from memgrove.tree.index.cache import QueryCache
from memgrove.tree.base.errors import InvalidInput, MemgroveError
from memgrove.tree.base.question_bound import check_length
from memgrove.tree.ranking.hits import Hit
from memgrove.tree.base.text_checks import text_problem

from . import tiers
from .llm import describe_error, model_configured, resolve_model
from .settings import QuerySettings, answer_digest, load_query_settings


@dataclass
class Retrieval:
    """What tiers 3–4 start from."""

    fingerprint: str
    hits: list[Hit]
    route: str
    started: float


class QueryPipeline:
    def __init__(self, tree, *, settings: QuerySettings | None = None, model: Any = None):
        self.tree = tree
        self.settings = settings or load_query_settings(tree.home)
        s = self.settings
        self.cache = QueryCache(tree.home / "cache", size_limit=s.cache_size_mb * 2**20,
                                ttl=s.cache_ttl_days * 86400 if s.cache_ttl_days > 0 else None,
                                notices=tree.notices)
        self.log_file = tree.home / "query-log.jsonl"
        self._model = model
        self._resolved: Any = None

    def close(self) -> None:
        self.cache.close()

    def fingerprint(self) -> str:
        """What an answer is cached under: the tree's fingerprint (its files and ranking
        settings) and the query settings the answer depends on (``answer_digest``)."""
        return f"{self.tree.fingerprint()}-{answer_digest(self.settings)}"

    # -- tiers 0-2 ------------------------------------------------------------
    @staticmethod
    def check(question: Any) -> str:
        if not isinstance(question, str) or not question.strip():
            raise MemgroveError("the question is empty")
        check_length(question)          # first: a 10 MB question must cost nothing more
        bad = text_problem(question)
        if bad:
            raise InvalidInput(f"the question contains {bad}")
        return question.strip()

    def from_caches(self, question: str, fingerprint: str, started: float) -> tiers.Answer | None:
        hit = tiers.tier0_exact(self.cache, question, fingerprint)
        if hit is not None:
            return tiers.from_cache(hit, question, 0, started)
        hit = tiers.tier1_fuzzy(self.cache, question, fingerprint, self.settings)
        if hit is not None:
            return tiers.from_cache(hit, question, 1, started)
        return None

    def retrieve(self, question: str, *, check: bool = True) -> tuple[list[Hit], str]:
        hits = self.tree.search(question, self.settings.prefetch_limit, check=check)
        terms = self.tree.engine.terms(question)
        return hits, tiers.route(hits, terms, self.tree.entry_count(), self.settings)

    def decided(self, question: str, hits: list[Hit], route: str, started: float) -> tiers.Answer | None:
        """The answer when the route needs no LLM: out of domain, or tier 2."""
        if route == "out_of_domain":
            return tiers.out_of_domain_answer(question, hits, started)
        if route == "direct":
            return tiers.direct_answer(self.tree, question, hits, self.settings, started)
        return None

    def fast(self, question: str) -> tiers.Answer | Retrieval:
        started = time.perf_counter()
        question = self.check(question)
        fingerprint = self.fingerprint()
        answer = self.from_caches(question, fingerprint, started)
        if answer is None:
            # the fingerprint just brought the index in step: the answer is that state's
            hits, route = self.retrieve(question, check=False)
            answer = self.decided(question, hits, route, started)
            if answer is None:
                return Retrieval(fingerprint, hits, route, started)
        self.finish(answer, fingerprint)
        return answer

    # -- tiers 3-4 --------------------------------------------------------------
    def model(self) -> Any:
        if self._resolved is None:
            s = self.settings
            self._resolved = resolve_model(self._model, timeout=s.llm_timeout, retries=s.llm_retries)
        return self._resolved

    def has_model(self) -> bool:
        return model_configured(self._model)

    def model_or_error(self) -> tuple[Any, str | None]:
        """``(model, None)``; ``(None, None)`` when none is configured; ``(None, error)``
        when one is configured but cannot be built (tiers 3–4 then answer extractively)."""
        if not self.has_model():
            return None, None
        try:
            return self.model(), None
        except Exception as exc:  # noqa: BLE001 - a misconfigured model degrades, named
            return None, describe_error(exc)

    def escalate(self, question: str, r: Retrieval, *, config: dict | None = None) -> tiers.Answer:
        tier = 3 if r.route == "llm" else 4
        model, error = self.model_or_error()
        if model is None:
            answer = tiers.extractive_answer(self.tree, question, r.hits, self.settings, tier, r.started, error)
        else:
            from . import llm_tiers  # LangChain and LangGraph only from here on

            if tier == 3:
                answer = llm_tiers.tier3_llm(self.tree, model, question, r.hits, self.settings, r.started)
            else:
                answer = llm_tiers.tier4_agent(self.tree, model, question, r.hits, self.settings, r.started,
                                               config=config)
        self.finish(answer, r.fingerprint)
        return answer

    def finish(self, answer: tiers.Answer, fingerprint: str) -> None:
        tiers.remember(self.cache, self.log_file, answer, fingerprint)
        if not answer.cached and answer.sources:
            # the entries an answer delivered gain importance, not every search hit
            self.tree.record_delivery(answer.sources)

    def answer(self, question: str) -> tiers.Answer:
        out = self.fast(question)
        if isinstance(out, tiers.Answer):
            return out
        return self.escalate(self.check(question), out)

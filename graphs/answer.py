"""``Answer`` (what the query pipeline answers) and ``tier_label``, in a module of their own.

Standard library only: the CLI rebuilds an ``Answer`` from a running server's JSON and
prints it without importing the tiers (Whoosh's stemmer, the caches).
"""

from __future__ import annotations

import re
TYPE_CHECKING = False
if TYPE_CHECKING:      # not imported: the CLI's fast path prints an Answer without typing
    from typing import Any, ClassVar


class Answer(dict):
    """What the pipeline answered: the same object from ``Memory.query``, in the query graph's
    state and output, and (as ``to_dict()``) in ``memgrove query --json``.

    A ``dict`` with read-only attribute access, so that it is plain JSON wherever it goes (the
    graph's state is serialised by LangGraph Studio and checkpointers, the caches store it)
    and still ``answer.tier`` in Python. Fields:

    - ``answer``: the short answer, first: the sentence of the evidence that answers best
      (tiers 0–2 and tiers 3–4 without a model), or the model's own answer (tiers 3–4)
    - ``text``: the whole answer as markdown (Summary / Details / Sources / Gaps)
    - ``evidence``: the entries behind it, best first: ``{"path", "title", "refs", "text"}``
    - ``sources``: their paths; ``tier``, ``top_score``, ``latency_ms``, ``cached``,
      ``out_of_domain``, ``llm``, ``error``: how it was answered
    """

    question: str
    answer: str
    text: str
    tier: int
    sources: list[str]
    evidence: list[dict[str, Any]]
    top_score: float
    latency_ms: float
    cached: bool
    out_of_domain: bool
    llm: bool
    error: str | None

    FIELDS: ClassVar[tuple[str, ...]] = (
        "question", "answer", "text", "tier", "sources", "evidence", "top_score", "latency_ms", "cached",
        "out_of_domain", "llm", "error")

    def __init__(self, *, question: str, text: str, tier: int, answer: str = "",
                 sources: list[str] | None = None, evidence: list[dict[str, Any]] | None = None,
                 top_score: float = 0.0, latency_ms: float = 0.0, cached: bool = False,
                 out_of_domain: bool = False, llm: bool = False, error: str | None = None):
        super().__init__(question=question, answer=answer or short_answer(text), text=text, tier=tier,
                         sources=list(sources or []), evidence=[dict(e) for e in evidence or []],
                         top_score=top_score, latency_ms=latency_ms, cached=cached,
                         out_of_domain=out_of_domain, llm=llm, error=error)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Answer is read-only: make a new one with Answer.from_dict({{**a, {name!r}: ...}})")

    def __repr__(self) -> str:
        return f"Answer(tier={self.tier}, answer={self.answer!r}, sources={self.sources!r})"

    def to_dict(self) -> dict[str, Any]:
        """A plain, independent copy: what ``memgrove query --json`` prints."""
        return {**self, "sources": list(self.sources), "evidence": [dict(e) for e in self.evidence]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Answer":
        return cls(**{k: v for k, v in d.items() if k in cls.FIELDS})


def short_answer(text: str) -> str:
    """The answer of a markdown answer without a separate one (a model's, an old cache entry's):
    its Summary section, else its first paragraph."""
    text = text.strip()
    m = re.search(r"^#+\s*Summary\s*$\n(.*?)(?=^#+\s|\Z)", text, re.S | re.M | re.I)
    body = m.group(1) if m else text
    for para in re.split(r"\n\s*\n", body.strip()):
        if para.strip() and not para.lstrip().startswith("#"):
            return para.strip()
    return body.strip()


def tier_label(a: Answer) -> str:
    """What ran to give ``a``, in words: no "agent loop" when no agent ran."""
    if a.cached:
        return "exact cache" if a.tier == 0 else "fuzzy cache"
    if a.out_of_domain:
        return "not in memory (search, no LLM)"
    if a.tier <= 2:
        return "search, quoted (no LLM)"
    if a.llm:
        return "one LLM call" if a.tier == 3 else "agent loop (LLM with tools)"
    did = "the LLM call" if a.tier == 3 else "the agent loop"
    why = "the LLM failed" if a.error else "no LLM configured"
    return f"search, quoted ({why}: {did} did not run)"

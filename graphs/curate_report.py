"""What a curation did, in one value: the LLM curator's and the verbatim curator's.

``applied`` holds the same ``OpResult``s ``Memory.curate`` returns; ``to_dict()``
gives the JSON form (the CLI's ``--json``). The curate graph's state keeps them
as ``OpResult.to_dict()`` dicts, which a server can send as they are.
No LangChain here: ``Memory.learn`` reports a verbatim fallback without
importing the LLM stack.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from memgrove.tree.writes.operations import OpResult


@dataclass(frozen=True)
class CurateReport:
    curator: str              # "llm", "verbatim", or "ops" (explicit operations: the CLI's --ops)
    applied: list[OpResult] = field(default_factory=list)   # in the order they were written
    chunks: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    notes: list[str] = field(default_factory=list)    # the model's closing line per chunk
    errors: list[str] = field(default_factory=list)   # chunks given up, with why
    stopped: str = ""                                 # the model failed: what, and where it stopped
    summary: str = ""
    skipped: dict[str, int] = field(default_factory=dict)  # read, not curated: {"empty messages": 2, ...}

    def to_dict(self) -> dict[str, Any]:
        return {"curator": self.curator, "applied": [r.to_dict() for r in self.applied], "chunks": self.chunks,
                "model_calls": self.model_calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "notes": list(self.notes),
                "errors": list(self.errors), "stopped": self.stopped, "skipped": dict(self.skipped),
                "summary": self.summary}

    def account(self, *, stopped: bool = True) -> str:
        """The summary, written again; ``stopped=False`` leaves out the line saying the model
        failed, for a caller that reports that failure itself (the CLI's error line)."""
        return summarize(self.curator, self.applied, chunks=self.chunks, model_calls=self.model_calls,
                         prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                         errors=self.errors, stopped=self.stopped if stopped else "")


def as_results(applied: Iterable[OpResult | dict[str, Any]]) -> list[OpResult]:
    """``OpResult``s from the curate graph's state, where they are kept as dicts."""
    return [a if isinstance(a, OpResult) else OpResult.from_dict(a) for a in applied]


def verbatim_report(applied: list[OpResult], why: str = "") -> CurateReport:
    """The report of a verbatim curation (no model, no chunks)."""
    return CurateReport(curator="verbatim", applied=list(applied),
                        summary=summarize("verbatim", applied, why_verbatim=why))


def summarize(curator: str, applied: Iterable[OpResult | dict[str, Any]], *, chunks: int = 0, model_calls: int = 0,
              prompt_tokens: int = 0, completion_tokens: int = 0, errors: Iterable[str] = (),
              stopped: str = "", why_verbatim: str = "") -> str:
    """A short account of what was written (from the tool results, not from the model's word)."""
    results = as_results(applied)
    counts = Counter(a.status for a in results)
    what = ", ".join(f"{n} {s}" for s, n in counts.most_common()) or "nothing written"
    head = f"curated by the {'LLM' if curator == 'llm' else 'verbatim'} curator"
    if curator == "llm":
        head += f": {chunks} chunk(s), {model_calls} model call(s), {prompt_tokens:,} prompt + " \
                f"{completion_tokens:,} completion tokens"
    lines = [f"{head}. {what}."]
    if why_verbatim:
        lines.append(why_verbatim)
    for a in results[:30]:
        lines.append(f"- {a.status} {a.path}")
    if len(results) > 30:
        lines.append(f"- … and {len(results) - 30} more (see `memgrove history`)")
    lines += [f"! {e}" for e in errors]
    if stopped:
        lines.append(f"! stopped early: {stopped}")
    return "\n".join(lines)

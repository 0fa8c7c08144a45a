"""What a curation did, in one value: the LLM curator's and the verbatim curator's.

No LangChain here: ``Memory.learn`` reports a verbatim fallback without
importing the LLM stack.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CurateReport:
    curator: str                                  # "llm" or "verbatim"
    applied: list[dict[str, Any]] = field(default_factory=list)   # OpResult dicts, in order
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
        return dict(self.__dict__)


def summarize(curator: str, applied: list[dict[str, Any]], *, chunks: int = 0, model_calls: int = 0,
              prompt_tokens: int = 0, completion_tokens: int = 0, errors: list[str] = (),
              stopped: str = "", why_verbatim: str = "") -> str:
    """A short account of what was written (from the tool results, not from the model's word)."""
    counts = Counter(a["status"] for a in applied)
    what = ", ".join(f"{n} {s}" for s, n in counts.most_common()) or "nothing written"
    head = f"curated by the {'LLM' if curator == 'llm' else 'verbatim'} curator"
    if curator == "llm":
        head += f": {chunks} chunk(s), {model_calls} model call(s), {prompt_tokens:,} prompt + " \
                f"{completion_tokens:,} completion tokens"
    lines = [f"{head}. {what}."]
    if why_verbatim:
        lines.append(why_verbatim)
    for a in applied[:30]:
        lines.append(f"- {a['status']} {a['path']}")
    if len(applied) > 30:
        lines.append(f"- … and {len(applied) - 30} more (see `memgrove history`)")
    lines += [f"! {e}" for e in errors]
    if stopped:
        lines.append(f"! stopped early: {stopped}")
    return "\n".join(lines)

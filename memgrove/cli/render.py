"""What ``memgrove query`` and ``memgrove search`` print, for the click commands (``memgrove.cli.read``)
and the console script's fast path (``memgrove/cli/fastpath.py``) alike: one renderer, so both print
the same. Standard library only (and ``memgrove.terminal``'s escaping); no click: ``color`` adds
the exact codes ``click.style`` would, and the click CLI's ``click.echo`` drops them off a terminal.
"""

from __future__ import annotations

from memgrove.terminal import safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHORT_SOURCES = 3         # the sources a short answer lists; the rest are one --verbose away


def answer_lines(answer: Any, verbose: bool) -> list[str]:
    """``memgrove query``'s text: the answer, how it was answered, its first sources."""
    from memgrove.graphs.answer import tier_label

    lines = [answer.text if verbose else answer.answer, ""]
    lines.append(f"[tier {answer.tier} · {tier_label(answer)} · {answer.latency_ms:.1f} ms · "
                 f"top score {answer.top_score:.3f}]")
    if answer.error:
        lines.append(f"[LLM error: {answer.error}]")
    if not verbose and answer.sources:
        shown = answer.sources[:SHORT_SOURCES]
        lines += ["sources:"] + [f"  {p}" for p in shown]
        if len(answer.sources) > len(shown):
            lines.append(f"  … {len(answer.sources) - len(shown)} more (--verbose shows the evidence)")
    return [safe(line) for line in lines]


def hits_lines(query: str, hits: list[Any], ms: float, limit: int, more: bool, color: bool) -> list[str]:
    """``memgrove search``'s text: a count, then each hit's score and title, path and excerpt.
    ``hits`` are ``Hit``s or their dicts; ``color`` adds the terminal's bold and cyan."""
    if not hits:
        return [safe(f"no results for {query!r}")]
    lines = [f"{len(hits)} result(s) in {ms:.1f} ms"]
    for hit in hits:
        h = hit if isinstance(hit, dict) else vars(hit)    # a Hit's own score, not to_dict's rounded one
        lines.append("")
        lines.append(_style(wrap(h["title"], 7, f"{h['score']:6.3f} "), "1", color))
        # the path whole: it is what `show` takes
        lines.append(_style(f"       {safe(h['path'])}" + ("  [archived]" if h.get("archived") else ""), "36", color))
        if h.get("excerpt"):
            lines.append(wrap(h["excerpt"], 7))
    if more:
        lines.append(f"\n… more results: use --limit {limit + 10} to see more")
    return lines


def _style(text: str, code: str, color: bool) -> str:
    # click.style(text, bold=True) and fg="cyan" write exactly these
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def width() -> int:
    import shutil

    return max(40, shutil.get_terminal_size((80, 24)).columns)


def wrap(text: str, indent: int, first: str = "") -> str:
    """``text`` wrapped at the terminal's width by words; a word longer than a line (a path,
    a URL) is kept whole, for the terminal to wrap, never cut."""
    import textwrap

    return textwrap.fill(" ".join(safe(text).split()), width=width(), initial_indent=first or " " * indent,
                         subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)

"""Text that can be stored: every string memgrove writes is UTF-8, so a string that cannot be
encoded (a lone surrogate, e.g. from undecodable bytes in a command-line argument or a JSON
``"\\ud800"`` escape) is refused where it comes in, with a message that names it, instead of
failing halfway through a write or resetting a cache that could not store it."""

from __future__ import annotations

from typing import Any


def text_problem(value: Any) -> str | None:
    """Why ``value`` (a string, or lists/dicts of strings, any depth) cannot be stored, or None."""
    stack = [value]  # a loop, not recursion: an op may nest deeper than Python's stack
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return "a NUL character, which no entry file may hold"
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = v[exc.start]
                return f"a lone surrogate (U+{ord(bad):04X}) at character {exc.start}, which is not text"
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return None

"""Untrusted JSON and nested values: parsed and checked in bounded depth.

``[[[[...]]]]`` a hundred thousand levels deep makes ``json.loads``, ``repr``
and every recursive walk raise RecursionError. No operation, conversation or
tool call needs more than a few levels, so anything deeper than ``MAX_DEPTH``
is refused with one clear line, and the check itself walks iteratively.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import InvalidInput

MAX_DEPTH = 32


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True if lists/dicts in ``value`` nest more than ``limit`` levels (no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list, tuple)))
    return False


def deep_error(what: str, limit: int = MAX_DEPTH) -> InvalidInput:
    return InvalidInput(f"{what} nests lists or objects more than {limit} levels deep; give flat JSON")


def parse_json(text: str, what: str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` of untrusted text; bad or too deep JSON is an InvalidInput naming ``what``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise deep_error(what, limit) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if too_deep(value, limit):
        raise deep_error(what, limit)
    return value

"""Search filters and namespace match conditions for ``ContextTreeStore``, with LangGraph's
documented semantics."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import MatchCondition

from memgrove.tree.base.errors import InvalidInput

_FILTER_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _operator(value: Any, op: str, target: Any) -> bool:
    if op == "$eq":
        return value == target
    if op == "$ne":
        return value != target
    if op not in _FILTER_OPS:
        raise InvalidInput(f"unsupported filter operator {op!r}; use {', '.join(_FILTER_OPS)}")
    a, b = _number(value), _number(target)
    if a is None or b is None:
        return False   # a missing or non-numeric field does not compare (InMemoryStore raises)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def matches(item_value: Any, expected: Any) -> bool:
    """Whether a value matches a filter: equality (nested dicts and lists too) or operators."""
    if isinstance(expected, dict):
        if any(str(k).startswith("$") for k in expected):
            return all(_operator(item_value, k, v) for k, v in expected.items())
        return isinstance(item_value, dict) and all(matches(item_value.get(k), v) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (isinstance(item_value, (list, tuple)) and len(item_value) == len(expected)
                and all(matches(a, b) for a, b in zip(item_value, expected)))
    return item_value == expected


def _check_filter(flt: Any) -> None:
    if flt is None:
        return
    if not isinstance(flt, dict):
        raise InvalidInput(f"a filter must be a dict of field -> value or {{operator: value}}, not {type(flt).__name__}")
    stack = list(flt.values())
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            bad = [k for k in v if str(k).startswith("$") and k not in _FILTER_OPS]
            if bad:
                raise InvalidInput(f"unsupported filter operator {bad[0]!r}; use {', '.join(_FILTER_OPS)}")
            stack.extend(v.values())


def _condition(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if cond.match_type == "prefix" else zip(reversed(ns), reversed(path))
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidInput(f"unsupported match type {cond.match_type!r}: use 'prefix' or 'suffix'")
    return all(p == "*" or a == p for a, p in pairs)


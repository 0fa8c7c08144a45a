"""The shapes of the server's replies that ``RemoteMemory`` reads (``remote.py``): each helper
raises ``TypeError`` or ``KeyError`` on JSON of another shape, which ``wire.shaped`` turns
into ``BadReply``. Standard library only.
"""

from __future__ import annotations

from typing import Any


def listed(data: dict[str, Any], key: str) -> list[Any]:
    got = data[key]
    if not isinstance(got, list):
        raise TypeError(f"{key!r} is {type(got).__name__}, not a list")
    return got


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not a whole number")
    return value


def settings_shape(data: dict[str, Any]) -> dict[str, Any]:
    for key in ("tree", "query"):
        if not isinstance(data[key], dict):
            raise TypeError(f"{key!r} is not an object")
    return data


def shown(data: dict[str, Any]) -> dict[str, Any]:
    """``GET /api/entries/...``: the entry's text and its links."""
    text(data["text"])
    for key in ("links", "backlinks"):
        if not all(isinstance(p, str) for p in listed(data, key)):
            raise TypeError(f"{key!r} holds something not a path")
    return data


def folder(data: dict[str, Any]) -> dict[str, Any]:
    """``GET /api/tree``: a folder's children, each an object with a path."""
    for key in ("folders", "entries"):
        if not all(isinstance(c, dict) and isinstance(c.get("path"), str) for c in listed(data, key)):
            raise TypeError(f"{key!r} holds something not a child of the folder")
    return data


def given(**params: Any) -> dict[str, Any]:
    """A request's query parameters: those given (not None)."""
    return {k: v for k, v in params.items() if v is not None}


def journal_page(data: dict[str, Any]) -> Any:
    """``GET /api/history``: ``{"operations": [...], "next": offset or null}`` as a ``JournalPage``."""
    from memgrove.tree.writes.journal_read import JournalPage, JournalRecord

    after = data.get("next")
    return JournalPage([JournalRecord.from_json(r) for r in listed(data, "operations")],
                       None if after is None else number(after), 0)

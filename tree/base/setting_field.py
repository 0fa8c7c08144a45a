"""A setting described where it is defined.

``setting(default, "one sentence", section=...)`` is a dataclass field whose metadata holds the
sentence a user reads and the section it is listed under. The settings of every ``config.toml``
table are such fields, so the commented ``config.toml`` that ``memgrove init`` writes
(memgrove/config.py) and the reference docs/settings.md (memgrove/settings_docs.py) are both
generated from the definitions and cannot drift from them:

    @dataclass(frozen=True)
    class ServerSettings:
        port: int = setting(7437, "Port to listen on.", section="server")
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

# Sections group the settings a user thinks of together, whatever table holds them (the server's
# idle dream runs are hygiene); the reference lists them in this order, the tuned ranking last.
SECTIONS: dict[str, str] = {
    "home": "Where the memory lives",
    "query": "Query tiers and the LLM",
    "index": "The index and its engine",
    "meaning": "Meaning",
    "writes": "Writes",
    "server": "The server",
    "replication": "Replication",
    "curate": "The LLM curator",
    "hygiene": "Hygiene: dream and review",
    "ranking": "Ranking (tuned)",
}

T = TypeVar("T")


def setting(default: T, doc: str, *, section: str) -> T:
    """A dataclass field with ``default``, described by ``doc`` (one sentence) under ``section``."""
    if section not in SECTIONS:
        raise ValueError(f"unknown section {section!r}; use one of {', '.join(SECTIONS)}")
    # typed as the default, so `port: int = setting(7437, ...)` type-checks as the int it holds
    return cast(T, dataclasses.field(default=default, metadata={"doc": doc, "section": section}))


def doc_of(f: dataclasses.Field[Any]) -> str:
    """The sentence that describes the setting ``f``."""
    return f.metadata["doc"]


def section_of(f: dataclasses.Field[Any]) -> str:
    """The section the setting ``f`` is listed under."""
    return f.metadata["section"]

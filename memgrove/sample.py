"""The bundled sample: a three-session team conversation and three markdown notes.

``make demo`` curates it into a temporary memory; ``langgraph dev`` started in
the repo with no ``MEMGROVE_HOME`` curates it into an empty ``.memgrove/``, so
Studio has something to answer from.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any


def sample_dir() -> Path:
    return Path(str(resources.files("memgrove") / "data" / "sample"))


def ingest_sample(mem: Any) -> int:
    """Curate the sample into ``mem`` with the verbatim curator (no LLM); the number of entries written.

    Curating it again changes nothing (the verbatim curator recognises its own inputs).
    """
    data = sample_dir()
    notes = sorted((data / "notes").glob("*.md"))
    results = mem.ingest(conversation=data / "conversation.json", files=notes)
    return sum(1 for r in results if r.status != "unchanged")

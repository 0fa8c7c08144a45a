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


def studio_home() -> Path:
    """The project ``langgraph dev`` serves (graphs, ``/store``, memgrove's routes): ``MEMGROVE_HOME``,
    else the folder the server starts in; its memory is created if missing.

    With ``MEMGROVE_HOME`` unset, an empty memory gets the bundled sample first, so Studio started in
    a fresh clone has something to answer from. A memory holding entries is never touched.
    """
    import logging
    import os

    from memgrove.memory import Memory

    named = os.environ.get("MEMGROVE_HOME")
    with Memory.open(named or os.getcwd(), create=True, embed_ahead=False) as mem:
        if not named and mem.count() == 0:
            n = ingest_sample(mem)
            logging.getLogger("memgrove").warning(
                "memgrove: %s was empty; curated the bundled sample into it (%d entries). "
                "Set MEMGROVE_HOME to serve your own project.", mem.home, n)
        return mem.home.parent

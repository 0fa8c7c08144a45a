"""``RemoteTree``: what graphs, tools and the CLI read of ``mem.tree``, for a memory on a server.

The query graph, the LLM curator and the memory tools take a ``Memory`` and work on its
``tree`` (search, read, links, the engine's terms, the fingerprint answers are cached under...).
For ``Memory.connect``'s memory each of those is a request to the server, through the
``RemoteMemory`` that owns this view (``memory.py``), so the graphs run in the calling process
while the memory stays one, on the server. The owner is handed in: this module knows it only by
the methods it calls (``Owner``), so ``memory.py`` imports this one and not the other way round.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from memgrove.remote import shapes

if TYPE_CHECKING:
    from memgrove.tree.entries.entry import Entry
    from memgrove.tree.writes.journal import JournalRecord
    from memgrove.tree.ranking.hits import Hit


class Owner(Protocol):
    """What a ``RemoteTree`` asks of the ``RemoteMemory`` that owns it."""

    project: str

    def _get(self, path: str, *, body: Any = None, method: str = "GET",
             build: Callable[[dict[str, Any]], Any] | None = None) -> Any: ...
    def _settings_json(self) -> dict[str, Any]: ...
    def _client_home(self) -> Path: ...
    def _tree_settings(self) -> Any: ...
    def search(self, query: str, limit: int = 10, *, include_archived: bool = False) -> list["Hit"]: ...
    def read(self, path: str) -> "Entry": ...
    def show(self, path: str) -> dict[str, Any]: ...
    def list(self, folder: str = "") -> dict[str, Any]: ...
    def fingerprint(self) -> str: ...
    def count(self) -> int: ...
    def history(self, limit: int | None = 50, path: str | None = None) -> builtins.list["JournalRecord"]: ...


class RemoteEngine:
    """The search engine's analysis, asked of the server's engine (the words it indexes by)."""

    def __init__(self, owner: Owner):
        self._owner = owner
        self._terms: dict[str, list[str]] = {}

    @property
    def name(self) -> str:
        return str(self._owner._settings_json().get("engine", "remote"))

    def terms(self, text: str) -> list[str]:
        got = self._terms.get(text)
        if got is None:
            got = self._owner._get("/api/analysis/terms", body={"text": text}, method="POST",
                                   build=lambda d: [shapes.text(t) for t in shapes.listed(d, "terms")])
            if len(self._terms) > 1000:
                self._terms.clear()
            self._terms[text] = got
        return list(got)

    def idf(self, terms: list[str]) -> dict[str, float]:
        return self._owner._get("/api/analysis/idf", body={"terms": list(terms)}, method="POST", build=_idf)


class RemoteTree:
    """What graphs, tools and the CLI read of ``mem.tree``, answered by the server.

    ``home`` is a folder of this machine for what the client keeps: the query graph's answer
    cache and log, the agent's threads (``RemoteMemory(home=...)``; by default a temporary
    folder removed by ``close``). ``root`` is the tree's folder on the server's machine.
    """

    def __init__(self, owner: Owner):
        self._owner = owner
        self.engine = RemoteEngine(owner)
        self.notices: list[str] = []

    @property
    def home(self) -> Path:
        return self._owner._client_home()

    @property
    def root(self) -> Path:
        return Path(self._owner.project) / ".memgrove" / "tree"

    @property
    def settings(self) -> Any:
        return self._owner._tree_settings()

    def search(self, query: str, limit: int = 10, *, include_archived: bool = False, **_: Any) -> list["Hit"]:
        return self._owner.search(query, limit, include_archived=include_archived)

    def read(self, path: str) -> "Entry":
        return self._owner.read(path)

    def read_text(self, path: str) -> str:
        return self._owner.show(path)["text"]

    def links(self, path: str) -> tuple[list[str], list[str]]:
        shown = self._owner.show(path)
        return list(shown["links"]), list(shown["backlinks"])

    def list_folder(self, folder: str = "", **_: Any) -> dict[str, Any]:
        return self._owner.list(folder)

    def record_delivery(self, paths: list[str], **_: Any) -> None:
        if paths:
            self._owner._get("/api/delivered", body={"paths": list(paths)}, method="POST")

    def fingerprint(self) -> str:
        return self._owner.fingerprint()

    def entry_count(self) -> int:
        return self._owner._get("/api/fingerprint", build=lambda d: shapes.number(d["entries"]))

    def count(self) -> int:
        return self._owner.count()

    def history(self, limit: int | None = 50, path: str | None = None) -> builtins.list["JournalRecord"]:
        return self._owner.history(limit, path)


def _idf(data: dict[str, Any]) -> dict[str, float]:
    got = data["idf"]
    if not isinstance(got, dict):
        raise TypeError("'idf' is not an object")
    return {str(k): float(v) for k, v in got.items()}

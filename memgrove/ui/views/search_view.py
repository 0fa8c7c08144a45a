"""Search and ask: hits as ``search`` ranks them (score, excerpt), an answer as ``query`` gives it
(tier, sources, evidence), its text rendered inert."""

from __future__ import annotations

from typing import Any, Callable

from ..markdown import render

HITS = 20


def hits(mem: Any, q: str, *, include_archived: bool = False) -> dict[str, Any]:
    q = q.strip()
    if not q:
        return {"q": "", "hits": [], "archived": include_archived}
    found = mem.search(q, limit=HITS, include_archived=include_archived)
    return {"q": q, "archived": include_archived, "hits": [h.to_dict() for h in found]}


def answer(mem: Any, q: str, link: Callable[[str], str] | None = None) -> dict[str, Any] | None:
    q = q.strip()
    if not q:
        return None
    a = mem.query(q).to_dict()
    a["html"] = render(str(a.get("answer") or ""), entry_path="", exists=mem.tree.exists, entry_url=link)
    return a

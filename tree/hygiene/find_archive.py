"""Archive candidates: entries nobody has needed for a long time.

An entry is proposed for the archive when all of these hold: it has not changed for
``archive_after_days``; it was never delivered as evidence (``access_count`` 0 in the signals) and
is still a draft (never promoted by use);
its importance, decayed since it last changed (``lifecycle.decayed_importance``), is below
``archive_importance``; and it is none of what must stay searchable: an entry the user marked
``keep: true``, a closed fact (``supersededBy``: history a question about the past needs), the
entry that superseded one (the current value), an entry other entries link to from outside its
own conversation, or one another finding of the same scan already proposes to change.

ARCHIVE moves the entry to ``.memgrove/archive/`` (same relative path); RESTORE brings it back.
"""

from __future__ import annotations

from .findings import Candidate
from .scan_corpus import Corpus, ScanItem, importance_now
from ..settings import TreeSettings


def _conversation(path: str) -> str:
    return path.rsplit("/", 2)[0]


def _linked_from_elsewhere(it: ScanItem, corpus: Corpus, linking: dict[str, list[str]]) -> bool:
    return any(_conversation(p) != _conversation(it.path) for p in linking.get(it.path, ()))


def find_archive(corpus: Corpus, settings: TreeSettings, busy: frozenset[str] = frozenset()) -> list[Candidate]:
    """``busy``: paths another candidate of this scan involves."""
    successors = {it.path for it in corpus.items if it.supersedes}
    linking: dict[str, list[str]] = {}
    for it in corpus.items:
        for target in it.links:
            linking.setdefault(target, []).append(it.path)
    out = []
    for it in corpus.items:
        if it.keep or it.closed or it.path in successors or it.path in busy:
            continue
        if it.age_days < settings.archive_after_days or it.signal.access_count > 0 or it.signal.maturity != "draft":
            continue
        importance = importance_now(it)
        if importance >= settings.archive_importance or _linked_from_elsewhere(it, corpus, linking):
            continue
        reason = (f"unchanged for {it.age_days:.0f} days, never retrieved, importance {importance:.0f} "
                  f"(below {settings.archive_importance:g})")
        # the further below the threshold, the surer
        confidence = round(min(1.0, 0.5 + 0.5 * (1 - importance / max(settings.archive_importance, 1e-9))), 3)
        out.append(Candidate(kind="archive", paths=(it.path,), action="ARCHIVE",
                             ops=({"op": "ARCHIVE", "path": it.path, "reason": reason},),
                             reason=reason, confidence=confidence,
                             evidence={"age_days": round(it.age_days, 1), "importance": round(importance, 1),
                                       "access_count": it.signal.access_count}))
    return out

"""The cut: how deep the engine is searched, and which of its candidates the pipeline receives.

The engine returns ``(path, BM25 score, matched terms)`` candidates: the best ``3 × limit + 10`` by
their words' match. In a tree holding an AI assistant's entries (``may_mute``) it is searched
``POOL_WIDEN`` times deeper, and ``with_full_weight`` adds to that cut, for each assistant's entry
in it, the next entry below it that the role weight will not mute. Folder context files leave
unless ``include_context_hits`` (``drop_context_hits``). ``ContextTree.search`` asks the engine;
then ``rank`` (pipeline.py) gathers and runs the steps.
"""

from __future__ import annotations

from ..text import roles
from ..index.catalog import Catalog
from ..entries.paths import is_context
from ..settings import TreeSettings
from .table import Candidates

# how much deeper than its usual cut the engine is searched when the tree holds an AI assistant's
# entries, for the user's messages ranked below a cut the assistant's replies filled
POOL_WIDEN = 8


def may_mute(query: str, settings: TreeSettings) -> bool:
    """Whether ``role_weights`` can mute an entry for this question (else a deeper cut adds nothing)."""
    return roles.mutes(query, settings.assistant_weight)


def with_full_weight(query: str, raw: Candidates, below: Candidates, catalog: Catalog,
                     settings: TreeSettings) -> Candidates:
    """The engine's cut ``raw`` and, for each entry in it that ``role_weights`` will mute, the
    next entry of ``below`` (the engine's candidates past the cut, best first) that keeps its
    whole score. The cut is taken by the words' match alone, before the role weight: in a long
    chat the assistant's replies, which repeat the question's words, fill it, and the user's
    message that holds the fact, ranked below them, never competes. BEAM 500K (35 chats, 629
    questions), limit 50, ``assistant_weight`` 0.15: R@10 53.5 -> 55.6, R@500w 52.8 -> 55.5,
    R@1000w 57.9 -> 61.7 (R@100w 32.7 -> 31.9); BEAM 100K: R@500w 63.9 -> 64.1. A tree without
    roles is searched as before."""
    if not below:
        return raw
    traits = catalog.traits_of([p for p, _, _ in raw] + [p for p, _, _ in below])
    muted = roles.role_factors(query, {p: t.role for p, _s, _m in raw if (t := traits.get(p)) is not None},
                               settings.assistant_weight)
    if not muted:
        return raw
    past = roles.role_factors(query, {p: t.role for p, _s, _m in below if (t := traits.get(p)) is not None},
                              settings.assistant_weight)
    return raw + [r for r in below if r[0] not in past][:len(muted)]


def drop_context_hits(raw: Candidates, settings: TreeSettings) -> Candidates:
    return raw if settings.include_context_hits else [r for r in raw if not is_context(r[0])]

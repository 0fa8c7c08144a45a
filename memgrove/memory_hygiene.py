"""``MemoryHygiene``: ``Memory``'s hygiene methods -- dream, the review queue (``tree/hygiene/dream.py``,
``tree/hygiene/review.py``) and restoring an archived entry. A mixin ``Memory`` inherits; split out of
``memory.py`` to keep that file short. The methods use only ``self.tree`` and ``self._model``.
On a read replica (``tree.forward_writes`` set by its server) dream and the review queue are
the primary's: each method is asked there."""

from __future__ import annotations

import builtins
from typing import Any

from memgrove.tree.writes.operations import OpResult
from memgrove.tree.store import ContextTree


class MemoryHygiene:
    """Dream, the review queue and restore, over ``self.tree`` (a ``ContextTree``)."""

    tree: ContextTree
    _model: Any

    def dream(self, *, dry_run: bool = False, undo: str | bool | None = None, force: bool = False,
              model: Any = None, use_model: bool = True, candidates: Any = None,
              budget_s: float | None = None, with_approved: bool = False) -> dict[str, Any]:
        """One ``memgrove dream`` run: scan, apply exact duplicates and missing links, ask the model
        (``model``, the memory's, or ``MEMGROVE_MODEL``; none with ``use_model=False``) about the
        rest, queue what waits for review. ``dry_run`` only scans. ``undo``: revert a run instead
        (True or "": the newest run; else its id), ``force`` as for ``undo``, ``with_approved``: also
        revert what was approved from its proposals. Returns ``{"run", "candidates": [{"kind",
        "paths", "action", "reason", "confidence", "status"}, ...], "applied", "counts", ...}``
        (undo: ``{"run", "started", "operations", "approved", "approved_kept", "undo", ...}``)."""
        from memgrove.tree.hygiene import dream as dream_mod

        if self.tree.forward_writes is not None:      # a replica's: the primary dreams, with its model
            extra = {"with_approved": True} if with_approved else {}
            return self.tree.forward_writes("dream", dry_run=dry_run, undo=undo, force=force, use_model=use_model,
                                            **extra)
        if undo is not None and undo is not False:
            return dream_mod.undo_run(self.tree, undo if isinstance(undo, str) and undo else None, force=force,
                                      with_approved=with_approved)
        decide = None
        chosen = model if model is not None else self._model
        if use_model and not dry_run:
            from memgrove.graphs.llm import model_configured

            if model_configured(chosen):
                from memgrove.graphs.dream import model_decider

                decide = model_decider(self.tree, chosen)
        return dream_mod.dream(self.tree, dry_run=dry_run, decide=decide, candidates=candidates,
                               budget_s=budget_s).to_dict()

    def review(self) -> builtins.list[dict[str, Any]]:
        """The review queue: every pending change, oldest first."""
        from memgrove.tree.hygiene import review

        if self.tree.forward_writes is not None:      # a replica's: the queue is the primary's
            return self.tree.forward_writes("review")

        return [i.to_dict() for i in review.pending(self.tree)]

    def review_show(self, item_id: str) -> dict[str, Any]:
        """One pending change (``item_id``: its id, or 4+ characters of it)."""
        from memgrove.tree.hygiene import review

        if self.tree.forward_writes is not None:
            return self.tree.forward_writes("review_show", item_id=item_id)

        return review.show(self.tree, item_id).to_dict()

    def review_approve(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        """Apply one pending change (or ``all``) as one journaled batch, after checking that its
        files are as they were when it was proposed (``ReviewConflict`` otherwise)."""
        from memgrove.tree.hygiene import review

        if self.tree.forward_writes is not None:
            return self.tree.forward_writes("review_approve", item_id=item_id, all=all)

        return review.approve(self.tree, item_id, all_items=all).to_dict()

    def review_reject(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        """Drop one pending change (or ``all``); dream does not propose it again."""
        from memgrove.tree.hygiene import review

        if self.tree.forward_writes is not None:
            return self.tree.forward_writes("review_reject", item_id=item_id, all=all)

        return {"rejected": [i.to_dict() for i in review.reject(self.tree, item_id, all_items=all)]}

    def restore(self, path: str, *, reason: str = "restored from the archive", actor: str = "user") -> OpResult:
        """Bring an archived entry back to ``path`` (a journaled RESTORE, undoable)."""
        return self.tree.restore(path, reason=reason, actor=actor)

"""A read replica's tree sends its writes to the primary (``ContextTree.forward_writes``).

REST writes reach the primary before the replica's app sees them (``replica.ForwardWrites``); the
writes made inside the replica's process -- its MCP tools (``memgrove_curate``, the ``memory``
tool, undo), its LangServe graphs (``/curate``, ``/agent``), ingest -- all enter the tree
through ``curate``, ``undo``, ``curate_groups`` or ``undo_all``. ``Replica.start``
sets ``PrimaryWriter`` on the served tree, and those calls become requests to the primary
(``memgrove.remote.memory.RemoteMemory``, with the replica's token for the primary): the primary's
results are returned (``OpResult``, ``GroupOutcome``), its refusals raised as the same
exceptions, and ``PrimaryUnreachable`` raised when it cannot be asked -- nothing is applied on
the replica, whose copy catches up through its follower once the primary has pushed.

The journal, dream and the review queue live on the primary too: on a replica, ``Memory.history``
and ``history_page`` (what ``undo`` takes the ids from), ``Memory.dream``, ``review``,
``review_show``, ``review_approve``, ``review_reject`` and the LLM curator's queueing
(tools/curate.py) are asked there through the same callable.

The primary has no route for a batch of groups or of undos: ``curate_groups`` sends each group
as its own batch (each still all or nothing), ``undo_all`` undoes newest first, one by one,
stopping at the first refusal.
"""

from __future__ import annotations

from typing import Any

from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import BatchRejected, PrimaryUnreachable
from memgrove.tree.writes.operations import OPS
from memgrove.tree.base.credentials import redact


class PrimaryWriter:
    """``forward_writes`` of a replica's tree: ``writer(kind, **args)`` asks the primary at ``url``."""

    def __init__(self, url: str, token: str | None, *, timeout: float = 130.0, project: str | None = None):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.project = project      # the primary's project this replica follows (None: the token's)
        self._remote: Any = None
        self._lock = forksafe.lock()

    def _memory(self) -> Any:
        with self._lock:
            if self._remote is None:
                from memgrove.remote.memory import RemoteMemory

                self._remote = RemoteMemory(self.url, self.token, timeout=self.timeout, project=self.project)
            return self._remote

    def close(self) -> None:
        with self._lock:
            if self._remote is not None:
                self._remote.close()
                self._remote = None

    def __call__(self, kind: str, **args: Any) -> Any:
        from memgrove.remote.memory import ServerUnreachable

        step = getattr(self, "_" + kind, None)
        if step is None:
            raise ValueError(f"no such write to forward: {kind!r}")
        try:
            return step(self._memory(), **args)
        except ServerUnreachable as exc:
            raise PrimaryUnreachable(f"the primary {redact(self.url)} could not be asked ({exc}); nothing was "
                                     "applied on this replica: retry once it is back") from None

    # -- one per write entry point of ContextTree ---------------------------------------------
    @staticmethod
    def _curate(mem: Any, *, ops: Any, actor: str, allowed: tuple[str, ...]) -> list[Any]:
        return mem.curate(ops, actor=actor, allowed=None if tuple(allowed) == tuple(OPS) else allowed)

    @staticmethod
    def _undo(mem: Any, *, op_id: str, force: bool, actor: str) -> Any:
        return mem.undo(op_id, force=force, actor=actor)

    @staticmethod
    def _curate_groups(mem: Any, *, groups: list[list[dict[str, Any]]], actor: str,
                       allowed: tuple[str, ...]) -> list[Any]:
        from memgrove.tree.writes.group_batch import GroupOutcome

        outcomes = []
        for ops in groups:
            try:
                results = PrimaryWriter._curate(mem, ops=ops, actor=actor, allowed=allowed)
            except BatchRejected as exc:
                outcomes.append(GroupOutcome(errors=tuple(exc.errors)))
                continue
            outcomes.append(GroupOutcome(results=tuple(results)))
        return outcomes

    @staticmethod
    def _undo_all(mem: Any, *, op_ids: list[str], force: bool, actor: str) -> list[Any]:
        return [mem.undo(op_id, force=force, actor=actor) for op_id in reversed(list(op_ids))]

    @staticmethod
    def _history(mem: Any, *, limit: int | None, path: str | None) -> Any:
        return mem.history(limit, path)

    @staticmethod
    def _history_page(mem: Any, *, limit: int | None, path: str | None, kinds: list[str], before: int | None) -> Any:
        return mem.history_page(limit, path=path, kinds=kinds, before=before)

    # -- dream and the review queue: the primary's (Memory's hygiene methods, tools/curate.py) --
    @staticmethod
    def _dream(mem: Any, **args: Any) -> Any:
        return mem.dream(**args)

    @staticmethod
    def _review(mem: Any) -> Any:
        return mem.review()

    @staticmethod
    def _review_show(mem: Any, *, item_id: str) -> Any:
        return mem.review_show(item_id)

    @staticmethod
    def _review_approve(mem: Any, *, item_id: str | None, all: bool) -> Any:
        return mem.review_approve(item_id, all=all)

    @staticmethod
    def _review_reject(mem: Any, *, item_id: str | None, all: bool) -> Any:
        return mem.review_reject(item_id, all=all)

    @staticmethod
    def _queue_review(mem: Any, *, ops: list[dict[str, Any]], proposed_by: str) -> Any:
        return mem.queue_review(ops, proposed_by=proposed_by)

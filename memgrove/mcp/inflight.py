"""The tool calls an MCP server is running, each in a worker thread under a cancel token.

The event loop cannot interrupt a worker thread; the call's token can (``tree/writes/cancel.py``). It is
cancelled when the call is (the client's ``notifications/cancelled``, or the transport closing:
the MCP library then cancels every call in flight), or by itself when the call runs past its
time limit. A write then stops at its next checkpoint before its commit point, writes nothing
and gives the writer lock back; one past its commit point completes. ``wait`` lets a server
that is closing give its workers a moment to get there.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import anyio

from memgrove.tree.base import forksafe
from memgrove.tree.writes.cancel import CancelToken, cancelling

T = TypeVar("T")


class InFlight:
    """``await calls.run(work)`` runs ``work()`` in a worker thread under its own token."""

    def __init__(self, timeout: float | None = None, *, limit: str = "the call's time limit"):
        self.timeout = timeout
        self.limit = limit
        self._running: set[CancelToken] = set()
        self._changed = forksafe.condition()

    async def run(self, work: Callable[[], T]) -> T:
        token = CancelToken(self.timeout, limit=self.limit)

        def in_thread() -> T:
            # registered by the thread itself: a call cancelled before its thread started never runs
            with self._changed:
                self._running.add(token)
            try:
                with cancelling(token):
                    return work()
            finally:
                with self._changed:
                    self._running.discard(token)
                    self._changed.notify_all()

        try:
            # abandoned on cancel: the loop answers at once, the worker stops at its next checkpoint
            return await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            token.cancel("the call was cancelled")
            raise

    def cancel_all(self, reason: str) -> None:
        with self._changed:
            for token in self._running:
                token.cancel(reason)

    def wait(self, timeout: float) -> bool:
        """Whether every worker finished within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._running, timeout)

"""Giving up on a write that nobody waits for any more, before its commit point.

A caller that may stop waiting (a request past its time limit, a client that went away) runs
the write under a token::

    token = CancelToken(timeout=120)
    with cancelling(token):
        memory.curate(ops)          # raises Cancelled if token.cancel() came before the commit point

The write path calls ``checkpoint()`` at safe points before its commit point (waiting for the
writer lock, planning each operation, between the file writes of a batch, between batches of
an ingest, reading the journal for an undo). There a cancelled token, or one whose time is up,
raises ``Cancelled`` and the write's usual failure path leaves nothing behind (the files'
before-images are restored, see docs/reliability.md). Nothing checks after the commit point:
what follows is linear and derived, so the write completes and is reported as done.

The token travels in a context variable rather than through every signature: it is scoped to
the block (and thread) that set it, like a decimal context, and code that never sets one is
never cancelled.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

from ..base import forksafe
from ..base.errors import Cancelled

_current: ContextVar["CancelToken | None"] = ContextVar("memgrove_cancel_token", default=None)


class CancelToken:
    """Cancelled by ``cancel(reason)`` from any thread, or by itself ``timeout`` seconds after it was made."""

    def __init__(self, timeout: float | None = None, *, limit: str = "its time limit"):
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self.late = f"it ran past {limit} ({timeout:g} s)" if timeout is not None else ""  # the reason at its deadline
        self._reason: str | None = None
        self._mutex = forksafe.lock()

    def cancel(self, reason: str) -> None:
        """Ask the write to stop at its next checkpoint; the first reason given is kept."""
        with self._mutex:
            if self._reason is None:
                self._reason = reason

    @property
    def reason(self) -> str | None:
        """Why it is cancelled, or None while the write may go on."""
        if self._reason is None and self._deadline is not None and time.monotonic() >= self._deadline:
            self.cancel(self.late)
        return self._reason

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def check(self) -> None:
        reason = self.reason
        if reason is not None:
            raise Cancelled(f"the write was cancelled before its commit point ({reason}); nothing was written",
                            reason)


@contextmanager
def cancelling(token: CancelToken | None) -> Iterator[CancelToken | None]:
    """Run the block's writes under ``token`` (None: not cancellable)."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def current() -> CancelToken | None:
    return _current.get()


def checkpoint() -> None:
    """A safe point before a commit point: raise ``Cancelled`` if the current token says stop."""
    token = _current.get()
    if token is not None:
        token.check()


__all__ = ["CancelToken", "Cancelled", "cancelling", "checkpoint", "current"]

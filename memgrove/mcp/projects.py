"""The memories one MCP process serves, opened once each."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ContextManager

from memgrove.tree.base import forksafe


class Projects:
    """The memories one process serves: the default (``root``) and any project a call names,
    each opened once (``Memory.open`` finds ``.memgrove/`` upwards, like git)."""

    def __init__(self, root: str | None):
        self.root = root
        self._open: dict[Path, Any] = {}
        self._lock = forksafe.lock()

    def __call__(self, project: str | None, request: Any = None) -> ContextManager[Any]:
        """The memory of ``project`` for one call (over stdio there is no request, and no token:
        the process is its user's own, as the CLI is)."""
        from memgrove.memory import Memory

        key = Path(project or self.root or ".").expanduser().resolve()
        with self._lock:
            mem = self._open.get(key)
            if mem is None:
                mem = self._open[key] = Memory.open(key)
            return contextlib.nullcontext(mem)

    def close(self) -> None:
        with self._lock:
            for mem in self._open.values():
                mem.close()
            self._open.clear()

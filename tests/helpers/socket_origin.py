"""Which test opened a socket that was left unclosed.

With ``filterwarnings = error`` an unclosed socket fails whichever test is running when the
garbage collector finds it, often far from the test that opened it. Each socket remembers the
test that opened it (tests/conftest.py), and the report of an unclosed one names that test.
"""

from __future__ import annotations

import socket
import sys
import types
from typing import Any, Callable

_running = ["(between tests)"]
_opened_in: dict[int, str] = {}
_init = socket.socket.__init__


def _remembering_init(self: socket.socket, *args: Any, **kwargs: Any) -> None:
    _init(self, *args, **kwargs)
    _opened_in[id(self)] = _running[0]


def install() -> None:
    socket.socket.__init__ = _remembering_init  # type: ignore[method-assign]


def running(test: str) -> None:
    _running[0] = test


def naming(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """``hook`` (``sys.unraisablehook``), told which test opened an unclosed socket."""
    def named(u: Any) -> None:
        test = _opened_in.get(id(u.object)) if isinstance(u.object, socket.socket) else None
        if test is not None:
            u = types.SimpleNamespace(exc_type=u.exc_type, exc_value=u.exc_value, exc_traceback=u.exc_traceback,
                                      object=u.object,
                                      err_msg=f"{u.err_msg or 'Exception ignored in'} (a socket opened by {test})")
        hook(u)
    return named


def report_to_pytest() -> None:
    sys.unraisablehook = naming(sys.unraisablehook)

"""The ``memgrove`` command line. It owns the click group and its commands (``app`` builds the group
from the ``COMMANDS`` that ``read``, ``write``, ``admin`` and ``dream`` list; they share ``common``
and never import the group), the fast path that answers ``query`` and ``search`` through a running
server with the standard library alone (``fastpath``, the console script), the renderers both
print with, and the choice of memory for an invocation (``which_memory``: a server's, or
``Memory`` in this process). It may use everything below it -- ``Memory``, the remote client,
the server and MCP it starts, the graphs' settings and reports, the tree -- and nothing imports
it. ``cli`` and ``main`` are named here on first use, so that importing the fast path stays
cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgrove.cli.app import cli, main


def __getattr__(name: str):
    if name in ("cli", "main"):
        from memgrove.cli import app

        return getattr(app, name)
    raise AttributeError(f"module 'memgrove.cli' has no attribute {name!r}")


__all__ = ["cli", "main"]

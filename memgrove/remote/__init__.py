"""The remote client: ``RemoteMemory``, a memory ``memgrove serve`` holds, used from any process with
``Memory``'s methods, results and exceptions. It owns the client (``memory``), the view of the
server's tree the graphs and tools run on here (``tree``), the wire with its deadlines, retries
and error mapping (``wire``, ``deadline``, ``deadline_socket``), and the checks of what a reply
holds and what a request sends (``shapes``, ``inputs``). It may use the standard library, the
tree's result types and errors, and the graphs and tools it runs in this process; it never imports
``memgrove.memory`` (``Memory.connect`` constructs it and hands in what it needs), the CLI, the
server or MCP. Importing this package loads nothing: the CLI's fast path imports
``deadline_socket`` alone.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memgrove.remote.memory import BadReply, RemoteMemory, ServerError, ServerTimeout, ServerUnreachable

_NAMES = ("RemoteMemory", "ServerError", "ServerTimeout", "BadReply", "ServerUnreachable")


def __getattr__(name: str):
    if name in _NAMES:
        from memgrove.remote import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'memgrove.remote' has no attribute {name!r}")


__all__ = list(_NAMES)

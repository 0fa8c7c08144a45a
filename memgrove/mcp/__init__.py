"""memgrove over the Model Context Protocol: ``create_server(memory_for)`` (``server.py``),
run over stdio by ``memgrove mcp`` (``stdio.py``) and over streamable HTTP by ``memgrove serve``.

The package owns the MCP tools and their arguments (``server.py``, ``arguments.py``, ``calls.py``),
the calls in flight and their cancelling (``inflight.py``), the memory files an MCP client reads
(``memory_files.py``, ``memory_paths.py``), which project a call reaches (``projects.py``) and the
bridge that sends ``memgrove mcp``'s calls to a running server (``bridge.py``). It may use
``Memory``, the remote client, the tree and the ``mcp`` SDK; the CLI and the server start it, and
nothing else imports it."""

from .server import PROJECT_HEADER, create_server

__all__ = ["PROJECT_HEADER", "create_server"]

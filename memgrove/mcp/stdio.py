"""``memgrove mcp``: the MCP server over stdio, one process per client.

Standard output carries the protocol and nothing else: the protocol gets its own copy of
the descriptor, and descriptor 1 then points at standard error, so a stray print from any
library (or C code) lands in the client's log instead of corrupting the stream.
"""

from __future__ import annotations

import os
import sys
from io import TextIOWrapper

import anyio

from .projects import Projects


def serve_stdio(root: str | None) -> None:
    """Run the MCP server on standard input and output until the client closes them."""
    from mcp.server.stdio import stdio_server

    from .server import create_server

    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    projects = Projects(root)
    server = create_server(projects)

    async def main() -> None:
        out = anyio.wrap_file(TextIOWrapper(protocol_out, encoding="utf-8", write_through=True))
        async with stdio_server(stdout=out) as (read, write):
            await server._mcp_server.run(read, write, server._mcp_server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        projects.close()

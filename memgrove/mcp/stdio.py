"""``memgrove mcp``: the MCP server over stdio, one process per client.

Standard output carries the protocol and nothing else: the protocol gets its own copy of
the descriptor, and descriptor 1 then points at standard error, so a stray print from any
library (or C code) lands in the client's log instead of corrupting the stream.

When the client goes (standard input closes), the calls in flight are cancelled through their
tokens (``inflight.py``): a write before its commit point stops and writes nothing. The process
exits once they have, or after ``EXIT_GRACE`` seconds whatever a worker is doing: an orphaned
``memgrove mcp`` must not keep the CPU or the writer lock. Its ``flock`` dies with it, and a
batch it left between its write-ahead file and its journal is settled by the next writer
(rolled forward, see tree/writes/write_path.py).
"""

from __future__ import annotations

import os
import sys
from io import TextIOWrapper

import anyio

from .inflight import InFlight
from .projects import Projects

EXIT_GRACE = 3.0   # seconds a worker gets to reach a checkpoint, or finish what is past its commit point


def serve_stdio(root: str | None, url: str | None = None) -> None:
    """Run the MCP server on standard input and output until the client closes them; with ``url``
    (``MEMGROVE_URL``), relay them to that server's MCP endpoint instead (``bridge.py``)."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    if url:
        from .bridge import serve_bridge

        serve_bridge(url, protocol_out)
        return

    from mcp.server.stdio import stdio_server

    from .server import DEFAULT_CALL_TIMEOUT, create_server

    projects = Projects(root)
    calls = InFlight(DEFAULT_CALL_TIMEOUT)
    server = create_server(projects, inflight=calls)

    async def main() -> None:
        out = anyio.wrap_file(TextIOWrapper(protocol_out, encoding="utf-8", write_through=True))
        async with stdio_server(stdout=out) as (read, write):
            await server._mcp_server.run(read, write, server._mcp_server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        calls.cancel_all("its client closed the connection")
        if not calls.wait(EXIT_GRACE):
            sys.stderr.write(f"memgrove mcp: a call was still running {EXIT_GRACE:g} s after its client left; "
                             "exiting without it\n")
            sys.stderr.flush()
            os._exit(1)
        projects.close()

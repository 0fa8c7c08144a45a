"""``memgrove mcp`` with ``MEMGROVE_URL``: the MCP client's stdio relayed to a server's ``/mcp``.

The server mounts the same MCP tools over streamable HTTP (``memgrove serve``), so an MCP client
configured with ``memgrove mcp`` uses a memory on another machine by setting ``MEMGROVE_URL`` (and
``MEMGROVE_TOKEN``): every message goes through unchanged, and the tools, their answers and their
errors are the server's. A request the server cannot be reached for, or refuses at the HTTP level
(a wrong token: 401), is answered here with a JSON-RPC error naming the server and its reason
(``_Answering``): the MCP library's HTTP client would otherwise end the session on it and leave the
client waiting.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio

UNREACHABLE = -32000     # JSON-RPC: a server error (the implementation-defined range)


def bridge_headers(url: str) -> dict[str, str]:
    """The bearer token (``MEMGROVE_TOKEN``, or a server on this machine's own) as the REST client sends it."""
    from memgrove.remote.memory import TOKEN_ENV, Wire

    import os

    wire = Wire(url, os.environ.get(TOKEN_ENV) or None)
    if not wire.token:
        wire._local_token()
    return {k: v for k, v in wire.headers.items() if k == "Authorization"}


def _answering(url: str) -> Any:
    """An httpx transport that answers a POSTed request the server did not answer: a JSON-RPC error."""
    import httpx

    class _Answering(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError as exc:
                if request.method != "POST":
                    raise
                return self._refusal(request, f"could not be reached ({exc or type(exc).__name__})")
            if request.method == "POST" and response.status_code >= 400 and response.status_code != 404:
                raw = await response.aread()
                await response.aclose()
                return self._refusal(request, f"answered {response.status_code}: {_message(raw)}")
            return response

        def _refusal(self, request: httpx.Request, why: str) -> httpx.Response:
            try:
                sent = json.loads(request.content)
            except ValueError:
                sent = None
            request_id = sent.get("id") if isinstance(sent, dict) else None
            if request_id is None:             # a notification: nothing to answer
                return httpx.Response(202, request=request)
            return httpx.Response(200, request=request, json={"jsonrpc": "2.0", "id": request_id, "error": {
                "code": UNREACHABLE, "message": f"memgrove serve at {url} {why}"}})

        async def aclose(self) -> None:
            await self._inner.aclose()

    return _Answering()


def _message(raw: bytes) -> str:
    """The server's error message (``{"error": {"message"}}``), else its first words."""
    try:
        err = json.loads(raw).get("error")
        return str(err["message"]) if isinstance(err, dict) else str(err)
    except (ValueError, AttributeError, KeyError, TypeError):
        return raw.decode("utf-8", "replace")[:200] or "no message"


def serve_bridge(url: str, protocol_out: Any) -> None:
    """Relay standard input/``protocol_out`` to ``url``'s ``/mcp`` until the client closes them."""
    import httpx
    from io import TextIOWrapper
    from mcp.client.streamable_http import streamable_http_client
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCRequest

    endpoint = url.rstrip("/") + "/mcp"
    headers = bridge_headers(url)

    def refused(request_id: Any, why: str) -> SessionMessage:
        return SessionMessage(JSONRPCMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
            code=UNREACHABLE, message=f"memgrove serve at {url} did not answer: {why}"))))

    async def main() -> None:
        pending: dict[Any, None] = {}
        out = anyio.wrap_file(TextIOWrapper(protocol_out, encoding="utf-8", write_through=True))
        timeout = httpx.Timeout(30.0, read=600.0)
        async with httpx.AsyncClient(headers=headers, timeout=timeout, transport=_answering(url)) as client, \
                streamable_http_client(endpoint, http_client=client) as (from_server, to_server, _), \
                stdio_server(stdout=out) as (from_client, to_client):

            async def up() -> None:
                async for msg in from_client:
                    if isinstance(msg, Exception):          # a line that is not JSON-RPC: the client's log
                        sys.stderr.write(f"memgrove mcp: {msg}\n")
                        continue
                    if isinstance(msg.message.root, JSONRPCRequest):
                        pending[msg.message.root.id] = None
                    await to_server.send(msg)
                tg.cancel_scope.cancel()                    # the client closed standard input

            async def down() -> None:
                async for msg in from_server:
                    if isinstance(msg, Exception):
                        for request_id in list(pending):
                            pending.pop(request_id, None)
                            await to_client.send(refused(request_id, str(msg) or type(msg).__name__))
                        continue
                    pending.pop(getattr(msg.message.root, "id", None), None)
                    await to_client.send(msg)

            async with anyio.create_task_group() as tg:
                tg.start_soon(up)
                tg.start_soon(down)

    anyio.run(main)

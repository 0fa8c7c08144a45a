"""ASGI middleware in front of every route: Host and Origin checks, the bearer token, the body limit.

Order matters: a request from a web page reached through DNS rebinding (a foreign name
resolving to 127.0.0.1) or from a foreign origin is refused before anything reads its
body; ``/health`` answers without a token (clients probe it to find the server), every
other route needs one unless the server runs with ``--no-auth``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from memgrove.tree.errors import MemgroveError, error_body

from .errors import Forbidden, TooLarge, Unauthorized, status_of

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
OPEN_PATHS = frozenset({"/health"})


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, int | None]:
    """``name[:port]`` or ``[v6][:port]`` → (name, port)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:
        name, port = value, ""
    return name, int(port) if port.isdigit() else None


@dataclass
class GuardPolicy:
    token: str | None                  # None: no authentication (loopback only)
    bind_host: str = "127.0.0.1"
    port: int | None = None            # None when mounted elsewhere (``langgraph dev``): any port
    max_body_bytes: int = 16 * 1024 * 1024
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)

    def host_ok(self, header: str | None) -> bool:
        if not header:
            return False
        name, port = split_host(header)
        if self.port is not None and port is not None and port != self.port:
            return False
        if is_loopback(name) or name in (h.lower() for h in self.allowed_hosts):
            return True
        if is_loopback(self.bind_host):
            return False      # bound to loopback: any other name is DNS rebinding
        # bound elsewhere: the bind address itself, or any name when bound to every interface
        return self.bind_host in ("0.0.0.0", "::", "") or name == self.bind_host.strip("[]").lower()

    def origin_ok(self, origin: str) -> bool:
        if origin.rstrip("/") in (o.rstrip("/") for o in self.allowed_origins):
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        if self.port is not None and parts.port != self.port:
            return False
        return is_loopback(parts.hostname) or (not is_loopback(self.bind_host)
                                               and parts.hostname == self.bind_host.strip("[]").lower())

    def token_ok(self, header: str | None) -> bool:
        if self.token is None:
            return True
        scheme, _, value = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token.encode())


class BodyTooLarge(TooLarge):
    pass


class Guard:
    def __init__(self, app: Callable, policy: GuardPolicy):
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        p = self.policy
        if not p.host_ok(headers.get("host")):
            await _refuse(send, Forbidden(f"Host {headers.get('host', '')!r} refused: this server answers to "
                                          "loopback names (DNS rebinding protection; see allowed_hosts)"))
            return
        origin = headers.get("origin")
        if origin is not None and origin != "null" and not p.origin_ok(origin):
            await _refuse(send, Forbidden(f"Origin {origin!r} refused (add it to allowed_origins to allow it)"))
            return
        if origin == "null":
            await _refuse(send, Forbidden("Origin 'null' refused"))
            return
        if scope.get("path") not in OPEN_PATHS and not p.token_ok(headers.get("authorization")):
            await _refuse(send, Unauthorized("missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                                             "(the token is in .memgrove/server.token, or MEMGROVE_TOKEN)"))
            return
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > p.max_body_bytes:
            await _refuse(send, _too_large(p.max_body_bytes))
            return
        await self._limited(scope, receive, send)

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.policy.max_body_bytes
        seen = 0
        refused: BodyTooLarge | None = None
        started = False

        async def counting_receive() -> dict[str, Any]:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = _too_large(limit)
                    raise refused
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            # a body cut off by the limit makes parsers answer "invalid body": say what happened
            nonlocal started
            if refused is not None:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await _refuse(send, refused)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except BodyTooLarge as exc:
            if not started:
                started = True
                await _refuse(send, exc)


def _too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"request body larger than {limit:,} bytes (setting max_body_bytes)")


async def _refuse(send: Send, exc: MemgroveError) -> None:
    status = status_of(exc)
    body = json.dumps(error_body(exc)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

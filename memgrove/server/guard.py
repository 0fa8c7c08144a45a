"""ASGI middleware in front of every route: Host and Origin checks, the bearer token, the body
limit and deadline.

Order matters: a request from a web page reached through DNS rebinding (a foreign name
resolving to 127.0.0.1) or from a foreign origin is refused before anything reads its
body; ``/health`` answers without a token (clients probe it to find the server), every
other route needs one unless the server runs with ``--no-auth``. The token says which
served project the request is for (``served.py``): the guard puts that project in the
request's state, and the routes let it reach that project only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from memgrove.tree.base.errors import MemgroveError, error_body
from memgrove.tree.base.question_bound import MAX_QUESTION_CHARS

from .errors import BodyTimeout, Forbidden, TooLarge, Unauthorized, status_of
from .served import CALLER, ServedProjects

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
OPEN_PATHS = frozenset({"/health"})
# the web page signs browsers in itself (memgrove/ui/auth.py: the token once, then a session cookie,
# and a CSRF token on every change); the Host and Origin checks above still apply to it
PAGE_PREFIX = "/ui"
# the routes that take a question (REST and LangServe's /query/invoke, batch, stream...): a question is
# at most MAX_QUESTION_CHARS (10,000 characters, 120 KB as JSON escapes at worst), so a body past
# 1 MiB is refused before anything parses it, though max_body_bytes (for ingests) is 16 MiB
QUESTION_PATHS = ("/api/query", "/query/")
QUESTION_BODY_BYTES = 1024 * 1024


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-_")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` or ``[v6][:port]`` → (name, port); None when it is neither (``a:1@b``,
    ``a:1.b``, an empty or non-numeric port): a Host or Origin that does not parse is refused."""
    value = value.strip().lower()
    if value.startswith("["):
        name, close, rest = value[1:].partition("]")
        if not close or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
    else:
        name, colon, port_text = value.partition(":")
        port = port_text if colon else None
        if not name or not set(name) <= _NAME_CHARS:
            return None
    if port is None:
        return name, None
    if not (port.isascii() and port.isdigit()) or len(port) > 5:
        return None
    return name, int(port)


@dataclass
class GuardPolicy:
    served: ServedProjects             # the projects and their tokens; no token: no authentication
    bind_host: str = "127.0.0.1"
    port: int | None = None            # None when mounted elsewhere (``langgraph dev``): any port
    max_body_bytes: int = 16 * 1024 * 1024
    body_timeout: float = 60.0         # seconds for a request's whole body, once the app asks for it
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)

    def body_limit(self, path: str) -> tuple[int, str]:
        """The most bytes a request body to ``path`` may hold, and why (for the 413's message)."""
        if (path == QUESTION_PATHS[0] or path.startswith(QUESTION_PATHS[1])) and QUESTION_BODY_BYTES < self.max_body_bytes:
            return QUESTION_BODY_BYTES, f"a question's route: a question is at most {MAX_QUESTION_CHARS:,} characters"
        if path.startswith(PAGE_PREFIX + "/") and QUESTION_BODY_BYTES < self.max_body_bytes:
            return QUESTION_BODY_BYTES, "the web page's forms: a question, an id, a token"
        return self.max_body_bytes, "setting max_body_bytes"

    def host_ok(self, header: str | None) -> bool:
        parsed = split_host(header) if header else None
        if parsed is None:
            return False
        name, port = parsed
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
        # an origin is scheme://host[:port] and nothing else: no user, path or odd port
        scheme, sep, rest = origin.partition("://")
        parsed = split_host(rest) if sep and scheme.lower() in ("http", "https") else None
        if parsed is None:
            return False
        name, port = parsed
        if self.port is not None and (port or (443 if scheme.lower() == "https" else 80)) != self.port:
            return False
        return is_loopback(name) or (not is_loopback(self.bind_host) and name == self.bind_host.strip("[]").lower())


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
            await _refuse(send, Forbidden(f"Host {headers.get('host', '')[:200]!r} refused: this server answers to "
                                          "loopback names (DNS rebinding protection; see allowed_hosts)"))
            return
        origin = headers.get("origin")
        if origin is not None and origin != "null" and not p.origin_ok(origin):
            await _refuse(send, Forbidden(f"Origin {origin[:200]!r} refused (add it to allowed_origins to allow it)"))
            return
        if origin == "null":
            await _refuse(send, Forbidden("Origin 'null' refused"))
            return
        path = scope.get("path", "")
        caller = None
        if path not in OPEN_PATHS and not (path == PAGE_PREFIX or path.startswith(PAGE_PREFIX + "/")):
            caller = p.served.for_token(headers.get("authorization"))
            if p.served.auth and caller is None:
                await _refuse(send, Unauthorized(_token_help(p.served.default)))
                return
        scope.setdefault("state", {})[CALLER] = caller       # which project the routes may reach
        limit = p.body_limit(path)
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit[0]:
            await _refuse(send, _too_large(*limit))
            return
        await self._limited(scope, receive, send, limit)

    async def _limited(self, scope: Scope, receive: Receive, send: Send, limit: tuple[int, str]) -> None:
        """The app, with a body counted as it arrives (``limit``: ``body_limit``) and bounded in time
        (``body_timeout``, from the app's first read of it): a client sending a byte now and then
        is answered 408 and its connection closed, instead of holding it forever."""
        budget = self.policy.body_timeout
        seen = 0
        refused: BodyTooLarge | BodyTimeout | None = None
        started = False
        deadline: float | None = None      # None: not read yet; inf: the whole body is in

        async def counting_receive() -> dict[str, Any]:
            nonlocal seen, refused, deadline
            if refused is not None:
                raise refused
            if deadline == math.inf:        # waiting for a disconnect is not the client's slowness
                return await receive()
            loop = asyncio.get_running_loop()
            if deadline is None:
                deadline = loop.time() + budget
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.001))
            except asyncio.TimeoutError:
                refused = BodyTimeout(f"request body not received within {budget:g} s (setting body_timeout)")
                raise refused from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit[0]:
                    refused = _too_large(*limit)
                    raise refused
                if not message.get("more_body", False):
                    deadline = math.inf
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
        except (BodyTooLarge, BodyTimeout) as exc:
            if not started:
                started = True
                await _refuse(send, exc)


def _token_help(default: Any) -> str:
    """What a 401 says: where the token lives (a shell whose MEMGROVE_HOME names the project reads
    another folder's ``.memgrove/`` than the current one, and ``cat .memgrove/server.token`` fails)."""
    where = getattr(default, "token_file", None)
    own = f"this server's project's token is in {where}" if where else "MEMGROVE_TOKEN sets the server's own"
    return ("missing or wrong bearer token: send 'Authorization: Bearer <token>' (each served project's token is "
            f"in its .memgrove/server.token; {own})")


def _too_large(limit: int, why: str) -> BodyTooLarge:
    return BodyTooLarge(f"request body larger than {limit:,} bytes ({why})")


async def _refuse(send: Send, exc: MemgroveError) -> None:
    status = status_of(exc)
    body = json.dumps(error_body(exc)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if isinstance(exc, BodyTimeout):       # the rest of that body is not worth waiting for
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

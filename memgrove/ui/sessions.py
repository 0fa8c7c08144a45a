"""Signed-in browsers: a random session id in an HttpOnly, SameSite=Strict cookie, the projects it
signed in to (by their tokens) and its CSRF token, kept in this process's memory.

A restart signs everyone out (tokens change at each ``memgrove serve`` unless MEMGROVE_TOKEN
is set, so a session could not outlive them anyway). A session ends after ``IDLE_S`` without a
request or ``MAX_AGE_S`` after sign-in; at most ``MAX_SESSIONS`` are kept, the least recently
seen going first, so a client signing in forever cannot grow the server.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from memgrove.tree.base import forksafe

IDLE_S = 12 * 3600.0
MAX_AGE_S = 7 * 24 * 3600.0
MAX_SESSIONS = 1000
MAX_NOTICES = 5
CODE_S = 120.0           # a sign-in link's code (``memgrove ui``) works once, within this
MAX_CODES = 100


@dataclass(eq=False)
class Session:
    id: str
    csrf: str
    projects: list[Any] = field(default_factory=list)     # ``Served``, in sign-in order
    created: float = 0.0
    seen: float = 0.0
    notices: list[tuple[str, str]] = field(default_factory=list)   # (kind, text) shown once, after a redirect

    def csrf_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(str(given).encode(), self.csrf.encode())

    def add_project(self, served: Any) -> None:
        if all(p is not served for p in self.projects):
            self.projects.append(served)

    def notice(self, kind: str, text: str) -> None:
        self.notices = (self.notices + [(kind, text)])[-MAX_NOTICES:]

    def take_notices(self) -> list[tuple[str, str]]:
        out, self.notices = self.notices, []
        return out


class Sessions:
    def __init__(self, *, clock: Any = time.monotonic) -> None:
        self._all: OrderedDict[str, Session] = OrderedDict()
        self._codes: OrderedDict[str, tuple[Any, float]] = OrderedDict()   # code -> (Served, made at)
        self._lock = forksafe.lock()
        self._clock = clock

    def new(self) -> Session:
        now = self._clock()
        s = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), created=now, seen=now)
        with self._lock:
            self._all[s.id] = s
            while len(self._all) > MAX_SESSIONS:
                self._all.popitem(last=False)
        return s

    def get(self, sid: str | None) -> Session | None:
        if not sid or len(sid) > 100:
            return None
        now = self._clock()
        with self._lock:
            s = self._all.get(sid)
            if s is None:
                return None
            if now - s.seen > IDLE_S or now - s.created > MAX_AGE_S:
                del self._all[sid]
                return None
            s.seen = now
            self._all.move_to_end(sid)
            return s

    def drop(self, sid: str | None) -> None:
        with self._lock:
            self._all.pop(sid or "", None)

    def new_code(self, served: Any) -> str:
        """A one-time code signing a browser in to ``served`` (``memgrove ui``'s link): the token
        itself never travels in a URL, where histories and logs keep it."""
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes[code] = (served, self._clock())
            while len(self._codes) > MAX_CODES:
                self._codes.popitem(last=False)
        return code

    def use_code(self, code: str | None) -> Any:
        """The project ``code`` signs in to, once; None when unknown, used or older than ``CODE_S``."""
        if not code or len(code) > 100:
            return None
        with self._lock:
            got = self._codes.pop(code, None)
        if got is None or self._clock() - got[1] > CODE_S:
            return None
        return got[0]

    def __len__(self) -> int:
        return len(self._all)

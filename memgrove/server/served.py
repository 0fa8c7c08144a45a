"""The projects one server serves, each with its own token.

A server serves its own project, those named when it started (``memgrove serve --project
DIR``, ``[server] projects``) and those its owner adds while it runs (``memgrove serve --add
DIR``, through ``POST /owner/projects`` and the owner token). A request's bearer token is the
token of one project; the project it names (``X-Memgrove-Project``, ``?project=``, an MCP
tool's ``project``) must be that one, and without a name it is that one. A name is matched
against the served list only: a project not served is 404 whatever the disk holds there, and
nothing under that name is opened, created or even stat'ed beyond resolving symbolic links.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import TreeNotFound
from memgrove.tree.base.home import HOME_NAME, locate_home

from . import registry
from .errors import AlreadyServed, Forbidden, Unauthorized

MAX_NAME = 4096       # PATH_MAX: a longer name names no project


@dataclass(frozen=True, eq=False)
class Served:
    """One served project: its folder, its ``.memgrove`` and its token (None: no authentication)."""

    folder: Path
    token: str | None = None
    token_file: Path | None = None

    @property
    def home(self) -> Path:
        return self.folder / HOME_NAME


OWNER = "owner"       # the caller of the owner routes; never a project
CALLER = "memgrove_caller"    # the key of the request's state where the guard puts its caller


def caller_of(scope: dict[str, Any] | None) -> "Served | str | None":
    """The project whose token a request carried (the guard's finding), from its ASGI scope."""
    return ((scope or {}).get("state") or {}).get(CALLER)


class ServedProjects:
    """The served list: who a token is, which project a name is, what a request may reach."""

    def __init__(self, default: Served, *, owner_token: str | None = None,
                 announce: Callable[[Served], None] | None = None):
        self.default = default
        self.auth = default.token is not None
        self.owner_token = owner_token
        self.announce = announce                 # called for a project added while serving
        self._all: list[Served] = []
        self._names: dict[str, Served] = {}
        self._lock = forksafe.lock()
        self._adding = forksafe.lock()         # one new project at a time: its token is made once
        self.add(default)

    def __iter__(self) -> Any:
        return iter(list(self._all))

    def add(self, served: Served) -> Served:
        with self._lock:
            known = self._names.get(str(served.folder))
            if known is not None:
                return known
            for folder in {served.folder, served.folder.resolve()}:
                self._names.setdefault(str(folder), served)
                self._names.setdefault(str(folder / HOME_NAME), served)
            self._all.append(served)
            return served

    def add_folder(self, path: str | os.PathLike) -> Served:
        """Serve the project at ``path`` (its folder, or inside it) too: checked like the library
        opens it (``locate_home``: it exists, its tree is no link), given a fresh token in its own
        ``.memgrove/server.token`` (0600) when the server has tokens, then announced (registered
        in its ``.memgrove/server.json``) when the server already answers."""
        with self._adding:
            home = locate_home(path)
            known = self.named(str(home.parent))
            if known is not None:
                return known
            live = registry.read_registration(home)
            if live is not None and live.get("pid") != os.getpid() and registry.is_live(live):
                raise AlreadyServed(f"{home.parent} is served by another server (pid {live['pid']}, "
                                    f"{live.get('host')}:{live['port']})")
            token = registry.new_token(home) if self.auth else None
            served = self.add(Served(home.parent.resolve(), token, registry.token_path(home) if token else None))
            if self.announce is not None:
                self.announce(served)
            return served

    def start_announcing(self, announce: Callable[[Served], None]) -> None:
        """Announce every project served so far, then each one added from now on."""
        with self._adding:
            for served in self:
                announce(served)
            self.announce = announce

    # -- who is asking ------------------------------------------------------------------
    def for_token(self, header: str | None) -> Served | str | None:
        """The project whose token the ``Authorization`` header carries (``OWNER`` for the owner
        token), or None. Compared in constant time against every token."""
        scheme, _, value = (header or "").partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return None
        given = value.strip().encode()
        found: Served | str | None = None
        for served in self:
            if served.token is not None and hmac.compare_digest(given, served.token.encode()):
                found = served
        if self.owner_token and hmac.compare_digest(given, self.owner_token.encode()):
            found = OWNER
        return found

    # -- which project a request names -------------------------------------------------------
    def named(self, name: str) -> Served | None:
        """The served project ``name`` names (its folder or its ``.memgrove``, as given or with links
        resolved), or None. Reads nothing: at most the links along the name are resolved."""
        if not name or len(name) > MAX_NAME or "\0" in name:
            return None
        try:
            key = os.path.normpath(os.path.abspath(os.path.expanduser(name)))
            found = self._names.get(key)
            if found is None:
                found = self._names.get(os.path.realpath(key))
        except (OSError, ValueError, RuntimeError):
            return None
        return found

    def choose(self, name: str | None, caller: Served | str | None) -> Served:
        """The project a request reaches: the one it names, else its token's (else the default).

        ``caller`` is the project whose token the request carries (None without authentication).
        A name no project answers to is ``TreeNotFound`` (404); another project's is ``Forbidden``.
        """
        if self.auth and not isinstance(caller, Served):
            raise Unauthorized("missing or wrong bearer token: send the token of the project you name")
        if not name:
            return caller if isinstance(caller, Served) else self.default
        served = self.named(name)
        if served is None:
            shown = name if len(name) <= 200 else name[:200] + "..."
            raise TreeNotFound(f"this server does not serve the project {shown!r}: it serves its own and those "
                               "named with `memgrove serve --project DIR` or added with `memgrove serve --add DIR`")
        if isinstance(caller, Served) and served is not caller:
            raise Forbidden(f"this token is the token of {caller.folder}, not of {served.folder}: send the token "
                            f"in {served.home / 'server.token'}")
        return served

"""The CLI's memory: a server's when one is named or running, else ``Memory`` in this process.

``open_memory`` chooses once per invocation:

1. ``MEMGROVE_URL`` set: that server's memory (``RemoteMemory``, ``memgrove/remote/memory.py``; token
   from ``MEMGROVE_TOKEN``), wherever the tree is -- another folder, another machine;
2. a live server registered in the project's ``.memgrove/server.json``
   (``memgrove.server.registry.find_server``): ``ServerMemory``, the same client with what a
   process beside the tree may still do itself (below);
3. else ``Memory`` in this process.

``--no-server`` or ``MEMGROVE_NO_SERVER=1`` forces the last. A registration whose process is
gone, or whose port does not answer as that process, falls back silently. So does a read
replica's server (``memgrove serve --replica-of``) when this process has no token for it: a
replica's token is its primary's, given in ``MEMGROVE_TOKEN`` and never written to its folder, so
without it the CLI reads the replica's tree itself, and a write says where writes go.

This module and what it imports at the top are the standard library and light memgrove
modules only: a cold ``memgrove query`` through a server pays no Whoosh, no LangChain, no
FastAPI, no tree scan and no index open. ``Memory`` itself is imported only when the work
stays in this process.

Errors: the server's ``{"error": {"code", "message"}}`` becomes the ``MemgroveError`` the library
raises in-process (``remote.error_of``), so the CLI prints what it prints in-process and exits the
same. A write is never retried once it was sent: if the server fails to answer a sent write, the
CLI says so (the write may have been applied) rather than applying it a second time.

What ``ServerMemory`` (a server registered for a project on this disk) does in-process: the LLM
curator (``learn``), curating files or a conversation (their provenance names files on this
machine), ``doctor``, searches asking more than the server's 200 results, and any work whose
server was gone before anything was sent. Those writers take the tree's writer lock, like every
writer, and the server sees their changes through its watcher. With ``MEMGROVE_URL`` nothing
runs in-process: files are read here and sent as their contents.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from memgrove.remote.memory import (  # noqa: F401 - ServerError, ServerUnreachable, TIMEOUT: this module's names before
    TIMEOUT,
    TOKEN_ENV,
    URL_ENV,
    RemoteMemory,
    RemoteTree,
    ServerError,
    ServerUnreachable,
    _NoAnswer,
    _Refused,
)
from memgrove.remote.memory import error_of as _error_of  # noqa: F401
from memgrove.server import registry
from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.base.home import locate_home

if TYPE_CHECKING:
    from memgrove.memory import Memory

NO_SERVER_ENV = "MEMGROVE_NO_SERVER"
SEARCH_LIMIT = 200       # the most results the server's /api/search gives


def no_server_env() -> bool:
    return os.environ.get(NO_SERVER_ENV, "").strip().lower() not in ("", "0", "false", "no")


def remote_url(no_server: bool = False) -> str | None:
    """``MEMGROVE_URL``, unless the work is kept in this process (``--no-server``)."""
    url = os.environ.get(URL_ENV, "").strip()
    return url if url and not no_server and not no_server_env() else None


def open_memory(root: str | os.PathLike | None, no_server: bool = False) -> "Memory | RemoteMemory":
    """The project's memory: ``MEMGROVE_URL``'s server, its running server, else in-process."""
    url = remote_url(no_server)
    if url:
        return RemoteMemory(url)
    if not no_server and not no_server_env():
        try:
            home = locate_home(root)
        except MemgroveError:
            home = None              # in-process opening says what is wrong, as it always did
        if home is not None:
            info = registry.find_server(home)
            if info is not None and not (info.get("auth", True) and not info.get("token") and _is_replica(home)):
                return ServerMemory(home, info, root)
    return open_local(root)


def _is_replica(home: Path) -> bool:
    return (home / "replica.json").exists()     # tree/replication_follow.REPLICA_FILE (not imported: it is heavy)


def open_local(root: str | os.PathLike | None) -> "Memory":
    """``Memory`` in this process, even with ``MEMGROVE_URL`` set (``--no-server``): a CLI command's,
    which exits when done, so no vectors are computed ahead (the next search or the server does)."""
    from memgrove.memory import Memory

    return Memory.open(root if root is not None else (os.environ.get("MEMGROVE_HOME") or os.getcwd()),
                       embed_ahead=False)


class _TreeView(RemoteTree):
    """``RemoteTree`` for a project on this disk: its folder, its settings and notices read here."""

    def __init__(self, owner: "ServerMemory", home: Path):
        super().__init__(owner)
        self._owner_local = owner
        self._home = home
        self._settings: Any = None

    @property
    def home(self) -> Path:
        return self._home

    @property
    def root(self) -> Path:
        return self._home / "tree"

    @property
    def settings(self) -> Any:
        if self._settings is None:
            from memgrove.tree.settings import load_settings

            self._settings = load_settings(self._home)
        return self._settings

    @property
    def notices(self) -> list[str]:      # type: ignore[override]
        local = self._owner_local._local_memory
        return local.tree.notices if local is not None else []

    @notices.setter
    def notices(self, value: list[str]) -> None:
        pass


class ServerMemory(RemoteMemory):
    """``RemoteMemory`` for the server registered in a project on this disk (``.memgrove/server.json``),
    falling back in-process when that server is gone before a request is sent."""

    def __init__(self, home: Path, info: dict[str, Any], root: str | os.PathLike | None = None):
        host = registry._connect_host(str(info.get("host", "127.0.0.1")))
        port = int(info["port"])
        # a token names its project; without tokens (--no-auth) a project not the server's own is named
        named = None
        if not info.get("token") and (info.get("served_by") or info.get("project") != str(home.parent)):
            named = str(home.parent)
        super().__init__(f"http://{'[' + host + ']' if ':' in host else host}:{port}", info.get("token") or "",
                         project=named, headers={"Host": f"127.0.0.1:{port}"})
        self.url = info.get("url") or self.url
        self._root = root
        self._local_home = home
        self.tree = _TreeView(self, home)
        self._local_memory: Memory | None = None

    @property
    def home(self) -> Path:
        return self._local_home

    @property
    def project(self) -> str:
        return str(self._local_home.parent)

    # -- the wire, with the fallback ---------------------------------------------------------
    def _read_failed(self, path: str, exc: BaseException, local: Callable[[Any], Any] | None) -> Any:
        """A read: a server gone (or dying) under it sends it back in-process, harmlessly."""
        if local is not None and self._gone():
            return local(self._local())
        return self._unreachable(path, write=False)

    def _write_failed(self, path: str, exc: BaseException, local: Callable[[Any], Any] | None) -> Any:
        """A write: once sent, never applied again here, whatever happens to the answer."""
        if isinstance(exc, _Refused):
            if local is None:
                raise ServerUnreachable(f"memgrove serve at {self.url} refused the connection; nothing was sent") \
                    from None
            return local(self._local())
        return self._unreachable(path, write=True)

    def _gone(self) -> bool:
        return registry.find_server(self._local_home) is None

    def _local(self) -> "Memory":
        if self._local_memory is None:
            self._local_memory = open_local(self._root if self._root is not None else self._local_home.parent)
        return self._local_memory

    # -- what runs beside the tree -------------------------------------------------------------
    def search(self, query: str, limit: int = 10, *, include_archived: bool = False) -> list:
        if limit > SEARCH_LIMIT:
            return self._local().search(query, limit, include_archived=include_archived)
        return super().search(query, limit, include_archived=include_archived)

    def ingest(self, text: str | None = None, files: Any = (), conversation: Any = None, *,
               window: int = 1, progress: Any = None, **options: Any) -> Any:
        if files or conversation is not None or text is None or options.get("documents"):
            return self._local().ingest(text=text, files=files, conversation=conversation, window=window,
                                        progress=progress, **options)
        return super().ingest(text=text, window=window, progress=progress,
                              **{k: v for k, v in options.items() if k in ("system",)})

    def learn(self, **kwargs: Any) -> Any:
        return self._local().learn(**kwargs)

    def doctor(self, fix: bool = False) -> Any:
        return self._local().doctor(fix=fix)

    def dream(self, *, dry_run: bool = False, undo: str | bool | None = None, force: bool = False,
              use_model: bool = True, with_approved: bool = False, **kwargs: Any) -> dict[str, Any]:
        if kwargs:
            return self._local().dream(dry_run=dry_run, undo=undo, force=force, use_model=use_model,
                                       with_approved=with_approved, **kwargs)
        return super().dream(dry_run=dry_run, undo=undo, force=force, use_model=use_model, with_approved=with_approved)

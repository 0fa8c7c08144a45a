"""The CLI's memory when ``memgrove serve`` runs for the project: the methods the commands
call on ``Memory``, answered over HTTP by the server's REST API.

``open_memory`` chooses once per invocation: a live server registered in the project's
``.memgrove/server.json`` (``memgrove.server.registry.find_server``), else ``Memory`` in this
process. ``--no-server`` or ``MEMGROVE_NO_SERVER=1`` forces the second; a registration whose
process is gone, or whose port does not answer as that process, falls back silently.

This module and what it imports at the top are the standard library and light memgrove
modules only: a cold ``memgrove query`` through the server pays no Whoosh, no LangChain,
no FastAPI, no tree scan and no index open. ``Memory`` itself is imported only when the
work stays in this process.

Errors: the server's ``{"error": {"code", "message"}}`` becomes a ``MemgroveError`` with that
code and message, so the CLI prints what it prints in-process and exits the same. A write is
never retried in-process once it was sent: if the server fails to answer a sent write, the
CLI says so (the write may have been applied) rather than applying it a second time. Only a
server gone before anything was sent (connection refused) sends the work back in-process.

What runs in-process even with a server: the LLM curator (``learn``), curating files or a
conversation (their provenance names files on this machine), and searches asking more than
the server's 200 results. Those writers take the tree's writer lock, like every writer, and the
server sees their changes through its watcher.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from memgrove.server import registry
from memgrove.tree.errors import BatchRejected, MemgroveError
from memgrove.tree.home import locate_home

if TYPE_CHECKING:
    from memgrove.graphs.answer import Answer
    from memgrove.memory import Memory
    from memgrove.tree.journal import JournalRecord
    from memgrove.tree.operations import OpResult
    from memgrove.tree.search import Hit

NO_SERVER_ENV = "MEMGROVE_NO_SERVER"
TIMEOUT = 600.0          # seconds; the server bounds every request itself (request_timeout)
SEARCH_LIMIT = 200       # the most results the server's /api/search gives


class ServerError(MemgroveError):
    """An error the server answered: its ``code`` and message, as the CLI would have raised it."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class ServerUnreachable(MemgroveError):
    """The server stopped answering after the request was sent."""

    code = "server_unreachable"


class _Refused(Exception):
    """Nothing was sent: the server was gone before the connection opened."""


class _NoAnswer(Exception):
    """The connection broke after the request went out (an ``http.client.HTTPException``)."""


def no_server_env() -> bool:
    return os.environ.get(NO_SERVER_ENV, "").strip().lower() not in ("", "0", "false", "no")


def open_memory(root: str | os.PathLike | None, no_server: bool = False) -> "Memory | ServerMemory":
    """The project's memory: through its running server when one is registered, else in-process."""
    if not no_server and not no_server_env():
        try:
            home = locate_home(root)
        except MemgroveError:
            home = None              # in-process opening says what is wrong, as it always did
        if home is not None:
            info = registry.find_server(home)
            if info is not None:
                return ServerMemory(home, info, root)
    from memgrove.memory import Memory

    return Memory.open(root)


class _TreeView:
    """What the CLI reads of ``mem.tree``: where the tree is, its settings, the notices."""

    def __init__(self, owner: "ServerMemory", home: Path):
        self._owner = owner
        self.home = home
        self.root = home / "tree"
        self._settings: Any = None

    @property
    def settings(self) -> Any:
        if self._settings is None:
            from memgrove.tree.settings import load_settings

            self._settings = load_settings(self.home)
        return self._settings

    @property
    def notices(self) -> list[str]:
        local = self._owner._local_memory
        return local.tree.notices if local is not None else []


class ServerMemory:
    """``Memory``'s methods the CLI calls, over a running server's REST API."""

    def __init__(self, home: Path, info: dict[str, Any], root: str | os.PathLike | None = None):
        self.home = home
        self.tree = _TreeView(self, home)
        self.url = info["url"]
        self._root = root
        self._host = registry._connect_host(str(info.get("host", "127.0.0.1")))
        self._port = int(info["port"])
        self._headers = {"Accept": "application/json", "Host": f"127.0.0.1:{self._port}"}
        if info.get("token"):
            self._headers["Authorization"] = f"Bearer {info['token']}"
        # a token names its project; without tokens (--no-auth) a project not the server's own is named
        # (as a parameter: a path may hold characters a header cannot)
        self._named: dict[str, str] = {}
        if not info.get("token") and (info.get("served_by") or info.get("project") != str(home.parent)):
            self._named = {"project": str(home.parent)}
        self._local_memory: Memory | None = None

    # -- the wire --------------------------------------------------------------------------
    def _send(self, method: str, path: str, params: dict[str, Any] | None = None,
              body: Any = None) -> Any:
        params = {**(params or {}), **self._named}
        if params:
            path += "?" + urlencode(params)
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        import http.client  # here, not at the top: opening in-process (no server) needs no HTTP

        conn = http.client.HTTPConnection(self._host, self._port, timeout=TIMEOUT)
        try:
            try:
                conn.connect()
            except ConnectionRefusedError as exc:
                raise _Refused() from exc
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            status = resp.status
        except http.client.HTTPException as exc:
            raise _NoAnswer(str(exc)) from exc
        finally:
            conn.close()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            raise ServerError("server_error", f"memgrove serve at {self.url} answered {status} "
                                              "with something not JSON") from None
        if status >= 400:
            raise _error_of(payload, status, self.url)
        return payload

    def _read(self, path: str, params: dict[str, Any] | None = None, body: Any = None,
              method: str = "GET") -> Any:
        """A read: a server gone (or dying) under it sends it back in-process, harmlessly."""
        try:
            return self._send(method, path, params, body)
        except (_Refused, _NoAnswer, OSError):
            return None if self._gone() else self._unreachable(path, write=False)

    def _write(self, path: str, body: Any) -> Any:
        """A write: once sent, never applied again here, whatever happens to the answer."""
        try:
            return self._send("POST", path, None, body)
        except _Refused:
            return None
        except (_NoAnswer, OSError):
            self._unreachable(path, write=True)

    def _gone(self) -> bool:
        return registry.find_server(self.home) is None

    def _unreachable(self, path: str, *, write: bool) -> Any:
        what = ("; the write may have been applied: see `memgrove history`, do not repeat it blindly"
                if write else "")
        raise ServerUnreachable(f"memgrove serve at {self.url} did not answer {path}{what}")

    def _local(self) -> "Memory":
        if self._local_memory is None:
            from memgrove.memory import Memory

            self._local_memory = Memory.open(self._root)
        return self._local_memory

    # -- reading ---------------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, *, include_archived: bool = False) -> list["Hit"]:
        if limit > SEARCH_LIMIT:
            return self._local().search(query, limit, include_archived=include_archived)
        params: dict[str, Any] = {"q": query, "limit": limit}
        if include_archived:
            params["include_archived"] = "true"
        data = self._read("/api/search", params)
        if data is None:
            return self._local().search(query, limit, include_archived=include_archived)
        from memgrove.tree.search import hit_from_dict

        return [hit_from_dict(h) for h in data["hits"]]

    def query(self, question: str) -> "Answer":
        data = self._read("/api/query", body={"question": question}, method="POST")
        if data is None:
            return self._local().query(question)
        from memgrove.graphs.answer import Answer

        return Answer.from_dict(data)

    def stats(self) -> dict[str, Any]:
        data = self._read("/api/stats")
        return self._local().stats() if data is None else data

    def list(self, folder: str = "") -> dict[str, Any]:
        data = self._read("/api/tree", {"folder": folder})
        return self._local().list(folder) if data is None else data

    def show(self, path: str) -> dict[str, Any]:
        data = self._read("/api/entries/" + quote(path, safe="/"))
        return self._local().show(path) if data is None else data

    def history(self, limit: int | None = 50, path: str | None = None) -> "list[JournalRecord]":
        params: dict[str, Any] = {"limit": limit or 0}
        if path is not None:
            params["path"] = path
        data = self._read("/api/history", params)
        if data is None:
            return self._local().history(limit, path)
        from memgrove.tree.journal import JournalRecord

        return [JournalRecord.from_json(r) for r in data["operations"]]

    # -- writing ---------------------------------------------------------------------------
    def curate(self, ops: Any, *, actor: str = "user") -> "list[OpResult]":
        if not isinstance(ops, list):    # what the library says of it, before the wire's own check
            raise BatchRejected(["give a non-empty list of operations"])
        data = self._write("/api/curate", {"operations": ops, "actor": actor})
        return self._local().curate(ops, actor=actor) if data is None else _results(data)

    def ingest(self, text: str | None = None, files: Any = (), conversation: Any = None, *,
               window: int = 1, progress: Any = None, **options: Any) -> Any:
        if files or conversation is not None or text is None:
            return self._local().ingest(text=text, files=files, conversation=conversation, window=window,
                                        progress=progress, **options)
        data = self._write("/api/ingest", {"text": text, "window": window})
        if data is None:
            return self._local().ingest(text=text, window=window, progress=progress)
        from memgrove.memory import IngestResult

        results = IngestResult(_results(data), data.get("skipped"))
        if progress:
            progress(len(results), len(results))
        return results

    def learn(self, **kwargs: Any) -> Any:
        return self._local().learn(**kwargs)

    def restore(self, path: str, *, reason: str = "restored from the archive") -> "OpResult":
        return self.curate([{"op": "RESTORE", "path": path, "reason": reason}])[0]

    def undo(self, op_id: str, *, force: bool = False) -> "OpResult":
        data = self._write("/api/undo", {"id": op_id, "force": force})
        if data is None:
            return self._local().undo(op_id, force=force)
        from memgrove.tree.operations import OpResult

        return OpResult.from_dict(data)

    # -- hygiene ---------------------------------------------------------------------------
    def dream(self, *, dry_run: bool = False, undo: str | bool | None = None, force: bool = False,
              **kwargs: Any) -> dict[str, Any]:
        if kwargs:
            return self._local().dream(dry_run=dry_run, undo=undo, force=force, **kwargs)
        undo_id = None if undo is None or undo is False else ("" if undo is True else str(undo))
        data = self._write("/api/dream", {"dry_run": dry_run, "undo": undo_id, "force": force})
        return self._local().dream(dry_run=dry_run, undo=undo, force=force) if data is None else data

    def review(self) -> list[dict[str, Any]]:
        data = self._read("/api/review")
        return self._local().review() if data is None else data["items"]

    def review_show(self, item_id: str) -> dict[str, Any]:
        data = self._read("/api/review/" + quote(item_id, safe=""))
        return self._local().review_show(item_id) if data is None else data

    def review_approve(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        data = self._write("/api/review/approve", {"id": item_id, "all": all})
        return self._local().review_approve(item_id, all=all) if data is None else data

    def review_reject(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        data = self._write("/api/review/reject", {"id": item_id, "all": all})
        return self._local().review_reject(item_id, all=all) if data is None else data


def _results(data: dict[str, Any]) -> "list[OpResult]":
    from memgrove.tree.operations import OpResult

    return [OpResult.from_dict(r) for r in data["results"]]


def _error_of(payload: Any, status: int, url: str) -> MemgroveError:
    err = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return ServerError("server_error", f"memgrove serve at {url} answered {status}")
    code = str(err.get("code") or "server_error")
    if code == BatchRejected.code and isinstance(err.get("errors"), list):
        return BatchRejected([str(e) for e in err["errors"]])
    return ServerError(code, err["message"])

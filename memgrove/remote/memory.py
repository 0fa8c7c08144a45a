"""``RemoteMemory``: a memory ``memgrove serve`` holds, used from any machine with ``Memory``'s API.

    mem = Memory.connect("http://memory.internal:7437", token="...")    # or MEMGROVE_URL, MEMGROVE_TOKEN
    mem.curate([{"op": "UPSERT", "path": "auth/jwt/rotation.md", "content": "...", "reason": "..."}])
    mem.search("refresh token")[0].path

Each method is a request to the server's REST API (docs/server.md) and returns what the
in-process method returns -- ``Hit``, ``Answer``, ``OpResult``, ``JournalRecord``, ``Entry``,
``DoctorReport`` -- built from the JSON. An error comes back as the ``MemgroveError`` subclass
in-process code raises, with the same ``code`` (``error_of``); a refusal only a server makes
(``unauthorized``, ``timeout``, ``too_large``...) is a ``ServerError`` carrying its code.

What runs in this process: ``graph``, ``agent`` and ``tools`` (with this process's model); their
memory calls -- search, read, links, curate -- go to the server through ``RemoteTree``. Files
given to ``ingest`` are read here and sent as their contents.

A write is sent once: when the server stops answering after it went out, ``ServerUnreachable``
says it may have been applied (see ``history``); it is never sent again. Reads reuse a kept-alive
connection per thread and are retried once on a fresh one.

Every call ends within ``timeout`` seconds (default ``MEMGROVE_TIMEOUT``, else 600), counted
from its start however slowly the server answers: ``ServerTimeout``. A reply that is not what
a memgrove server sends -- not JSON, another shape, past ``max_reply`` bytes -- is ``BadReply``.

This module imports the standard library and light memgrove modules only: the CLI's client
(``memgrove/cli/which_memory.py``) is built on it and a cold ``memgrove query`` through a server loads no
Whoosh, LangChain or FastAPI. The result types are imported where they are built.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable
from urllib.parse import quote

from memgrove.remote.inputs import _conversation_json, _documents, _results
from memgrove.remote import shapes
from memgrove.remote.tree import RemoteEngine, RemoteTree  # noqa: F401 - RemoteEngine: a name of this module
from memgrove.remote.wire import (  # noqa: F401 - the errors and the wire, names of this module
    MAX_REPLY,
    TIMEOUT,
    BadReply,
    ServerError,
    ServerTimeout,
    ServerUnreachable,
    Wire,
    _NoAnswer,
    _Refused,
    as_dict,
    default_timeout,
    error_classes,
    error_of,
    shaped,
    shown_url,
)
from memgrove.tree.base.errors import BatchRejected, InvalidInput
from memgrove.tree.base.forksafe import here_only

if TYPE_CHECKING:
    from memgrove.graphs.tiers import Answer
    from memgrove.ingest import IngestResult
    from memgrove.tree.doctor import DoctorReport
    from memgrove.tree.entries.entry import Entry
    from memgrove.tree.writes.journal_read import JournalPage, JournalRecord
    from memgrove.tree.writes.operations import OpResult
    from memgrove.tree.ranking.hits import Hit

URL_ENV = "MEMGROVE_URL"
TOKEN_ENV = "MEMGROVE_TOKEN"


# -- the memory ----------------------------------------------------------------------------------

class RemoteMemory:
    """``Memory``'s API over a running ``memgrove serve`` (``Memory.connect``).

    ``project``: which of the server's projects (default: the token's, or the server's own).
    ``home``: a local folder for the graphs' answer cache and the agent's threads (``tree.home``;
    default: a temporary one, removed by ``close``). ``model``: the chat model of the graphs run here.
    ``timeout``: seconds each call may take in all (default ``MEMGROVE_TIMEOUT``, else 600);
    ``max_reply``: the most bytes of a reply read (64 MB). ``memory_class``: ``Memory``, for a graph
    or tool run here whose run context names a project folder (``Memory.connect`` hands it in).
    """

    def __init__(self, url: str | None = None, token: str | None = None, *, project: str | os.PathLike | None = None,
                 model: Any = None, home: str | os.PathLike | None = None, timeout: float | None = None,
                 headers: dict[str, str] | None = None, max_reply: int = MAX_REPLY, memory_class: Any = None):
        url = url or os.environ.get(URL_ENV) or ""
        if not url.strip():
            raise InvalidInput(f"no server to connect to: give a URL or set {URL_ENV}")
        token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.wire = Wire(url.strip(), token, project=str(project) if project else None,
                         timeout=default_timeout() if timeout is None else timeout, headers=headers, max_reply=max_reply)
        self.url = shown_url(self.wire.url)
        self._model = model
        self._home = Path(home) if home is not None else None
        self._temp_home: Path | None = None
        self._info: dict[str, Any] | None = None
        self._settings: dict[str, Any] | None = None
        self._tree_settings_obj: Any = None
        self.tree = RemoteTree(self)
        # ``Memory``, handed in by ``Memory.connect``: what the graphs and tools run here open a
        # project with when a run's context names a folder (this module never imports it)
        self._memory_class = memory_class

    def __repr__(self) -> str:
        return f"RemoteMemory({self.url!r})"

    def close(self) -> None:
        self.wire.close()
        if self._temp_home is not None:
            shutil.rmtree(self._temp_home, ignore_errors=True)
            self._temp_home = None

    def __enter__(self) -> "RemoteMemory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the wire --------------------------------------------------------------------------
    def _send(self, method: str, path: str, params: dict[str, Any] | None = None, body: Any = None, *,
              retry: bool = False) -> Any:
        return self.wire.send(method, path, params, body, retry=retry)

    def _get(self, path: str, params: dict[str, Any] | None = None, body: Any = None, method: str = "GET",
             local: Callable[[Any], Any] | None = None, build: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """A read: ``build`` of the server's JSON object (the object itself without one); JSON of
        another shape is ``BadReply``. (``local``: what a client with the tree on its own disk may
        do instead when the server is gone, its result returned as it is; ``memgrove/cli/which_memory.py``.)"""
        try:
            data = self._send(method, path, params, body, retry=True)
        except (_Refused, _NoAnswer, OSError) as exc:
            return self._read_failed(path, exc, local)
        return self._built(path, data, build)

    def _post(self, path: str, body: Any, local: Callable[[Any], Any] | None = None,
              build: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """A write: once sent, never sent again, whatever happens to the answer."""
        try:
            data = self._send("POST", path, None, body)
        except (_Refused, _NoAnswer, OSError) as exc:
            return self._write_failed(path, exc, local)
        except (ServerTimeout, BadReply) as exc:     # sent: the server may have applied it before failing us
            raise type(exc)(f"{exc}; the write may have been applied: see `memgrove history`, do not repeat "
                            "it blindly") from None
        return self._built(path, data, build)

    def _built(self, path: str, data: Any, build: Callable[[dict[str, Any]], Any] | None) -> Any:
        data = as_dict(self.url, path, data)
        if build is None:
            return data
        with shaped(self.url, path):
            return build(data)

    def _read_failed(self, path: str, exc: BaseException, local: Callable[[Any], Any] | None) -> Any:
        if isinstance(exc, _Refused):
            raise ServerUnreachable(f"memgrove serve at {self.url} could not be reached ({exc or 'refused'}; "
                                    "is it running?)") from None
        return self._unreachable(path, write=False)

    def _write_failed(self, path: str, exc: BaseException, local: Callable[[Any], Any] | None) -> Any:
        if isinstance(exc, _Refused):
            raise ServerUnreachable(f"memgrove serve at {self.url} could not be reached ({exc or 'refused'}; "
                                    "is it running?); nothing was sent") from None
        return self._unreachable(path, write=True)

    def _unreachable(self, path: str, *, write: bool) -> Any:
        what = ("; the write may have been applied: see `memgrove history`, do not repeat it blindly"
                if write else "")
        raise ServerUnreachable(f"memgrove serve at {self.url} did not answer {path}{what}")

    def _server_info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self._get("/health")
        return self._info

    @property
    def project(self) -> str:
        """The project folder on the server's machine."""
        return self.wire.named.get("project") or str(self._server_info().get("project", ""))

    @property
    def home(self) -> Path:
        """The project's ``.memgrove/`` on the server's machine (what the CLI shows); what this
        process keeps is in ``tree.home``."""
        return Path(self.project) / ".memgrove"

    def _client_home(self) -> Path:
        if self._home is not None:
            self._home.mkdir(parents=True, exist_ok=True)
            return self._home
        if self._temp_home is None:
            self._temp_home = Path(tempfile.mkdtemp(prefix="memgrove-remote-"))
            # removed by close(), or when this memory is collected without one
            # (never at the exit of a child forked from this process: the folder is still ours)
            weakref.finalize(self, here_only(shutil.rmtree, self._temp_home, ignore_errors=True))
        return self._temp_home

    def _settings_json(self) -> dict[str, Any]:
        if self._settings is None:
            self._settings = self._get("/api/settings", build=shapes.settings_shape)
        return self._settings

    def _tree_settings(self) -> Any:
        if self._tree_settings_obj is None:
            from memgrove.tree.settings import TreeSettings

            known = TreeSettings.__dataclass_fields__
            given = {k: v for k, v in self._settings_json()["tree"].items() if k in known}
            with shaped(self.url, "/api/settings"):
                self._tree_settings_obj = TreeSettings(**given)
        return self._tree_settings_obj

    def query_settings(self) -> Any:
        """The server's ``[query]`` settings (what the query graph run here decides with)."""
        from memgrove.graphs.settings import QuerySettings

        known = QuerySettings.__dataclass_fields__
        given = {k: v for k, v in self._settings_json()["query"].items() if k in known}
        with shaped(self.url, "/api/settings"):
            return QuerySettings(**given)

    # -- reading ---------------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, *, include_archived: bool = False) -> builtins.list["Hit"]:
        """BM25F search on the server (the same hits, unrounded, as ``Memory.search``)."""
        params: dict[str, Any] = {"q": query, "limit": limit, "exact": "true"}
        if include_archived:
            params["include_archived"] = "true"
        from memgrove.tree.ranking.hits import hit_from_dict

        return self._get("/api/search", params, local=lambda m: m.search(query, limit, include_archived=include_archived),
                         build=lambda data: [hit_from_dict(h) for h in shapes.listed(data, "hits")])

    def query(self, question: str) -> "Answer":
        """The server's 5-tier answer (its caches, index and model)."""
        from memgrove.graphs.answer import Answer

        return self._get("/api/query", body={"question": question}, method="POST", local=lambda m: m.query(question),
                         build=Answer.from_dict)

    def read(self, path: str) -> "Entry":
        from memgrove.tree.entries.entry import parse

        return parse(self.show(path)["text"], where=path)

    def show(self, path: str) -> dict[str, Any]:
        return self._get("/api/entries/" + quote(path, safe="/"), local=lambda m: m.show(path), build=shapes.shown)

    def list(self, folder: str = "", *, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        return self._get("/api/tree", shapes.given(folder=folder, offset=offset, limit=limit),
                         local=lambda m: m.list(folder, offset=offset, limit=limit), build=shapes.folder)

    def history(self, limit: int | None = 50, path: str | None = None) -> builtins.list["JournalRecord"]:
        return self._get("/api/history", shapes.given(limit=limit or 0, path=path), local=lambda m: m.history(limit, path),
                         build=lambda data: shapes.journal_page(data).records)

    def history_page(self, limit: int | None = 50, *, path: str | None = None, kinds: Iterable[str] = (),
                     before: int | None = None) -> "JournalPage":
        kinds = tuple(kinds)
        return self._get("/api/history", shapes.given(limit=limit or 0, path=path, kinds=",".join(kinds), before=before,
                                                      page="true"), build=shapes.journal_page,
                         local=lambda m: m.history_page(limit, path=path, kinds=kinds, before=before))

    def stats(self) -> dict[str, Any]:
        return self._get("/api/stats", local=lambda m: m.stats())

    def doctor(self, fix: bool = False) -> "DoctorReport":
        """The server's check of its tree (``fix``: repair what is derived, queued like a write)."""
        from memgrove.tree.doctor import DoctorReport

        def build(data: dict[str, Any]) -> DoctorReport:
            return DoctorReport(**{k: v for k, v in data.items() if k != "ok"})
        return self._post("/api/doctor/fix", {}, build=build) if fix else self._get("/api/doctor", build=build)

    def fingerprint(self) -> str:
        return self._get("/api/fingerprint", build=lambda d: shapes.text(d["fingerprint"]))

    def count(self) -> int:
        """Documents in the server's index: entries and folder overviews (``Memory.count``)."""
        return self._get("/api/fingerprint", build=lambda d: shapes.number(d["documents"]))

    # -- writing ---------------------------------------------------------------------------
    def curate(self, ops: Any, *, actor: str = "user", allowed: tuple[str, ...] | None = None) -> builtins.list["OpResult"]:
        """Apply operations on the server, all or nothing (``Memory.curate``)."""
        if not isinstance(ops, builtins.list):    # what the library says of it, before the wire's own check
            raise BatchRejected(["give a non-empty list of operations"])
        body: dict[str, Any] = {"operations": ops, "actor": actor}
        if allowed is not None:
            body["allowed"] = builtins.list(allowed)
        return self._post("/api/curate", body, local=lambda m: m.curate(ops, actor=actor, **(
            {"allowed": allowed} if allowed is not None else {})), build=_results)

    def ingest(self, text: str | None = None, files: Iterable[str | os.PathLike] = (), conversation: Any = None, *,
               window: int = 1, batch_size: int = 200, progress: Any = None,
               documents: Iterable[tuple[str, str]] = (), exclude: Iterable[str] = (),
               system: bool = False) -> IngestResult:
        """``Memory.ingest`` on the server: files and folders are read here and sent as their contents
        (their names as given), a conversation file is read here and sent as JSON."""
        from memgrove.ingest import IngestResult

        docs, skipped = _documents(files, exclude, self.tree.settings.max_input_bytes)
        body: dict[str, Any] = {"text": text, "window": window, "system": system,
                                "files": [{"name": n, "text": t} for n, t in [*docs, *documents]]}
        if conversation is not None:
            body["conversation"] = _conversation_json(conversation, self.tree.settings.max_input_bytes)
        if text is None and not body["files"] and conversation is None and skipped:
            return IngestResult(skipped=skipped)
        def build(data: dict[str, Any]) -> IngestResult:
            out = {str(k): int(v) for k, v in dict(data.get("skipped") or {}).items()}
            for kind, n in skipped.items():
                out[kind] = out.get(kind, 0) + n
            return IngestResult(_results(data), out)

        results = self._post("/api/ingest", body, build=build)
        if progress:
            progress(len(results), len(results))
        return results

    def learn(self, text: str | None = None, files: Iterable[str | os.PathLike] = (), conversation: Any = None, *,
              model: Any = None, verbatim: bool = False, settings: Any = None) -> Any:
        """The verbatim curator on the server (``ingest``) with its report; the LLM curator runs where
        its model is: ``memgrove curate`` on the server's machine, or ``graph("curate")`` here."""
        from memgrove.graphs.curate_report import verbatim_report
        from memgrove.graphs.llm import model_configured

        if not verbatim and model_configured(model if model is not None else self._model):
            return self._learn_with_model(text, files, conversation, model, settings)
        why = ("verbatim curator chosen" if verbatim else
               "no model configured (set MEMGROVE_MODEL): used the verbatim curator, one entry per message "
               "or paragraph")
        results = self.ingest(text=text, files=files, conversation=conversation)
        report = verbatim_report(results, why)
        if results.skipped_line():
            report = dataclasses.replace(report, summary=report.summary + "\n" + results.skipped_line(),
                                         skipped=results.skipped)
        return report

    def _learn_with_model(self, text: Any, files: Any, conversation: Any, model: Any, settings: Any) -> Any:
        from memgrove.graphs.curate import build_curate_graph, report_from_state
        from memgrove.tree.inputs import input_folders

        paths, _ = input_folders.expand(files, max_bytes=self.tree.settings.max_input_bytes)
        data: dict[str, Any] = {"files": [str(f) for f in paths]}
        if text is not None:
            data["text"] = text
        if conversation is not None:
            from memgrove.ingest import load_conversation

            data["conversation"] = load_conversation(conversation, self.tree.settings.max_input_bytes).as_dict()
        graph = build_curate_graph(self, model=model if model is not None else self._model, settings=settings,
                                   memory_class=self._memory_class)
        return report_from_state(graph.invoke(data))

    def undo(self, op_id: str, *, force: bool = False, actor: str = "user") -> "OpResult":
        from memgrove.tree.writes.operations import OpResult

        return self._post("/api/undo", {"id": op_id, "force": force, "actor": actor},
                          local=lambda m: m.undo(op_id, force=force, actor=actor), build=OpResult.from_dict)

    def reindex(self, progress: Any = None) -> int:
        raise ServerError("local_only", f"reindex runs where the tree is: on the machine of memgrove serve at "
                                        f"{self.url}, `memgrove reindex --no-server` in its project")

    def embed(self, progress: Any = None) -> tuple[int, int]:
        raise ServerError("local_only", f"embed runs where the tree is: on the machine of memgrove serve at "
                                        f"{self.url} (`memgrove reindex --no-server`)")

    def vectors_ahead(self, paths: builtins.list[str] | None = None) -> dict[str, Any]:
        """The server's background embedder computes these entries' missing vectors (every entry's
        without ``paths``): entries written beside it (memgrove/cli/vectors_ahead.py)."""
        return self._get("/api/vectors/ahead", body={"paths": paths}, method="POST")

    def restore(self, path: str, *, reason: str = "restored from the archive", actor: str = "user") -> "OpResult":
        return self.curate([{"op": "RESTORE", "path": path, "reason": reason}], actor=actor)[0]

    # -- hygiene ---------------------------------------------------------------------------
    def dream(self, *, dry_run: bool = False, undo: str | bool | None = None, force: bool = False,
              use_model: bool = True, with_approved: bool = False, **kwargs: Any) -> dict[str, Any]:
        """One dream run on the server, with the server's model (``Memory.dream``)."""
        if kwargs:
            raise InvalidInput(f"over a server, dream takes dry_run, undo, force, with_approved and use_model; not "
                               f"{', '.join(sorted(kwargs))} (they run where the tree is)")
        undo_id = None if undo is None or undo is False else ("" if undo is True else str(undo))
        body = {"dry_run": dry_run, "undo": undo_id, "force": force, "use_model": use_model,
                "with_approved": with_approved}
        return self._post("/api/dream", body, local=lambda m: m.dream(dry_run=dry_run, undo=undo, force=force,
                                                                      use_model=use_model, with_approved=with_approved))

    def review(self) -> builtins.list[dict[str, Any]]:
        return self._get("/api/review", local=lambda m: m.review(), build=lambda d: shapes.listed(d, "items"))

    def review_show(self, item_id: str) -> dict[str, Any]:
        return self._get("/api/review/" + quote(item_id, safe=""), local=lambda m: m.review_show(item_id))

    def review_approve(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        return self._post("/api/review/approve", {"id": item_id, "all": all},
                          local=lambda m: m.review_approve(item_id, all=all))

    def review_reject(self, item_id: str | None = None, *, all: bool = False) -> dict[str, Any]:
        return self._post("/api/review/reject", {"id": item_id, "all": all},
                          local=lambda m: m.review_reject(item_id, all=all))

    def queue_review(self, ops: builtins.list[dict[str, Any]], *, proposed_by: str = "model") -> str | None:
        """Put operations a model decided in the server's review queue (what the LLM curator run here
        does with its ``review_ops``); the item's id, or None when a person rejected them before."""
        return self._post("/api/review/queue", {"operations": ops, "proposed_by": proposed_by},
                          build=lambda d: shapes.text(d["item"]["id"]) if d["item"] else None)

    # -- graphs and tools, run here --------------------------------------------------------
    def graph(self, name: str = "query", **options: Any) -> Any:
        """A compiled graph run in this process over the server's memory (``Memory.graph``)."""
        options.setdefault("model", self._model)
        options.setdefault("memory_class", self._memory_class)
        if name == "query":
            from memgrove.graphs.query import build_query_graph

            options.setdefault("settings", self.query_settings())
            return build_query_graph(self, **options)
        if name == "curate":
            from memgrove.graphs.curate import build_curate_graph

            return build_curate_graph(self, **options)
        if name == "agent":
            from memgrove.graphs.agent import build_memory_agent

            return build_memory_agent(self, **options)
        raise ValueError(f"unknown graph {name!r}; available: 'query', 'curate', 'agent'")

    def agent(self, *, threads: bool = True, **options: Any) -> Any:
        """The memory agent, run here; ``threads`` keeps conversations in ``home``'s ``threads.db``."""
        if threads and "checkpointer" not in options:
            from memgrove.graphs.agent import sqlite_checkpointer

            options["checkpointer"] = sqlite_checkpointer(self)
        return self.graph("agent", **options)

    def tools(self, **options: Any) -> builtins.list:
        """``search_knowledge``, ``read_entry``, ``list_tree``, ``curate``, each a call to the server."""
        from memgrove.tools.toolset import memory_tools

        options.setdefault("memory_class", self._memory_class)
        return memory_tools(self, **options)


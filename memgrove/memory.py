"""``Memory``: the public Python API over the Context Tree."""

from __future__ import annotations

import builtins
import dataclasses
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memgrove.graphs.tiers import Answer
from memgrove.ingest import IngestResult, load_conversation, load_conversations, skipped_of  # noqa: F401 - IngestResult: a name of this module
from memgrove.memory_hygiene import MemoryHygiene
from memgrove.tree.entries.entry import Entry, parse as parse_entry
from memgrove.tree.writes import cancel
from memgrove.tree.base.errors import Cancelled, InvalidEntry, InvalidInput, InvalidPath
from memgrove.tree.writes.journal import JournalRecord
from memgrove.tree.writes.journal_read import JournalPage
from memgrove.tree.writes.operations import OPS, OpResult, check_batch_size
from memgrove.tree.ranking.hits import Hit
from memgrove.tree.store import ContextTree
from memgrove.tree.base.text_checks import text_problem

if TYPE_CHECKING:
    from memgrove.graphs.curate_report import CurateReport
    from memgrove.remote.memory import RemoteMemory
    from memgrove.tree.doctor import DoctorReport

# Writing, ingesting and checking load their modules (the curator, input formats, placement,
# doctor) when first used: a one-shot `memgrove query` needs none of them.

Progress = Callable[[int, int], None]


# dream, the review queue and restore: MemoryHygiene (memory_hygiene.py)
class Memory(MemoryHygiene):
    """A project's memory: a Context Tree under ``.memgrove/``.

    >>> mem = Memory.open("/tmp/project", create=True)          # doctest: +SKIP
    >>> mem.ingest(text="Refresh tokens rotate on every use.")  # doctest: +SKIP
    >>> mem.search("refresh token")[0].path                     # doctest: +SKIP
    'notes/2026_03_02/refresh_tokens_rotate_on_every.md'
    """

    def __init__(self, tree: ContextTree, *, model: Any = None):
        self.tree = tree
        self._model = model
        self._pipeline = None
        self._query_log: Any = None

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, create: bool = False, *, model: Any = None,
             embed_ahead: bool = True, **settings: Any) -> "Memory":
        """Open the memory at ``path`` (or found upwards from it, like git); ``create`` makes one.

        ``model``: a LangChain chat model for tiers 3–4 (default: ``MEMGROVE_MODEL``, or none).
        ``embed_ahead``: with ranking by meaning on (``semantic_weight``), a background thread loads
        the model now and computes entries' vectors as they are written, so searches find them ready;
        ``False`` for a process about to exit (the CLI's commands), whose next search computes them.
        Without ``path``, ``MEMGROVE_URL`` (when set) names a server instead: the memory is then
        ``Memory.connect()``'s, with the same methods (``create`` and tree settings are the server's).
        """
        if path is None and os.environ.get("MEMGROVE_URL", "").strip():
            if settings:
                raise InvalidInput(f"MEMGROVE_URL names a server: its tree's settings are its own, "
                                   f"not {', '.join(sorted(settings))}")
            return cls.connect(model=model)  # type: ignore[return-value]
        return cls(ContextTree.open(path, create=create, embed_ahead=embed_ahead, **settings), model=model)

    @staticmethod
    def connect(url: str | None = None, token: str | None = None, *, project: str | os.PathLike | None = None,
                model: Any = None, home: str | os.PathLike | None = None, timeout: float | None = None,
                max_reply: int | None = None) -> "RemoteMemory":
        """The memory ``memgrove serve`` holds at ``url`` (default: ``MEMGROVE_URL``), with this class's
        methods, results and exceptions (``memgrove/remote/memory.py``).

        ``token``: the project's bearer token (default: ``MEMGROVE_TOKEN``; for a server on this
        machine, its project's ``.memgrove/server.token``). ``project``: one of the server's projects
        other than the token's. ``model``: the model of the graphs run here (``graph``, ``agent``);
        ``home``: a folder here for their answer cache and threads (default: temporary). ``timeout``:
        the seconds each call may take in all, however slowly the server answers (default
        ``MEMGROVE_TIMEOUT``, else 600: ``ServerTimeout``); ``max_reply``: the most bytes of a reply
        read (default 64 MB: ``BadReply``).

        >>> mem = Memory.connect("http://127.0.0.1:7437")           # doctest: +SKIP
        >>> mem.search("refresh token")[0].path                      # doctest: +SKIP
        'auth/jwt/refresh_rotation.md'
        """
        from memgrove.remote.memory import MAX_REPLY, RemoteMemory

        return RemoteMemory(url, token, project=project, model=model, home=home, timeout=timeout,
                            max_reply=MAX_REPLY if max_reply is None else max_reply)

    def close(self) -> None:
        if self._pipeline is not None:
            self._pipeline.close()
        self.tree.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def home(self) -> Path:
        return self.tree.home

    # -- writing ------------------------------------------------------------
    def curate(self, ops: list[dict[str, Any]], *, actor: str = "user",
               allowed: tuple[str, ...] = OPS) -> list[OpResult]:
        """Apply ADD/UPDATE/UPSERT/MERGE/DELETE/SUPERSEDE/ARCHIVE/RESTORE operations, all or nothing
        (docs/validity.md: SUPERSEDE closes a fact a newer entry replaced, ARCHIVE moves an entry out
        of the searched tree, RESTORE brings it back)."""
        check_batch_size(ops, self.tree.settings.max_input_bytes)  # before waiting for the lock
        return self.tree.curate(ops, actor=actor, allowed=allowed)

    def ingest(self, text: str | None = None, files: Iterable[str | os.PathLike] = (),
               conversation: Any = None, *, window: int = 1,
               batch_size: int = 200, progress: Progress | None = None,
               documents: Iterable[tuple[str, str]] = (), exclude: Iterable[str] = (),
               system: bool = False) -> IngestResult:
        """Curate text, files and/or a conversation with the verbatim curator (no LLM).

        ``conversation``: a JSON file's path, or the conversation itself -- memgrove's
        ``{"id", "messages": [{"id", "speaker", "text", "time", "session"}]}``, a bare list of
        OpenAI-style ``{"role", "content"}`` messages, LangChain message dicts or message objects
        (``tree/inputs/conversation_formats.py``). Ids absent are generated, a message without a time
        gets the time of curation, and its source says what was generated; roles are kept.
        Times must name a date ("yesterday" is refused). Empty and repeated messages are skipped
        and counted in the result's ``skipped``.

        ``files``: files and folders; a folder is read recursively for markdown and text, minus
        what its ``.gitignore`` files or an ``exclude`` pattern (gitignore syntax) leave out; empty
        and binary files are skipped and counted (``tree/inputs/input_folders.py``).

        ``documents``: ``(file name, text)`` pairs, files' contents without the files (what a
        client sends the server); curated as those files would be, an empty one skipped and counted.

        A conversation file may hold many: a ChatGPT or Claude export, or a list of conversations
        (``tree/inputs/chat_exports.py``); each is curated as its own. System prompts are skipped and
        counted unless ``system``.

        Every input is read and checked before anything is written. Different inputs land in
        different entries (``tree/inputs/placement.py``); the same input curated again changes nothing.
        """
        from memgrove.tree.inputs import curator, input_folders
        from memgrove.tree.inputs.placement import Placer

        now = datetime.now(timezone.utc)
        limit = self.tree.settings.max_input_bytes
        placer = Placer(self._entry_sources, self._folder_sources, self._stamp, self._subfolders)
        skipped: dict[str, int] = {}
        ops: list[dict[str, Any]] = []
        paths, skipped = input_folders.expand(files, exclude=exclude, max_bytes=limit)
        if text is not None:
            if len(text.encode("utf-8", "surrogatepass")) > limit:
                raise InvalidInput(f"the text is larger than {limit:,} bytes (setting max_input_bytes)")
            bad = text_problem(text)
            if bad:
                raise InvalidInput(f"the text contains {bad}")
            ops += curator.ops_from_text(text, now=now, placer=placer)
        for f in paths:
            ops += curator.ops_from_file(f, max_bytes=limit, now=now, root=self.tree.home.parent,
                                         placer=placer)
        for name, content in documents:
            if len(content.encode("utf-8", "surrogatepass")) > limit:
                raise InvalidInput(f"{name} is larger than {limit:,} bytes (setting max_input_bytes)")
            if not content.strip():
                skipped["empty files"] = skipped.get("empty files", 0) + 1
                continue
            ops += curator.ops_from_document(name, content, ref=name, at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                             placer=placer)
        if conversation is not None:
            for conv in load_conversations(conversation, limit, system=system, skipped=skipped):
                for kind, n in skipped_of(conv).items():
                    skipped[kind] = skipped.get(kind, 0) + n
                ops += curator.ops_from_conversation(conv, window=window, placer=placer, now=now,
                                                      part_words=self.tree.settings.part_words)
        if not ops:
            if skipped:
                return IngestResult(skipped=skipped)       # only empty or binary files: said, not refused
            raise InvalidInput("nothing to curate: give text, files or a conversation")
        results = IngestResult(skipped=skipped)
        for i in range(0, len(ops), batch_size):
            batch = ops[i:i + batch_size]
            try:
                cancel.checkpoint()
                # the places were chosen without the lock: another writer may have filled one since
                with self.tree.lock.hold():
                    self.tree.recover()
                    placer.confirm(op["path"] for op in batch)
                    results += self.tree.curate(batch, actor="verbatim-curator")
            except Cancelled as exc:
                if not i:
                    raise
                # each batch is its own commit: the ones before stand, and the caller must know
                raise Cancelled(f"the ingest was cancelled after {i:,} of {len(ops):,} operations ({exc.reason}); "
                                f"the first {i:,} are written and journaled (see history), the rest is not",
                                exc.reason) from None
            if progress:
                progress(min(i + batch_size, len(ops)), len(ops))
        return results

    def _stamp(self, path: str) -> tuple[int, ...] | None:
        # a stat, not a read: most names the curator asks about are free or unchanged
        try:
            st = os.stat(self.tree.root / path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def _subfolders(self, folder: str) -> list[str]:
        try:
            return [e.name for e in os.scandir(self.tree.root / folder) if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def _entry_sources(self, path: str) -> list[dict[str, Any]] | None:
        try:
            return self.tree.read(path).sources
        except InvalidPath:
            return None            # no entry there
        except InvalidEntry:
            return []              # unreadable: not the curator's to overwrite

    def _folder_sources(self, folder: str) -> list[dict[str, Any]] | None:
        # a folder the curator made holds one input: its first entry with sources tells whose it
        # is (one written by hand without any does not take the folder; it is kept safe anyway)
        found = None
        for path in self.tree.entries_under(folder):
            found = self._entry_sources(path)
            if found:
                return found
        return found

    def learn(self, text: str | None = None, files: Iterable[str | os.PathLike] = (),
              conversation: Any = None, *, model: Any = None,
              verbatim: bool = False, settings: Any = None) -> "CurateReport":
        """Curate text, files and/or a conversation with the LLM curator (``graphs/curate.py``).

        With no model configured (``model=``, ``Memory.open(model=)`` or ``MEMGROVE_MODEL``), or
        with ``verbatim=True``, the verbatim curator runs instead and the report says so.
        """
        from memgrove.graphs.curate_report import verbatim_report
        from memgrove.graphs.llm import model_configured

        from memgrove.tree.inputs import input_folders

        model = model if model is not None else self._model
        if verbatim or not model_configured(model):
            why = ("verbatim curator chosen" if verbatim else
                   "no model configured (set MEMGROVE_MODEL): used the verbatim curator, one entry per message "
                   "or paragraph")
            results = self.ingest(text=text, files=files, conversation=conversation)
            report = verbatim_report(results, why)
            if results.skipped_line():
                report = dataclasses.replace(report, summary=report.summary + "\n" + results.skipped_line(),
                                             skipped=results.skipped)
            return report
        from memgrove.graphs.curate import build_curate_graph, report_from_state

        paths, skipped_files = input_folders.expand(files, max_bytes=self.tree.settings.max_input_bytes)
        files = [str(f) for f in paths]
        if not files and text is None and conversation is None and skipped_files:
            raise InvalidInput("nothing to curate: skipped " + ", ".join(f"{n} {k}" for k, n in skipped_files.items()))

        data: dict[str, Any] = {"files": files}
        if text is not None:
            data["text"] = text
        skipped: dict[str, int] = dict(skipped_files)
        if conversation is not None:
            conv = load_conversation(conversation, self.tree.settings.max_input_bytes)
            data["conversation"] = conv.as_dict()
            skipped.update(skipped_of(conv))
        report = report_from_state(build_curate_graph(self, model=model, settings=settings,
                                                        memory_class=Memory).invoke(data))
        return dataclasses.replace(report, skipped=skipped) if skipped else report

    def undo(self, op_id: str, *, force: bool = False, actor: str = "user") -> OpResult:
        """Restore what one operation changed (see ``history``); the journal names ``actor``."""
        return self.tree.undo(op_id, force=force, actor=actor)

    # -- asking -------------------------------------------------------------
    @property
    def pipeline(self):
        if self._pipeline is None:
            from memgrove.graphs.pipeline import QueryPipeline  # no LangChain: tiers 0-2 stay light

            self._pipeline = QueryPipeline(self.tree, model=self._model)
        return self._pipeline

    def query(self, question: str) -> "Answer":
        """Answer from memory through the 5-tier pipeline (an LLM only for tiers 3–4).

        The ``Answer`` leads with ``answer`` (without a model, the sentence of the evidence that
        answers best; with one, the model's summary), then ``evidence`` (the entries, quoted),
        ``sources``, ``tier``, ``text`` (all of it as markdown: Summary / Details / Sources / Gaps),
        ``top_score``, ``latency_ms`` and ``cached``. The query graph's ``answer`` is the same type.
        """
        return self.pipeline.answer(question)

    def graph(self, name: str = "query", **options: Any):
        """A compiled LangGraph graph over this memory: ``query``, ``curate`` or ``agent`` (imports LangGraph).

        ``options`` go to the builder (``model=``, ``settings=``; ``tools=``, ``checkpointer=`` for the agent).
        """
        options.setdefault("model", self._model)
        # a run's context may name another project's folder: opened with this class
        options.setdefault("memory_class", Memory)
        if name == "query":
            from memgrove.graphs.query import build_query_graph

            return build_query_graph(self, **options)
        if name == "curate":
            from memgrove.graphs.curate import build_curate_graph

            return build_curate_graph(self, **options)
        if name == "agent":
            from memgrove.graphs.agent import build_memory_agent

            return build_memory_agent(self, **options)
        raise ValueError(f"unknown graph {name!r}; available: 'query', 'curate', 'agent'")

    def agent(self, *, threads: bool = True, **options: Any):
        """The memory agent over this memory; ``threads`` keeps conversations in ``.memgrove/threads.db``."""
        if threads and "checkpointer" not in options:
            from memgrove.graphs.agent import sqlite_checkpointer

            options["checkpointer"] = sqlite_checkpointer(self)
        return self.graph("agent", **options)

    def tools(self, **options: Any) -> list:
        """The memory as LangChain tools: ``search_knowledge``, ``read_entry``, ``list_tree``, ``curate``.

        ``options`` go to ``memory_tools`` (``allow=("UPSERT",)``, ``read_only=True``, ...).
        """
        from memgrove.tools.toolset import memory_tools

        options.setdefault("memory_class", Memory)
        return memory_tools(self, **options)

    def stats(self) -> dict[str, Any]:
        """Tier distribution and latency percentiles from the query log, and how far entries'
        vectors are (``vectors``: ``ContextTree.vector_state``)."""
        if self._query_log is None:     # read once, then what was logged since (graphs/stats.py)
            from memgrove.graphs.stats import QueryLog

            self._query_log = QueryLog(self.tree.home / "query-log.jsonl")
        return {**self._query_log.stats(), "vectors": self.tree.vector_state(exact=True)}

    # -- reading ------------------------------------------------------------
    def search(self, query: str, limit: int = 10, *, include_archived: bool = False) -> list[Hit]:
        """BM25F search over the tree: path, title, normalized score, excerpt, provenance.
        ``include_archived``: archived entries too, marked ``archived``."""
        return self.tree.search(query, limit, include_archived=include_archived)

    def read(self, path: str) -> Entry:
        return self.tree.read(path)

    def show(self, path: str) -> dict[str, Any]:
        """An entry's text, parsed fields, links and backlinks."""
        text = self.tree.read_text(path)
        entry = parse_entry(text, where=path)       # the text just read, not the file again
        forward, back = self.tree.links(path) if not path.endswith("context.md") else ([], [])
        return {"path": path, "title": entry.title, "summary": entry.summary, "text": text,
                "links": forward, "backlinks": back, "sources": entry.sources}

    def list(self, folder: str = "", *, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
        """A folder's title, overview, subfolders (with their counts of entries) and entries (title,
        summary, tags, dates, validity): ``limit`` children from ``offset`` (None: all), subfolders
        first; ``next`` is the next page's offset, None after the last."""
        return self.tree.list_folder(folder, offset=offset, limit=limit)

    # builtins.list: in this class body, ``list`` is the method above
    def history(self, limit: int | None = 50, path: str | None = None) -> builtins.list[JournalRecord]:
        if self.tree.forward_writes is not None:     # a read replica's: the journal is the primary's
            return self.tree.forward_writes("history", limit=limit, path=path)
        return self.tree.history(limit, path)

    def history_page(self, limit: int | None = 50, *, path: str | None = None, kinds: Iterable[str] = (),
                     before: int | None = None) -> JournalPage:
        """Journal records newest first, a page at a time, in bounded time: of one of ``kinds`` (op names),
        touching ``path`` (an entry or a folder), older than ``before`` (an earlier page's ``next``).
        ``JournalPage.next`` is None once the journal's start is reached; a page may hold fewer than
        ``limit`` records and still have a ``next`` (it stopped after reading its share of the journal).

        >>> page = mem.history_page(20, kinds=["UNDO"], path="auth")       # doctest: +SKIP
        >>> older = mem.history_page(20, kinds=["UNDO"], path="auth", before=page.next)   # doctest: +SKIP
        """
        if self.tree.forward_writes is not None:     # a read replica's: the journal is the primary's
            return self.tree.forward_writes("history_page", limit=limit, path=path, kinds=list(kinds), before=before)
        return self.tree.history_page(limit, path=path, kinds=kinds, before=before)

    def reindex(self, progress: Progress | None = None) -> int:
        return self.tree.reindex(progress)

    def embed(self, progress: Progress | None = None) -> tuple[int, int]:
        """Every entry's sentence embedding computed ahead of the searches that rank by meaning
        (``semantic_weight``); returns (entries with a vector, stale vectors dropped)."""
        return self.tree.embed(progress)

    def doctor(self, fix: bool = False) -> DoctorReport:
        from memgrove.tree.doctor import diagnose

        return diagnose(self.tree, fix=fix)

    def fingerprint(self) -> str:
        return self.tree.fingerprint()

    def count(self) -> int:
        return self.tree.count()

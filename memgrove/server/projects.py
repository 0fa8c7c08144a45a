"""The memories one server serves: one ``Memory`` per project, opened on first use and kept.

A request names its project by folder (``X-Memgrove-Project`` header or ``?project=``;
default: the server's own). Blocking work (the tree's files, Whoosh, SQLite) runs in
threads so the event loop keeps answering. Writes of a project go through that project's
``asyncio.Lock`` one at a time, in arrival order: curations never interleave, and none of
them waits in a thread holding the tree's file lock while another queues behind it. Reads
take no lock, so a long curation never blocks a query.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

from memgrove.memory import Memory

from .errors import RequestTimeout

T = TypeVar("T")
PROJECT_HEADER = "x-memgrove-project"


class Projects:
    def __init__(self, default: str | os.PathLike, *, timeout: float = 120.0, model: Any = None):
        self.default = Path(default)
        self.timeout = timeout
        self.model = model
        self._by_key: dict[str, Memory] = {}        # folder asked for -> its memory
        self._by_home: dict[Path, Memory] = {}      # .memgrove folder -> its memory (one per tree)
        self._writers: dict[Path, asyncio.Lock] = {}
        self._graphs: dict[tuple[Path, str], Any] = {}
        self._mutex = threading.Lock()
        self._writes: set[asyncio.Task] = set()
        self._agent_lock = asyncio.Lock()
        self._aconns: list[Any] = []

    # -- opening ------------------------------------------------------------------------
    def memory_for(self, project: str | None = None) -> Memory:
        """The memory of ``project`` (a folder holding ``.memgrove/``, or in one); blocking."""
        key = str(Path(project).expanduser().resolve()) if project else ""
        with self._mutex:
            mem = self._by_key.get(key)
            if mem is not None:
                return mem
            opened = Memory.open(key or self.default, model=self.model)
            mem = self._by_home.setdefault(opened.home, opened)
            if mem is not opened:
                opened.close()
            self._by_key[key] = mem
            return mem

    async def amemory_for(self, project: str | None = None) -> Memory:
        return await asyncio.to_thread(self.memory_for, project)

    def graph(self, mem: Memory, name: str) -> Any:
        """A compiled graph of this project (built once): ``query``, ``curate`` or ``agent``;
        for synchronous runs (the agent's threads through the synchronous SQLite checkpointer)."""
        with self._mutex:
            g = self._graphs.get((mem.home, name))
            if g is None:
                # the agent keeps its threads in .memgrove/threads.db, keyed by thread_id
                g = mem.agent() if name == "agent" else mem.graph(name)
                self._graphs[(mem.home, name)] = g
            return g

    async def agraph(self, mem: Memory, name: str) -> Any:
        """The same for runs on the event loop: the agent's checkpointer must be the async one
        (the synchronous ``SqliteSaver`` refuses async calls); same ``threads.db``, same threads."""
        if name != "agent":
            return await asyncio.to_thread(self.graph, mem, name)
        key = (mem.home, "agent-async")
        async with self._agent_lock:
            g = self._graphs.get(key)
            if g is None:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                conn = await aiosqlite.connect(str(mem.home / "threads.db"))
                self._aconns.append(conn)
                g = await asyncio.to_thread(mem.graph, "agent", checkpointer=AsyncSqliteSaver(conn))
                self._graphs[key] = g
            return g

    def template(self, mem: Memory, name: str) -> Any:
        """A graph to read schemas from (no checkpointer, nothing opened)."""
        return mem.graph(name)

    def writer(self, mem: Memory) -> asyncio.Lock:
        lock = self._writers.get(mem.home)
        if lock is None:
            lock = self._writers[mem.home] = asyncio.Lock()
        return lock

    # -- running ------------------------------------------------------------------------
    async def read(self, project: str | None, fn: Callable[[Memory], T]) -> T:
        mem = await self.amemory_for(project)
        return await self._bounded(asyncio.to_thread(fn, mem))

    async def write(self, project: str | None, fn: Callable[[Memory], T]) -> T:
        mem = await self.amemory_for(project)

        async def queued() -> T:
            async with self.writer(mem):
                return await asyncio.to_thread(fn, mem)

        # a task of its own: a request that times out (or a client that leaves) stops waiting
        # for it, but a write that started finishes, and shutdown waits for it
        task = asyncio.ensure_future(queued())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return await self._bounded(asyncio.shield(task), started=task)

    async def _bounded(self, aw: Any, started: asyncio.Task | None = None) -> Any:
        try:
            return await asyncio.wait_for(aw, self.timeout)
        except asyncio.TimeoutError:
            raise RequestTimeout(f"no answer within {self.timeout:g} s (setting request_timeout)"
                                 + ("; a write already started still completes: see history" if started else "")
                                 ) from None

    async def drain(self) -> None:
        """Wait for every write in flight (shutdown: what was acknowledged or started is finished)."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    async def aclose(self) -> None:
        for conn in self._aconns:
            await conn.close()
        self._aconns.clear()
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        with self._mutex:
            for mem in self._by_home.values():
                try:
                    mem.close()
                except Exception:  # noqa: BLE001 - closing the others matters more
                    pass
            self._by_home.clear()
            self._by_key.clear()
            self._graphs.clear()


def project_of(headers: Any, query: Any) -> str | None:
    """The project a request names: the header, else ``?project=``; None for the server's own."""
    return headers.get(PROJECT_HEADER) or query.get("project") or None

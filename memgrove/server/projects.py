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
from typing import Any, Awaitable, Callable, TypeVar

from memgrove.memory import Memory
from memgrove.tree.cancel import CancelToken, cancelling
from memgrove.tree.errors import Cancelled

from .errors import RequestTimeout

T = TypeVar("T")
PROJECT_HEADER = "x-memgrove-project"
GONE_POLL = 0.25    # seconds between checks that a writing request's client is still there
SETTLE = 10.0       # seconds a cancelled write gets to reach a checkpoint, or to finish past its commit point


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

    async def write(self, project: str | None, fn: Callable[[Memory], T],
                    gone: Callable[[], Awaitable[bool]] | None = None) -> T:
        """``fn(mem)`` in the project's queue, under a cancel token (tree/cancel.py). At
        ``request_timeout``, or once ``gone()`` says the client left, a write still queued is
        dropped and one running is cancelled: before its commit point it stops and the answer is
        504 "nothing was written"; past it, it completes and is answered as done."""
        mem = await self.amemory_for(project)
        token = CancelToken(self.timeout, limit="request_timeout")
        started = False

        def run() -> T:
            with cancelling(token):
                return fn(mem)

        async def queued() -> T:
            nonlocal started
            async with self.writer(mem):
                token.check()
                started = True
                return await asyncio.to_thread(run)

        # a task of its own, which shutdown waits for (drain)
        task = asyncio.ensure_future(queued())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        why = await self._watch(task, token, gone)
        if why is not None and not task.done():
            token.cancel(why)
            if not started:
                task.cancel()          # still in the queue: dropped, it never ran
            done, _ = await asyncio.wait({task}, timeout=SETTLE)
            if not done:
                raise RequestTimeout(f"{why}; the write was cancelled but had not stopped {SETTLE:g} s later: "
                                     "it stops before its commit point or completes, see history")
        try:
            return task.result()
        except Cancelled as exc:
            raise RequestTimeout(str(exc)) from None
        except asyncio.CancelledError:
            raise RequestTimeout(f"{why}; the write was dropped from the queue before it started: "
                                 "nothing was written") from None

    async def _watch(self, task: asyncio.Task, token: CancelToken,
                     gone: Callable[[], Awaitable[bool]] | None) -> str | None:
        """Wait for ``task`` until ``request_timeout``, checking ``gone()`` on the way; why it stopped waiting."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        while not task.done():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return token.late
            await asyncio.wait({task}, timeout=min(left, GONE_POLL if gone else left))
            if gone is not None and not task.done() and await gone():
                return "its client went away"
        return None

    async def _bounded(self, aw: Any) -> Any:
        try:
            return await asyncio.wait_for(aw, self.timeout)
        except asyncio.TimeoutError:
            raise RequestTimeout(f"no answer within {self.timeout:g} s (setting request_timeout)") from None

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

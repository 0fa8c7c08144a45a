"""The memories one server serves: one ``Memory`` per served project, opened on first use.

A request names its project by folder (``X-Memgrove-Project`` header or ``?project=``;
default: its token's); ``served.py`` says which served project that is, or refuses. Blocking
work (the tree's files, Whoosh, SQLite) runs in threads so the event loop keeps answering.
Writes of a project go through that project's ``asyncio.Lock`` one at a time, in arrival
order: curations never interleave, and none of them waits in a thread holding the tree's
file lock while another queues behind it. Reads take no lock, so a long curation never
blocks a query.

At most ``max_open`` memories stay open (the server's own always does): opening one more
closes the least recently used that nothing is using, which gives back its watcher, its
descriptors and its threads. "Using" is a lease: reads, writes (from the moment they queue to
the moment they finish), MCP calls and graph runs each hold one.

A write runs under a cancel token (tree/writes/cancel.py): at ``request_timeout``, or once its client
has gone, a write still queued is dropped and one running is cancelled; before its commit point
it stops and writes nothing, past it it completes and is answered as done.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

from memgrove.memory import Memory
from memgrove.tree.base import forksafe
from memgrove.tree.writes.cancel import CancelToken, cancelling
from memgrove.tree.base.errors import Cancelled
from memgrove.tree.base.home import locate_home

from .errors import RequestTimeout
from .served import Served, ServedProjects

T = TypeVar("T")
PROJECT_HEADER = "x-memgrove-project"
GONE_POLL = 0.25    # seconds between checks that a writing request's client is still there
SETTLE = 10.0       # seconds a cancelled write gets to reach a checkpoint, or to finish past its commit point


class Projects:
    def __init__(self, default: str | os.PathLike | ServedProjects, *, timeout: float = 120.0, model: Any = None,
                 max_open: int = 8):
        self.served = default if isinstance(default, ServedProjects) else ServedProjects(
            Served(locate_home(default).parent.resolve()))
        self.default = self.served.default.folder
        self.timeout = timeout
        self.model = model
        self.max_open = max_open
        self._open: OrderedDict[Path, Memory] = OrderedDict()   # home -> memory, least recently used first
        self._leases: dict[Path, int] = {}
        self._writers: dict[Path, asyncio.Lock] = {}
        self._graphs: dict[tuple[Path, str], Any] = {}
        self._mutex = forksafe.lock()
        self._writes: set[asyncio.Task] = set()
        self._agent_lock = asyncio.Lock()
        self._aconns: dict[Path, tuple[Any, asyncio.AbstractEventLoop]] = {}

    # -- opening ------------------------------------------------------------------------
    def memory_for(self, project: Served | None = None) -> Memory:
        """The memory of a served project (None: the server's own), opened if needed; blocking.

        Names are resolved to a ``Served`` first (``ServedProjects.choose``): nothing here
        opens a folder the server was not started for."""
        return self._take(project, lease=False)

    async def amemory_for(self, project: Served | None = None) -> Memory:
        return await asyncio.to_thread(self.memory_for, project)

    @contextlib.contextmanager
    def lease(self, project: Served | None = None) -> Iterator[Memory]:
        """The memory, kept open while the block runs (blocking: it may open it)."""
        mem = self._take(project, lease=True)
        try:
            yield mem
        finally:
            with self._mutex:
                self._leases[mem.home] = self._leases.get(mem.home, 1) - 1
                victims = self._victims()
            self._close(victims)

    def _take(self, project: Served | None, *, lease: bool) -> Memory:
        served = project if project is not None else self.served.default
        if not isinstance(served, Served):
            raise TypeError(f"a served project is needed, not {type(served).__name__}")
        with self._mutex:
            mem = self._open.get(served.home)
            if mem is None:
                mem = Memory.open(served.home, model=self.model)
                self._open[served.home] = mem
                if mem.tree.replication is not None:
                    mem.tree.replication.start()     # pulls and pushes from now on (tree/replication/replicator.py)
            self._open.move_to_end(served.home)
            if lease:
                self._leases[served.home] = self._leases.get(served.home, 0) + 1
            victims = self._victims(keep=served.home)
        self._close(victims)
        return mem

    @contextlib.asynccontextmanager
    async def alease(self, project: Served | None = None) -> AsyncIterator[Memory]:
        """``lease`` for the event loop: the opening runs in a thread."""
        cm = self.lease(project)
        mem = await asyncio.to_thread(cm.__enter__)
        try:
            yield mem
        finally:
            await asyncio.to_thread(cm.__exit__, None, None, None)

    def _victims(self, keep: Path | None = None) -> list[tuple[Memory, list[Any]]]:
        """Under the mutex: the least recently used memories beyond ``max_open`` that nothing uses
        (nor ``keep``, being handed out), taken out of the maps (the next request opens them afresh)."""
        excess = len(self._open) - self.max_open
        if excess <= 0:
            return []
        out = []
        for home, mem in list(self._open.items()):
            if len(out) >= excess:
                break
            if home in (self.served.default.home, keep) or self._leases.get(home, 0) > 0:
                continue
            del self._open[home]
            self._leases.pop(home, None)
            self._writers.pop(home, None)
            graphs = [self._graphs.pop(k) for k in [k for k in self._graphs if k[0] == home]]
            conn = self._aconns.pop(home, None)
            if conn is not None:          # the agent's async checkpointer lives on the event loop
                conn[1].call_soon_threadsafe(lambda c=conn[0]: asyncio.ensure_future(c.close()))
            out.append((mem, graphs))
        return out

    @staticmethod
    def _close(victims: list[tuple[Memory, list[Any]]]) -> None:
        for mem, graphs in victims:
            for g in graphs:              # the synchronous agent's threads.db connection
                conn = getattr(getattr(g, "checkpointer", None), "conn", None)
                if isinstance(conn, sqlite3.Connection):
                    conn.close()
            try:
                mem.close()
            except Exception:  # noqa: BLE001 - a memory that fails to close must not fail the request
                pass

    def open_homes(self) -> list[Path]:
        """The projects whose memory is open, least recently used first."""
        with self._mutex:
            return list(self._open)

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

                old = self._aconns.pop(mem.home, None)
                if old is not None:
                    await old[0].close()
                conn = await aiosqlite.connect(str(mem.home / "threads.db"))
                self._aconns[mem.home] = (conn, asyncio.get_running_loop())
                g = await asyncio.to_thread(mem.graph, "agent", checkpointer=AsyncSqliteSaver(conn))
                self._graphs[key] = g
            return g

    def template(self, mem: Memory, name: str) -> Any:
        """A graph to read schemas from (no checkpointer, nothing opened)."""
        return mem.graph(name)

    def writer(self, mem: Memory) -> asyncio.Lock:
        with self._mutex:
            lock = self._writers.get(mem.home)
            if lock is None:
                lock = self._writers[mem.home] = asyncio.Lock()
            return lock

    # -- running ------------------------------------------------------------------------
    async def read(self, project: Served | None, fn: Callable[[Memory], T]) -> T:
        def leased() -> T:
            with self.lease(project) as mem:
                return fn(mem)

        return await self._bounded(asyncio.to_thread(leased))

    async def write(self, project: Served | None, fn: Callable[[Memory], T],
                    gone: Callable[[], Awaitable[bool]] | None = None) -> T:
        """``fn(mem)`` in the project's queue, under a cancel token (tree/writes/cancel.py). At
        ``request_timeout``, or once ``gone()`` says the client left, a write still queued is
        dropped and one running is cancelled: before its commit point it stops and the answer is
        504 "nothing was written"; past it, it completes and is answered as done."""
        token = CancelToken(self.timeout, limit="request_timeout")
        started = False

        async def queued() -> T:
            nonlocal started
            # leased from queueing to finishing: the memory is never closed under a write
            async with self.alease(project) as mem, self.writer(mem):
                token.check()
                started = True

                def run() -> T:
                    with cancelling(token):
                        return fn(mem)

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
        for conn, _ in list(self._aconns.values()):
            await conn.close()
        self._aconns.clear()
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        with self._mutex:
            victims = [(mem, [g for k, g in self._graphs.items() if k[0] == home]) for home, mem in self._open.items()]
            self._open.clear()
            self._leases.clear()
            self._graphs.clear()
        self._close(victims)


def project_of(headers: Any, query: Any) -> str | None:
    """The project a request names: the header, else ``?project=``; None for its token's."""
    return headers.get(PROJECT_HEADER) or query.get("project") or None

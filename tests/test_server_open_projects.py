"""The server keeps at most ``max_open_projects`` memories open: the least recently used one that
nothing is using is closed (its watcher, descriptors and threads given back), never one with a
write queued or running, nor one a read or graph run holds, nor the server's own.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from helpers.memgrove_server import start_server, stop_server

from memgrove import Memory
from memgrove.server.projects import Projects
from memgrove.server.served import Served, ServedProjects

NAMES = ["a", "b", "c", "d", "e"]


def _seed(folder: Path, word: str) -> Path:
    with Memory.open(folder, create=True) as m:
        m.curate([{"op": "ADD", "path": f"notes/{word}/fact.md", "title": word.title(),
                   "content": f"Project {word} grows {word}berries.", "reason": "seed"}])
    return folder


@pytest.fixture
def served(tmp_path: Path) -> list[Served]:
    return [Served(_seed(tmp_path / n, n).resolve()) for n in NAMES]


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The homes of the memories closed, in order."""
    seen: list[Path] = []
    original = Memory.close

    def close(self: Memory) -> None:
        seen.append(self.home)
        original(self)

    monkeypatch.setattr(Memory, "close", close)
    return seen


def _projects(served: list[Served], max_open: int = 2) -> Projects:
    listed = ServedProjects(served[0])
    for s in served[1:]:
        listed.add(s)
    p = Projects(listed, max_open=max_open)
    p.memory_for(None)           # the server's own, open from the start (LangServe's schemas)
    return p


def test_the_least_recently_used_idle_memory_is_closed(served, closes):
    projects = _projects(served)
    try:
        for s in served[1:]:
            assert projects.memory_for(s).search(f"{s.folder.name}berries")
            assert len(projects.open_homes()) <= 2
        assert served[0].home in projects.open_homes()                   # the server's own stays
        assert closes == [s.home for s in served[1:4]]                    # b, c, d: oldest first
        again = projects.memory_for(served[1])                            # closed, then asked again
        assert [h.path for h in again.search("bberries")] == ["notes/b/fact.md"]
    finally:
        projects.close()


def test_a_memory_with_a_write_in_flight_or_a_read_stays_open(served, closes):
    projects = _projects(served)
    a, b, c, d, e = served
    release = threading.Event()

    def slow_write(m: Memory) -> object:
        release.wait(30)
        return m.curate([{"op": "ADD", "path": "notes/b/late.md", "content": "Written late.", "reason": "slow"}])

    async def main() -> None:
        write = asyncio.ensure_future(projects.write(b, slow_write))
        while not projects.writer(projects.memory_for(b)).locked():
            await asyncio.sleep(0.01)
        queued = asyncio.ensure_future(projects.write(c, lambda m: m.curate(        # c: done at once
            [{"op": "ADD", "path": "notes/c/quick.md", "content": "Quick.", "reason": "quick"}])))
        queued_b = asyncio.ensure_future(projects.write(b, lambda m: m.curate(      # b: queued behind
            [{"op": "ADD", "path": "notes/b/queued.md", "content": "Queued.", "reason": "queued"}])))
        await queued
        with projects.lease(d):                      # a read holding d
            await asyncio.to_thread(projects.memory_for, e)
            assert {b.home, d.home, e.home} <= set(projects.open_homes())
            assert c.home in closes and b.home not in closes and d.home not in closes
        release.set()
        await write
        await queued_b
        await asyncio.to_thread(projects.memory_for, e)      # nothing holds b or d now
        assert set(projects.open_homes()) == {a.home, e.home}
        assert {b.home, d.home} <= set(closes)

    try:
        asyncio.run(main())
        assert (b.folder / ".memgrove" / "tree" / "notes" / "b" / "late.md").is_file()
        assert (b.folder / ".memgrove" / "tree" / "notes" / "b" / "queued.md").is_file()
        assert (c.folder / ".memgrove" / "tree" / "notes" / "c" / "quick.md").is_file()
    finally:
        projects.close()


def inotify_instances(pid: int) -> int:
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return n


def test_a_server_juggling_projects_keeps_a_bounded_number_of_watchers(tmp_path: Path):
    folders = [_seed(tmp_path / n, n) for n in NAMES]
    for f in folders:            # watch at the second search, so that every project opened has a watcher
        (f / ".memgrove" / "config.toml").write_text("[tree]\nwatch_after = 0.0\n", encoding="utf-8")
    with open(folders[0] / ".memgrove" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write("\n[server]\nmax_open_projects = 2\n")
    srv = start_server(folders[0], *[w for f in folders[1:] for w in ("--project", str(f))])
    try:
        tokens = {f: (f / ".memgrove" / "server.token").read_text().strip() for f in folders[1:]}
        tokens[folders[0]] = srv.token
        for f in folders:
            client = srv.http(token=tokens[f])
            for _ in range(2):
                r = client.get("/api/search", params={"q": f"{f.name}berries"})
                assert r.status_code == 200 and r.json()["hits"], r.text
        assert srv.client.get("/api/search", params={"q": "aberries"}).status_code == 200
        assert inotify_instances(srv.process.pid) <= 2
        # a closed project answers again when asked
        again = srv.http(token=tokens[folders[1]]).get("/api/search", params={"q": "bberries"})
        assert again.status_code == 200 and again.json()["hits"], again.text
    finally:
        assert stop_server(srv) == 0, srv.log_text()

"""Remote stores for the store tests: ``ContextTreeStore(url=...)`` against one real ``memgrove serve``
(a subprocess on 127.0.0.1), each store over a fresh project of its own.

    with StoreServer(base) as srv:                  # starts the server, stops it on exit
        store = srv.store(tmp_path / "p")           # a new project, added to the server, and its store

A project is added while the server runs (``POST /owner/projects`` with the owner token), so a
module starts one server and each test still gets an empty memory and the project's own token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.memgrove_server import Server, start_server, stop_server

from memgrove import ContextTreeStore, Memory


class StoreServer:
    def __init__(self, base: Path, *args: str):
        project = base / "served"
        Memory.open(project, create=True).close()
        self.server: Server = start_server(project, *args)
        self.owner = (self.server.home / "server.owner-token").read_text().strip()

    @property
    def url(self) -> str:
        return self.server.url

    def add_project(self, folder: Path) -> str:
        """Serve ``folder`` (created empty when missing) too; its token."""
        if not (folder / ".memgrove").is_dir():
            Memory.open(folder, create=True).close()
        r = self.server.http(token=self.owner).post("/owner/projects", json={"project": str(folder)})
        assert r.status_code == 200, f"{r.status_code} {r.text}\n{self.server.log_text()}"
        return (folder / ".memgrove" / "server.token").read_text().strip()

    def store(self, folder: Path, **kw: Any) -> Any:
        """A remote store over a project of its own at ``folder``."""
        return ContextTreeStore(url=self.url, token=self.add_project(folder), **kw)

    def close(self) -> None:
        code = stop_server(self.server)
        assert code == 0, f"memgrove serve exited with {code}\n{self.server.log_text()}"

    def __enter__(self) -> "StoreServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

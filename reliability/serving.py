"""A real ``memgrove serve`` for the suite's server sections: started on a free port of 127.0.0.1,
found ready by ``/health``, spoken to with its token, killed or stopped.

Standard library only in the parent (``http.client``): the sections measure the server, and a
client library's retries or pools would hide what a plain client sees.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import MEMGROVE, child_env

READY_TIMEOUT = 90.0    # a start imports LangChain and builds three graphs; the machine may be busy


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Reply:
    status: int          # 0: no answer (connection refused, reset or timed out)
    body: Any
    error: str = ""


@dataclass
class Served:
    process: subprocess.Popen
    project: Path
    port: int
    log: Path

    @property
    def home(self) -> Path:
        return self.project / ".memgrove"

    @property
    def token(self) -> str:
        return (self.home / "server.token").read_text().strip()

    def call(self, method: str, path: str, body: Any = None, *, timeout: float = 60.0,
             headers: dict[str, str] | None = None, token: str | None = None) -> Reply:
        """One request on a fresh connection; ``Reply(0, ...)`` when no answer came."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            h = {"Authorization": f"Bearer {token or self.token}", **(headers or {})}
            data = None
            if body is not None:   # bytes: sent as they are (JSON too deep for json.dumps, say)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                h["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            raw = r.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = raw.decode("utf-8", "replace")[:300]
            return Reply(r.status, parsed)
        except (OSError, http.client.HTTPException) as exc:
            return Reply(0, None, f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-n:]
        except OSError as exc:
            return f"(no log: {exc})"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (a graceful stop); the exit status, or None if it had to be killed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.process.returncode


def start(project: Path, log: Path, *args: str, env: dict[str, str] | None = None) -> Served:
    """``memgrove --root PROJECT serve --port P ARGS`` on a free port; returns once ``/health``
    answers as that process. Raises RuntimeError (with the log's tail) if it never does."""
    port = free_port()
    fh = log.open("ab")
    proc = subprocess.Popen([MEMGROVE, "--root", str(project), "serve", "--port", str(port), *args],
                            stdout=fh, stderr=subprocess.STDOUT, env=env or child_env(PYTHONUNBUFFERED="1"),
                            start_new_session=True)
    fh.close()
    srv = Served(proc, project, port, log)
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"memgrove serve exited {proc.returncode}: {srv.log_tail(600)}")
        r = srv.call("GET", "/health", timeout=2.0, token="-")
        if r.status == 200 and isinstance(r.body, dict) and r.body.get("pid") == proc.pid \
                and (srv.home / "server.token").exists():
            return srv
        time.sleep(0.1)
    srv.kill()
    raise RuntimeError(f"memgrove serve did not answer /health within {READY_TIMEOUT:g} s: {srv.log_tail(600)}")


def count_fds(pid: int | str = "self") -> dict[str, int]:
    """Open descriptors of a process by kind: inotify instances, sockets, files, all."""
    kinds = {"inotify": 0, "socket": 0, "file": 0, "all": 0}
    folder = f"/proc/{pid}/fd"
    for name in os.listdir(folder):
        try:
            target = os.readlink(f"{folder}/{name}")
        except OSError:
            continue
        kinds["all"] += 1
        if target == "anon_inode:inotify":
            kinds["inotify"] += 1
        elif target.startswith("socket:"):
            kinds["socket"] += 1
        elif target.startswith("/"):
            kinds["file"] += 1
    return kinds

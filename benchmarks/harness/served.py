"""A started ``memgrove serve``: one project served by a subprocess on a free port of 127.0.0.1, up once it
answers ``/health`` and has registered in its ``.memgrove/server.json``; stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable


def env_for_children() -> dict[str, str]:
    """This environment without memgrove's (but ``MEMGROVE_SEMANTIC``, harness.words_only), OpenAI's and
    LangSmith's variables, and no proxy for 127.0.0.1."""
    env = {k: v for k, v in os.environ.items() if k == "MEMGROVE_SEMANTIC"
           or not k.startswith(("MEMGROVE_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(NO_PROXY="127.0.0.1,localhost", LANGSMITH_TRACING="false", PYTHONUNBUFFERED="1")
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(check: Callable[[], Any], timeout: float = 300.0) -> Any:
    """``check()``'s first true value, asked every 0.2 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise RuntimeError("timed out waiting")


class Served:
    """``memgrove serve`` for ``project`` (``args``: more options, e.g. ``--replica-of URL``), as a subprocess.

    ``token`` is given to it as ``MEMGROVE_TOKEN`` (else it is read from the project's ``server.token``);
    ``env`` replaces :func:`env_for_children`; its output goes to ``log`` (default: ``serve-<port>.log``
    beside the project); ``started_s`` is how long it took to answer."""

    def __init__(self, project: Path, *args: str, token: str | None = None, python: str = sys.executable,
                 env: dict[str, str] | None = None, log: Path | None = None, timeout: float = 300.0):
        self.project = project
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or project.parent / f"serve-{self.port}.log"
        env = (env_for_children() if env is None else env) | ({"MEMGROVE_TOKEN": token} if token else {})
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([python, "-m", "memgrove", "--root", str(project), "serve",
                                          "--port", str(self.port), *args], stdout=out, stderr=subprocess.STDOUT,
                                         env=env, stdin=subprocess.DEVNULL)
        self.started_s = self._wait(timeout)
        self.token = token or (project / ".memgrove" / "server.token").read_text().strip()

    def _wait(self, timeout: float) -> float:
        import httpx

        t0 = time.perf_counter()
        registered = self.project / ".memgrove" / "server.json"
        while time.perf_counter() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"memgrove serve exited: {self.log.read_text()[-3000:]}")
            try:
                r = httpx.get(f"{self.url}/health", timeout=2.0, trust_env=False)
                if r.status_code == 200 and r.json().get("pid") == self.proc.pid and registered.exists():
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.proc.kill()
        raise RuntimeError("memgrove serve did not start")

    def health(self) -> dict[str, Any]:
        import httpx

        return httpx.get(f"{self.url}/health", timeout=10.0, trust_env=False).json()

    def stop(self) -> int:
        """SIGTERM, then its exit status (killed after 60 s)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

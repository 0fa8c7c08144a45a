"""``memgrove serve`` as a subprocess on a free port of 127.0.0.1, for the server tests.

    srv = start_server(project_folder)            # waits until /health answers
    srv.client.get("/api/tree")                   # an httpx client sending the token
    stop_server(srv)                              # SIGTERM, then the exit status

The server's environment drops anything that could reach beyond 127.0.0.1 (a model, a
proxy, LangSmith tracing) and ``MEMGROVE_TOKEN`` unless the test passes one.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from helpers import engine_choice, meaning_choice

READY_TIMEOUT = 90.0   # the machine may be busy: a start imports LangChain and builds three graphs
_DROP_PREFIXES = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "MEMGROVE_", "LANGFUSE_")
_PROXIES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def inherited_env(drop_prefixes: tuple[str, ...] = _DROP_PREFIXES) -> dict[str, str]:
    """This process's environment minus anything that could reach beyond 127.0.0.1 (proxies, keys,
    tracing) or carry the developer's memgrove settings; the suite's engine stays
    (helpers/engine_choice.py), so a tantivy run's servers run on tantivy, and its meaning (meaning_choice.py)."""
    return {k: v for k, v in os.environ.items()
            if (k in (engine_choice.VARIABLE, meaning_choice.VARIABLE) or not k.upper().startswith(drop_prefixes))
            and k.lower() not in _PROXIES}


def server_env(**extra: str) -> dict[str, str]:
    env = inherited_env()
    env.update(NO_PROXY="127.0.0.1,localhost", LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false",
               PYTHONUNBUFFERED="1", **extra)
    return env


@dataclass
class Server:
    process: subprocess.Popen
    project: Path
    port: int
    log: Path
    token: str | None = None
    clients: list[httpx.Client] = field(default_factory=list)
    _client: httpx.Client | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def home(self) -> Path:
        return self.project / ".memgrove"

    def log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-20_000:]
        except OSError as exc:
            return f"(no log: {exc})"

    def http(self, token: str | None | bool = True, **kw: Any) -> httpx.Client:
        """A client; ``token=True`` sends the server's token, a string sends that, None/False none."""
        headers = dict(kw.pop("headers", {}))
        tok = self.token if token is True else (token or None)
        if tok:
            headers["Authorization"] = f"Bearer {tok}"
        c = httpx.Client(base_url=self.url, headers=headers, timeout=kw.pop("timeout", 30.0), trust_env=False, **kw)
        self.clients.append(c)
        return c

    @property
    def client(self) -> httpx.Client:
        """A client sending the server's token, made once."""
        if self._client is None:
            self._client = self.http()
        return self._client


def start_server(project: Path, *args: str, port: int | None = None, env: dict[str, str] | None = None,
                 log: Path | None = None, wait: bool = True) -> Server:
    port = port or free_port()
    log = log or project.parent / f"serve-{project.name}-{port}.log"
    cmd = [sys.executable, "-m", "memgrove", "--root", str(project), "serve", "--port", str(port), *args]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, env=server_env(**(env or {})), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=project.parent)
    srv = Server(proc, project, port, log)
    if wait:
        wait_ready(srv)
    return srv


def wait_ready(srv: Server, timeout: float = READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    reg = srv.home / "server.json"
    while time.monotonic() < deadline:
        if srv.process.poll() is not None:
            raise AssertionError(f"memgrove serve exited with {srv.process.returncode} before it was ready\n"
                                 f"{srv.log_text()}")
        try:
            r = httpx.get(f"{srv.url}/health", timeout=1.0, trust_env=False)
            if r.status_code == 200 and r.json().get("pid") == srv.process.pid and reg.exists():
                tok = srv.home / "server.token"
                if srv.token is None and tok.exists() and '"auth": true' in reg.read_text():
                    srv.token = tok.read_text().strip()
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    stop_server(srv)
    raise AssertionError(f"memgrove serve did not answer /health within {timeout:.0f} s\n{srv.log_text()}")


def stop_server(srv: Server, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
    for c in srv.clients:
        c.close()
    srv.clients.clear()
    srv._client = None
    if srv.process.poll() is None:
        srv.process.send_signal(sig)
        try:
            srv.process.wait(timeout)
        except subprocess.TimeoutExpired:
            srv.process.kill()
            srv.process.wait(10)
    return srv.process.returncode


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)

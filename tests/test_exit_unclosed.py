"""A script that writes to a memory and ends without closing it exits cleanly: the background
embedder's thread is stopped before the interpreter finalizes (it aborted with "terminate called
without an active exception", exit status 134, while ONNX Runtime was encoding)."""

from __future__ import annotations

import subprocess
import sys

from helpers.memgrove_server import server_env

SCRIPT = """
from memgrove import Memory
from memgrove.sample import ingest_sample
m = Memory.open({folder!r}, create=True, semantic_weight="auto")
ingest_sample(m)           # ~70 entries queued for the embedder; the script ends at once
"""


def test_a_script_that_never_closes_its_memory_exits_with_status_0(tmp_path):
    for n in range(2):        # the abort came whenever the thread was inside an encode at exit
        folder = tmp_path / f"p{n}"
        r = subprocess.run([sys.executable, "-c", SCRIPT.format(folder=str(folder))], env=server_env(),
                           capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
        assert "terminate called" not in r.stderr

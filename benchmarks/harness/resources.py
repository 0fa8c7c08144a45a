"""Disk and memory of a benchmark run: bytes under a folder, peak RSS (with children), scratch folders."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator


def disk_usage(folder: Path) -> dict[str, int]:
    """Apparent bytes, allocated bytes and file count under ``folder``."""
    apparent = allocated = files = 0
    for dirpath, _dirs, names in os.walk(folder):
        for n in names:
            try:
                st = os.lstat(os.path.join(dirpath, n))
            except FileNotFoundError:
                continue
            apparent += st.st_size
            allocated += st.st_blocks * 512
            files += 1
    return {"bytes": apparent, "allocated": allocated, "files": files}


@contextlib.contextmanager
def scratch_dir(prefix: str, cfg: dict[str, Any], out: dict[str, Any]) -> Iterator[Path]:
    """A temp folder for one size's run: removed afterwards, or kept (and named in ``out``) with
    ``cfg["keep"]``."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    if cfg.get("keep"):
        out["kept_at"] = str(tmp)
    try:
        yield tmp
    finally:
        if not cfg.get("keep"):
            shutil.rmtree(tmp, ignore_errors=True)


def maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)  # KiB on Linux


def _rss_kb(pid: int | str, field: str = "VmRSS") -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _child_pids() -> list[str]:
    out: list[str] = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):
                with open(f"/proc/self/task/{tid}/children") as fh:
                    out += fh.read().split()
    except OSError:
        pass
    return out


class RssSampler:
    """Peak of (this process's RSS + its children's RSS), sampled every 20 ms (Linux /proc).

    ``ru_maxrss`` of children is useless here: a forked child counts the parent's pages."""

    def __init__(self, every: float = 0.02):
        import threading
        self.every = every
        self.peak_kb = 0
        self.peak_anon_kb = 0  # this process's anonymous memory (heap; not mmapped index files)
        self.peak_children = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            kids = _child_pids()
            total = _rss_kb("self") + sum(_rss_kb(k) for k in kids)
            self.peak_kb = max(self.peak_kb, total)
            self.peak_anon_kb = max(self.peak_anon_kb, _rss_kb("self", "RssAnon"))
            self.peak_children = max(self.peak_children, len(kids))
            self._stop.wait(self.every)

    @property
    def peak_mb(self) -> float:
        return round(self.peak_kb / 1024, 1)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

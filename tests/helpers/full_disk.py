"""A small tmpfs of the test's own, filled to the last byte and freed page by page.

    with small_disk(tmp_path) as mnt:     # skips the test where mounting is not allowed
        fill(mnt)                         # no free byte left (most inodes too)
        free_pages(mnt, 1)                # one 4 KiB page free again
        free(mnt)                         # everything back

Mounting needs root on Linux; elsewhere the test is skipped, never failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest


@contextmanager
def small_disk(tmp_path: Path, size: str = "6m") -> Iterator[Path]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


PAGE = 4096
SMALL = 256   # the last pages are taken one small file each: free_pages gives them back one by one


def fill(folder: Path) -> Path:
    """Take every free byte of the file system holding ``folder``: one large file, its last
    ``SMALL`` pages then handed to files of a page each (``free_pages`` frees them one by one)."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:   # unbuffered: nothing is left to flush (and fail) at close
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - SMALL * PAGE))
    for i in range(SMALL * 2):
        try:
            (folder / f"filler_{i:05d}").write_bytes(b"x" * PAGE)
        except OSError:
            break
    return filler


def free_pages(folder: Path, n: int) -> int:
    """Remove ``n`` of the small filler files (a page each on tmpfs); how many were left to remove."""
    small = sorted(folder.glob("filler_*"))
    for p in small[:n]:
        p.unlink()
    return len(small[:n])


def free(folder: Path) -> None:
    for p in folder.glob("filler*"):
        p.unlink()

"""A small tmpfs of one's own, filled to the last byte and given back a page at a time: the full
disk of the reliability suite (``faults``, ``server_disk``) and of the tests
(``tests/helpers/full_disk.py``). Mounting needs root on Linux; the callers skip without it.

    mount(point, 8)          # None, or why it could not be mounted
    fill(point)              # no free byte left (most inodes too)
    free_pages(point, 1)     # one 4 KiB page free again
    free(point)              # everything back
    umount(point)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PAGE = 4096
SMALL = 256   # the last pages are taken one small file each: free_pages gives them back one by one


def mount(point: Path, size_mb: int) -> str | None:
    """Mount a tmpfs of ``size_mb`` MB at ``point``; None, or why it could not be."""
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(point)],
                          capture_output=True, timeout=20)
    return None if done.returncode == 0 else (done.stderr.decode().strip() or f"mount exited {done.returncode}")


def umount(point: Path) -> None:
    subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=20)


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

"""A small tmpfs of the test's own, filled to the last byte and freed page by page.

    with small_disk(tmp_path) as mnt:     # skips the test where mounting is not allowed
        fill(mnt)                         # no free byte left (most inodes too)
        free_pages(mnt, 1)                # one 4 KiB page free again
        free(mnt)                         # everything back

Mounting needs root on Linux; elsewhere the test is skipped, never failed.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository: benchmarks/ is importable
# one copy of the filling, shared with the reliability suite
from reliability.disk import fill, free, free_pages, mount, umount  # noqa: E402,F401


@contextmanager
def small_disk(tmp_path: Path, size_mb: int = 6) -> Iterator[Path]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    why = mount(mnt, size_mb)
    if why:
        pytest.skip(f"cannot mount a tmpfs here: {why}")
    try:
        yield mnt
    finally:
        umount(mnt)


"""The reliability suite (reliability/, `make reliability`) at its quick size: every section runs
(concurrency, crash points, faults, hostile inputs, fuzzing; the server killed under load, on a
full disk, against slow clients and hostile requests; memories dropped unclosed) and finds nothing.

Each section runs in a child process of its own, as `python -m reliability --quick --sections X`
does, so that the sections share out over the xdist workers: one run of them all kept one worker
running it and the other waiting for its report for three minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

pytestmark = pytest.mark.slow   # multi-process, like tests/test_concurrency.py

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from reliability.runner import SECTIONS  # noqa: E402
# sections that need to mount a tmpfs: skipped, not failed, where that is not allowed
MAY_SKIP = {"server_disk"} if os.geteuid() != 0 else set()


def _at_least(**least: int) -> Callable[[dict], None]:
    def check(summary: dict) -> None:
        assert all(summary[k] >= n for k, n in least.items()), (least, summary)
    return check


# what a section must have done at the quick size, past finding nothing
DONE = {
    "crashes": _at_least(kills=20),
    "hostile": _at_least(cases=40),
    "server_kills": _at_least(acked=1, reads=1),
}


def quick_report(work: Path, section: str) -> dict:
    out = work / "report"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGROVE_")}
    r = subprocess.run([sys.executable, "-m", "reliability", "--quick", "--sections", section, "--out", str(out),
                        "--work", str(work / "work")], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=600)
    assert out.with_suffix(".json").exists(), r.stderr[-2000:]
    return json.loads(out.with_suffix(".json").read_text())


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_ran_and_found_nothing(tmp_path: Path, section: str) -> None:
    report = quick_report(tmp_path, section)
    # the report names the commit, counts every failure and holds the section asked for
    assert report["meta"]["commit"] != "unknown"
    assert report["failures"] == sum(len(s["failures"]) for s in report["sections"])
    (sec,) = report["sections"]
    assert sec["name"] == section
    if sec["skipped"] is not None and section in MAY_SKIP:
        pytest.skip(sec["skipped"])
    assert sec["skipped"] is None, sec["skipped"]
    assert sec["rows"], f"{section} ran nothing"
    found = [f"{f['check']}: {f['detail']} — {f['repro']}" for f in sec["failures"]]
    assert found == [], "\n".join(found)
    if section in DONE:
        DONE[section](sec["summary"])
    if section == "hostile":
        assert len(sec["rows"]) >= 30   # every surface at least once

"""The reliability suite (reliability/, `make reliability`) at its quick size: every section
runs (concurrency, crash points, faults, hostile inputs, fuzzing; the server killed under load, on a
full disk, against slow clients and hostile requests; memories dropped unclosed) and finds nothing.

The suite runs once per test session (all xdist workers share its report) in a child
process, as `python -m reliability --quick` does.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow   # multi-process, like tests/test_concurrency.py

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from reliability.runner import SECTIONS  # noqa: E402
# sections that need to mount a tmpfs: skipped, not failed, where that is not allowed
MAY_SKIP = {"server_disk"} if os.geteuid() != 0 else set()


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # this session's folder, the same for every xdist worker (without xdist, the parent would be
    # shared with earlier sessions, whose report would be read again)
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "reliability_quick"
    with open(shared / "reliability_quick.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.with_suffix(".json").exists():
            env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGROVE_")}
            r = subprocess.run([sys.executable, "-m", "reliability", "--quick", "--out", str(out),
                                "--work", str(shared / "reliability_work")], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=900)
            assert out.with_suffix(".json").exists(), r.stderr[-2000:]
    return json.loads(out.with_suffix(".json").read_text())


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_ran_and_found_nothing(quick_report: dict, section: str) -> None:
    (sec,) = [s for s in quick_report["sections"] if s["name"] == section]
    if sec["skipped"] is not None and section in MAY_SKIP:
        pytest.skip(sec["skipped"])
    assert sec["skipped"] is None, sec["skipped"]
    assert sec["rows"], f"{section} ran nothing"
    found = [f"{f['check']}: {f['detail']} — {f['repro']}" for f in sec["failures"]]
    assert found == [], "\n".join(found)


def test_the_report_names_the_commit_and_lists_every_failure(quick_report: dict) -> None:
    assert quick_report["meta"]["commit"] != "unknown"
    assert quick_report["failures"] == sum(len(s["failures"]) for s in quick_report["sections"])
    assert [s["name"] for s in quick_report["sections"]] == list(SECTIONS)
    crashes = [s for s in quick_report["sections"] if s["name"] == "crashes"][0]
    assert crashes["summary"]["kills"] >= 20
    hostile = [s for s in quick_report["sections"] if s["name"] == "hostile"][0]
    assert hostile["summary"]["cases"] >= 40 and len(hostile["rows"]) >= 30   # every surface at least once
    kills = [s for s in quick_report["sections"] if s["name"] == "server_kills"][0]
    assert kills["summary"]["acked"] > 0 and kills["summary"]["reads"] > 0

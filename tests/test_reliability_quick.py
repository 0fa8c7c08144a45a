"""The reliability suite (benchmarks/reliability, `make reliability`) at its quick size: every section
runs (concurrency, crash points, faults, hostile inputs, fuzzing) and finds nothing.

The suite runs once per test session (all xdist workers share its report) in a child
process, as `python -m benchmarks.reliability --quick` does. Each failure it reports
carries the issue 13 item it is about, when it is one; the items fixed on other
branches are expected to fail here until they are merged.
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
SECTIONS = ("concurrency", "crashes", "faults", "hostile", "fuzz")


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
            r = subprocess.run([sys.executable, "-m", "benchmarks.reliability", "--quick", "--out", str(out),
                                "--work", str(shared / "reliability_work")], cwd=REPO, env=env,
                               capture_output=True, text=True, timeout=900)
            assert out.with_suffix(".json").exists(), r.stderr[-2000:]
    return json.loads(out.with_suffix(".json").read_text())


def failures(report: dict, *, section: str | None = None, item: int | None = None) -> list[str]:
    return [f"{f['check']}: {f['detail']} — {f['repro']}" for s in report["sections"] for f in s["failures"]
            if (section is None or s["name"] == section) and (item is None or f["item"] == item)]


# items whose fixes are on other branches: the suite finds them on this one
PENDING = {1: "a killed reindex's workers keep the lock", 2: "a full or read-only disk",
           3: "stale answers after hand edits", 4: "the verbatim curator overwrites different inputs",
           5: "curate writes entries the reader refuses", 6: "undo tears a crashed batch",
           7: "duplicate journal ids after recovery", 8: "unbounded time on adversarial input",
           9: "the writer lock is unfair", 10: "links outside the tree break search",
           11: "untrusted text in the terminal", 12: "the fuzzy cache answers a different question",
           13: "clear errors and self-repair"}


@pytest.mark.parametrize("section", SECTIONS)
def test_each_section_ran(quick_report: dict, section: str) -> None:
    (sec,) = [s for s in quick_report["sections"] if s["name"] == section]
    assert sec["skipped"] is None, sec["skipped"]
    assert sec["rows"], f"{section} ran nothing"
    broken = [f"{f['detail']} — {f['repro']}" for f in sec["failures"] if f["check"] == "suite error"]
    assert broken == [], "\n".join(broken)


def test_no_failure_outside_the_issue_13_items(quick_report: dict) -> None:
    found = [f"{s['name']}: {f['check']}: {f['detail']} — {f['repro']}" for s in quick_report["sections"]
             for f in s["failures"] if f["item"] is None and f["check"] != "suite error"]
    assert found == [], "\n".join(found)


def test_the_report_names_the_commit_and_lists_every_failure(quick_report: dict) -> None:
    assert quick_report["meta"]["commit"] != "unknown"
    assert quick_report["failures"] == sum(len(s["failures"]) for s in quick_report["sections"])
    crashes = [s for s in quick_report["sections"] if s["name"] == "crashes"][0]
    assert crashes["summary"]["kills"] >= 20
    hostile = [s for s in quick_report["sections"] if s["name"] == "hostile"][0]
    assert hostile["summary"]["cases"] >= 40 and len(hostile["rows"]) >= 30   # every surface at least once


# what the quick run finds on a branch without the fixes (2, 4, 5, 8, 13), or may find, depending on
# timing (6: a kill inside a batch; 9: a writer's wait on a loaded machine); the other items are not
# reached at the quick size (1 needs a tree of 2,000 files, 7 a journal over 4 MB; 3 and 12 are not
# reproduced by the suite; the quick corpus holds no case of 10 or 11) and must stay absent
XFAIL_ITEMS: set[int] = set()  # every issue 13 item is fixed on main


def _item(n: int):
    if n not in XFAIL_ITEMS:
        return pytest.param(n, id=f"item{n}")
    return pytest.param(n, marks=pytest.mark.xfail(strict=False, reason=f"issue 13 item {n}, fixed on another branch"),
                        id=f"item{n}")


@pytest.mark.parametrize("item", [_item(n) for n in sorted(PENDING)])
def test_no_failure_of_an_issue_13_item(quick_report: dict, item: int) -> None:
    found = failures(quick_report, item=item)
    assert found == [], f"item {item} ({PENDING[item]}):\n" + "\n".join(found)

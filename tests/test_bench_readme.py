"""benchmarks/README.md is the way in to every current result: at most 300 lines, every current report in
benchmarks/results/ one link away from it (two from the top-level README), every figure linked or shown in a
report, and every #anchor it or HISTORY.md links to is a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
README = BENCH / "README.md"
LINK = re.compile(r"\]\(([^)\s]*)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation out, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m) for m in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)}


def test_the_readme_is_short_and_the_top_level_readme_links_it():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300
    assert "benchmarks/README.md" in (BENCH.parent / "README.md").read_text(encoding="utf-8")


def test_every_current_report_is_one_link_from_the_readme():
    linked = {(README.parent / t.split("#")[0]).resolve() for t in LINK.findall(README.read_text(encoding="utf-8"))}
    reports = sorted((BENCH / "results").glob("*.md"))
    assert reports and [p.name for p in reports if p.resolve() not in linked] == []
    shown = {(p.parent / t).resolve() for p in reports for t in LINK.findall(p.read_text(encoding="utf-8"))}
    figures = sorted((BENCH / "results").glob("*.png"))
    assert figures and [p.name for p in figures if p.resolve() not in linked | shown] == []


@pytest.mark.parametrize("doc", ["README.md", "HISTORY.md"])
def test_every_anchor_is_a_heading(doc):
    path = BENCH / doc
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        file, _, anchor = target.partition("#")
        if not anchor or "://" in file:
            continue
        where = (path.parent / file) if file else path
        assert where.exists(), f"{doc}: {target}"
        assert anchor in anchors(where), f"{doc}: no heading for #{anchor} in {where.name}"

"""Work done under the writer lock grows linearly with what one call gives (issue 30).

A batch of k operations parses each changed entry a bounded number of times and scans each
folder once; merging lists, facts and links costs their length, not its square. The first
tests count the work; the last runs the list merges at a size where a quadratic step would
take hours, with a bound far above what the linear one needs (seconds), so it can only fail
on a hang, never on a slow machine.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from memgrove import Memory
from memgrove.mcp.memory_files import MemoryFiles
from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.store import ContextTree


def _add(path: str, **fields) -> dict:
    return {"op": "ADD", "path": path, "title": path.rsplit("/", 1)[-1], "reason": "test", **fields}


@pytest.fixture
def parses(monkeypatch):
    calls = {"n": 0}
    real = entry_mod.parse

    def counting(*a, **kw):
        calls["n"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(entry_mod, "parse", counting)
    return calls


@pytest.fixture
def scans(monkeypatch):
    calls = {"n": 0}
    real = ContextTree.entries_under

    def counting(self, folder):
        calls["n"] += 1
        return real(self, folder)

    monkeypatch.setattr(ContextTree, "entries_under", counting)
    return calls


K = 120


def test_a_batch_of_adds_then_deletes_parses_each_entry_a_bounded_number_of_times(mem, parses, scans):
    ops = [_add(f"work/flat/e{i}.md") for i in range(K)] + [
        {"op": "DELETE", "path": f"work/flat/e{i}.md", "reason": "test"} for i in range(K)]
    mem.curate(ops)
    # each DELETE used to parse every entry the batch had changed so far (K²/2 = 11,250 parses)
    # and to scan the folder from disk (2K scans)
    assert parses["n"] <= 10 * K
    assert scans["n"] <= 4
    assert mem.tree.entries_under("work") == []


def test_renaming_a_directory_of_k_entries_parses_each_a_bounded_number_of_times(mem, parses):
    mem.curate([_add(f"work/old/e{i}.md", related=[f"work/old/e{(i + 1) % K}.md"]) for i in range(K)])
    parses["n"] = 0
    MemoryFiles(mem).rename(old_path="/memories/work/old", new_path="/memories/work/new")
    assert parses["n"] <= 20 * K          # it was ~K²: 22,107 parses for 200 entries
    moved = mem.tree.read("work/new/e0.md")
    assert moved.related == ["work/new/e1.md"]   # the links followed the entries
    assert mem.tree.entries_under("work/old") == []


def test_links_of_the_batch_are_seen_as_it_changes_them(mem):
    """The overlay's index of links follows each change: an entry linked, relinked, then deleted."""
    mem.curate([_add("a/b/target.md"), _add("a/b/other.md")])
    results = mem.curate([
        _add("a/b/linker.md", related=["a/b/target.md"]),
        {"op": "UPDATE", "path": "a/b/linker.md", "related": ["a/b/other.md"], "reason": "test"},
        {"op": "MERGE", "path": "a/b/target.md", "merge_into": "a/b/other.md", "reason": "test"},
        {"op": "DELETE", "path": "a/b/other.md", "reason": "test"},
    ])
    assert [r.status for r in results] == ["added", "updated", "merged", "deleted"]
    assert mem.tree.read("a/b/linker.md").related == []


LINEAR_MERGES = """
from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.writes import operations as ops
N = 200_000
facts = lambda k: "\\n".join(f"- fact {k} {i}" for i in range(N))
old = entry_mod.Entry(title="t", tags=[f"a{i}" for i in range(N)], sections={"Facts": facts(0)})
n = ops.check_shape({"op": "UPDATE", "path": "a/b/c.md", "reason": "r", "tags": [f"b{i}" for i in range(N)],
                     "keywords": ",".join(f"k{i}" for i in range(N)), "content": "## Facts\\n\\n" + facts(1)})
new = ops.updated_entry(old, n, "2026-01-01T00:00:00Z")
assert len(new.tags) == 2 * N and len(new.keywords) == N and len(new.facts) == 2 * N
merged = ops.merged_entry(old, new, "a/b/c.md", "a/b/d.md", "2026-01-01T00:00:00Z")
assert len(merged.facts) == 2 * N
body = entry_mod.Entry(title="t", sections={"Narrative": " ".join(f"@a/b/e{i}.md" for i in range(N))})
assert len(body.links()) == N
print("ok")
"""


def test_merging_lists_facts_and_links_is_linear_in_their_length():
    """200,000 tags, keywords, facts and body links each: a membership test per item made this
    hours of work under the lock (20,000 facts: 35 s); linear, it is about a second."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(LINEAR_MERGES)], capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]

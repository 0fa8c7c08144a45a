"""A folder listed a page at a time (tree/index/listing.py): the pages hold what the whole listing
holds, the subfolders' counts (from the catalog) are the files' counts, titles follow hand edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.index.catalog import scan


def add(path: str, **fields) -> dict:
    return {"op": "ADD", "path": path, "title": fields.pop("title", path.rsplit("/", 1)[-1][:-3]),
            "content": fields.pop("content", "x"), "reason": "test", **fields}


@pytest.fixture
def mem(tmp_path: Path):
    m = Memory.open(tmp_path / "m", create=True, durable=False)
    ops = [add(f"big/pile/e{i}.md", tags=[f"t{i % 3}"]) for i in range(23)]
    ops += [add(f"big/pile/sub{i}/x{j}.md") for i in range(3) for j in range(i + 1)]
    ops += [add("big/other/a.md"), add("big/other/deep/b.md"), add("big/other/deep/c.md"), add("solo/one/z.md")]
    m.curate(ops)
    yield m
    m.close()


def counted(mem: Memory, folder: str) -> int:
    return sum(1 for p in scan(mem.home / "tree" / folder) if not p.endswith("/context.md") and p != "context.md")


def test_pages_hold_the_whole_listing(mem: Memory) -> None:
    whole = mem.list("big/pile")
    assert whole["total_folders"] == 3 and whole["total_entries"] == 23 and whole["next"] is None
    assert [f["path"] for f in whole["folders"]] == ["big/pile/sub0", "big/pile/sub1", "big/pile/sub2"]
    names = [e["path"].rsplit("/", 1)[-1] for e in whole["entries"]]
    assert names == [f"e{i}.md" for i in range(23)]      # natural order: e2 before e10
    for limit in (1, 2, 5, 26, 100):
        got, offset = [], 0
        while offset is not None:
            page = mem.list("big/pile", offset=offset, limit=limit)
            assert len(page["folders"]) + len(page["entries"]) <= limit
            got += page["folders"] + page["entries"]
            offset = page["next"]
        assert got == whole["folders"] + whole["entries"]
    past = mem.list("big/pile", offset=500, limit=10)
    assert past["folders"] == past["entries"] == [] and past["next"] is None


def test_entries_carry_tags_dates_and_validity(mem: Memory) -> None:
    mem.curate([{"op": "SUPERSEDE", "path": "big/pile/e1.md", "by": "big/pile/e2.md", "reason": "newer"}])
    rows = {e["path"]: e for e in mem.list("big/pile", limit=10)["entries"]}
    e1 = rows["big/pile/e1.md"]
    assert e1["tags"] == ["t1"] and e1["created"] and e1["updated"]
    assert e1["superseded_by"] == "big/pile/e2.md" and e1["valid_until"]
    assert rows["big/pile/e0.md"]["superseded_by"] == "" and rows["big/pile/e0.md"]["valid_until"] is None


def test_counts_are_the_files_counts(mem: Memory) -> None:
    for folder in ("", "big", "big/pile", "big/other"):
        for f in mem.list(folder)["folders"]:
            assert f["entries"] == counted(mem, f["path"]), f
    # a file written by hand, unknown to the index until the listing brings it in step
    (mem.home / "tree" / "big" / "other" / "deep" / "hand.md").write_text("---\ntitle: Hand\n---\nbody\n")
    assert {f["path"]: f["entries"] for f in mem.list("big")["folders"]}["big/other"] == 4
    assert all(f["entries"] == -1 for f in mem.tree.list_folder("big", counts=False)["folders"])


def test_folder_titles_follow_hand_edits(mem: Memory) -> None:
    ctx = mem.home / "tree" / "big" / "other" / "context.md"
    text = ctx.read_text()
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    ctx.write_text(text.replace(title, "title: Renamed by hand"))
    # counts=False: no catalog at all; with counts: the catalog's title only while the file is as indexed
    for counts in (False, True):
        got = {f["path"]: f["title"] for f in mem.tree.list_folder("big", counts=counts)["folders"]}
        assert got["big/other"] == "Renamed by hand"

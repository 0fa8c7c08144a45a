"""Links written by hand that point outside the tree are reported and ignored, never followed.

``related`` is read from files anyone may edit (a ``git pull``, a text editor, an LLM): a link
to ``/etc/passwd`` or ``../../x`` must not break search, must not reach the catalog, the tools or
``show``, and ``doctor`` names the entry, the link and why, without looking at the outside path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tools import knowledge_tools
from memgrove.tree.entries.paths import link_problem

BAD_LINKS = ["/etc/passwd", "../../x", "ops/../../../etc/hosts.md", "~/notes.md", "C:/Windows/win.ini",
             "..\\..\\x.md", "ops/api/\x1b]52;c;aGk=\x07.md", "ops/_hidden/x.md", "ops/api", "a/" + "x" * 300 + "/b.md"]
GOOD = "ops/api/host.md"


@pytest.mark.parametrize("link", BAD_LINKS)
def test_link_problem_names_why(link):
    assert link_problem(link)


@pytest.mark.parametrize("link", [GOOD, "ops/api/sub/x.md", "Team-Notes/On Call/Rota 2024.md"])
def test_link_problem_accepts_paths_inside_the_tree(link):
    assert link_problem(link) is None


def seeded(home: Path, links: list[str]) -> Memory:
    m = Memory.open(home, create=True, durable=False)
    m.curate([{"op": "ADD", "path": "ops/api/port.md", "title": "API port",
               "content": "The API listens on port 8080.", "reason": "seed"},
              {"op": "ADD", "path": GOOD, "title": "API host", "content": "The API host is api.example.com.",
               "reason": "seed"}])
    p = m.tree.root / "ops/api/port.md"
    text = p.read_text()
    assert "related: []" in text
    p.write_text(text.replace("related: []", "related: " + json.dumps(links)))   # a hand edit
    return m


def test_search_reaching_an_entry_with_outside_links_works(tmp_path):
    m = seeded(tmp_path, [*BAD_LINKS, GOOD])
    try:
        hits = m.search("API port")
        assert hits and hits[0].path == "ops/api/port.md"
        assert all(link_problem(h.path) is None or h.path.endswith("/context.md") for h in hits)
        assert m.query("which port does the API listen on").sources
    finally:
        m.close()


def test_outside_links_never_reach_the_catalog_the_tools_or_show(tmp_path):
    m = seeded(tmp_path, [*BAD_LINKS, GOOD])
    try:
        m.tree.ensure_fresh()
        assert m.tree.catalog.all_links() == [("ops/api/port.md", GOOD)]
        assert m.tree.links("ops/api/port.md") == ([GOOD], [])
        assert m.show("ops/api/port.md")["links"] == [GOOD]
        tools = {t.name: t for t in knowledge_tools(m)}
        out = tools["search_knowledge"].invoke({"query": "API port"})
        assert json.loads(out)["entries"][0]["path"] == "ops/api/port.md"
        read = tools["read_entry"].invoke({"path": "ops/api/port.md"})
        assert read.endswith("\n\nLinks: " + GOOD)
    finally:
        m.close()


def test_doctor_reports_each_outside_link_and_never_probes_it(tmp_path, monkeypatch):
    m = seeded(tmp_path, ["/etc/passwd", "../../x", GOOD])
    try:
        probed: list[str] = []
        real = Path.is_file

        def is_file(self):
            probed.append(str(self))
            return real(self)

        monkeypatch.setattr(Path, "is_file", is_file)
        rep = m.doctor()
        warned = [w for w in rep.warnings if w.startswith("ops/api/port.md:")]
        assert any("'/etc/passwd'" in w and "absolute" in w and "ignored" in w for w in warned), warned
        assert any("'../../x'" in w and "'..'" in w for w in warned), warned
        assert not any("dangling" in w for w in warned), warned      # /etc/passwd exists: no verdict either way
        assert not any(p.startswith("/etc") or "/x" == p[-2:] for p in probed), probed
        assert rep.ok
    finally:
        m.close()


def test_doctor_does_not_follow_a_link_through_a_symlink_out_of_the_tree(tmp_path):
    outside = tmp_path / "outside" / "x"
    outside.mkdir(parents=True)
    (outside / "y.md").write_text("# Secret\n\nsecret API port 1\n")
    m = seeded(tmp_path / "home", ["ops/evil/x/y.md"])
    try:
        os.symlink(tmp_path / "outside", m.tree.root / "ops" / "evil")
        hits = m.search("API port")                  # the link's target cannot be read: skipped
        assert [h.path for h in hits][:1] == ["ops/api/port.md"]
        assert all("evil" not in h.path for h in hits)
        warned = m.doctor().warnings
        assert any(w.startswith("ops/api/port.md: link 'ops/evil/x/y.md'") and "outside" in w for w in warned), warned
    finally:
        m.close()


def test_a_dangling_link_inside_the_tree_is_still_reported(tmp_path):
    m = seeded(tmp_path, ["ops/api/gone.md"])
    try:
        assert "ops/api/port.md: dangling link to ops/api/gone.md" in m.doctor().warnings
    finally:
        m.close()


def test_merge_and_delete_keep_working_with_outside_links(tmp_path):
    m = seeded(tmp_path, ["/etc/passwd", GOOD])
    try:
        m.curate([{"op": "DELETE", "path": GOOD, "reason": "gone"}])
        assert m.tree.links("ops/api/port.md") == ([], [])
        assert m.search("API port")[0].path == "ops/api/port.md"
    finally:
        m.close()


def test_search_knowledge_says_what_went_wrong_not_empty_query(tmp_path, monkeypatch):
    m = seeded(tmp_path, [GOOD])
    try:
        tools = {t.name: t for t in knowledge_tools(m)}
        from memgrove.tree.base.errors import LockTimeout

        def busy(*a, **kw):
            raise LockTimeout("the writer lock is held by pid 1")

        monkeypatch.setattr(m.tree, "search", busy)
        out = tools["search_knowledge"].invoke({"query": "API port"})
        assert "non-empty" not in out and "the writer lock is held by pid 1" in out
        assert "non-empty" in tools["search_knowledge"].invoke({"query": "   "})
    finally:
        m.close()


def test_cli_search_and_show_with_outside_links(tmp_path):
    m = seeded(tmp_path, ["/etc/passwd", "../../x", GOOD])
    m.close()
    runner = CliRunner()
    res = runner.invoke(cli, ["--root", str(tmp_path), "search", "API port"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["--root", str(tmp_path), "show", "ops/api/port.md"])
    assert res.exit_code == 0 and "passwd" not in res.output.split("→", 1)[-1] and f"→ {GOOD}" in res.output


def context_link(m: Memory, target: Path) -> Path:
    """Replace ops/api/context.md with a symlink to ``target`` (by hand, or a hostile checkout)."""
    ctx = m.tree.root / "ops/api/context.md"
    ctx.unlink()
    os.symlink(target, ctx)
    return ctx


def test_doctor_fix_replaces_a_dangling_context_symlink(tmp_path):
    m = seeded(tmp_path / "home", [GOOD])
    try:
        ctx = context_link(m, tmp_path / "outside" / "gone.md")
        rep = m.doctor()
        assert "ops/api/context.md: a symlink where the folder's context file belongs; doctor --fix replaces it" \
            in rep.warnings and not rep.ok
        fixed = m.doctor(fix=True)
        assert fixed.ok and fixed.fixed == ["wrote 1 missing context file(s)"], fixed.to_dict()
        assert not ctx.is_symlink() and "[API port](port.md)" in ctx.read_text()
        assert not (tmp_path / "outside").exists()          # nothing was written through the link
        assert m.doctor().ok and not m.doctor().warnings
    finally:
        m.close()


@pytest.mark.parametrize("dangling", [True, False])
def test_an_add_into_a_folder_whose_context_is_a_symlink_writes_its_own(tmp_path, dangling):
    outside = tmp_path / "outside" / "notes.md"
    outside.parent.mkdir()
    if not dangling:
        outside.write_text("# Outside\n\nNot the tree's.\n")
    m = seeded(tmp_path / "home", [GOOD])
    try:
        ctx = context_link(m, outside)
        res = m.curate([{"op": "ADD", "path": "ops/api/timeout.md", "title": "API timeout",
                         "content": "The API times out after 30 s.", "reason": "r"}])
        assert res[0].status == "added" and not m.tree.notices
        assert not ctx.is_symlink()
        listing = ctx.read_text()
        assert "[API timeout](timeout.md)" in listing and "Outside" not in listing
        assert (outside.read_text() == "# Outside\n\nNot the tree's.\n") if not dangling else not outside.exists()
        assert m.doctor().ok
    finally:
        m.close()

"""A ``.memgrove`` or ``.memgrove/tree`` that is a symbolic link is refused, everywhere.

A cloned repository (or any process of the user) can replace a project's tree with a link to
another folder: every search would then read there and every curation write there. One check
in the library (``tree/base/home.py``) refuses it with ``TreeOutside``; the CLI and the server say so.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.memgrove_server import start_server, stop_server

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree import ContextTree, locate_home
from memgrove.tree.base.errors import TreeNotFound, TreeOutside


def _outside(tmp_path: Path) -> Path:
    """A folder outside the project, holding a markdown file a search would find."""
    out = tmp_path / "outside"
    (out / "notes" / "private").mkdir(parents=True)
    (out / "notes" / "private" / "keys.md").write_text("---\ntitle: Keys\n---\nThe vault passphrase is plum.\n")
    return out


def _listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(params=["tree", ".memgrove"])
def linked(request, tmp_path: Path) -> tuple[Path, Path]:
    """A project whose ``tree`` (or whole ``.memgrove``) is a link to a folder outside it."""
    project, out = tmp_path / "project", _outside(tmp_path)
    if request.param == "tree":
        Memory.open(project, create=True).close()
        shutil.rmtree(project / ".memgrove" / "tree")
        (project / ".memgrove" / "tree").symlink_to(out)
    else:
        project.mkdir()
        (out / "tree").mkdir()
        (project / ".memgrove").symlink_to(out)
    return project, out


def test_the_library_refuses_a_linked_tree(linked):
    project, out = linked
    before = _listing(out)
    for open_it in (lambda: Memory.open(project), lambda: ContextTree.open(project), lambda: locate_home(project),
                    lambda: Memory.open(project / "sub"), lambda: Memory.open(project, create=True)):
        with pytest.raises(TreeOutside, match="symbolic link"):
            open_it()
    assert _listing(out) == before          # nothing written there: no index, no journal, no signals


def test_the_cli_refuses_a_linked_tree(linked):
    project, out = linked
    before = _listing(out)
    for args in (["search", "passphrase"], ["curate", "--ops", "-"], ["doctor"]):
        res = CliRunner().invoke(cli, ["--root", str(project), *args, "--json"],
                                 input=json.dumps([{"op": "ADD", "path": "a/b/c.md", "content": "x", "reason": "x"}]))
        assert res.exit_code == 1, res.output
        err = json.loads(res.output)["error"]
        assert err["code"] == "tree_outside" and "symbolic link" in err["message"], res.output
    assert "plum" not in res.output and _listing(out) == before


def test_a_link_inside_the_project_to_a_folder_inside_it_is_still_refused(tmp_path: Path):
    project = tmp_path / "project"
    Memory.open(project, create=True).close()
    os.rename(project / ".memgrove" / "tree", project / "real_tree")
    (project / ".memgrove" / "tree").symlink_to(project / "real_tree")
    with pytest.raises(TreeOutside):
        Memory.open(project)


def test_the_server_refuses_to_serve_a_linked_tree(linked, tmp_path: Path):
    project, out = linked
    before = _listing(out)
    main = tmp_path / "main"
    Memory.open(main, create=True).close()
    for srv in (start_server(project, wait=False), start_server(main, "--project", str(project), wait=False)):
        try:
            assert srv.process.wait(90) == 1, srv.log_text()
        finally:
            stop_server(srv)
        assert "symbolic link" in srv.log_text(), srv.log_text()
    assert _listing(out) == before


@pytest.mark.parametrize("name", ["x" * 5000, "/" + "a/" * 3000])
def test_a_name_too_long_is_no_project_not_an_os_error(name: str):
    with pytest.raises(TreeNotFound, match="File name too long"):
        Memory.open(name)


def test_a_served_project_whose_tree_became_a_link_is_refused_with_403(linked, tmp_path: Path):
    from memgrove.server.errors import status_of
    from memgrove.server.projects import Projects
    from memgrove.server.served import Served, ServedProjects

    project, _ = linked
    main = tmp_path / "main"
    Memory.open(main, create=True).close()
    listed = ServedProjects(Served(main.resolve()))
    listed.add(Served(project.resolve()))       # served before its tree was swapped for a link
    projects = Projects(listed)
    try:
        with pytest.raises(TreeOutside) as caught:
            projects.memory_for(listed.named(str(project)))
        assert status_of(caught.value) == 403
    finally:
        projects.close()

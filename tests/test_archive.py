"""The archive: ARCHIVE moves an entry out of the searched tree, RESTORE and undo bring it back, exactly."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.base.errors import BatchRejected

OLD = "infra/staging/old_runbook.md"
KEPT = "infra/staging/deploy.md"


class Crash(BaseException):
    """Stands for a SIGKILL at a chosen point (nothing after it runs, no rollback)."""


def _files(home) -> dict[str, bytes]:
    """Every file of the tree and of the archive, by where it lies under .memgrove/: entries byte for
    byte, a folder's context.md but for the time its listing was regenerated (derived, not journaled)."""
    def held(p) -> bytes:
        data = p.read_bytes()
        if p.name != "context.md":
            return data
        return b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"updatedAt:"))

    return {str(p.relative_to(home)): held(p) for sub in ("tree", "archive")
            for p in sorted((home / sub).rglob("*")) if p.is_file()}


def _ok(mem: Memory) -> None:
    report = mem.doctor()
    assert report.ok and not report.warnings, (report.problems, report.warnings)


@pytest.fixture
def filled(mem: Memory) -> Memory:
    mem.curate([
        {"op": "ADD", "path": OLD, "title": "Old staging runbook", "content": "Reboot the blue VM by hand with vmctl.",
         "tags": ["ops"], "reason": "kept from 2024"},
        {"op": "ADD", "path": KEPT, "title": "Staging deploys", "content": "Staging deploys run from CI on merge.",
         "related": [OLD], "reason": "current practice"},
        {"op": "ADD", "path": "team/people/ana.md", "title": "Ana", "content": "Ana runs the infra team.",
         "reason": "who is who"},
    ])
    return mem


def test_archive_moves_the_file_out_of_search_and_restore_brings_it_back_byte_exact(filled):
    mem = filled
    before = _files(mem.home)
    res = mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "nobody reboots by hand any more"}])[0]
    assert res.status == "archived" and ".memgrove/archive/" + OLD in res.message
    assert not (mem.home / "tree" / OLD).exists()
    assert (mem.home / "archive" / OLD).read_bytes() == before[f"tree/{OLD}"]
    assert OLD not in [h.path for h in mem.search("reboot blue VM vmctl")]
    found = [h for h in mem.search("reboot blue VM vmctl", include_archived=True) if h.path == OLD]
    assert found and found[0].archived and found[0].excerpt.startswith("(archived)")
    assert found[0].to_dict()["archived"] is True
    assert mem.tree.archived() == [OLD]
    # the journal says where it went: the record and the archived copy it wrote
    rec = mem.history(1)[0]
    assert rec.op == "ARCHIVE" and [c.path for c in rec.changes()] == [OLD, "@archive/" + OLD]
    # the link to it stays, and is no dangling link: restoring brings the entry back where it points
    assert mem.read(KEPT).related == [OLD]
    _ok(mem)
    back = mem.restore(OLD)
    assert back.status == "restored"
    assert _files(mem.home) == before and not (mem.home / "archive" / "infra").exists()
    assert OLD in [h.path for h in mem.search("reboot blue VM vmctl")]
    _ok(mem)


def test_undo_of_archive_and_of_restore_round_trip_exactly(filled):
    mem = filled
    before = _files(mem.home)
    archived = mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])[0]
    moved = _files(mem.home)
    mem.undo(archived.id)
    assert _files(mem.home) == before
    _ok(mem)
    mem.undo(mem.history(1)[0].id)          # undoing the undo archives it again
    assert _files(mem.home) == moved
    restored = mem.restore(OLD)
    mem.undo(restored.id)
    assert _files(mem.home) == moved
    _ok(mem)


def test_archiving_the_last_entry_of_a_folder_keeps_its_overview_for_undo_and_restore(filled):
    mem = filled
    mem.curate([{"op": "UPDATE", "path": "team/people/ana.md", "reason": "overview",
                 "context": {"domain": "Who works with us.", "topic": "The people of the infra team."}}])
    before = _files(mem.home)
    res = mem.curate([{"op": "ARCHIVE", "path": "team/people/ana.md", "reason": "left the company"}])[0]
    assert not (mem.home / "tree" / "team").exists()
    assert (mem.home / "archive" / "team/people/context.md").is_file()
    _ok(mem)
    mem.undo(res.id)
    assert _files(mem.home) == before
    _ok(mem)
    mem.curate([{"op": "ARCHIVE", "path": "team/people/ana.md", "reason": "left the company"}])
    back = mem.restore("team/people/ana.md")
    assert mem.list("team/people")["overview"] == "The people of the infra team."
    assert mem.list("team")["overview"] == "Who works with us."
    assert not (mem.home / "archive" / "team").exists()
    _ok(mem)
    mem.undo(back.id)      # the restore undone: the entry and the overviews are archived again
    assert (mem.home / "archive" / "team/people/context.md").is_file() and not (mem.home / "tree" / "team").exists()
    _ok(mem)


@pytest.mark.parametrize("ops, expected", [
    ([{"op": "ARCHIVE", "path": "infra/staging/nothing.md"}], "ARCHIVE: infra/staging/nothing.md does not exist"),
    ([{"op": "ARCHIVE", "path": OLD}, {"op": "ARCHIVE", "path": OLD}], f"ARCHIVE: {OLD} is already archived"),
    ([{"op": "RESTORE", "path": OLD}], f"RESTORE: {OLD} is not in the archive (it is in the tree)"),
    ([{"op": "ARCHIVE", "path": OLD}, {"op": "ADD", "path": OLD, "title": "New runbook"}, {"op": "RESTORE", "path": OLD}],
     f"RESTORE: an entry already exists at {OLD}"),
    ([{"op": "ARCHIVE", "path": OLD}, {"op": "DELETE", "path": OLD}], "(it is archived: RESTORE it first)"),
    ([{"op": "ARCHIVE", "path": OLD, "title": "x"}], "ARCHIVE changes no entry's text"),
])
def test_archive_and_restore_refuse_with_a_clear_error_and_write_nothing(filled, ops, expected):
    mem = filled
    before = _files(mem.home)
    with pytest.raises(BatchRejected) as exc:
        mem.curate([{"reason": "test", **op} for op in ops])
    assert expected in str(exc.value)
    assert _files(mem.home) == before


@pytest.mark.parametrize("after_files", [0, 1])
def test_a_crash_between_the_write_ahead_file_and_the_move_is_completed_on_open(filled, monkeypatch, after_files):
    mem = filled
    tree = mem.tree
    text = (mem.home / "tree" / OLD).read_bytes()
    real_write, written = tree._write_file, []

    def write(rel, data, *later, **how):
        if len(written) == after_files:
            raise Crash()
        written.append(rel)
        real_write(rel, data, *later, **how)

    monkeypatch.setattr(tree, "_write_file", write)
    monkeypatch.setattr(tree, "_roll_back", lambda *a: None, raising=False)  # a killed process undoes nothing
    with pytest.raises(Crash):
        mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    monkeypatch.undo()
    assert (mem.home / "journal" / "pending.json").exists()
    with Memory.open(mem.home.parent, durable=False) as again:
        assert any("completed an interrupted batch" in n for n in again.tree.notices)
        assert not (again.home / "tree" / OLD).exists()
        assert (again.home / "archive" / OLD).read_bytes() == text
        assert [r.op for r in again.history(1)] == ["ARCHIVE"]
        _ok(again)
        again.restore(OLD)
        assert (again.home / "tree" / OLD).read_bytes() == text
        _ok(again)


def test_signals_and_links_survive_an_archive_round_trip(filled):
    mem = filled
    mem.tree.record_delivery([OLD])
    before = mem.tree.signals.get_many([OLD])[OLD]
    mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    mem.restore(OLD)
    assert mem.tree.signals.get_many([OLD])[OLD] == before
    assert mem.tree.links(OLD)[1] == [KEPT]


def test_the_cli_searches_the_archive_on_request_and_restores(filled, monkeypatch):
    mem = filled
    mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    monkeypatch.setenv("MEMGROVE_HOME", str(mem.home))
    run = CliRunner()
    plain = run.invoke(cli, ["search", "reboot blue VM vmctl", "--no-server"], catch_exceptions=False)
    assert OLD not in plain.output
    wide = run.invoke(cli, ["search", "reboot blue VM vmctl", "--include-archived", "--no-server"],
                      catch_exceptions=False)
    assert wide.exit_code == 0 and OLD in wide.output and "[archived]" in wide.output
    out = run.invoke(cli, ["restore", OLD, "--json", "--no-server"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["status"] == "restored" and (mem.home / "tree" / OLD).exists()
    again = run.invoke(cli, ["restore", OLD, "--no-server"])
    assert again.exit_code == 1 and "is not in the archive" in again.output


def test_the_rest_route_searches_the_archive_on_request(filled):
    from fastapi.testclient import TestClient

    from memgrove.server.app import create_app
    from memgrove.server.settings import ServerSettings

    mem = filled
    mem.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    app = create_app(mem.home.parent, ServerSettings(allowed_hosts="testserver"), mcp=False)
    with TestClient(app) as client:
        plain = client.get("/api/search", params={"q": "reboot blue VM vmctl"}).json()
        wide = client.get("/api/search", params={"q": "reboot blue VM vmctl", "include_archived": "true"}).json()
    assert OLD not in [h["path"] for h in plain["hits"]]
    assert [h for h in wide["hits"] if h["path"] == OLD and h.get("archived")]



def test_reading_an_archived_entry_says_where_it_went(filled):
    from memgrove.tree.base.errors import EntryNotFound

    filled.curate([{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    with pytest.raises(EntryNotFound, match="it is archived"):
        filled.show(OLD)


def test_a_hand_placed_entry_is_archived_and_restored_by_its_exact_path(mem):
    folder = mem.home / "tree" / "Team-Notes" / "On Call"
    folder.mkdir(parents=True)
    (folder / "Rota 2024.md").write_text("---\ntitle: Rota 2024\n---\nAna is on call in March.\n", encoding="utf-8")
    exact = "Team-Notes/On Call/Rota 2024.md"
    assert mem.curate([{"op": "ARCHIVE", "path": exact, "reason": "last year's"}])[0].status == "archived"
    assert (mem.home / "archive" / exact).is_file() and not (folder / "Rota 2024.md").exists()
    assert mem.restore(exact).status == "restored" and (folder / "Rota 2024.md").is_file()


def test_the_mcp_calls_take_the_new_operations_and_search_the_archive_on_request(filled):
    from memgrove.mcp import calls

    done = calls.curate(filled, [{"op": "ARCHIVE", "path": OLD, "reason": "stale"}])
    assert done["written"] and done["applied"][0]["status"] == "archived"
    assert OLD not in [h["path"] for h in calls.search(filled, "reboot blue VM vmctl")["hits"]]
    wide = calls.search(filled, "reboot blue VM vmctl", 10, True)["hits"]
    assert [h for h in wide if h["path"] == OLD and h["archived"]]
    back = calls.curate(filled, {"op": "RESTORE", "path": OLD, "reason": "needed"})
    assert back["applied"][0]["status"] == "restored"

"""Clear errors and self-repair: damaged derived state is rebuilt or reset (by ``doctor --fix``
and, where safe, on the fly), hostile input gets one clear line, never "unexpected X"."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import BatchRejected, InvalidInput, Memory
from memgrove.cli import cli

SEED = [{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Refresh rotation",
         "content": "Refresh tokens rotate on every use.", "reason": "seed"}]
DEEP = 100_000


@pytest.fixture
def seeded(mem):
    mem.curate(SEED)
    return mem


def deep_list(n: int = 5_000) -> list:   # well past the recursion limit (1,000)
    top: list = []
    cur = top
    for _ in range(n):
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    return top


def cli_run(home: Path, *args: str, input: str | bytes | None = None):
    """The CLI as a user runs it: unexpected errors become one line (not re-raised)."""
    env = {"MEMGROVE_HOME": str(home)}
    return CliRunner(env=env).invoke(cli, list(args), input=input, env={"MEMGROVE_RAISE_ERRORS": None})


# -- (e) deep JSON ----------------------------------------------------------------

def test_deep_json_in_ops_file_and_conversation_is_a_clear_error(seeded, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    for args in (["curate", "--ops", str(deep)], ["curate", "--verbatim", "--conversation", str(deep)]):
        res = cli_run(tmp_path, *args)
        assert res.exit_code == 1
        assert "more than 32 levels deep" in res.output and "unexpected" not in res.output, res.output
    with pytest.raises(InvalidInput, match="levels deep"):
        seeded.ingest(conversation={"id": "c", "messages": [{"id": "m1", "role": "user", "content": deep_list()}]})


def test_deep_values_in_operations_are_rejected_not_recursed(seeded):
    for op in ({"extra": {"x": deep_list()}}, {"content": {"S": deep_list()}}, {"path": deep_list()}):
        with pytest.raises(BatchRejected, match="levels deep"):
            seeded.curate([{"op": "ADD", "path": "a/b/c.md", "reason": "r", "title": "t", **op}])
    assert not seeded.tree.exists("a/b/c.md")


def test_curate_tool_refuses_deep_arguments(seeded):
    tool = {t.name: t for t in seeded.tools()}["curate"]
    out = tool.invoke({"operations": [{"op": "ADD", "path": "a/b/d.md", "reason": "r", "content": {"S": deep_list()}}]})
    assert out.startswith("Error: nothing was written") and "levels deep" in out
    msg = tool.invoke({"type": "tool_call", "id": "c1", "name": "curate", "args": {"operations": deep_list()}})
    assert msg.status == "error" and "levels deep" in msg.content
    assert not seeded.tree.exists("a/b/d.md")


# -- (f) broken pipe ----------------------------------------------------------------

def test_output_to_a_closed_pipe_exits_quietly(seeded, tmp_path):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the first byte: every write fails with EPIPE
    env = {**os.environ, "MEMGROVE_HOME": str(seeded.home.parent)}
    env.pop("MEMGROVE_RAISE_ERRORS", None)
    try:
        done = subprocess.run([sys.executable, "-m", "memgrove", "query", "how do refresh tokens rotate"],
                              stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(write_end)
    assert done.stderr == b"", done.stderr.decode()
    assert done.returncode == 0


# -- (j) standard input bounded -------------------------------------------------------

class EndlessInput(io.RawIOBase):
    """A large standard input (2 MB here, 200 MB in the issue); counts what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.read_bytes >= 2_000_000:
            return 0
        b[:] = b"a" * len(b)
        self.read_bytes += len(b)
        return len(b)


def test_curate_from_stdin_reads_at_most_the_limit(tmp_path):
    Memory.open(tmp_path, create=True, durable=False).close()
    (tmp_path / ".memgrove" / "config.toml").write_text("[tree]\nmax_input_bytes = 1000\n")
    stdin = EndlessInput()
    res = cli_run(tmp_path, "curate", "--verbatim", "-", input=stdin)
    assert res.exit_code == 1 and "larger than 1,000 bytes" in res.output, res.output
    assert stdin.read_bytes <= 1001 + 8192   # the limit, plus at most one buffer of read-ahead


# -- (g) wrong-typed settings -----------------------------------------------------------

@pytest.mark.parametrize("table, line, fragment", [
    ("tree", 'lock_timeout = "x"', "setting lock_timeout in [tree] of {cfg} must be a number, not a string ('x')"),
    ("tree", "gap_ratio = [1]", "setting gap_ratio in [tree] of {cfg} must be a number, not a list ([1])"),
    ("tree", 'durable = "no"', "setting durable in [tree] of {cfg} must be true or false"),
    ("tree", "index_procs = 2.5", "setting index_procs in [tree] of {cfg} must be a whole number"),
    ("query", 'fuzzy_threshold = "x"', "setting fuzzy_threshold in [query] of {cfg} must be a number"),
    ("curate", "max_ops = true", "setting max_ops in [curate] of {cfg} must be a whole number, not a boolean"),
])
def test_wrong_typed_setting_names_setting_file_and_type(tmp_path, table, line, fragment):
    from memgrove.graphs.settings import load_curate_settings, load_query_settings
    from memgrove.tree.base.errors import MemgroveError
    from memgrove.tree.settings import load_settings

    home = tmp_path / ".memgrove"
    home.mkdir()
    cfg = home / "config.toml"
    cfg.write_text(f"[{table}]\n{line}\n")
    load = {"tree": load_settings, "query": load_query_settings, "curate": load_curate_settings}[table]
    with pytest.raises(MemgroveError) as info:
        load(home)
    assert fragment.format(cfg=cfg) in str(info.value)


def test_settings_of_the_right_type_still_load(tmp_path):
    from memgrove.tree.settings import load_settings

    home = tmp_path / ".memgrove"
    home.mkdir()
    (home / "config.toml").write_text("[tree]\nlock_timeout = 5\ngap_ratio = 0.5\ndurable = false\n")
    s = load_settings(home, index_procs=1)
    assert (s.lock_timeout, s.gap_ratio, s.durable, s.index_procs) == (5.0, 0.5, False, 1)
    assert isinstance(s.lock_timeout, float)


def test_wrong_typed_setting_through_the_cli_is_one_line(tmp_path):
    Memory.open(tmp_path, create=True, durable=False).close()
    (tmp_path / ".memgrove" / "config.toml").write_text('[tree]\nlock_timeout = "x"\n')
    res = cli_run(tmp_path, "search", "anything")
    assert res.exit_code == 1 and "unexpected" not in res.output
    assert res.output.strip().endswith("must be a number, not a string ('x')")


# -- (h) damaged query log ----------------------------------------------------------------

def test_stats_skips_damaged_log_lines_and_counts_them(qmem):
    qmem.query("How do refresh tokens rotate?")
    qmem.query("How do refresh tokens rotate?")
    log = qmem.home / "query-log.jsonl"
    with log.open("ab") as fh:
        fh.write(b'{"tier": "x"}\n[1]\n"s"\n{"tier": 2, "latency_ms": "fast"}\ngarbage\n\xff\xfe\n'
                 b'{"tier": 0, "latency_ms": 1e999}\n' + b"[" * 100_000 + b"\n" + b'{"tier": 1, "lat')
    stats = qmem.stats()
    assert stats["queries"] == 2 and stats["damaged_lines"] == 9
    assert sorted(t["tier"] for t in stats["tiers"]) == [0, 2]
    res = cli_run(qmem.home.parent, "stats")
    assert res.exit_code == 0, res.output
    assert "skipped 9 damaged line(s) of the query log" in res.output


# -- (a) damaged signals.db and query cache ---------------------------------------------------

def garble(path: Path, size: int = 8192) -> None:
    path.write_bytes(b"this is not a database, just garbage " * (size // 37 + 1))


def test_damaged_signals_are_reset_with_a_notice_and_search_carries_on(seeded):
    home = seeded.home
    seeded.close()
    garble(home / "signals.db")
    with Memory.open(home.parent, durable=False) as m:
        assert [h.path for h in m.search("refresh tokens rotate")] == ["auth/jwt/rotation.md"]
        assert any("reset the damaged signals.db" in n for n in m.tree.notices), m.tree.notices
        m.curate([{"op": "UPDATE", "path": "auth/jwt/rotation.md", "content": "The grace period is 30 s.",
                   "reason": "more"}])
        assert m.tree.signals.get("auth/jwt/rotation.md").update_count == 1
        assert m.doctor().ok


def test_damaged_query_cache_is_reset_and_the_query_answered(qmem):
    q = "How do refresh tokens rotate?"
    assert qmem.query(q).tier == 2
    home = qmem.home
    qmem.close()
    garble(home / "cache" / "cache.db", 32768)
    with Memory.open(home.parent, durable=False) as m:
        first = m.query(q)
        assert first.tier == 2 and "rotate" in first.text
        assert any("reset the damaged query cache" in n for n in m.tree.notices), m.tree.notices
        assert m.query(q).tier == 0   # cached again


def test_cli_says_what_it_reset(seeded):
    home = seeded.home
    seeded.close()
    garble(home / "signals.db")
    res = cli_run(home.parent, "search", "refresh tokens")
    assert res.exit_code == 0, res.output
    assert "notice: reset the damaged signals.db" in res.output and "unexpected" not in res.output


def test_doctor_finds_and_fix_resets_every_damaged_derived_store(seeded):
    seeded.query("How do refresh tokens rotate?")
    home = seeded.home
    seeded.close()
    garble(home / "signals.db")
    garble(home / "cache" / "cache.db", 32768)
    with (home / "query-log.jsonl").open("ab") as fh:
        fh.write(b"garbage\n\xff\n")
    with Memory.open(home.parent, durable=False) as m:
        rep = m.doctor()
        assert not rep.ok
        assert any(p.startswith("signals.db is damaged") for p in rep.problems), rep.problems
        assert any(p.startswith("the query cache is damaged") for p in rep.problems), rep.problems
        assert any("query-log.jsonl has 2 damaged line(s)" in w for w in rep.warnings), rep.warnings
        fixed = m.doctor(fix=True)
        assert fixed.ok, fixed.problems
        assert any("signals.db" in f for f in fixed.fixed) and any("query cache" in f for f in fixed.fixed)
        assert any("dropped 2 damaged line(s)" in f for f in fixed.fixed)
        again = m.doctor()
        assert again.ok and not again.fixed and not [w for w in again.warnings if "damaged" in w], again.to_dict()
        assert m.query("How do refresh tokens rotate?").tier in (0, 2)


# -- (b) empty or garbage pending.json ------------------------------------------------------

@pytest.mark.parametrize("content", [b"", b"  \n", b"{torn", b"[1, 2]", b'{"records": [{"x": 1}]}',
                                     b'{"records": [{"id": "1", "at": "", "op": "ADD", "path": "../../x.md"}]}',
                                     b"\xff\xfe", b"[" * 100_000])
def test_damaged_pending_file_is_set_aside_never_blocks(seeded, content):
    home = seeded.home
    before = {p: (home / "tree" / p).read_bytes() for p in ("auth/jwt/rotation.md",)}
    history = [r.id for r in seeded.history()]
    seeded.close()
    (home / "journal" / "pending.json").write_bytes(content)
    with Memory.open(home.parent, durable=False) as m:
        assert any("set aside a damaged write-ahead file as journal/pending.json.damaged-" in n
                   for n in m.tree.notices), m.tree.notices
        aside = list((home / "journal").glob("pending.json.damaged-*"))
        assert len(aside) == 1 and aside[0].read_bytes() == content   # kept for a look, never deleted
        assert not (home / "journal" / "pending.json").exists()
        assert {p: (home / "tree" / p).read_bytes() for p in before} == before
        assert [r.id for r in m.history()] == history
        rep = m.doctor()
        assert rep.ok and any(aside[0].name in w for w in rep.warnings), rep.to_dict()
        assert m.search("refresh tokens rotate")
        m.curate([{"op": "ADD", "path": "a/b/c.md", "title": "C", "content": "c", "reason": "r"}])


def test_doctor_runs_and_reports_a_damaged_pending_file_through_the_cli(seeded):
    home = seeded.home
    seeded.close()
    (home / "journal" / "pending.json").write_text("")
    res = cli_run(home.parent, "doctor")
    assert res.exit_code == 0, res.output
    assert "warning: journal/pending.json.damaged-" in res.output and "notice: set aside" in res.output


# -- (c) a catalog with an old schema ----------------------------------------------------------

def test_catalog_of_an_older_schema_is_rebuilt_not_a_block(seeded):
    import sqlite3

    home = seeded.home
    seeded.close()
    db = sqlite3.connect(home / "index" / "catalog.db")
    db.execute("DROP TABLE traits")
    db.execute("CREATE TABLE traits (path TEXT PRIMARY KEY, day TEXT)")
    db.execute("DROP TABLE files")
    db.execute("CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER)")
    db.commit()
    db.close()
    os.utime(home / "tree" / "auth" / "jwt" / "rotation.md")   # a hand edit: the catalog must be written
    with Memory.open(home.parent, durable=False) as m:
        assert [h.path for h in m.search("refresh tokens rotate")] == ["auth/jwt/rotation.md"]
        m.curate([{"op": "ADD", "path": "a/b/c.md", "title": "C", "content": "c", "reason": "r"}])
        assert m.doctor().ok
        assert m.tree.catalog.check() is None


def test_doctor_fix_rebuilds_a_damaged_catalog_and_index(seeded):
    home = seeded.home
    seeded.close()
    garble(home / "index" / "catalog.db", 49152)
    with Memory.open(home.parent, durable=False) as m:
        rep = m.doctor(fix=True)
        assert rep.ok, rep.problems
        assert [h.path for h in m.search("refresh tokens rotate")] == ["auth/jwt/rotation.md"]


# -- (i) a killed reindex leaves index/whoosh.new (index/tantivy.new) ------------------------------

def test_leftover_of_a_killed_reindex_is_removed_on_open_and_by_doctor(seeded):
    home = seeded.home
    name = seeded.tree.engine.name
    new = home / "index" / f"{name}.new"
    new.mkdir()
    (new / "_MAIN_1.toc").write_bytes(b"half written")
    assert any(f"{name}.new" in w for w in seeded.doctor().warnings)
    fixed = seeded.doctor(fix=True)
    assert not new.exists() and any(f"index/{name}.new" in f for f in fixed.fixed), fixed.to_dict()
    seeded.close()
    new.mkdir()
    (home / "index" / f"{name}.old").mkdir()
    with Memory.open(home.parent, durable=False) as m:
        assert not new.exists() and not (home / "index" / f"{name}.old").exists()
        assert m.search("refresh tokens rotate")


def test_leftover_is_kept_while_a_writer_holds_the_lock(seeded):
    home = seeded.home
    new = home / "index" / f"{seeded.tree.engine.name}.new"
    with seeded.tree.lock.hold():   # a live rebuild writes whoosh.new under the lock
        new.mkdir()
        with Memory.open(home.parent, durable=False):
            assert new.exists()
    new.rmdir()


# -- (d) a hand-placed file with non-snake-case names ------------------------------------------

ROTA = "Team-Notes/On Call/Rota 2024.md"


@pytest.fixture
def hand_placed(seeded):
    f = seeded.home / "tree" / ROTA
    f.parent.mkdir(parents=True)
    f.write_text("---\ntitle: Rota 2024\n---\n# Rota 2024\n\nAna is on call in January, Ben in February.\n")
    return seeded


def test_hand_placed_file_is_reachable_by_the_path_search_returned(hand_placed):
    m = hand_placed
    hits = m.search("who is on call rota")
    assert hits[0].path == ROTA
    assert m.read(hits[0].path).title == "Rota 2024"
    assert m.show(hits[0].path)["text"].endswith("Ben in February.\n")
    assert m.tree.exists(ROTA)
    tools = {t.name: t for t in m.tools()}
    assert "Ben in February" in tools["read_entry"].invoke({"path": ROTA})
    assert [e["path"] for e in m.list("Team-Notes/On Call")["entries"]] == [ROTA]
    assert cli_run(m.home.parent, "tree").exit_code == 0
    res = cli_run(m.home.parent, "show", ROTA)
    assert res.exit_code == 0 and "Ben in February" in res.output, res.output


def test_hand_placed_file_can_be_updated_merged_and_deleted_by_its_path(hand_placed):
    m = hand_placed
    [r] = m.curate([{"op": "UPDATE", "path": ROTA, "content": "Cy is on call in March.", "reason": "march"}])
    assert (r.path, r.status) == (ROTA, "updated")
    assert "Cy is on call in March" in m.read(ROTA).body
    assert not m.tree.exists("team_notes/on_call/rota_2024.md")   # no snake_case twin was made
    with pytest.raises(BatchRejected, match="already exists"):
        m.curate([{"op": "ADD", "path": ROTA, "title": "again", "content": "x", "reason": "r"}])
    assert m.doctor(fix=True).ok
    [r] = m.curate([{"op": "DELETE", "path": ROTA, "reason": "gone"}])
    assert r.status == "deleted" and not (m.home / "tree" / ROTA).exists()
    assert not m.search("who is on call rota") or m.search("who is on call rota")[0].path != ROTA
    assert m.doctor().ok


def test_exact_paths_stay_inside_the_path_rules(hand_placed, tmp_path):
    from memgrove.tree.base.errors import InvalidPath

    m = hand_placed
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ntitle: secret\n---\nsecret\n")
    (m.home / "tree" / "Team-Notes" / "Linked").symlink_to(outside)
    for bad in ("Team-Notes/Linked/secret.md", "Team-Notes/../../outside/secret.md", "/etc/passwd",
                "Team-Notes/On Call/.hidden.md", "Team-Notes/On Call/_x.md"):
        with pytest.raises(InvalidPath):
            m.read(bad)
    with pytest.raises(BatchRejected):
        m.curate([{"op": "DELETE", "path": "Team-Notes/Linked/secret.md", "reason": "r"}])
    assert (outside / "secret.md").exists()

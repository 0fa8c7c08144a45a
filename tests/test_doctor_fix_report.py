"""``doctor --fix`` reports the tree as its repair left it: the counts and problems after the fix,
with what it fixed (it printed the counts it found before the repair)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart worker {i}.", "reason": "seed"} for i in range(3)]


def test_doctor_fix_reports_the_counts_after_its_repair(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        mem.curate(SEED)
        root = mem.tree.root
        (root / "ops" / "runbooks" / "context.md").unlink()
        (root / "ops" / "runbooks" / ".mg-dead.tmp").write_text("half")
        before = mem.doctor()
        assert not before.ok and before.contexts == 1
        rep = mem.doctor(fix=True)
        assert rep.ok, rep.problems
        assert (rep.entries, rep.contexts, rep.indexed) == (3, 2, 5)
        assert any("context file" in f for f in rep.fixed) and any("temp file" in f for f in rep.fixed)
        assert not any("temp file" in w for w in rep.warnings)


def test_the_cli_prints_the_counts_after_the_fix(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        mem.curate(SEED)
        (mem.tree.root / "ops" / "context.md").unlink()
    out = CliRunner().invoke(cli, ["--root", str(tmp_path), "doctor", "--fix"])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("consistent: 3 entries, 2 context files, 5 indexed"), out.output

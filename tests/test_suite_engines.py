"""The suite's engines (tests/helpers/engine_choice.py): a module on ``BOTH`` runs once per engine,
its trees and the processes it starts on that engine; the rest run on the suite's engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memgrove import Memory

from helpers import engine_choice


def test_a_tree_of_this_module_opens_on_its_engine(tmp_path: Path, suite_engine: str) -> None:
    assert engine_choice.chosen() == suite_engine
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        assert mem.tree.engine.name == suite_engine


def test_a_started_process_opens_on_the_same_engine(tmp_path: Path, suite_engine: str) -> None:
    code = "import sys; from memgrove import Memory; print(Memory.open(sys.argv[1], create=True).tree.engine.name)"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == suite_engine


def test_every_module_on_both_is_a_test_module() -> None:
    here = Path(__file__).parent
    assert {m for m in engine_choice.BOTH if not (here / f"{m}.py").exists()} == set()
    assert __name__.rpartition(".")[2] in engine_choice.BOTH

"""The shape of benchmarks/ (benchmarks/harness/shape.py): no module over 450 lines, no import cycle, and the
harness, the layer every benchmark stands on, importing no benchmark script."""

from __future__ import annotations

from helpers.benchmarks import load_harness

shape = load_harness("shape")


def test_no_benchmark_module_is_over_the_line_cap():
    known = shape.modules()
    assert "harness.metrics" in known and "locomo" in known and "reliability.common" in known
    too_long = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in known.items()}
    assert {n: v for n, v in too_long.items() if v > shape.MAX_LINES} == {}


def test_no_import_cycle_and_the_harness_imports_no_script():
    known = shape.modules()
    graph = {n: shape.imports(n, p, known) for n, p in known.items()}
    assert "harness.synthetic" in graph["scale"] and "harness.synthetic" in graph["tiers"]
    assert shape.cycles(graph) == []
    assert {n: deps for n, deps in graph.items() if n.startswith("harness")
            and any(not d.startswith("harness") for d in deps)} == {}


def test_the_cycle_finder_finds_a_cycle():
    assert shape.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert shape.cycles({"a": {"b"}, "b": set()}) == []


def test_the_engine_benchmarks_rank_by_words_and_the_retrieval_ones_by_the_product_default():
    # harness.words_only reaches the processes they start; LoCoMo, BEAM and LongMemEval measure the default
    import os
    import subprocess
    import sys
    from pathlib import Path

    from memgrove.tree.settings import SEMANTIC_DEFAULT

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MEMGROVE_SEMANTIC")}  # not the suite's off

    def weight(script: str, child: bool = False) -> str:
        probe = "from memgrove.tree.settings import TreeSettings; print(TreeSettings().semantic_weight)"
        code = (f"import {script}, subprocess, sys; from harness.served import env_for_children; "
                f"sys.stdout.write(subprocess.run([sys.executable, '-c', {probe!r}], env=env_for_children(), "
                "capture_output=True, text=True).stdout)") if child else f"import {script}; {probe}"
        run = subprocess.run([sys.executable, "-c", code], cwd=bench, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stdout.strip()

    assert weight("scale") == weight("dream") == "0.0"
    assert weight("serve_load", child=True) == "0.0"              # a memgrove serve it starts ranks by words too
    assert weight("locomo") == weight("beam") == str(float(SEMANTIC_DEFAULT))

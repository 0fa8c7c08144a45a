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

#!/usr/bin/env python
"""The shape of benchmarks/: no module over ``MAX_LINES`` lines, no import cycle among its modules, the harness
importing no benchmark script, and the share of the code the benchmarks take. The reliability suite
(``reliability/``, a fault-injection test suite asserting zero failures) is held to the same line cap and
cycle check, and counted with the tests, not the benchmarks.

    python benchmarks/harness/shape.py        # prints the numbers; exits 1 on a long module or a cycle
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
REPO = BENCHMARKS.parent
PRODUCT = ("memgrove", "tree", "graphs", "tools")
TESTS = ("tests", "reliability")
MAX_LINES = 450


def modules() -> dict[str, Path]:
    """Module name (as the scripts import it: ``locomo``, ``harness.stats``, ``reliability.common``) -> file."""
    out = {}
    for p in sorted(BENCHMARKS.rglob("*.py")) + sorted((REPO / "reliability").rglob("*.py")):
        parts = list(p.relative_to(REPO if p.is_relative_to(REPO / "reliability") else BENCHMARKS).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            out[".".join(parts)] = p
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The benchmark modules ``name`` imports, at its top or inside a function."""
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".") if pkg else []
                up = up[:len(up) - node.level + 1] if node.level > 1 else up
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            t = t.removeprefix("benchmarks.")
            if t in known and t != name:
                found.add(t)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def code_lines(path: Path) -> tuple[int, int]:
    """(lines, code lines): code = not blank, not a comment line, not a docstring."""
    src = path.read_text(encoding="utf-8")
    lines = src.splitlines()
    skip = {i + 1 for i, line in enumerate(lines) if not line.strip() or line.strip().startswith("#")}
    prev = None
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    for i, t in enumerate(toks):
        if (t.type == tokenize.STRING and toks[i + 1].type == tokenize.NEWLINE
                and (prev is None or prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT))):
            skip.update(range(t.start[0], t.end[0] + 1))
        if t.type not in (tokenize.NL, tokenize.COMMENT):
            prev = t
    return len(lines), len(lines) - len(skip & set(range(1, len(lines) + 1)))


def share() -> dict[str, dict[str, int]]:
    def total(files: list[Path]) -> dict[str, int]:
        counts = [code_lines(p) for p in files]
        return {"lines": sum(c[0] for c in counts), "code": sum(c[1] for c in counts)}
    def files(dirs: tuple[str, ...]) -> list[Path]:
        return [p for d in dirs for p in sorted((REPO / d).rglob("*.py"))]
    return {"benchmarks": total(sorted(BENCHMARKS.rglob("*.py"))), "product": total(files(PRODUCT)),
            "tests": total(files(TESTS))}


def main() -> int:
    known = modules()
    graph = {n: imports(n, p, known) for n, p in known.items()}
    long = {n: n_ for n, p in known.items() if (n_ := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    loops = cycles(graph)
    upward = {n: sorted(d for d in deps if not d.startswith("harness")) for n, deps in graph.items()
              if n.startswith("harness") and any(not d.startswith("harness") for d in deps)}
    s = share()
    p = s["product"]
    b, t = s["benchmarks"], s["tests"]
    print(f"benchmarks/: {b['lines']:,} lines ({100 * b['lines'] / (b['lines'] + p['lines']):.1f}% of benchmarks + "
          f"product), {b['code']:,} code lines ({100 * b['code'] / (b['code'] + p['code']):.1f}%)")
    print(f"product (memgrove/ tree/ graphs/ tools/): {p['lines']:,} lines, {p['code']:,} code lines")
    print(f"tests (tests/ and the reliability suite, reliability/; not counted above): {t['lines']:,} lines, "
          f"{t['code']:,} code lines")
    print(f"modules over {MAX_LINES} lines: {long or 'none'}; import cycles: {loops or 'none'}; "
          f"harness importing scripts: {upward or 'none'}")
    return 1 if long or loops or upward else 0


if __name__ == "__main__":
    sys.exit(main())

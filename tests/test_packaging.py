"""Packaging: the wheel's contents, a warning-free build, and how the installed package is found.

The source keeps memgrove.tree, .tools and .graphs in tree/, tools/ and graphs/ beside memgrove/
(setuptools' package-dir). The Makefile installs it in setuptools' strict editable mode: a tree of
links under build/ on a plain sys.path entry, which these tests check from outside the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# what a clone holds of the package, and what the build reads
SOURCES = ["pyproject.toml", "README.md", "LICENSE", "NOTICE", "memgrove", "tree", "tools", "graphs"]


def run_python(code: str, cwd: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """The venv's python running ``code`` from ``cwd``, with none of this run's import settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.run([sys.executable, *flags, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel built from a copy of the sources, offline, and the build's output."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = work / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "--no-index", "-w", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = out.glob("memgrove-*.whl")
    return path, done.stdout + done.stderr


def test_the_build_prints_no_warning(wheel: tuple[Path, str]) -> None:
    _, output = wheel
    warnings = [line for line in output.splitlines() if "warning" in line.lower()]
    assert warnings == [], output


def test_the_wheel_holds_every_package_its_prompts_and_sample_data(wheel: tuple[Path, str]) -> None:
    path, _ = wheel
    names = set(zipfile.ZipFile(path).namelist())
    for package in ("memgrove", "memgrove/tree", "memgrove/tools", "memgrove/graphs"):
        assert f"{package}/__init__.py" in names
    for folder in ("tree", "tools", "graphs"):
        for source in (ROOT / folder).rglob("*.py"):
            assert f"memgrove/{source.relative_to(ROOT).as_posix()}" in names
    # a subpackage added to memgrove/ (and missing from pyproject's list) would be left out
    for source in (ROOT / "memgrove").rglob("*.py"):
        assert source.relative_to(ROOT).as_posix() in names
    prompts = {p.name for p in (ROOT / "graphs" / "prompts").glob("*.md")}
    assert prompts and {f"memgrove/graphs/prompts/{n}" for n in prompts} <= names
    sample = [p.relative_to(ROOT).as_posix() for p in (ROOT / "memgrove" / "data").rglob("*") if p.is_file()]
    assert "memgrove/data/sample/notes/auth_design.md" in sample
    assert set(sample) <= names
    assert {"memgrove/py.typed", "memgrove/tree/py.typed"} <= names
    assert "memgrove/tree/meaning/minilm_tokenizer.json.gz" in names      # the encoder's tokenizer
    # no top-level tree/, tools/ or graphs/ package beside memgrove in site-packages
    assert {n.split("/")[0] for n in names} == {"memgrove", "memgrove-0.1.0.dist-info"}


def test_the_wheel_carries_the_mit_license(wheel: tuple[Path, str]) -> None:
    path, _ = wheel
    with zipfile.ZipFile(path) as z:
        metadata = z.read("memgrove-0.1.0.dist-info/METADATA").decode()
        assert "License-Expression: MIT" in metadata.splitlines()
        licence = z.read("memgrove-0.1.0.dist-info/licenses/LICENSE").decode()
    assert licence == (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "the memgrove authors" in licence
    # the third-party material the wheel carries (the embedding model's tokenizer) and its licence
    with zipfile.ZipFile(path) as z:
        notice = z.read("memgrove-0.1.0.dist-info/licenses/NOTICE").decode()
    assert "minilm_tokenizer.json.gz" in notice and "Apache License, Version 2.0" in notice


def test_a_folder_named_memgrove_in_the_working_directory_does_not_shadow_the_package(tmp_path: Path) -> None:
    # a clone named memgrove/ (no __init__.py at its top) seen from its parent folder: Python would
    # take it for a namespace package if the install were an import hook behind the path finder
    clone = tmp_path / "memgrove"
    (clone / "tree").mkdir(parents=True)
    (clone / "tree" / "__init__.py").write_text("")
    (clone / "README.md").write_text("a clone\n")
    code = ("import memgrove.tree, memgrove.tools, memgrove.graphs, memgrove; "
            "from memgrove import Memory; "
            "print(memgrove.__file__); print(memgrove.tree.__file__)")
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    package, tree = done.stdout.splitlines()
    assert package != "None" and not package.startswith(str(clone))
    assert not tree.startswith(str(clone))


def test_the_install_is_a_plain_path_entry_that_type_checkers_read(tmp_path: Path) -> None:
    # mypy and pyright follow sys.path entries (.pth lines included), not import hooks: each
    # subpackage and the py.typed marker must be found by the path finder alone
    code = """
import importlib.machinery as m, os
top = m.PathFinder.find_spec("memgrove")
assert top is not None and top.origin, "no memgrove package on a sys.path entry"
for name in ("tree", "tools", "graphs"):
    sub = m.PathFinder.find_spec("memgrove." + name, top.submodule_search_locations)
    assert sub is not None and sub.origin, "memgrove." + name + " is not on a sys.path entry"
assert os.path.isfile(os.path.join(os.path.dirname(top.origin), "py.typed"))
"""
    done = run_python(code, tmp_path, "-I")
    assert done.returncode == 0, done.stderr


def test_run_from_the_checkout_the_source_folders_are_the_package() -> None:
    # `python -m ...` at the checkout's root puts memgrove/ first on sys.path: its subpackages
    # come from tree/, tools/ and graphs/ beside it, new files included
    code = "import memgrove.tools, memgrove.graphs.prompts; print(memgrove.__file__); print(memgrove.tools.__file__)"
    done = run_python(code, ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(ROOT / "memgrove" / "__init__.py"), str(ROOT / "tools" / "__init__.py")]

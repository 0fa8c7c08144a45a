"""``make demo`` (``python -m memgrove.demo``) as a newcomer reads it, at 80 and 160 columns.

The demo runs as ``make demo`` runs it, in a subprocess whose width comes from
``COLUMNS`` (what rich reads when stdout is not a terminal).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.demo import questions, sample_dir

_GUIDES = re.compile(r"[│├└─┃┏┓┗┛┡┩┠┨┯┷┿╇━┳┻╋]+")


def demo(*args: str, columns: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGROVE_HOME", "MEMGROVE_MODEL", "LINES")}
    env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "memgrove.demo", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def flat(text: str) -> str:
    """The output as one line of words: wrapping (and tree guides) undone, so a word cut by a
    line break would show as two."""
    return " ".join(_GUIDES.sub(" ", text).split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[int, tuple[str, Path]]:
    out = {}
    for columns in (80, 160):
        keep = tmp_path_factory.mktemp(f"demo{columns}") / "kept"
        res = demo("--keep", str(keep), columns=columns)
        assert res.returncode == 0, res.stderr
        out[columns] = (res.stdout, keep)
    return out


@pytest.mark.parametrize("columns", [80, 160])
def test_no_line_is_cut_and_every_answer_and_title_is_whole(runs, columns):
    stdout, keep = runs[columns]
    lines = stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert not any(line.rstrip().endswith(("…", "...")) and "more" not in line for line in lines)
    text = flat(stdout)
    with Memory.open(keep) as mem:
        for q in questions(sample_dir()):
            a = mem.query(q)            # the same answers, from the cache the demo filled
            if a.out_of_domain:
                continue
            if a.answer.lstrip().startswith("|"):
                continue                # a table: see test_a_table_answer_is_a_table
            words = " ".join(a.answer.replace("**", "").split())
            assert words in text, f"{words!r} is not whole in the demo's output at {columns} columns"
        titles = [e["title"] for f in ("files/auth_design", "files/postgres_tuning") for e in mem.list(f)["entries"]]
    for title in titles[:3]:
        assert " ".join(title.split()) in text, title


@pytest.mark.parametrize("columns", [80, 160])
def test_a_table_row_answers_with_its_header(runs, columns):
    # a row is quoted with its header, its first cell leading (issue 44), never the header line alone
    stdout, _ = runs[columns]
    text = flat(stdout)
    assert "`pool_size` (per pod) — Value: 8" in text, stdout
    assert "| Setting | Value |" not in stdout


def test_it_asks_as_many_questions_as_it_announces(runs):
    stdout, _ = runs[80]
    announced = re.search(r"3\. (\d+) questions", stdout)
    asked = [line for line in stdout.splitlines() if line.startswith("Q: ")]
    assert announced and int(announced.group(1)) == len(asked) == len(questions(sample_dir()))


def test_tier_labels_say_what_ran(runs):
    stdout, _ = runs[160]
    labels = [line.strip() for line in stdout.splitlines() if re.match(r"\s+tier \d ·", line)]
    assert len(labels) == len(questions(sample_dir()))
    for label in labels:
        if "agent loop" in label or "LLM call" in label:
            assert "did not run" in label, label          # no LLM is configured: nothing of the kind ran
    assert any(label.startswith("tier 0 · exact cache") for label in labels)


def test_keep_keeps_the_memory_and_says_how_to_query_it(runs):
    stdout, keep = runs[80]
    assert (keep / ".memgrove" / "tree").is_dir()
    assert f"memgrove --root {keep} query" in flat(stdout)
    res = CliRunner().invoke(cli, ["--root", str(keep), "query", "When is Ana's trip to Lisbon?"])
    assert res.exit_code == 0 and "April 14 to April 21" in res.stdout.splitlines()[0]


def test_every_sample_question_is_answered_by_what_it_asks_for(runs):
    # the answer is the line after each question: the dog's name is Pixel, not a sentence about names
    words = flat(runs[160][0])
    assert "Q: What is the name of Ben's dog? Pixel." in words
    assert "Q: How long does a JWT access token live? Access token" in words and "15 minutes" in words
    assert "Q: When is Ana's trip to Lisbon? Speaking of walking, I booked my trip to Lisbon! April 14 to April 21" in words


def test_without_keep_no_temp_path_is_printed():
    res = demo(columns=100)
    assert res.returncode == 0, res.stderr
    assert tempfile.gettempdir() not in res.stdout and "memgrove-demo-" not in res.stdout
    assert "--keep DIR" in res.stdout


def test_keep_refuses_an_existing_memory(runs):
    _, keep = runs[160]
    res = demo("--keep", str(keep), columns=80)
    assert res.returncode == 2 and "already exists" in res.stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(flag):
    res = demo(flag, columns=80)
    assert res.returncode == 0
    assert "--keep DIR" in res.stdout and "without an LLM" in res.stdout

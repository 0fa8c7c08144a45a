"""Text from the tree printed by the CLI is shown, never obeyed.

Titles, bodies, journal reasons, file names and error messages come from curated chats, LLMs
and hand edits. Rich markup in them (``[/dim]``, ``[link=...]``) must neither break a listing
nor style or link anything, and terminal controls (OSC 52 clipboard writes, CSI sequences, C1
controls, bidirectional overrides, a bare carriage return) must reach the terminal as visible
text. ``--json`` output carries them only as ``\\u`` escapes and loads back to the same text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.terminal import dumps, safe, safe_markup

OSC52 = "\x1b]52;c;aGFja2Vk\x07"          # writes "hacked" to the clipboard
CSI = "\x1b[2J\x1b[31m"                    # clears the screen, turns text red
C1 = "\x9b31m"                             # the 8-bit CSI
BIDI = "\u202e"                            # right-to-left override
CR = "shown\rhidden"                       # a bare carriage return overwrites the line
MARKUP = "[/dim] [link=https://evil.example]bank[/link] [bold red]"
HOSTILE = f"{OSC52}{CSI}{C1}{BIDI}{CR}"

# what a terminal acts on: C0 but tab and newline, DEL, C1, bidi controls
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

ENTRY = "ops/deploy/key.md"


def test_safe_shows_controls_as_text():
    assert safe(f"a{OSC52}b") == "a\\x1b]52;c;aGFja2Vk\\x07b"
    assert safe(f"x{C1}{BIDI}\r") == "x\\x9b31m\\u202e\\x0d"
    assert safe("line one\r\n\tline two\n") == "line one\n\tline two\n"
    assert safe_markup("[/dim] \\") == "\\[/dim] \\\\"


def test_dumps_escapes_every_control_and_loads_back():
    data = {"t": HOSTILE + MARKUP + "\x7f"}
    out = dumps(data)
    assert not UNSAFE.search(out.replace("\n", ""))
    assert json.loads(out) == data


@pytest.fixture
def home(tmp_path: Path) -> Path:
    m = Memory.open(tmp_path, create=True, durable=False)
    m.curate([{"op": "ADD", "path": ENTRY, "title": f"Deploy key {MARKUP}",
               "content": f"The deploy key rotates weekly. {HOSTILE} {MARKUP}",
               "reason": f"seed {MARKUP} {OSC52}"}])
    root = m.tree.root
    hand = root / "ops" / "hand"
    hand.mkdir(parents=True)
    # a hand-written title: YAML's double-quoted escapes give real control characters
    (hand / "note.md").write_text('---\ntitle: "\\e]52;c;aGk=\\a deploy [/dim] [link=https://evil.example]x"\n---\n'
                                  "The deploy key lives in the vault.\n")
    # a file name with controls and markup, unreadable (its error names it)
    (hand / f"[link=javascript:x]{OSC52}.md").write_text("---\ntitle: [unclosed\n---\n")
    m.close()
    return tmp_path


def run(home: Path, *args: str):
    res = CliRunner(env={"COLUMNS": "400"}).invoke(cli, ["--root", str(home), *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res


def assert_shown_not_obeyed(out: str) -> None:
    assert not UNSAFE.search(out), repr(UNSAFE.findall(out)[:5])


COMMANDS = {
    "tree": ["tree"],
    "history": ["history"],
    "show": ["show", ENTRY],
    "query": ["query", "how often does the deploy key rotate"],
    "search": ["search", "deploy key"],
    "search none": ["search", f"zzqx{OSC52}"],
    "doctor": ["doctor"],
    "stats": ["stats"],
}


@pytest.mark.parametrize("args", COMMANDS.values(), ids=COMMANDS.keys())
def test_every_command_prints_tree_text_inert(home, args):
    run(home, "query", f"deploy key {OSC52}")     # something in the query log for stats
    res = run(home, *args)
    assert res.exit_code in (0, 1), res.output
    assert_shown_not_obeyed(res.output)


def test_markup_in_titles_and_reasons_is_printed_as_written(home):
    tree = run(home, "tree")
    assert tree.exit_code == 0
    assert MARKUP in tree.output                                      # the title, word for word
    assert "[/dim] [link=https://evil.example]x" in tree.output       # the hand-written one
    assert "\\x1b]52;c;aGk=\\x07" in tree.output
    assert "[link=javascript:x]\\x1b]52;c;aGFja2Vk\\x07.md" in tree.output   # the file name
    hist = run(home, "history")
    assert hist.exit_code == 0 and MARKUP in hist.output and "\\x1b]52;c;aGFja2Vk\\x07" in hist.output
    found = run(home, "search", "deploy key")
    assert found.exit_code == 0 and MARKUP in found.output


def test_show_and_query_print_chat_controls_as_text(home):
    shown = run(home, "show", ENTRY)
    assert shown.exit_code == 0 and "\\x1b]52;c;aGFja2Vk\\x07" in shown.output
    answer = run(home, "query", "how often does the deploy key rotate")
    assert answer.exit_code == 0 and "\\x1b[2J" in answer.output and "\\x9b31m\\u202e" in answer.output


def test_errors_are_printed_inert(home, monkeypatch):
    monkeypatch.delenv("MEMGROVE_RAISE_ERRORS")
    res = run(home, "curate", "--ops", str(home / f"missing{OSC52}.json"))
    assert res.exit_code == 1 and "cannot read operations" in res.output and "\\x1b]52" in res.output
    assert_shown_not_obeyed(res.output)
    res = run(home, "show", f"ops/deploy/{OSC52}x.md")
    assert res.exit_code == 1 and "Error" in res.output
    assert_shown_not_obeyed(res.output)
    bad = home / "ops.json"
    bad.write_text(json.dumps([{"op": "ADD", "path": ENTRY, "title": "t", "content": "c", "reason": OSC52}]))
    res = run(home, "curate", "--ops", str(bad))
    assert res.exit_code == 1 and "already exists" in res.output
    assert_shown_not_obeyed(res.output)


def test_curate_report_and_undo_print_inert(home):
    ops = home / "ops.json"
    ops.write_text(json.dumps([{"op": "ADD", "path": "ops/deploy/other.md", "title": f"Other {MARKUP}",
                                "content": f"{OSC52}{CSI}{C1}{BIDI}", "reason": MARKUP}]))
    res = run(home, "curate", "--ops", str(ops))
    assert res.exit_code == 0
    assert_shown_not_obeyed(res.output)
    op_id = re.search(r"\[([^\]]+)\]\s*$", res.output.strip()).group(1)
    res = run(home, "undo", op_id)
    assert res.exit_code == 0, res.output
    assert_shown_not_obeyed(res.output)


JSON_COMMANDS = {k: v for k, v in COMMANDS.items() if k != "search none"}


@pytest.mark.parametrize("args", JSON_COMMANDS.values(), ids=JSON_COMMANDS.keys())
def test_json_output_escapes_controls_and_keeps_the_text(home, args):
    res = run(home, *args, "--json")
    assert res.exit_code in (0, 1), res.output
    assert_shown_not_obeyed(res.output.replace("\n", ""))
    json.loads(res.output)


def test_json_show_gives_back_the_text_exactly(home):
    data = json.loads(run(home, "show", ENTRY, "--json").output)
    assert HOSTILE.replace("\r", "") in data["text"].replace("\r", "") or OSC52 in data["text"]
    assert OSC52 in data["text"] and C1 in data["text"] and BIDI in data["text"]


def test_demo_tree_prints_titles_as_written(home):
    from io import StringIO

    from rich.console import Console
    from rich.tree import Tree

    from memgrove import demo

    out = StringIO()
    mem = Memory.open(home, durable=False)
    try:
        root = Tree("tree")
        demo._tree(mem, "", root)
        Console(file=out, width=400, emoji=False).print(root)
    finally:
        mem.close()
    assert "[/dim] [link=https://evil.example]bank" in out.getvalue()
    assert_shown_not_obeyed(out.getvalue())

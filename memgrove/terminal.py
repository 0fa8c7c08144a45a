"""Text from the tree made safe to print on a terminal.

Titles, bodies, journal reasons, paths and error messages come from files anyone
may edit and from LLMs: printed as they are, an escape sequence in a curated chat
could write the user's clipboard (OSC 52), move the cursor or hide what follows,
and rich markup in a title (``[/dim]``, ``[link=...]``) could break the whole
listing or show a link other than it says. Every line the CLI prints goes
through ``safe`` (plain output) or ``safe_markup`` (rich output); JSON goes
through ``dumps``.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# C0 controls but tab and newline, DEL, C1 controls (an 8-bit CSI is U+009B), and the
# bidirectional overrides and isolates that make text read other than it is stored
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: Any) -> str:
    """``text`` with every control character shown as ``\\x1b``-style text instead of acting on the
    terminal; newlines and tabs are kept (a Windows line end becomes a newline)."""
    return _UNSAFE.sub(_shown, str(text).replace("\r\n", "\n"))


def safe_markup(text: Any) -> str:
    """``safe(text)`` for a rich markup string: square brackets are printed, not parsed."""
    from rich.markup import escape

    return escape(safe(text))


def dumps(data: Any) -> str:
    """JSON for a terminal: ``json.dumps`` escapes C0 controls, and this escapes the rest
    (DEL, C1, bidirectional controls) the same ``\\u`` way, so loading it gives back the same text."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo(text: Any = "", *, err: bool = False) -> None:
    import click   # here: the console script's fast path (memgrove/cli/fastpath.py) prints without click

    click.echo(safe(text), err=err)

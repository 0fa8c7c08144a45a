"""Counting tokens the way the reports do: tiktoken's o200k_base when it loads, else characters / 4; and the
text of a chat message, whose content may be a list of parts."""

from __future__ import annotations

import math
from typing import Any


def message_text(m: Any) -> str:
    """A chat message's text (a string stands for itself): a content list's text parts joined."""
    c = getattr(m, "content", m)
    if isinstance(c, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c)


class TokenCounter:
    """tiktoken o200k_base when it loads; otherwise ceil(chars / 4)."""

    def __init__(self) -> None:
        self._enc = None
        try:
            import tiktoken

            self._enc = tiktoken.get_encoding("o200k_base")
            self.method = "tiktoken o200k_base"
        except Exception as exc:  # noqa: BLE001 - offline: the encoding file cannot be downloaded
            self.method = (f"ceil(characters / 4) per segment (tiktoken o200k_base could not be loaded: "
                           f"{type(exc).__name__})")

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if self._enc is not None:
            return len(self._enc.encode(text, disallowed_special=()))
        return math.ceil(len(text) / 4)

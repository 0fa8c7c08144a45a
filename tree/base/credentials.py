"""Credentials kept out of what memgrove prints: a remote's user and secret never reach a log, an
error message or ``/health``."""

from __future__ import annotations

import re


def redact(text: str) -> str:
    """``https://user:secret@host/x`` -> ``https://***@host/x``."""
    return re.sub(r"(\w+://)[^/@\s]+@", r"\1***@", text)

"""Untrusted markdown to inert HTML (placeholder until the renderer lands: escaped text)."""

from __future__ import annotations

from typing import Callable

from markupsafe import Markup, escape


def render(text: str, *, entry_path: str, exists: Callable[[str], bool] | None = None) -> Markup:
    return Markup("<pre class=\"body\">") + escape(text) + Markup("</pre>")

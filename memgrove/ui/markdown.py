"""An entry's markdown body as HTML that is safe to put in the page.

Bodies come from files anyone may edit, from agents and from LLMs, so they are
untrusted. The safety comes from what the renderer cannot produce, not from
cleaning its output:

- raw HTML is off: ``<script>``, ``<svg onload=...>`` and the like are shown as
  text (markdown-it escapes every text, attribute and code block);
- a link is kept only if its target is ``http:``, ``https:``, ``mailto:``, a
  ``#fragment`` or a path; anything else (``javascript:``, ``data:``, ``file:``,
  ``vbscript:``, any other scheme) stays in the page as its source text;
- a path is resolved against the entry's folder, as a relative link in a file
  is, and becomes ``/ui/entry/<path>``; one that would leave the tree or name a
  reserved file is shown as text;
- images are never loaded: an image becomes a link to its address;
- a body longer than ``MAX_CHARS`` is cut, with a notice, and one that takes markdown-it
  longer than ``MAX_SECONDS`` to parse is shown as plain text, so no file can make a page
  slow.

The page's Content-Security-Policy (``memgrove/ui/render.py``) is a second wall
behind this one; this module does not rely on it.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Callable
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape

from memgrove.tree.entries.paths import literal_path

MAX_CHARS = 200_000
# markdown-it-py parses ordinary text at about 4 µs a character here, but some inputs cost it
# far more (200,000 characters of "![[" take it 4 s); past this a body is shown as plain text.
MAX_SECONDS = 1.0
MAX_LOOKUPS = 200     # `exists` calls a body may make (each may read a file)
ENTRY_URL = "/ui/entry/"
EXTERNAL_REL = "noopener noreferrer nofollow"

_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
# Browsers drop tabs and newlines inside a URL and ignore leading spaces and controls, so
# "java\tscript:" is a javascript: link to them: such a target is never read as a path.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.\-]{0,40}")


def _valid_link(url: str) -> bool:
    """markdown-it's gate for every link, image and autolink target (already normalized:
    entities decoded, then percent-encoded). Stricter than its default, which lets
    ``data:image/png`` through: only the schemes in ``_SCHEMES`` or no scheme at all."""
    m = _SCHEME.match(url.strip())
    return m is None or m.group(1).lower() in _SCHEMES


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _valid_link  # type: ignore[method-assign]
    md.block.tokenize = _bounded(md.block.tokenize)  # type: ignore[method-assign]
    md.inline.ruler.before("text", "deadline", _deadline)
    md.inline.ruler2.push("deadline", _deadline_after)   # tables and long documents: between rules too
    return md


class _TooSlow(Exception):
    """The body took longer than ``MAX_SECONDS`` to parse."""


def _deadline(state: StateInline, silent: bool) -> bool:
    """First inline rule, so it runs at every position markdown-it tries (also while it looks
    for the end of a link label, where ``[[[[...`` costs it the most): raises once past the
    deadline; otherwise lets the other rules parse."""
    if time.monotonic() > state.env["deadline"]:
        raise _TooSlow
    return False


def _deadline_after(state: StateInline) -> None:
    if time.monotonic() > state.env["deadline"]:
        raise _TooSlow


def _bounded(tokenize: Callable[..., None]) -> Callable[..., None]:
    """markdown-it's block tokenizer, except that the lines nested deeper than ``maxNesting``
    (400 ``>`` in a row) are shown as a code block: markdown-it itself drops them silently,
    so a body could hide its own tail."""
    def bounded(state: StateBlock, startLine: int, endLine: int) -> None:
        if time.monotonic() > state.env["deadline"]:
            raise _TooSlow
        if state.level < state.md.options.maxNesting:
            return tokenize(state, startLine, endLine)
        tok = state.push("code_block", "code", 0)
        tok.content = state.getLines(startLine, endLine, state.blkIndent, True)
        tok.map = [startLine, endLine]
        state.line = endLine
        return None
    return bounded


_MD = _parser()


def render(text: str, *, entry_path: str, exists: Callable[[str], bool] | None = None,
           entry_url: Callable[[str], str] | None = None) -> Markup:
    """HTML of the markdown ``text`` of the entry at ``entry_path`` (relative to the tree).

    ``exists(path)`` tells whether a tree-relative path is a file in the tree; given, a link
    that is not found next to the entry is tried from the tree's root (``related`` links are
    written that way), and a link found in neither place is marked ``class="missing"``. It is
    asked at most ``MAX_LOOKUPS`` times a body (it may read a file each time).
    ``entry_url(path)`` is the page's address of a tree path (by default ``/ui/entry/<path>``;
    a page of another project adds its ``?project=``); the link's ``#fragment`` is added to it.
    """
    length = len(text)
    if length > MAX_CHARS:
        text = text[:MAX_CHARS]
    try:
        tokens = _MD.parse(text, {"deadline": time.monotonic() + MAX_SECONDS})
    except _TooSlow:
        return Markup(f'<pre class="plain">{escape(text)}</pre>\n<p class="cut">This entry is shown as plain '
                      f'text: its markdown took too long to read.</p>\n') + _cut_notice(length)
    links = _Links(posixpath.dirname(entry_path.strip("/")), exists, entry_url or _entry_url)
    for tok in tokens:
        if tok.type == "fence" and not _LANGUAGE.fullmatch(tok.info.split(maxsplit=1)[0] if tok.info.strip() else ""):
            tok.info = ""   # its first word becomes a class name: only a plain language name may
        if tok.type == "inline" and tok.children:
            tok.children = links.inline(tok.children)
    return Markup(_MD.renderer.render(tokens, _MD.options, {})) + _cut_notice(length)


def _entry_url(path: str) -> str:
    return ENTRY_URL + quote(path, safe="/")


def _cut_notice(length: int) -> Markup:
    if length <= MAX_CHARS:
        return Markup("")
    return Markup(f'<p class="cut">This entry is {length:,} characters long; only the first '
                  f'{MAX_CHARS:,} are shown.</p>\n')


class _Links:
    """The links of one body: where each goes, or that it is shown as text."""

    def __init__(self, folder: str, exists: Callable[[str], bool] | None, entry_url: Callable[[str], str]):
        self.folder = folder
        self.exists = exists
        self.entry_url = entry_url
        self.found: dict[str, bool] = {}

    def inline(self, children: list[Token]) -> list[Token]:
        """The inline tokens with every link target made safe and every image turned into a link."""
        out: list[Token] = []
        refused: str | None = None      # the target of the link being shown as text, if any
        in_link = False
        for tok in children:
            if tok.type == "link_open":
                href, attrs = self.target(str(tok.attrs.get("href", "")))
                if href is None:
                    refused = str(tok.attrs.get("href", ""))
                    continue
                in_link = True
                tok.attrs = {"href": href, **attrs, **({"title": tok.attrs["title"]} if "title" in tok.attrs else {})}
            elif tok.type == "link_close":
                if refused is not None:
                    out.append(_text(f" ({unquote(refused)})"))
                    refused = None
                    continue
                in_link = False
            elif tok.type == "image":
                out += self.image(tok, in_link or refused is not None)
                continue
            out.append(tok)
        return out

    def image(self, tok: Token, in_link: bool) -> list[Token]:
        """An image as a link to it (the page loads nothing the entry names), or as its text."""
        src = str(tok.attrs.get("src", ""))
        label = [_text("image: "), *(tok.children or [])]
        href, attrs = self.target(src)
        if in_link or href is None:
            return [*label, *([] if href is not None else [_text(f" ({unquote(src)})")])]
        link = Token("link_open", "a", 1)
        link.attrs = {"href": href, **attrs, "class": "image"}
        return [link, *label, Token("link_close", "a", -1)]

    def target(self, href: str) -> tuple[str | None, dict[str, str]]:
        """``(safe href, extra attributes)`` of a link target, or ``(None, {})`` to show it as text."""
        if href.startswith("#"):
            return href, {}
        m = _SCHEME.match(href)
        if m:   # _valid_link let only http, https and mailto through
            if m.group(1).lower() == "mailto":
                return href, {}
            return href, {"rel": EXTERNAL_REL}
        found = self.tree_path(href)
        if found is None:
            return None, {}
        path, fragment, there = found
        url = self.entry_url(path) + ("#" + quote(fragment, safe="") if fragment else "")
        return url, ({} if there else {"class": "missing"})

    def tree_path(self, href: str) -> tuple[str, str, bool] | None:
        """``(tree path, fragment, found)`` of a relative link, or None when it is no path inside
        the tree (it climbs out, names a reserved file, is protocol-relative, hides a scheme)."""
        if href.startswith("//"):
            return None
        ref, _, fragment = href.partition("#")
        raw = unquote(ref.partition("?")[0])
        if not raw or _CONTROL.search(raw) or "\\" in raw or ":" in raw.split("/")[0] or raw.startswith("~"):
            return None
        if raw.startswith(("/", "@")):        # from the tree's root (``@`` is the legacy link form)
            tries = [raw.lstrip("/@")]
        else:
            tries = [posixpath.join(self.folder, raw)]
            if not raw.startswith("."):
                tries.append(raw)             # a `related`-style path from the root
        paths = [lit for t in tries if (lit := _inside(t)) is not None]
        if not paths:
            return None
        if self.exists is None:               # next to the entry, unless that is no tree path
            return paths[0], unquote(fragment), True
        for p in paths:
            there = self.is_there(p)
            if there is None or there:        # unknown past MAX_LOOKUPS: not marked missing
                return p, unquote(fragment), True
        return paths[0], unquote(fragment), False

    def is_there(self, path: str) -> bool | None:
        if path not in self.found:
            if len(self.found) >= MAX_LOOKUPS or self.exists is None:
                return None
            self.found[path] = bool(self.exists(path))
        return self.found[path]


def _inside(path: str) -> str | None:
    """``path`` with ``.`` and ``..`` resolved, if that is a path inside the tree that names no
    reserved file (the tree's own rule, ``literal_path``); else None."""
    norm = posixpath.normpath(path) if path else ""
    return literal_path(norm) if norm and norm != "." else None


def _text(content: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = content
    return tok


__all__ = ["render", "MAX_CHARS", "MAX_SECONDS", "MAX_LOOKUPS", "ENTRY_URL", "EXTERNAL_REL"]

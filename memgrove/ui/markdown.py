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
- a body longer than ``MAX_CHARS`` is cut, with a notice, so one huge file
  cannot make a page slow.

The page's Content-Security-Policy (``memgrove/ui/render.py``) is a second wall
behind this one; this module does not rely on it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from memgrove.tree.entries.paths import literal_path

MAX_CHARS = 200_000
ENTRY_URL = "/ui/entry/"
EXTERNAL_REL = "noopener noreferrer nofollow"

_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
# Browsers drop tabs and newlines inside a URL and ignore leading spaces and controls, so
# "java\tscript:" is a javascript: link to them: such a target is never read as a path.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


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
    return md


_MD = _parser()


def render(text: str, *, entry_path: str, exists: Callable[[str], bool] | None = None) -> Markup:
    """HTML of the markdown ``text`` of the entry at ``entry_path`` (relative to the tree).

    ``exists(path)`` tells whether a tree-relative path is a file in the tree; given, a link
    that is not found next to the entry is tried from the tree's root (``related`` links are
    written that way), and a link found in neither place is marked ``class="missing"``.
    """
    cut = len(text) > MAX_CHARS
    if cut:
        text = text[:MAX_CHARS]
    tokens = _MD.parse(text)
    folder = posixpath.dirname(entry_path.strip("/"))
    for tok in tokens:
        if tok.type == "inline" and tok.children:
            tok.children = _links(tok.children, folder, exists)
    html = _MD.renderer.render(tokens, _MD.options, {})
    if cut:
        html += (f'<p class="cut">This entry is {len(text):,}+ characters long; only the first '
                 f'{MAX_CHARS:,} are shown.</p>\n')
    return Markup(html)


def _links(children: list[Token], folder: str, exists: Callable[[str], bool] | None) -> list[Token]:
    """The inline tokens with every link target made safe and every image turned into a link."""
    out: list[Token] = []
    refused: str | None = None      # the target of the link being shown as text, if any
    in_link = False
    for tok in children:
        if tok.type == "link_open":
            href, attrs = _target(str(tok.attrs.get("href", "")), folder, exists)
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
            out += _image(tok, folder, exists, in_link or refused is not None)
            continue
        out.append(tok)
    return out


def _image(tok: Token, folder: str, exists: Callable[[str], bool] | None, in_link: bool) -> list[Token]:
    """An image as a link to it (the page loads nothing the entry names), or as its text."""
    src = str(tok.attrs.get("src", ""))
    label = [_text("image: "), *(tok.children or [])]
    href, attrs = _target(src, folder, exists)
    if in_link or href is None:
        return [*label, *([] if href is not None else [_text(f" ({unquote(src)})")])]
    link = Token("link_open", "a", 1)
    link.attrs = {"href": href, **attrs, "class": "image"}
    return [link, *label, Token("link_close", "a", -1)]


def _target(href: str, folder: str, exists: Callable[[str], bool] | None) -> tuple[str | None, dict[str, str]]:
    """``(safe href, extra attributes)`` of a link target, or ``(None, {})`` to show it as text."""
    if href.startswith("#"):
        return href, {}
    m = _SCHEME.match(href)
    if m:   # _valid_link let only http, https and mailto through
        if m.group(1).lower() == "mailto":
            return href, {}
        return href, {"rel": EXTERNAL_REL}
    path = _tree_path(href, folder, exists)
    if path is None:
        return None, {}
    url = ENTRY_URL + quote(path[0], safe="/")
    if path[1]:
        url += "#" + quote(path[1], safe="")
    return url, ({} if path[2] else {"class": "missing"})


def _tree_path(href: str, folder: str, exists: Callable[[str], bool] | None) -> tuple[str, str, bool] | None:
    """``(tree path, fragment, found)`` of a relative link, or None when it is no path inside
    the tree (it climbs out, names a reserved file, is protocol-relative, hides a scheme)."""
    if href.startswith("//"):
        return None
    ref, _, fragment = href.partition("#")
    ref = ref.partition("?")[0]
    raw = unquote(ref)
    if not raw or _CONTROL.search(raw) or "\\" in raw or ":" in raw.split("/")[0]:
        return None
    if raw.startswith(("/", "@")):        # from the tree's root (``@`` is the legacy link form)
        tries = [raw.lstrip("/@")]
    else:
        tries = [posixpath.join(folder, raw)]
        if exists is not None and not raw.startswith("."):
            tries.append(raw)             # a `related`-style path from the root
    paths: list[str] = []
    for t in tries:
        norm = posixpath.normpath(t) if t else ""
        lit = literal_path(norm) if norm and norm != "." else None
        if lit is not None:
            paths.append(lit)
    if not paths:
        return None
    for p in paths:
        if exists is None or exists(p):
            return p, unquote(fragment), True
    return paths[0], unquote(fragment), False


def _text(content: str) -> Token:
    tok = Token("text", "", 0)
    tok.content = content
    return tok


__all__ = ["render", "MAX_CHARS", "ENTRY_URL", "EXTERNAL_REL"]

"""``/memories`` paths of the file-style memory tool, resolved to tree paths.

Paths are untrusted: one that leaves ``/memories``, is too shallow or deep, has a name longer
than a file system takes, or is not in the tree's lower-case snake_case form is refused with the
form to use, never repaired (``memory_files.py`` describes the mapping).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from memgrove.tree.base.errors import InvalidPath
from memgrove.tree.entries.paths import MAX_NAME_BYTES, normalize_entry_path, normalize_folder

ROOT = "/memories"
FORM = f"{ROOT}/<domain>/<topic>[/<subtopic>]/<name>.md"
_SHOWN = 120          # characters of a path or old_str quoted back in an error


@dataclass(frozen=True)
class Target:
    """A ``/memories`` path resolved in the tree: ``rel`` is '' for the root."""

    given: str
    rel: str
    is_file: bool


def one_line(text: str) -> str:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "…"
    return shown.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def resolve(path: Any, *, write: bool = False,
            existing: Callable[[str, bool], str | None] | None = None) -> Target:
    """The tree path a ``/memories`` path names. A new path (``write``) must be in the canonical
    form; other commands also reach a hand-placed file or folder by its exact name
    (``existing(rel, is_file)`` finds it)."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidPath(f"a path is required, e.g. {ROOT}/notes/general/progress.md")
    if "\x00" in path or "\\" in path:
        raise InvalidPath(f"Path {one_line(path)} is invalid: no NUL bytes or backslashes")
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise InvalidPath(f"Path must start with {ROOT}, got: {one_line(path)}")
    rest = path[len(ROOT):].strip("/")
    parts = rest.split("/") if rest else []
    if any(p in (".", "..") for p in parts):
        raise InvalidPath(f"Path {one_line(path)} would escape {ROOT} directory")
    if any(p == "" for p in parts):
        raise InvalidPath(f"Path {one_line(path)} has an empty segment")
    if any(len(p.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for p in parts):
        # before any file system call: the kernel's ENAMETOOLONG is no answer for a model
        raise InvalidPath(f"Path {one_line(path)} has a name longer than {MAX_NAME_BYTES} bytes")
    if not parts:
        return Target(path, "", False)
    is_file = parts[-1].lower().endswith(".md")
    if not is_file and "." in parts[-1]:
        raise InvalidPath(f"memory files are markdown: name it {one_line(path.rsplit('.', 1)[0])}.md")
    if not write and existing is not None and (lit := existing(rest, is_file)):
        return Target(path, lit, is_file)
    try:
        canonical = normalize_entry_path(rest) if is_file else normalize_folder(rest)
    except InvalidPath as exc:
        raise InvalidPath(f"invalid memory path {one_line(path)} ({exc}); files live at {FORM}, "
                          f"e.g. {ROOT}/notes/general/progress.md") from None
    if canonical != rest:
        raise InvalidPath(f"invalid memory path {one_line(path)}: names are lower-case snake_case; "
                          f"use {ROOT}/{canonical}")
    return Target(path, canonical, is_file)

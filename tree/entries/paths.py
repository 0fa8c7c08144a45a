"""Path rules of the Context Tree.

An entry lives at ``domain/topic[/subtopic]/entry.md``: two or three folder
segments plus the file, every name snake_case. Paths come from LLMs and users,
so they are untrusted: anything absolute, containing ``..``, too deep, reserved
or resolving (through symlinks) outside the tree is rejected, never repaired
into somewhere unexpected.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from ..base.errors import InvalidPath

CONTEXT_FILE = "context.md"
MIN_FOLDERS = 2
MAX_FOLDERS = 3
MAX_SEGMENT = 80

_NON_WORD = re.compile(r"[^a-z0-9]+")


def is_context(path: str) -> bool:
    """Whether ``path`` is a folder's context file (``<folder>/context.md``), not an entry."""
    return path.endswith("/" + CONTEXT_FILE)


def snake_case(name: str) -> str:
    """``"JWT Refresh-Token (v2)"`` -> ``"jwt_refresh_token_v2"``; may return ``""``."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return _NON_WORD.sub("_", folded.lower()).strip("_")[:MAX_SEGMENT].strip("_")


def _check_raw(path: str) -> list[str]:
    if not isinstance(path, str) or not path.strip():
        raise InvalidPath("path is empty: give domain/topic/entry.md")
    if "\x00" in path:
        raise InvalidPath(f"path {path!r} contains a NUL byte")
    raw = path.strip().replace("\\", "/")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw) or raw.startswith("~"):
        raise InvalidPath(f"path {path!r} is absolute: give it relative to the tree, e.g. domain/topic/entry.md")
    if raw.startswith("@"):  # legacy ByteRover link form "@domain/topic/file.md"
        raw = raw[1:]
    parts = raw.split("/")
    if any(p in ("..", ".") for p in parts):
        raise InvalidPath(f"path {path!r} contains '.' or '..': paths may not leave or re-enter the tree")
    if any(p == "" for p in parts):
        raise InvalidPath(f"path {path!r} has an empty segment")
    for p in parts:
        if p.startswith("_") or p.startswith("."):
            raise InvalidPath(f"path {path!r}: names starting with '_' or '.' are reserved")
    return parts


def normalize_folder(path: str, *, min_depth: int = 1) -> str:
    """Normalize a folder path (``domain`` or ``domain/topic[/subtopic]``)."""
    parts = _check_raw(path)
    if len(parts) > MAX_FOLDERS:
        raise InvalidPath(f"folder {path!r} is {len(parts)} levels deep; at most {MAX_FOLDERS} (domain/topic/subtopic)")
    if len(parts) < min_depth:
        raise InvalidPath(f"folder {path!r} needs at least {min_depth} level(s)")
    out = []
    for p in parts:
        s = snake_case(p)
        if not s:
            raise InvalidPath(f"path {path!r}: segment {p!r} has no letters or digits")
        out.append(s)
    return "/".join(out)


def normalize_entry_path(path: str) -> str:
    """Normalize an entry path to ``domain/topic[/subtopic]/name.md``.

    >>> normalize_entry_path("Auth/JWT Tokens/Refresh Rotation")
    'auth/jwt_tokens/refresh_rotation.md'
    """
    parts = _check_raw(path)
    *folders, name = parts
    if len(folders) < MIN_FOLDERS or len(folders) > MAX_FOLDERS:
        raise InvalidPath(
            f"path {path!r} has {len(folders)} folder level(s); an entry needs "
            f"{MIN_FOLDERS} or {MAX_FOLDERS}: domain/topic[/subtopic]/entry.md"
        )
    stem = name[:-3] if name.lower().endswith(".md") else name
    if stem.lower() == "context":
        raise InvalidPath(f"path {path!r}: context.md is reserved for folder overviews")
    segs = []
    for p in [*folders, stem]:
        s = snake_case(p)
        if not s:
            raise InvalidPath(f"path {path!r}: segment {p!r} has no letters or digits")
        segs.append(s)
    if segs[-1] == "context":
        raise InvalidPath(f"path {path!r}: context.md is reserved for folder overviews")
    return "/".join(segs[:-1]) + "/" + segs[-1] + ".md"


def normalize_any(path: str) -> str:
    """Normalize a path that may name an entry (``x.md`` or 3+ parts) or a folder."""
    raw = path.strip().replace("\\", "/").rstrip("/")
    if raw.lower().endswith(".md"):
        return normalize_entry_path(raw)
    return normalize_folder(raw)


def resolve_inside(root: Path, rel: str) -> Path:
    """Absolute path of ``rel`` under ``root``; raises if it would escape.

    Symlinks are resolved: a symlinked folder or file that points outside the
    tree is an escape even when the path text looks harmless.
    """
    root_real = Path(os.path.realpath(root))
    target = Path(os.path.realpath(root / rel))
    if target != root_real and root_real not in target.parents:
        raise InvalidPath(f"path {rel!r} resolves outside the tree (symlink?); refused")
    return root / rel


def is_entry_file(rel: str) -> bool:
    """True for a relative path that names an entry (not a context file)."""
    parts = rel.split("/")
    return (
        rel.endswith(".md")
        and MIN_FOLDERS + 1 <= len(parts) <= MAX_FOLDERS + 1
        and parts[-1] != CONTEXT_FILE
        and not any(p.startswith((".", "_")) for p in parts)
    )


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_NAME_BYTES = 255   # the longest file or folder name common file systems allow


def link_problem(link: str) -> str | None:
    """Why a link written in an entry (``related``) cannot be followed, or None for a path
    that names an entry inside the tree.

    Links are read from files anyone may edit, so they are checked as text only: a link
    that is absolute, climbs out with ``..``, names a reserved file or is no entry path is
    reported (``doctor``) and ignored, never resolved or probed on the file system.
    """
    if not isinstance(link, str) or not link.strip():
        return "empty link"
    if _CONTROL.search(link):
        return "contains control characters"
    if "\\" in link:
        return "contains a backslash: links are written with '/'"
    try:
        _check_raw(link)
    except InvalidPath as exc:
        return str(exc).replace(f"path {link!r}", "", 1).strip(" :") or str(exc)
    if link != link.strip() or link.startswith("@"):
        return "not an entry path: write domain/topic[/subtopic]/entry.md"
    if any(len(p.encode("utf-8")) > MAX_NAME_BYTES for p in link.split("/")):
        return f"a name in it is longer than {MAX_NAME_BYTES} bytes"
    if not is_entry_file(link):
        return "not an entry path: write domain/topic[/subtopic]/entry.md"
    return None


def folder_of(rel: str) -> str:
    """``a/b/c/x.md`` -> ``a/b/c``: the folder a file sits in."""
    return rel.rsplit("/", 1)[0]


def parent_folders(rel: str) -> list[str]:
    """``a/b/c/x.md`` -> ``["a", "a/b", "a/b/c"]``."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def natural_key(name: str) -> list:
    """Sort key putting ``s1_m2`` before ``s1_m10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def literal_path(path: str) -> str | None:
    """``path`` exactly as given, not snake_cased, if its text is a safe tree path to a
    markdown file or folder (relative, no '.' or '..', no reserved names, at most an entry's
    depth); else None.

    A file dropped into the tree by hand (``Team-Notes/On Call/Rota 2024.md``) is indexed
    and found under that path, so reads and operations given that exact path reach it when
    it exists; the caller checks that, and ``resolve_inside`` still refuses symlinks out.
    """
    try:
        parts = _check_raw(path)
    except InvalidPath:
        return None
    if len(parts) > MAX_FOLDERS + 1 or (len(parts) == MAX_FOLDERS + 1 and not parts[-1].endswith(".md")):
        return None
    return "/".join(parts)


def existing_literal(root: Path, path: str, *, folder: bool = False) -> str | None:
    """``literal_path(path)`` if that file (or ``folder``) exists in the tree under ``root``
    and is no symlink; else None (the caller then normalizes ``path``)."""
    lit = literal_path(path.strip().rstrip("/") if folder else path)
    if lit is None:
        return None
    p = root / lit
    if p.is_symlink() or not (p.is_dir() if folder else p.is_file()):
        return None
    return lit

"""Files and folders given to curate, as the files the curator reads and what it left out.

A folder is read recursively for markdown and text (``TEXT_SUFFIXES``): hidden files and
folders (``.git``, ``.memgrove``) are left out, and so is whatever a ``.gitignore`` in the folder
or below it ignores (read with ``pathspec``'s ``GitIgnoreSpec``, git's own rules and precedence)
or an ``exclude`` pattern matches (gitignore syntax, relative to the folder given). Files of
other kinds in a folder are counted, not read. A file given by name is always read.

An empty or binary file, by name or in a folder, is skipped and counted: one such file among
thousands does not refuse the rest. ``skipped`` counts, of the kinds that occurred: ``"empty
files"``, ``"binary files"``, and in a folder ``"other files"`` (not markdown or text),
``"ignored files"`` (by name: an ignored folder is not walked), ``"non-UTF-8 files"`` and
``"oversized files"`` (a kind is a plural noun: "1 empty file").
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Iterable

from pathspec import GitIgnoreSpec

from ..base.errors import InvalidInput

TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".org"})
_SNIFF = 8192


def expand(paths: Iterable[str | os.PathLike], *, exclude: Iterable[str] = (),
           max_bytes: int | None = None) -> tuple[list[Path], dict[str, int]]:
    """``(files to curate, skipped counts)`` for files and folders; a path that does not exist is
    an ``InvalidInput``, before anything is read. A file larger than ``max_bytes`` is refused by
    name (the curator says so) and skipped and counted in a folder (``"oversized files"``)."""
    exclude = [p for p in exclude if p and p.strip()]
    files: list[Path] = []
    skipped: Counter[str] = Counter()
    for given in paths:
        p = Path(given)
        if p.is_dir():
            _walk(p, GitIgnoreSpec.from_lines(exclude), files, skipped, max_bytes)
        elif p.is_file():
            if max_bytes is not None and p.stat().st_size > max_bytes:
                files.append(p)        # refused by the curator, with its size and the setting
            else:
                _take(p, files, skipped)
        elif not p.exists():
            raise InvalidInput(f"cannot read {p}: No such file or directory")
        else:
            raise InvalidInput(f"{p} is neither a file nor a folder")
    return files, {k: n for k, n in skipped.items() if n}


def _walk(top: Path, exclude: GitIgnoreSpec, files: list[Path], skipped: Counter[str], max_bytes: int | None) -> None:
    specs: list[tuple[str, GitIgnoreSpec]] = []       # (folder relative to top, its .gitignore)
    for folder, dirs, names in os.walk(top):
        rel = Path(folder).relative_to(top).as_posix()
        rel = "" if rel == "." else rel + "/"
        ignore_file = Path(folder) / ".gitignore"
        if ignore_file.is_file():
            try:
                specs.append((rel, GitIgnoreSpec.from_lines(ignore_file.read_text(encoding="utf-8", errors="replace")
                                                            .splitlines())))
            except (OSError, ValueError):
                pass            # an unreadable or malformed .gitignore ignores nothing
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _ignored(rel + d + "/", exclude, specs))
        for name in sorted(names):
            if name.startswith("."):
                continue
            if _ignored(rel + name, exclude, specs):
                skipped["ignored files"] += 1
            elif Path(name).suffix.lower() not in TEXT_SUFFIXES:
                skipped["other files"] += 1
            elif max_bytes is not None and os.path.getsize(Path(folder) / name) > max_bytes:
                skipped["oversized files"] += 1
            else:
                _take(Path(folder) / name, files, skipped, in_folder=True)


def _ignored(rel: str, exclude: GitIgnoreSpec, specs: list[tuple[str, GitIgnoreSpec]]) -> bool:
    if exclude.match_file(rel):
        return True
    return any(rel.startswith(base) and spec.match_file(rel[len(base):]) for base, spec in specs)


def _take(p: Path, files: list[Path], skipped: Counter[str], in_folder: bool = False) -> None:
    try:
        with p.open("rb") as fh:
            head = fh.read(_SNIFF)
    except OSError as exc:
        raise InvalidInput(f"cannot read {p}: {exc.strerror}") from None
    if not head.strip():
        # a file of only whitespace is empty too, unless what is past the sniffed bytes says otherwise
        if len(head) < _SNIFF or not p.read_bytes().strip():
            skipped["empty files"] += 1
            return
    if b"\x00" in head:
        skipped["binary files"] += 1
        return
    if in_folder:       # a file by name that is not UTF-8 is refused by the curator, saying so
        try:
            p.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            skipped["non-UTF-8 files"] += 1
            return
        except OSError as exc:
            raise InvalidInput(f"cannot read {p}: {exc.strerror}") from None
    files.append(p)

"""Anthropic's file-style memory tool (``memory_20250818``) over the Context Tree.

Agents trained on that tool see a directory ``/memories`` of markdown files. Here a file is
an entry and a directory a folder of the tree:

    /memories                          the tree's top level
    /memories/<domain>/<topic>         a folder (two or three levels: .../<subtopic>)
    /memories/<domain>/<topic>/<name>.md    the entry domain/topic/name.md

A file's text is the entry without its YAML frontmatter: ``# title``, then the body. The
frontmatter (summary, tags, links, sources, dates) is memgrove's and survives every edit.
Writes go through the curate operations, so each is validated, atomic and journaled
with the command as its reason (``memory tool: str_replace /memories/...``); a rename is
an ADD of the new path and a MERGE of the old one into it, which rewrites links to it.
Paths are untrusted: one that leaves ``/memories``, is too shallow or deep, or is not in
the tree's lower-case snake_case form is refused with the form to use, never repaired.

Commands raise ``InvalidPath`` or ``InvalidInput`` (one line) for a mistake the model can
fix; messages follow the reference implementation's wording where it has one.
"""

from __future__ import annotations

import os
from typing import Any

from memgrove.tree.entries import entry as entry_mod
from memgrove.tree.base.errors import InvalidEntry, InvalidInput, InvalidPath
from memgrove.tree.writes.operations import text_size
from memgrove.tree.entries.paths import CONTEXT_FILE, existing_literal, natural_key, normalize_entry_path

from .memory_paths import FORM, ROOT, Target, one_line, resolve

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
ACTOR = "memory-tool"
LINE_WIDTH = 6        # line numbers right-aligned to six places, as the reference tool prints them
_LINES_SHOWN = 10     # line numbers of a repeated old_str listed in an error; the rest are counted


class MemoryFiles:
    """The six commands over one memory (``Memory``)."""

    def __init__(self, memory: Any):
        self.memory = memory
        self.tree = memory.tree

    # -- resolving against this tree ------------------------------------------
    def _resolve(self, path: Any, *, write: bool = False) -> Target:
        root = self.tree.root
        return resolve(path, write=write, existing=lambda rel, is_file: existing_literal(root, rel, folder=not is_file))

    def _kind(self, t: Target) -> str | None:
        """'dir', 'file' or None (absent) for a resolved target."""
        if not t.rel:
            return "dir"
        p = self.tree.root / t.rel
        if p.is_symlink():
            return None
        if t.is_file:
            return "file" if p.is_file() else None
        return "dir" if p.is_dir() else None

    def _limit(self, **texts: str) -> int:
        """``max_input_bytes``, once no text argument holds more (checked before taking the lock)."""
        limit = self.tree.settings.max_input_bytes
        for name, value in texts.items():
            if text_size(value, limit) > limit:
                raise InvalidInput(f"'{name}' holds more than {limit:,} bytes (setting max_input_bytes); "
                                   "write a large file in several smaller edits")
        return limit

    def _missing(self, t: Target) -> InvalidPath:
        return InvalidPath(f"The path {one_line(t.given)} does not exist. Please provide a valid path.")

    def _text(self, t: Target) -> str:
        """A file as the tool shows it: the entry without its frontmatter."""
        try:
            raw = self.tree.read_text(t.rel)
        except InvalidPath:
            raise self._missing(t) from None
        return file_text(raw)

    # -- the commands --------------------------------------------------------
    def run(self, command: Any, args: dict[str, Any]) -> str:
        if command not in COMMANDS:
            raise InvalidInput(f"unknown command {one_line(str(command))!r}; use one of: {', '.join(COMMANDS)}")
        try:
            return getattr(self, command)(**args)
        except OSError as exc:
            # a write's disk errors arrive as NotWritable; what is left comes from the path given
            # (a name too long, a file in place of a folder, one unreadable)
            given = args.get("path", args.get("old_path"))
            raise InvalidPath(f"cannot {command} {one_line(str(given))}: {exc.strerror or exc}") from None

    def view(self, path: Any = None, view_range: Any = None, **_: Any) -> str:
        t = self._resolve(path)
        kind = self._kind(t)
        if kind is None:
            raise self._missing(t)
        shown = t.given.rstrip("/") or ROOT
        if kind == "dir":
            lines = [f"{_size(self.tree.root / t.rel)}\t{shown}"]
            lines += [f"{size}\t{shown}/{rel}" for size, rel in self._listing(t.rel)]
            return (f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:\n"
                    + "\n".join(lines))
        lines = self._text(t).split("\n")
        start, end = _range(view_range, len(lines))
        numbered = [f"{i:>{LINE_WIDTH}}\t{line}" for i, line in enumerate(lines[start - 1:end], start)]
        return f"Here's the content of {shown} with line numbers:\n" + "\n".join(numbered)

    def _listing(self, rel: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []

        def walk(folder: str, prefix: str, depth: int) -> None:
            base = self.tree.root / folder if folder else self.tree.root
            try:
                children = sorted(os.scandir(base), key=lambda d: natural_key(d.name))
            except OSError:
                return
            for d in children:
                if d.name.startswith((".", "_")) or d.is_symlink() or d.name == CONTEXT_FILE:
                    continue
                name = f"{prefix}{d.name}"
                if d.is_dir() and _holds_entries(d.path):
                    out.append((_size(d.path), name + "/"))
                    if depth < 2:
                        walk(f"{folder}/{d.name}" if folder else d.name, name + "/", depth + 1)
                elif d.name.endswith(".md"):
                    out.append((_size(d.path), name))

        walk(rel, "", 1)
        return out

    def create(self, path: Any = None, file_text: Any = None, **_: Any) -> str:
        t = self._resolve(path, write=True)
        if not t.is_file:
            raise InvalidPath(f"create needs a file path ending in .md, e.g. {FORM}")
        if not isinstance(file_text, str):
            raise InvalidInput("create needs 'file_text': the text of the file")
        self._limit(file_text=file_text)
        parsed = _parse(file_text, t.given)
        title = parsed.title or _title_of(t.rel)
        op = {"op": "ADD", "path": t.rel, "reason": f"memory tool: create {t.given}", "title": title,
              "content": _content(title, parsed), "sources": parsed.sources or [{"kind": "tool", "ref": "memory"}]}
        for key in ("summary", "tags", "keywords", "related"):
            if getattr(parsed, key):
                op[key] = getattr(parsed, key)
        with self.tree.lock.hold():
            self.tree.recover()
            if self._kind(t) is not None:
                raise InvalidInput(f"File {t.given} already exists: view it, then edit it with str_replace or "
                                   "insert, or delete it first")
            self.memory.curate([op], actor=ACTOR)
        return f"File created successfully at: {t.given}"

    def str_replace(self, path: Any = None, old_str: Any = None, new_str: Any = "", **_: Any) -> str:
        t = self._resolve(path)
        if not isinstance(old_str, str) or old_str == "":
            raise InvalidInput("str_replace needs 'old_str': text that appears exactly once in the file")
        if new_str is None:
            new_str = ""
        if not isinstance(new_str, str):
            raise InvalidInput("'new_str' must be text")
        limit = self._limit(old_str=old_str, new_str=new_str)
        with self.tree.lock.hold():
            self.tree.recover()
            text = self._file_for_edit(t)
            count = text.count(old_str)
            if count == 0:
                raise InvalidInput(f"No replacement was performed, old_str `{one_line(old_str)}` did not appear "
                                   f"verbatim in {t.given}.")
            if count > 1:
                lines = _lines_of(text, old_str, _LINES_SHOWN)
                more = f", ... and {count - len(lines):,} more" if count > len(lines) else ""
                raise InvalidInput(f"No replacement was performed. Multiple occurrences of old_str "
                                   f"`{one_line(old_str)}` in lines: {', '.join(map(str, lines))}{more}. "
                                   "Please ensure it is unique")
            _check_result(t, text_size(text, limit) - text_size(old_str, limit) + text_size(new_str, limit), limit)
            at = text.find(old_str)
            changed = text.count("\n", 0, at)
            self._rewrite(t, text[:at] + new_str + text[at + len(old_str):], f"memory tool: str_replace {t.given}")
            after = self._text(t).split("\n")
        lo, hi = max(0, changed - 2), min(len(after), changed + 3 + new_str.count("\n"))
        snippet = [f"{i:>{LINE_WIDTH}}\t{after[i - 1]}" for i in range(lo + 1, hi + 1)]
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + "\n".join(snippet))

    def insert(self, path: Any = None, insert_line: Any = None, insert_text: Any = None, **_: Any) -> str:
        t = self._resolve(path)
        if isinstance(insert_line, bool) or not isinstance(insert_line, int):
            raise InvalidInput("insert needs 'insert_line': the line number to insert after (0 for the top)")
        if not isinstance(insert_text, str):
            raise InvalidInput("insert needs 'insert_text': the text to insert")
        limit = self._limit(insert_text=insert_text)
        with self.tree.lock.hold():
            self.tree.recover()
            text = self._file_for_edit(t)
            _check_result(t, text_size(text, limit) + text_size(insert_text, limit) + 1, limit)
            # lines as view numbers them: splitlines() also broke at \u2028, \x0c, \x1e ... and wrote them back as \n
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            if insert_line < 0 or insert_line > len(lines):
                raise InvalidInput(f"Invalid `insert_line` parameter: {insert_line}. "
                                   f"It should be within the range [0, {len(lines)}].")
            lines.insert(insert_line, insert_text.rstrip("\n"))
            self._rewrite(t, "\n".join(lines) + "\n", f"memory tool: insert {t.given} after line {insert_line}")
        return f"The file {t.given} has been edited."

    def delete(self, path: Any = None, **_: Any) -> str:
        t = self._resolve(path)
        if not t.rel:
            raise InvalidPath(f"Cannot delete the {ROOT} directory itself")
        with self.tree.lock.hold():
            self.tree.recover()
            if self._kind(t) is None:
                raise InvalidPath(f"The path {one_line(t.given)} does not exist")
            self.memory.curate([{"op": "DELETE", "path": t.rel, "reason": f"memory tool: delete {t.given}"}],
                               actor=ACTOR)
        return f"Successfully deleted {t.given}"

    def rename(self, old_path: Any = None, new_path: Any = None, **_: Any) -> str:
        old = self._resolve(old_path)
        new = self._resolve(new_path, write=True)
        if not old.rel or not new.rel:
            raise InvalidPath(f"Cannot rename the {ROOT} directory itself")
        if old.is_file != new.is_file:
            raise InvalidPath("rename a file to a file (.md) and a directory to a directory")
        if new.rel == old.rel or new.rel.startswith(old.rel + "/"):
            raise InvalidPath(f"Cannot move {old.given} into itself")
        reason = f"memory tool: rename {old.given} to {new.given}"
        with self.tree.lock.hold():
            self.tree.recover()
            if self._kind(old) is None:
                raise InvalidPath(f"The path {one_line(old.given)} does not exist")
            if self._kind(new) is not None:
                raise InvalidPath(f"The destination {one_line(new.given)} already exists")
            moves = ([(old.rel, new.rel)] if old.is_file else
                     [(p, new.rel + p[len(old.rel):]) for p in self.tree.entries_under(old.rel)])
            ops: list[dict[str, Any]] = []
            for src, dst in moves:
                try:
                    dst = normalize_entry_path(dst)
                except InvalidPath as exc:
                    raise InvalidPath(f"cannot rename to {one_line(new.given)}: {exc}") from None
                title = self.tree.read(src).title or _title_of(dst)
                # MERGE into a fresh entry carries every field and rewrites the links to it
                ops += [{"op": "ADD", "path": dst, "title": title, "reason": reason},
                        {"op": "MERGE", "path": src, "merge_into": dst, "reason": reason}]
            if not ops:
                raise InvalidPath(f"{one_line(old.given)} holds no memory files to rename")
            self.memory.curate(ops, actor=ACTOR)
        return f"Successfully renamed {old.given} to {new.given}"

    # -- writing an edited file back -------------------------------------------
    def _file_for_edit(self, t: Target) -> str:
        if not t.is_file:
            raise InvalidPath(f"The path {one_line(t.given)} is not a file.")
        if self._kind(t) is None:
            raise self._missing(t)
        return self._text(t)

    def _rewrite(self, t: Target, text: str, reason: str) -> None:
        old = self.tree.read(t.rel)
        parsed = _parse(text, t.given)
        title = parsed.title or old.title or _title_of(t.rel)
        # replace: the edited text is the whole body; the frontmatter the model never saw is kept
        op = {"op": "UPDATE", "path": t.rel, "reason": reason, "replace": True, "title": title,
              "content": _content(title, parsed), "summary": old.summary, "tags": old.tags,
              "keywords": old.keywords, "related": old.related, "sources": old.sources}
        self.memory.curate([op], actor=ACTOR)


# -- plain helpers ------------------------------------------------------------

def file_text(raw: str) -> str:
    """An entry file's text without its frontmatter block."""
    text = raw.replace("\r\n", "\n").lstrip("\ufeff")
    if text.startswith("---\n"):
        end = entry_mod._FRONTMATTER_END.search(text, 4)
        if end is not None:
            text = text[end.end():].lstrip("\n")
    return text


def _lines_of(text: str, needle: str, most: int) -> list[int]:
    """Line numbers of the first ``most`` occurrences of ``needle``: one pass, newlines counted
    between matches only (counting from the top for each one made 400,000 matches take 102 s)."""
    lines: list[int] = []
    line, counted, start = 1, 0, 0
    while len(lines) < most and (at := text.find(needle, start)) != -1:
        line += text.count("\n", counted, at)
        counted = at
        lines.append(line)
        start = at + len(needle)
    return lines


def _check_result(t: Target, size: int, limit: int) -> None:
    if size > limit:
        raise InvalidInput(f"No edit was performed: {t.given} would hold more than {limit:,} bytes "
                           "(setting max_input_bytes); split it over several files")


def _parse(text: str, where: str) -> entry_mod.Entry:
    try:
        return entry_mod.parse(text, where=where)
    except InvalidEntry as exc:
        raise InvalidInput(f"cannot store this text: {exc}") from None


def _content(title: str, parsed: entry_mod.Entry) -> str:
    # the title line first, so a body that itself starts with "# ..." is kept as body
    body = parsed.body.strip("\n")
    return f"# {title}\n\n{body}" if body else f"# {title}"


def _title_of(rel: str) -> str:
    return rel.rsplit("/", 1)[-1][:-3].replace("_", " ").strip().capitalize()


def _range(view_range: Any, n: int) -> tuple[int, int]:
    if view_range is None:
        return 1, n
    if (not isinstance(view_range, (list, tuple)) or len(view_range) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)):
        raise InvalidInput("'view_range' must be two line numbers [start, end] (end -1 for the last line)")
    start, end = view_range
    end = n if end == -1 else end
    if start < 1 or start > max(n, 1) or end < start:
        raise InvalidInput(f"Invalid `view_range` {list(view_range)}: the file has {n} lines; "
                           "give [start, end] with 1 <= start <= end, or end -1")
    return start, min(end, n)


def _holds_entries(folder: str) -> bool:
    """Whether a folder holds an entry anywhere below it: a folder emptied by a rename keeps its
    overview (context.md) on disk but is no directory of memory files."""
    for base, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        if any(n.endswith(".md") and n != CONTEXT_FILE and not n.startswith((".", "_")) for n in names):
            return True
    return False


def _size(path: Any) -> str:
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    if size < 1024:
        return f"{size}B" if size else "0B"
    for unit, scale in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if size < scale << 10 or unit == "G":
            value = size / scale
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{size}B"


__all__ = ["COMMANDS", "MemoryFiles", "ROOT", "Target", "file_text", "resolve"]

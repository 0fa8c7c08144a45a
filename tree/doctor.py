"""``doctor``: check that files, index, catalog, contexts and journal agree."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import entry as entry_mod
from .catalog import digest_of, scan
from .errors import InvalidEntry, InvalidPath
from .paths import CONTEXT_FILE, folder_of, is_entry_file, link_problem, resolve_inside


@dataclass
class DoctorReport:
    entries: int = 0
    contexts: int = 0
    indexed: int = 0
    problems: list[str] = field(default_factory=list)   # the tree is inconsistent
    warnings: list[str] = field(default_factory=list)   # worth knowing, not inconsistent
    fixed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "contexts": self.contexts, "indexed": self.indexed,
                "problems": self.problems, "warnings": self.warnings, "fixed": self.fixed, "notices": self.notices}


def diagnose(tree, *, fix: bool = False) -> DoctorReport:
    """Check the tree; with ``fix``, repair what is derived (index, contexts, temp files)."""
    rep = DoctorReport(notices=list(tree.notices))
    if fix:
        tree.recover()
        n = tree.remove_stray_temp_files()
        if n:
            rep.fixed.append(f"removed {n} stray temp file(s)")
    tree.ensure_fresh()
    current = scan(tree.root)
    valid: set[str] = set()
    for rel in sorted(current):
        name = rel.rsplit("/", 1)[-1]
        if name != CONTEXT_FILE and not is_entry_file(rel):
            rep.warnings.append(f"{rel}: not at a valid entry path (domain/topic[/subtopic]/entry.md); not indexed")
        try:
            entry = entry_mod.parse((tree.root / rel).read_text(encoding="utf-8"), where=rel)
        except UnicodeDecodeError as exc:
            rep.problems.append(f"{rel}: not UTF-8 ({exc.reason} at byte {exc.start})")
            continue
        except (OSError, InvalidEntry) as exc:
            rep.problems.append(str(exc) if str(exc).startswith(rel) else f"{rel}: {exc}")
            continue
        valid.add(rel)
        for link in (entry.related if name != CONTEXT_FILE else []):
            why = link_problem(link)
            if why:
                rep.warnings.append(f"{rel}: link {link!r} ignored: {why}")
        if name == CONTEXT_FILE:
            rep.contexts += 1
        else:
            rep.entries += 1
    # every folder with entries has a context.md
    folders = {folder_of(rel) for rel in current}
    all_folders = set()
    for f in folders:
        parts = f.split("/")
        all_folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    missing_ctx = sorted(f for f in all_folders if f"{f}/{CONTEXT_FILE}" not in current)
    for f in missing_ctx:
        rep.problems.append(f"{f}/: no {CONTEXT_FILE}")
    # the index reflects the files
    rep.indexed = tree.engine.count()
    if rep.indexed != len(valid):
        rep.problems.append(f"index holds {rep.indexed} documents but the tree has {len(valid)} valid files")
    if tree.catalog.digest() != digest_of(current):
        rep.problems.append("index is out of step with the files (another writer busy?)")
    # links: the catalog holds only links that passed link_problem; one that still resolves
    # outside (through a symlink) is named as such, its target never looked at
    for src, dst in tree.catalog.all_links():
        try:
            target = resolve_inside(tree.root, dst)
        except InvalidPath:
            rep.warnings.append(f"{src}: link {dst!r} ignored: it resolves outside the tree (symlink?)")
            continue
        if not target.is_file():
            rep.warnings.append(f"{src}: dangling link to {dst}")
    # journal and write-ahead state
    if tree.journal.pending_file.exists():
        rep.problems.append("an interrupted batch is pending (another writer busy, or run doctor --fix)")
    bad = tree.journal.damaged_lines()
    if bad:
        rep.warnings.append(f"journal has {bad} unreadable line(s); they are skipped")
    temps = tree.stray_temp_files()
    if temps:
        rep.warnings.append(f"{len(temps)} stray temp file(s) from an interrupted write (doctor --fix removes them)")
    for p in _symlinks(tree.root):
        rep.warnings.append(f"{p.relative_to(tree.root)}: symlink, ignored (links may not leave the tree)")
    if fix and missing_ctx:
        tree.repair_contexts(missing_ctx)
        rep.fixed.append(f"wrote {len(missing_ctx)} missing context file(s)")
        rep.problems = [p for p in rep.problems if not p.endswith(f"no {CONTEXT_FILE}")]
    return rep


def _symlinks(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out.append(p)
    return out

"""``doctor``: check that files, index, catalog, contexts and journal agree.

Every derived store (index, catalog, signals, query cache, query log) is
checked on its own, so a damaged one is named instead of stopping the check;
``--fix`` rebuilds or resets each. The journal and the entry files are never
changed by a repair without saying so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .entries import entry as entry_mod
from .writes.archive import archive_root
from .index.cache import QueryCache
from .index.catalog import digest_of, scan
from .base.errors import InvalidEntry, InvalidPath, MemgroveError
from .base.fsio import atomic_write
from .entries.paths import CONTEXT_FILE, folder_of, is_entry_file, link_problem, resolve_inside
from .writes.writer_lock import LockState


@dataclass
class DoctorReport:
    entries: int = 0
    contexts: int = 0
    indexed: int = 0
    problems: list[str] = field(default_factory=list)   # the tree is inconsistent
    warnings: list[str] = field(default_factory=list)   # worth knowing, not inconsistent
    fixed: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    vectors: dict[str, Any] = field(default_factory=dict)   # ContextTree.vector_state(exact=True)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "contexts": self.contexts, "indexed": self.indexed,
                "problems": self.problems, "warnings": self.warnings, "fixed": self.fixed, "notices": self.notices,
                "vectors": self.vectors}


def diagnose(tree, *, fix: bool = False) -> DoctorReport:
    """Check the tree; with ``fix``, repair what is derived (index, contexts, temp files), then
    report the tree as the repair left it: its counts and what remains, with what was fixed (the
    counts and problems found before a repair no longer hold once it is done)."""
    rep = _examine(tree, fix=fix)
    if not (fix and rep.fixed):
        return rep
    after = _examine(tree, fix=False)
    after.fixed = rep.fixed
    after.notices = list(dict.fromkeys(rep.notices + after.notices))
    return after


def _examine(tree, *, fix: bool) -> DoctorReport:
    rep = DoctorReport()
    orphan = lock_problem(tree.lock.inspect())
    if orphan:
        # every check below may need the writer lock; say what blocks it, in bounded time
        rep.problems.append(orphan)
        rep.notices = list(tree.notices)
        return rep
    if fix:
        left = tree.engine.leftovers()
        tree.recover()   # also removes what a killed reindex left, when it gets the lock
        gone = [p for p in left if not p.exists()]
        if gone:
            rep.fixed.append(f"removed {', '.join('index/' + p.name for p in gone)} left by an interrupted reindex")
        with tree.lock.hold():   # a live writer's temp file is renamed before it lets the lock go
            n = tree.remove_stray_temp_files()
        if n:
            rep.fixed.append(f"removed {n} stray temp file(s)")
    rebuild = _derived(tree, rep, fix)
    try:
        tree.ensure_fresh()
    except MemgroveError as exc:  # a busy writer, say: the checks below still say what they can
        rep.problems.append(f"could not bring the index in step: {exc}")
    if rebuild and tree.catalog.check() is None and tree.engine.exists():
        tree.notices.append(f"{' and '.join(rebuild)} had to be rebuilt from the files; done")
    else:
        rep.problems += [f"{r} needs rebuilding: doctor --fix rebuilds it" for r in rebuild]
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
    try:
        rep.indexed = tree.engine.count()
    except Exception as exc:  # noqa: BLE001 - an unreadable index is reported, and rebuilt by --fix
        rep.problems.append(f"the index cannot be read ({type(exc).__name__}); doctor --fix rebuilds it")
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
        if not target.is_file() and not (archive_root(tree.home) / dst).is_file():
            # a link to an archived entry stays: RESTORE brings the entry back where it points
            rep.warnings.append(f"{src}: dangling link to {dst}")
    # journal and write-ahead state
    if tree.journal.pending_file.exists():
        rep.problems.append("an interrupted batch is pending (another writer busy, or run doctor --fix)")
    for p in tree.journal.damaged_pending_files():
        rep.warnings.append(f"journal/{p.name}: a damaged write-ahead file, set aside; the batch it held, if any, "
                            "was not applied: look at it, then delete it")
    bad = tree.journal.damaged_lines()
    if bad:
        rep.warnings.append(f"journal has {bad} unreadable line(s); they are skipped")
    temps = tree.stray_temp_files()
    if temps:
        rep.warnings.append(f"{len(temps)} stray temp file(s) from an interrupted write (doctor --fix removes them)")
    for p in _symlinks(tree.root):
        rel = str(p.relative_to(tree.root))
        if p.name != CONTEXT_FILE:
            rep.warnings.append(f"{rel}: symlink, ignored (links may not leave the tree)")
        elif not (fix and folder_of(rel) in missing_ctx):   # --fix writes the context file in its place
            rep.warnings.append(f"{rel}: a symlink where the folder's context file belongs; doctor --fix replaces it")
    rep.warnings += _replication(tree)
    if fix and missing_ctx:
        tree.repair_contexts(missing_ctx)
        rep.fixed.append(f"wrote {len(missing_ctx)} missing context file(s)")
        rep.problems = [p for p in rep.problems if not p.endswith(f"no {CONTEXT_FILE}")]
    try:
        rep.vectors = tree.vector_state(exact=True)
    except Exception as exc:  # noqa: BLE001 - a damaged catalog is reported above; the count is only news
        rep.warnings.append(f"entries' vectors could not be counted ({type(exc).__name__}: {exc})")
    rep.notices = list(tree.notices)
    return rep


def lock_problem(state: LockState) -> str | None:
    """A lock held by no live writer (a killed writer's surviving children, another program)."""
    if not state.orphaned:
        return None
    who = f"its recorded writer, process {state.pid}, is dead" if state.pid else "no writer is recorded"
    others = [p for p in state.openers if p != state.pid]
    if others:
        listed = ", ".join(str(p) for p in others)
        return (f"the write lock is held but {who}; processes holding the lock file open: {listed} "
                f"(stop them, e.g. `kill {others[0]}`, to let writers in)")
    return f"the write lock is held but {who}; no process holding it could be found (check other programs using this tree)"
def _derived(tree, rep: DoctorReport, fix: bool) -> list[str]:
    """Check each derived store; with ``fix``, reset or rebuild the damaged ones. Returns
    what needs rebuilding and was not (the freshness check may do it next)."""
    for name, db, after in (("signals.db", tree.signals, "ranking signals start again from use"),
                            ("vectors.db", tree.vectors, "entries' vectors are computed again as needed")):
        if db.gone():
            # this thread's connection is reopened already; the others reopen at their next use
            what = f"{name} was deleted under this process, which went on using the deleted file"
            if fix:
                rep.fixed.append(f"reopened {name} ({what[len(name) + 1:]}); {after}")
            else:
                rep.problems.append(f"{what}; doctor --fix reopens it ({after})")
    why = tree.signals.check()
    if why:
        if fix:
            tree.signals.reset(why, notice=False)
            rep.fixed.append(f"reset the damaged signals.db ({why}); ranking signals start again from use")
        else:
            rep.problems.append(f"signals.db is damaged ({why}); doctor --fix resets it (signals are derived from use)")
    if tree.vectors.file.exists():
        why = tree.vectors.check()
        if why and fix:
            tree.vectors.reset(why, notice=False)
            rep.fixed.append(f"reset the damaged vectors.db ({why}); entries' vectors are computed again as needed")
        elif why:
            rep.problems.append(f"vectors.db is damaged ({why}); doctor --fix resets it (vectors are derived from the files)")
    cache_dir = tree.home / "cache"
    if cache_dir.is_dir():
        cache = QueryCache(cache_dir)
        try:
            why = cache.check()
            if why and fix:
                cache.reset(why)
                rep.fixed.append(f"reset the damaged query cache ({why})")
            elif why:
                rep.problems.append(f"the query cache is damaged ({why}); doctor --fix empties it (it is derived)")
        finally:
            cache.close()
    rebuild = []
    gone = tree.catalog.gone()   # opened afresh: empty, not damaged (no reset closing other threads' connections)
    if gone:
        rebuild.append("the catalog (deleted under this process, which went on using the deleted file)")
    why = tree.catalog.check()
    if tree.catalog.upgraded:
        tree.notices.append("the catalog had an older schema: it was emptied and rebuilt from the files")
        tree.catalog.upgraded = False
    if why:
        rebuild.append(f"the catalog ({why})")
    if not tree.engine.exists():
        rebuild.append("the index (missing or unreadable)")
    left = tree.engine.leftovers()
    if fix and (rebuild or left):
        with tree.lock.hold():
            tree.engine.remove_leftovers()
            if rebuild:
                if why or not gone:
                    tree.catalog.reset(force=True)
                tree.reindex()
        rep.fixed += [f"rebuilt {r} from the files" for r in rebuild]
        if left:
            rep.fixed.append(f"removed {', '.join('index/' + p.name for p in left)} left by an interrupted reindex")
        rebuild = []
    else:
        rep.warnings += [f"index/{p.name}: left by an interrupted reindex; doctor --fix removes it" for p in left]
    _query_log(tree.home / "query-log.jsonl", rep, fix)
    return rebuild


def _query_log(log: Path, rep: DoctorReport, fix: bool) -> None:
    """Damaged lines of the query log: stats skips them; ``fix`` keeps only the good ones."""
    try:
        lines = log.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return
    good = []
    for line in lines:
        try:
            if isinstance(json.loads(line), dict):
                good.append(line)
        except (ValueError, RecursionError):
            pass
    bad = sum(1 for ln in lines if ln.strip()) - len(good)
    if not bad:
        return
    if fix:
        # queries append without the writer lock: one logged in this instant may be lost (it is only statistics)
        atomic_write(log, b"".join(ln if ln.endswith(b"\n") else ln + b"\n" for ln in good), durable=False)
        rep.fixed.append(f"dropped {bad} damaged line(s) of the query log")
    else:
        rep.warnings.append(f"query-log.jsonl has {bad} damaged line(s); stats skips them, doctor --fix drops them")


def _replication(tree) -> list[str]:
    """What replication reports: a push failing and since when, commits waiting, conflicts kept on branches."""
    from .replication.replicator import problems_of, read_status

    try:
        status = read_status(tree.home)
    except MemgroveError as exc:       # a bad [replication] table
        return [f"replication: {exc}"]
    return problems_of(status) if status else []


def _symlinks(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out.append(p)
    return out

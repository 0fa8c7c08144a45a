"""What ``memgrove dream`` keeps between runs: one file per run, the run lock, the idle gates.

``.memgrove/dream/runs/<run>.json`` records a run: when, what it found and did with each
candidate, the ids of the operations it applied (what ``dream --undo`` reverts) and, once
undone, the ids of the UNDOs. A run is recorded as it starts (``status`` "running", nothing
applied) and again, with the ids it is about to apply, before its batch is written
("applying"), so a run killed at any instant leaves a record: the next run or undo settles it
("interrupted", with the ids the journal holds: none, or the whole batch the next open rolled
forward). ``.memgrove/dream/run.lock`` is held for a whole run (scan, model calls, the batch),
so two runs never overlap; the tree's writer lock is still taken for the batch itself, so
curations go on during a run's scan and model calls.

``.memgrove/dream/approved/<run>.jsonl`` links to a run what a person approved from its
proposals (``memgrove review approve``): one line per item, written before its batch, with the
ids of its operations, so undoing the run can name them or revert them too.

The idle gates (ByteRover's): a run is due when at least ``dream_idle_hours`` passed since the
last one and at least ``dream_min_curations`` curations were journaled since it. Curations are
counted from the journal's tail, newest first, stopping at the last run or at enough of them.
"""

from __future__ import annotations

import json
import re
import secrets
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..base.errors import DreamRunning, ItemNotFound
from ..base.fsio import append_line, atomic_write
from ..writes.journal import Journal, tail_lines
from ..writes.writer_lock import WriterLock

DREAM_DIR = "dream"
ACTOR = "dream"


def runs_dir(home: Path) -> Path:
    return home / DREAM_DIR / "runs"


def new_run_id(now: datetime) -> str:
    """Sortable and unique: ``20261206T180000123456-a1b2c3``. To the microsecond, because the
    newest run is the one ``dream --undo`` names: two runs in one second sorted by their random
    part made it name the earlier one (ids of one second without microseconds sort first)."""
    return now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S%f") + "-" + secrets.token_hex(3)


@contextmanager
def run_lock(home: Path) -> Iterator[None]:
    """Hold the dream lock for a run, or raise ``DreamRunning`` at once (runs never wait for each
    other: the one running does the work)."""
    lock = WriterLock(home / DREAM_DIR / "run.lock", timeout=0.0)
    with lock.try_hold() as got:
        if not got:
            pid = lock.holder()
            raise DreamRunning(f"a dream run is already running{f' (process {pid})' if pid else ''}; "
                               "runs never overlap: wait for it, or look at `memgrove dream --json` after it")
        yield


def save_run(home: Path, run: dict[str, Any], *, durable: bool = True) -> None:
    atomic_write(runs_dir(home) / f"{run['run']}.json", json.dumps(run, ensure_ascii=False, indent=1),
                 durable=durable)


def run_ids(home: Path) -> list[str]:
    """Every recorded run, oldest first."""
    try:
        return sorted(p.name[:-5] for p in runs_dir(home).iterdir() if p.name.endswith(".json")
                      and not p.name.startswith("."))
    except FileNotFoundError:
        return []


def load_run(home: Path, run_id: str) -> dict[str, Any]:
    if not run_id or "/" in run_id or run_id.startswith("."):
        raise ItemNotFound(f"no dream run {run_id!r} (see `memgrove dream --json` or .memgrove/dream/runs/)")
    try:
        return json.loads((runs_dir(home) / f"{run_id}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ItemNotFound(f"no dream run {run_id!r} (see .memgrove/dream/runs/)") from None
    except ValueError as exc:
        raise ItemNotFound(f"dream run {run_id!r} cannot be read ({exc})") from None


_RUN_ID = re.compile(r"[0-9A-Za-z-]{1,64}")


def approved_file(home: Path, run_id: str) -> Path:
    return home / DREAM_DIR / "approved" / f"{run_id}.jsonl"


def link_approved(home: Path, run_id: str, item: str, op_ids: list[str], at: str, *, durable: bool = True) -> None:
    """Record that review item ``item`` of run ``run_id`` is about to be applied as ``op_ids``
    (before its batch: ids the journal never gets are left out when the run is undone)."""
    if not _RUN_ID.fullmatch(run_id):
        return   # not a run's id (a queue file edited by hand): nothing to link it to, no path made of it
    append_line(approved_file(home, run_id), json.dumps({"item": item, "ops": op_ids, "at": at}), durable=durable)


def approved_links(home: Path, run_id: str) -> list[dict[str, Any]]:
    """What was approved from run ``run_id``'s proposals, oldest first: ``{"item", "ops", "at"}``."""
    try:
        lines = approved_file(home, run_id).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            d = json.loads(line)
            out.append({"item": str(d["item"]), "ops": [str(i) for i in d["ops"]], "at": str(d.get("at", ""))})
        except (ValueError, KeyError, TypeError):
            continue   # a line cut by a crash: its batch was never written
    return out


def last_run(home: Path, *, undoable: bool = False) -> dict[str, Any] | None:
    """The newest run (``undoable``: the newest that applied something and is not undone)."""
    for rid in reversed(run_ids(home)):
        try:
            run = load_run(home, rid)
        except ItemNotFound:
            continue
        if not undoable or (run.get("applied") and run.get("status") != "undone"):
            return run
    return None


def curations_since(journal: Journal, since_id: str | None, need: int) -> int:
    """Curations (batches: records sharing a time and an actor) journaled after the operation id
    ``since_id`` (None: ever) by anyone but dream, counted newest first up to ``need``."""
    seen: set[tuple[str, str]] = set()
    n = 64
    while True:
        lines = tail_lines(journal.file, n)
        seen.clear()
        reached = False
        for line in reversed(lines):
            try:
                d = json.loads(line)
                rid, at, actor = d["id"], d.get("at", ""), d.get("actor", "")
            except (ValueError, KeyError, TypeError):
                continue
            if since_id is not None and rid <= since_id:
                reached = True
                break
            if actor != ACTOR and d.get("op") != "UNDO":
                seen.add((at, actor))
                if len(seen) >= need:
                    return len(seen)
        if reached or len(lines) < n:
            return len(seen)
        n *= 4


def idle_due(home: Path, journal: Journal, hours: float, min_curations: int,
             now: datetime) -> tuple[bool, str]:
    """Whether an idle run is due, and why (not)."""
    last = last_run(home)
    if last is not None:
        try:
            then = datetime.fromisoformat(str(last.get("finished") or last["started"]).replace("Z", "+00:00"))
        except (KeyError, ValueError):
            then = None
        if then is not None:
            age = (now - then).total_seconds() / 3600
            if age < hours:
                return False, f"the last run was {age:.1f} h ago (< {hours:g} h, setting dream_idle_hours)"
    since = (last or {}).get("last_op")
    n = curations_since(journal, since, max(1, min_curations))
    if n < min_curations:
        return False, f"{n} curation(s) since the last run (< {min_curations}, setting dream_min_curations)"
    return True, f"{n} curation(s) since the last run"


"""The operation journal: one JSON line per applied operation.

Each record is ``{id, at, op, path, reason, actor, before, after, also}``:
``before``/``after`` are the full file texts of ``path`` (``null`` when the
file did not or does not exist) and ``also`` lists the other files the
operation touched (relation rewrites, a deleted subtree) as
``{path, before, after}``. That is enough to undo any operation.

A batch is written ahead to ``pending.json`` before any file changes; if the
writer dies mid-batch, the next writer rolls the batch forward from it, so a
batch is applied whole or (if the crash came before ``pending.json`` was
complete) not at all. A batch whose writer saw it fail (a full disk) and could
not undo it on the spot is marked ``pending.failed``: the next writer rolls it
back instead, so a write reported as failed never appears later.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..base.errors import JournalError, OperationNotFound
from ..base.fsio import append_lines, atomic_write


def new_op_id(now: datetime) -> str:
    """Sortable and unique: ``20261202T101500-a1b2c3d4e5``. 40 random bits, because a
    batch of hundreds of ops shares one timestamp (24 bits collided ~1% of 600-op batches)."""
    return now.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(5)


@dataclass(frozen=True)
class Change:
    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class JournalRecord:
    id: str
    at: str
    op: str
    path: str
    reason: str
    actor: str
    before: str | None
    after: str | None
    also: tuple[Change, ...] = ()

    def changes(self) -> list[Change]:
        # an UNDO record keeps every change in ``also``; its (None, None) main is not a change
        main = [Change(self.path, self.before, self.after)] if self.path.endswith(".md") and (
            self.before is not None or self.after is not None) else []
        return main + list(self.also)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "at": self.at, "op": self.op, "path": self.path, "reason": self.reason,
            "actor": self.actor, "before": self.before, "after": self.after,
            "also": [{"path": c.path, "before": c.before, "after": c.after} for c in self.also],
        }

    def to_listing(self) -> dict[str, Any]:
        """One operation as ``history --json`` and ``GET /api/history`` list it (``{"operations":
        [...]}``): the record and the entry files it changed (``files``)."""
        return self.to_json() | {"files": [c.path for c in self.changes()]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "JournalRecord":
        return cls(
            id=d["id"], at=d["at"], op=d["op"], path=d["path"], reason=d.get("reason", ""),
            actor=d.get("actor", ""), before=d.get("before"), after=d.get("after"),
            also=tuple(Change(c["path"], c.get("before"), c.get("after")) for c in d.get("also", [])),
        )


class Journal:
    def __init__(self, folder: Path, *, durable: bool = True):
        self.folder = folder
        self.file = folder / "journal.jsonl"
        self.pending_file = folder / "pending.json"
        self.failed_mark = folder / "pending.failed"
        self.durable = durable
        self.set_aside: str | None = None   # what the last read_pending set aside, for a notice

    # -- write-ahead for one batch ------------------------------------------
    def write_pending(self, records: list[JournalRecord]) -> None:
        data = json.dumps({"records": [r.to_json() for r in records]}, ensure_ascii=False)
        atomic_write(self.pending_file, data, durable=self.durable)

    def read_pending(self) -> list[JournalRecord] | None:
        """The batch a dead writer left, or None. Call it under the writer lock only.

        ``atomic_write`` never leaves a torn file, so an empty or garbled one was damaged
        by hand or by the disk, and cannot be rolled forward. It is set aside as
        ``pending.json.damaged-<time>``, never deleted, and ``set_aside`` says so for the
        caller's notice (``doctor`` warns while the file is there).
        """
        self.set_aside = None
        try:
            raw = self.pending_file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise JournalError(f"{self.pending_file} cannot be read ({exc.strerror}); "
                               "fix its permissions or the disk") from None
        try:
            return _pending_records(raw)
        except ValueError as exc:
            why = str(exc)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        target = self.folder / f"{DAMAGED_PENDING}{stamp}"
        n = 1
        while target.exists():
            n += 1
            target = self.folder / f"{DAMAGED_PENDING}{stamp}-{n}"
        os.rename(self.pending_file, target)
        self.set_aside = (f"set aside a damaged write-ahead file as journal/{target.name} ({why}): it cannot be "
                          "rolled forward, so the batch it held, if any, was not applied; look at it, then delete it")
        return None

    def damaged_pending_files(self) -> list[Path]:
        """Damaged write-ahead files set aside by ``read_pending``, oldest first."""
        return sorted(self.folder.glob(DAMAGED_PENDING + "*"))

    def clear_pending(self) -> None:
        for f in (self.pending_file, self.failed_mark):
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass

    def mark_failed(self) -> None:
        """The pending batch failed in front of its caller: roll it back, never forward.
        An empty file: it needs no free space, only an inode."""
        fd = os.open(self.failed_mark, os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)

    def pending_failed(self) -> bool:
        return self.failed_mark.exists()

    def size(self) -> int:
        try:
            return self.file.stat().st_size
        except FileNotFoundError:
            return 0

    def truncate(self, size: int) -> None:
        """Drop what was appended after ``size`` (the records of a batch being rolled back)."""
        try:
            os.truncate(self.file, size)
        except FileNotFoundError:
            pass

    def drop_trailing(self, ids: set[str]) -> None:
        """Remove the journal's last lines while they are records with these ids (a batch
        rolled back after its writer failed; its records, if any, are the last lines)."""
        tail = tail_lines(self.file, len(ids))
        n = 0
        for line in reversed(tail):
            if _record_id(line) not in ids:
                break
            n += 1
        if n:
            self.truncate(self.size() - sum(len(line) + 1 for line in tail[len(tail) - n:]))

    def append(self, records: list[JournalRecord], *, dedupe: bool = False) -> None:
        """Append records; ``dedupe`` (used by crash recovery) skips ids already written.

        A crashed batch's records, if any were appended, are the journal's last lines
        (recovery runs before any other write), so the last ``len(records)`` lines are
        all that need reading, however large they are.
        """
        known = self._tail_ids(len(records)) if dedupe and records else set()
        append_lines(self.file, [json.dumps(r.to_json(), ensure_ascii=False) for r in records if r.id not in known],
                     durable=self.durable)

    def holds(self, records: list[JournalRecord]) -> bool:
        """Every record of a pending batch is appended (its writer passed the commit point).
        They are the journal's last lines: recovery runs before any other write."""
        return bool(records) and {r.id for r in records} <= self._tail_ids(len(records))

    # -- reading ------------------------------------------------------------
    def records(self) -> Iterator[JournalRecord]:
        """All readable records, oldest first; damaged lines are skipped."""
        try:
            fh = self.file.open(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        with fh:
            for line in fh:
                try:
                    yield JournalRecord.from_json(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue

    def damaged_lines(self) -> int:
        try:
            lines = self.file.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return 0
        bad = 0
        for line in lines:
            try:
                JournalRecord.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError):
                bad += 1
        return bad

    def find(self, op_id: str) -> JournalRecord:
        for r in self.records():
            if r.id == op_id:
                return r
        raise OperationNotFound(f"no operation with id {op_id!r} in the journal (see `memgrove history`)")

    def _tail_ids(self, n: int) -> set[str]:
        """Ids of the last ``n`` lines, read backwards in blocks (lines of any length)."""
        return {i for line in tail_lines(self.file, n) if (i := _record_id(line)) is not None}


def _record_id(line: bytes) -> str | None:
    try:
        return json.loads(line)["id"]
    except (ValueError, KeyError, TypeError):
        return None


def tail_lines(path: Path, n: int, block: int = 1 << 20) -> list[bytes]:
    """The last ``n`` lines of a file, without reading more of it than they take."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return []
    with fh:
        end = fh.seek(0, os.SEEK_END)
        pos, data = end, b""
        while pos > 0 and data.count(b"\n") <= n:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            data = fh.read(step) + data
    return data.splitlines()[-n:] if n > 0 else []


DAMAGED_PENDING = "pending.json.damaged-"


def _pending_records(raw: bytes) -> list[JournalRecord]:
    """The records of a write-ahead file; ValueError saying why it is not a batch."""
    if not raw.strip():
        raise ValueError("it is empty")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("it nests too deep") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"not JSON: {exc}") from None
    recs = data.get("records") if isinstance(data, dict) else None
    if not isinstance(recs, list):  # an empty list is a batch whose every op was unchanged
        raise ValueError("no list of records in it")
    try:
        records = [JournalRecord.from_json(r) for r in recs]
    except (KeyError, TypeError, AttributeError, ValueError):
        raise ValueError("a record in it is incomplete") from None
    for r in records:
        for ch in r.changes() + [Change(r.path, None, None)]:
            if not _plain_tree_path(ch.path) or not all(t is None or isinstance(t, str) for t in (ch.before, ch.after)):
                raise ValueError(f"a record in it names a bad path or content ({str(ch.path)[:80]!r})")
    return records


def _plain_tree_path(path: object) -> bool:
    """A relative path that stays in the tree by its text alone (the writer checks symlinks)."""
    return (isinstance(path, str) and bool(path) and not path.startswith(("/", "\\")) and "\x00" not in path
            and ".." not in path.replace("\\", "/").split("/"))


def utc_now_iso(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

"""Reading the journal newest first, a page at a time, in bounded time (``history``, the web page's
journal and an entry's own history): never from the file's start.

``journal.jsonl`` only grows at its end (a batch rolled back is cut from the end, tree/writes/journal.py),
so the byte offset where a line starts names a place in it for good: ``page`` reads backwards from
``before`` (the end when None) in blocks, keeps the records that pass its filters, and stops at
``limit`` of them, or at a line's end once it has read ``budget`` bytes. ``JournalPage.next`` is the
``before`` of the next, older, page (None: the journal's start was reached).

A filter is first looked for in the raw bytes of a block, as ``json.dumps`` writes it (the path,
raw or ``\\u``-escaped; the op's name in quotes): a line without it cannot match and is not
parsed, so a filtered page over 100,000 operations costs a search of the bytes, not 100,000 parses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from ..base.errors import JournalError, OperationNotFound
from .cancel import checkpoint
from .journal import JournalRecord

BLOCK = 1 << 18
MAX_LINE = 64 << 20     # a record read at an offset: no more than this of it


@dataclass(frozen=True)
class JournalPage:
    """Records newest first; ``next``: the ``before`` of the next (older) page, None when none is
    left; ``scanned``: the bytes read for this one; ``offsets``: where each record's line starts
    (what ``find`` takes as ``at``, to read that one line)."""

    records: list[JournalRecord]
    next: int | None
    scanned: int
    offsets: list[int] = field(default_factory=list)


def touches(record: JournalRecord, rel: str) -> bool:
    """The record changed the entry ``rel``, or something in the folder ``rel`` (``history``'s filter)."""
    return record.path == rel or any(c.path == rel or c.path.startswith(rel + "/") for c in record.changes())


def page(file: Path, *, limit: int | None = 50, before: int | None = None, kinds: Iterable[str] = (),
         path: str | None = None, budget: int | None = 32 << 20, block: int = BLOCK) -> JournalPage:
    """The newest ``limit`` records (None or 0: all) older than the offset ``before``, of one of ``kinds``
    (op names, e.g. ``("UPDATE", "UNDO")``; none: every kind) and touching ``path`` (an entry or a
    folder, relative; None: any), reading at most about ``budget`` bytes (None: no bound).

    >>> p = page(tree.journal.file, kinds=["UNDO"])                       # doctest: +SKIP
    >>> older = page(tree.journal.file, kinds=["UNDO"], before=p.next)    # doctest: +SKIP
    """
    wanted = frozenset(str(k).upper() for k in kinds)
    needles = _needles(wanted, path)
    try:
        fh = file.open("rb")
    except FileNotFoundError:
        return JournalPage([], None, 0)
    out: list[JournalRecord] = []
    at: list[int] = []
    with fh:
        scanned = 0
        for pos, data, head, stop, scanned in _blocks(fh, before, block):
            for start, line in _candidates(data, head, stop, needles):
                rec = _match(line, needles, wanted, path)
                if rec is not None:
                    out.append(rec)
                    at.append(pos + start)
                    if limit and len(out) >= limit:
                        return JournalPage(out, pos + start if pos + start > 0 else None, scanned, at)
            # every line from ``head`` on was looked at: a page that stops here moves on
            if budget is not None and scanned >= budget and pos > 0 and stop > head:
                return JournalPage(out, pos + head, scanned, at)
    return JournalPage(out, None, scanned, at)


def find(file: Path, op_id: str, at: int | None = None) -> JournalRecord:
    """The record ``op_id``: the line at the offset ``at`` when it holds it (``JournalPage.offsets``:
    one line read), else looked for from the journal's end (only its line is parsed)."""
    if at is not None and at >= 0:
        try:
            with file.open("rb") as fh:
                fh.seek(int(at))
                rec = _parsed(fh.readline(MAX_LINE))
        except (OSError, ValueError, OverflowError):
            rec = None
        if rec is not None and rec.id == op_id and (at == 0 or _newline_before(file, int(at))):
            return rec
    return _find_back(file, op_id, keep=False)[0]


def _newline_before(file: Path, at: int) -> bool:
    """``at`` starts a line: a forged offset inside another record's text is not taken for one."""
    with file.open("rb") as fh:
        fh.seek(at - 1)
        return fh.read(1) == b"\n"


def find_with_later(file: Path, op_id: str) -> tuple[JournalRecord, list[JournalRecord]]:
    """The record ``op_id`` and every record journaled after it, oldest first (what undo plans
    with), read from the journal's end: an undo of a recent operation reads only the tail."""
    return _find_back(file, op_id, keep=True)


def _find_back(file: Path, op_id: str, *, keep: bool) -> tuple[JournalRecord, list[JournalRecord]]:
    if not op_id:
        raise JournalError("nothing to undo: an operation that changed nothing ('unchanged') has no id")
    needle = json.dumps(str(op_id)).encode()
    later: list[bytes] = []
    try:
        fh = file.open("rb")
    except FileNotFoundError:
        fh = None
    if fh is not None:
        with fh:
            for _, data, head, stop, _ in _blocks(fh, None, BLOCK):
                for _, line in _lines_back(data, head, stop) if keep else _candidates(data, head, stop, [[needle]]):
                    checkpoint()
                    rec = _parsed(line) if needle in line else None
                    if rec is not None and rec.id == op_id:
                        return rec, [r for r in map(_parsed, reversed(later)) if r is not None]
                    if keep:
                        later.append(line)
    raise OperationNotFound(f"no operation with id {op_id!r} in the journal (see `memgrove history`)")


def _blocks(fh: BinaryIO, before: int | None, block: int) -> Iterator[tuple[int, bytes, int, int, int]]:
    """The journal read backwards from ``before`` (None: its end): per block, ``(pos, data, head, stop,
    scanned)``: ``data[head:stop]`` are the whole lines found in it (file offset ``pos + head``), the
    bytes read so far in ``scanned``."""
    size = fh.seek(0, 2)
    end = size if before is None else max(0, min(int(before), size))
    # a cursor inside a line (not one ``page`` gave): what precedes it of that line is not a record
    cut = False
    if 0 < end < size:
        fh.seek(end - 1)
        cut = fh.read(1) != b"\n"
    pos, tail, scanned = end, [], 0     # tail: the pieces of a line that ends in a newer block
    while pos > 0:
        step = min(block, pos)
        pos -= step
        fh.seek(pos)
        chunk = fh.read(step)
        scanned += step
        if pos > 0 and b"\n" not in chunk:    # all of it belongs to one line: joined once, when it starts
            tail.append(chunk)
            continue
        data = chunk + b"".join(reversed(tail)) if tail else chunk
        # the first line may begin in an earlier block, unless this block starts the file
        head = data.find(b"\n") + 1 if pos > 0 else 0
        tail = [data[:head - 1]] if pos > 0 else []
        stop = len(data)
        if cut:
            stop = data.rfind(b"\n", head) + 1 or head
            cut = False
        yield pos, data, head, stop, scanned


def _lines_back(data: bytes, head: int, stop: int) -> Iterator[tuple[int, bytes]]:
    """``(start, line)`` of the lines of ``data[head:stop]``, the last first (no copy of the rest)."""
    end = stop - 1 if stop > head and data[stop - 1] == 10 else stop    # 10: "\n"
    while end >= head and stop > head:
        k = data.rfind(b"\n", head, end)
        start = head if k < 0 else k + 1
        yield start, data[start:end]
        if start == head:
            return
        end = start - 1


def _candidates(data: bytes, head: int, stop: int, needles: list[list[bytes]]) -> Iterator[tuple[int, bytes]]:
    """The lines of ``data[head:stop]`` that may match, the last first: every line without a filter,
    else those holding one of the first filter's needles, found by searching the block."""
    if not needles:
        yield from _lines_back(data, head, stop)
        return
    starts: set[int] = set()
    for n in needles[0]:
        i = data.find(n, head, stop)
        while i >= 0:
            k = data.rfind(b"\n", head, i)
            starts.add(head if k < 0 else k + 1)
            e = data.find(b"\n", i, stop)
            if e < 0:
                break
            i = data.find(n, e + 1, stop)
    for start in sorted(starts, reverse=True):
        e = data.find(b"\n", start, stop)
        yield start, data[start:stop if e < 0 else e]


def _needles(kinds: frozenset[str], path: str | None) -> list[list[bytes]]:
    """What a line must hold, as json.dumps writes it: every group has one of its needles in the line."""
    groups = []
    if kinds:
        groups.append([json.dumps(k).encode() for k in kinds])
    if path:     # as this version writes it, and as one writing \\u escapes would have
        groups.append(list(dict.fromkeys(json.dumps(path, ensure_ascii=a)[1:-1].encode("utf-8") for a in (False, True))))
    return groups


def _parsed(line: bytes) -> JournalRecord | None:
    try:
        return JournalRecord.from_json(json.loads(line))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None     # a damaged line is skipped, as ``Journal.records`` skips it


def _match(line: bytes, needles: list[list[bytes]], kinds: frozenset[str], path: str | None) -> JournalRecord | None:
    if not line.strip():
        return None
    if needles and not all(any(n in line for n in g) for g in needles):
        return None
    rec = _parsed(line)
    if rec is None:
        return None
    if kinds and rec.op not in kinds:
        return None
    if path and not touches(rec, path):
        return None
    return rec

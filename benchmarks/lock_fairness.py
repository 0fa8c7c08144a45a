"""Writer-lock fairness: K processes each take the tree's writer lock in a loop.

Side by side in one run: memgrove's ``WriterLock`` (a queue of tickets in
arrival order) and the baseline it replaced, an ``flock`` polled with
exponential back-off (no queue). Each holder keeps the lock ``--hold`` seconds,
standing for one small curate. Reported per lock: operations per writer (min,
median, max), wait p50 / p95 / max. Medians are per run; the machine is noisy.

    .venv/bin/python benchmarks/lock_fairness.py --writers 8 --seconds 10
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from harness.report import RESULTS, publish, table
import harness.words_only  # noqa: F401 - ranks by words alone (see there)


@contextmanager
def polled_flock(path: Path, timeout: float = 600.0):
    """The baseline: what the lock was before the queue (try, sleep 2 ms doubling to 50 ms)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline, delay = time.monotonic() + timeout, 0.002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise TimeoutError(path)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _writer(kind: str, path: str, seconds: float, hold: float, start: float, out) -> None:
    from memgrove.tree.writes.writer_lock import WriterLock

    lock = WriterLock(Path(path), timeout=600.0)
    take = lock.hold if kind == "queue" else (lambda: polled_flock(Path(path)))
    while time.time() < start:
        time.sleep(0.001)
    waits, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        with take():
            waits.append(time.monotonic() - t)
            time.sleep(hold)
    out.put(waits)


def run(kind: str, writers: int, seconds: float, hold: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out: mp.Queue = mp.Queue()
        start = time.time() + 0.5
        procs = [mp.Process(target=_writer, args=(kind, f"{tmp}/write.lock", seconds, hold, start, out))
                 for _ in range(writers)]
        for p in procs:
            p.start()
        per = [out.get() for _ in procs]
        for p in procs:
            p.join()
    waits = sorted(w for r in per for w in r)
    ops = sorted(len(r) for r in per)
    return {"lock": kind, "writers": writers, "ops_min": ops[0], "ops_median": statistics.median(ops),
            "ops_max": ops[-1], "wait_p50_s": waits[len(waits) // 2], "wait_p95_s": waits[int(len(waits) * 0.95)],
            "wait_max_s": waits[-1], "ops_total": sum(ops)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--writers", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--hold", type=float, default=0.03, help="seconds each holder keeps the lock")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    rows = [run(kind, k, a.seconds, a.hold) for k in a.writers for kind in ("flock-polled", "queue")]
    meta = {"seconds": a.seconds, "hold_s": a.hold, "load": os.getloadavg()[0]}
    publish({"meta": meta, "rows": rows}, "\n".join([
        "# Writer-lock fairness", "", f"{a.seconds:g} s per row, each holder keeps the lock {a.hold * 1000:g} ms; "
        f"load average {meta['load']:.1f} at the end.", "", *table(
            ["lock", "writers", "ops per writer min / median / max", "wait p50", "wait p95", "wait max"],
            [[r["lock"], r["writers"], f"{r['ops_min']} / {r['ops_median']:g} / {r['ops_max']}",
              f"{r['wait_p50_s'] * 1000:.0f} ms", f"{r['wait_p95_s'] * 1000:.0f} ms", f"{r['wait_max_s']:.2f} s"]
             for r in rows])]), None if a.no_write else RESULTS / "lock_fairness", indent=1)


if __name__ == "__main__":
    main()

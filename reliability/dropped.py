"""A process opening and dropping hundreds of memories (a benchmark, a notebook, a server juggling
projects): what each held (its inotify watcher, file descriptors, threads) must come back.

A child process opens ``memories`` memories one after another, searches each until its watcher
runs, and drops it: without ``close()`` (``dropped``) and with it (``closed``). It counts its own
inotify instances, descriptors and threads as it goes. Counts must stay flat: the last may exceed
the count after the first few by at most ``SLACK`` (a cache or pool reaching its size). Before the
fix, each dropped memory kept its inotify instance: at 128 (the default per-user limit) every
watcher of the user failed, editors' included.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

from .common import SectionResult, child_args, run, PYTHON, child_env

SECTION = "dropped"
SLACK = {"inotify": 1, "all": 8, "threads": 3}
WARM = 10        # counts after this many memories are the baseline


def child(args: dict[str, Any]) -> None:
    """Open, search (twice, so the watcher starts), drop; print the counts as JSON lines."""
    import gc

    from memgrove import Memory

    from .serving import count_fds

    project = Path(args["project"])
    with Memory.open(project, create=True) as mem:
        mem.curate([{"op": "ADD", "path": "drop/notes/one.md", "content": "dropped memory marker", "reason": "seed"}])
    samples = []
    watched = 0
    for i in range(1, args["memories"] + 1):
        mem = Memory.open(project, watch_after=0.0)
        mem.search("dropped memory marker")
        mem.search("dropped memory marker")          # the second check of a long-lived process starts a watcher
        watched += mem.tree._watcher is not None
        if args["close"]:
            mem.close()
        del mem
        if i in (1, WARM) or i % 50 == 0:
            samples.append({"i": i, **count_fds(), "threads": threading.active_count(), "watched": watched})
    gc.collect()
    samples.append({"i": "gc", **count_fds(), "threads": threading.active_count(), "watched": watched})
    print(json.dumps(samples))


def run_section(work: Path, *, memories: int) -> SectionResult:
    res = SectionResult(SECTION, columns=["mode", "memories", "watchers started", "inotify after 1 / 10 / last",
                                          "descriptors after 1 / 10 / last", "threads after 1 / 10 / last"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    for mode in ("dropped", "closed"):
        args = base / f"{mode}.json"
        args.write_text(json.dumps({"project": str(base / mode), "memories": memories, "close": mode == "closed"}))
        repro = f"python -m reliability --sections dropped --dropped-memories {memories}"
        r = run([PYTHON, "-m", "reliability.dropped", "--child", "count", str(args)], timeout=1800,
                env=child_env())
        if r.code != 0:
            res.fail("child failed", (r.err.strip().splitlines() or ["?"])[-1], repro)
            continue
        samples = json.loads(r.out.strip().splitlines()[-1])
        first, warm, last = samples[0], next(s for s in samples if s["i"] == WARM), samples[-2]
        if last["watched"] < memories:
            res.notes.append(f"{mode}: {last['watched']} of {memories} memories started a watcher")
        for key, slack in SLACK.items():
            if last[key] > warm[key] + slack:
                res.fail(f"{key} grow ({mode})", f"{warm[key]} after {WARM} memories, {last[key]} after {memories}",
                         repro)
        res.rows.append([mode, memories, last["watched"], *(f"{first[k]} / {warm[k]} / {last[k]}"
                                                              for k in ("inotify", "all", "threads"))])
    res.notes.append(f"Each memory is opened on the same small project, searched twice (its watcher starts: "
                     f"watch_after 0) and dropped, with or without close(); counts are the child's own "
                     f"(/proc/self/fd, threading.active_count), no gc.collect() in the loop. Allowed growth past "
                     f"the count after {WARM} memories: {SLACK}.")
    return res


if __name__ == "__main__" and "--child" in __import__("sys").argv:
    mode, a = child_args()
    {"count": child}[mode](a)

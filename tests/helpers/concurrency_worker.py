"""Child processes for tests/test_concurrency.py: ``python concurrency_worker.py MODE JSON``.

Modes: ``writer`` (curates its own entries, reports what it expects on disk),
``reader`` (searches in a loop until a stop file appears, reports latencies and
errors), ``racer`` (ADDs paths other racers ADD too), ``churn`` (many small
commits), ``batch`` (one large durable UPSERT batch, optionally pausing at a
named point so the parent can SIGKILL it there), ``reindex`` (optionally
pausing mid-build), ``hold`` (holds the writer lock). JSON may be ``@file``.
A child that pauses prints ``PAUSED`` and sleeps until it is killed.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback


def _mark(text: str) -> None:
    """Tell the parent where we are (one line on stdout)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _park(marker: str) -> None:
    _mark(marker)
    time.sleep(120)  # the parent SIGKILLs us here
    os._exit(3)


# -- writer -------------------------------------------------------------------

def entry_path(wid: int, j: int) -> str:
    # half in the writer's own folder, half in a folder every writer shares
    return f"team/w{wid}/e_{j}.md" if j % 2 == 0 else f"team/shared/w{wid}_e_{j}.md"


def content(wid: int, j: int, version: int) -> str:
    return f"Writer {wid} entry {j} version {version}: marker mgw{wid}e{j}v{version} shared alpha words."


def count_rebuilds() -> dict:
    """Count full index rebuilds in this process: none should happen once the index exists."""
    from memgrove.tree.store import ContextTree

    seen = {"rebuilds": 0}
    orig = ContextTree._rebuild_locked

    def rebuild(self, *a, **kw):
        seen["rebuilds"] += 1
        return orig(self, *a, **kw)
    ContextTree._rebuild_locked = rebuild
    return seen


def writer(args: dict) -> None:
    from memgrove import Memory

    seen = count_rebuilds()
    wid, n = args["wid"], args["n"]
    rng = random.Random(1000 + wid)
    expected: dict[str, str | None] = {}
    versions: dict[int, int] = {}
    ids: list[str] = []
    mem = Memory.open(args["home"], durable=False, lock_timeout=60)

    def run(ops: list[dict]) -> None:
        results = mem.curate(ops, actor=f"writer-{wid}")
        assert len(results) == len(ops), (results, ops)
        for r in results:
            ids.append(r.id)
        time.sleep(rng.uniform(0, 0.01))

    def op(kind: str, j: int, version: int) -> dict:
        d = {"op": kind, "path": entry_path(wid, j), "reason": f"writer {wid} {kind.lower()} {j}"}
        if kind != "DELETE":
            d.update(title=f"W{wid} entry {j}", content=content(wid, j, version))
        return d

    # create: ADD and UPSERT in small batches
    j = 0
    while j < n:
        size = rng.randint(2, 5)
        batch = []
        for k in range(j, min(n, j + size)):
            batch.append(op("ADD" if k % 3 else "UPSERT", k, 1))
            versions[k] = 1
        run(batch)
        j += size
    # update some: UPDATE (v2) and UPSERT-as-update (v3)
    for k in rng.sample(range(n), 12):
        versions[k] += 1
        run([op("UPDATE", k, versions[k])])
    upd = rng.sample(range(n), 8)
    for i in range(0, len(upd), 2):
        batch = []
        for k in upd[i:i + 2]:
            versions[k] += 1
            batch.append(op("UPSERT", k, versions[k]))
        run(batch)
    # delete a few of its own entries
    gone = rng.sample(range(n), 4)
    for i in range(0, len(gone), 2):
        run([op("DELETE", k, 0) for k in gone[i:i + 2]])
    for k in range(n):
        expected[entry_path(wid, k)] = None if k in gone else content(wid, k, versions[k])
    mem.close()
    with open(args["out"], "w") as fh:
        json.dump({"expected": expected, "ids": ids, "rebuilds": seen["rebuilds"],
                   "markers": {entry_path(wid, k): f"mgw{wid}e{k}v{versions[k]}" for k in range(n)}}, fh)


# -- reader -------------------------------------------------------------------

def reader(args: dict) -> None:
    from memgrove import Memory

    seen = count_rebuilds()
    rng = random.Random(args.get("seed", 0))
    mem = Memory.open(args["home"], durable=False)
    latencies: list[float] = []
    errors: list[str] = []
    bad_paths: list[str] = []
    queries = ["shared alpha words", "writer entry", "marker", "team shared", "seed note"]
    started = False
    while not os.path.exists(args["stop"]):
        if rng.random() < 0.5:
            q = rng.choice(queries)
        else:
            q = f"mgw{rng.randrange(4)}e{rng.randrange(40)}v{rng.randint(1, 3)}"
        cold = rng.random() < 0.2  # like a CLI call: open the tree, search once
        t0 = time.monotonic()
        try:
            if cold:
                with Memory.open(args["home"], durable=False) as fresh:
                    hits = fresh.search(q, limit=5)
            else:
                hits = mem.search(q, limit=5)
            for h in hits:
                if h.path.rsplit("/", 1)[-1].startswith(".") or not h.path.endswith(".md"):
                    bad_paths.append(h.path)
        except Exception:  # noqa: BLE001 - every failure is reported to the parent
            errors.append(traceback.format_exc())
        latencies.append(time.monotonic() - t0)
        if not started:
            open(args["ready"], "w").close()
            started = True
    mem.close()
    with open(args["out"], "w") as fh:
        json.dump({"latencies": latencies, "errors": errors, "bad_paths": bad_paths,
                   "rebuilds": seen["rebuilds"]}, fh)


# -- racing for the same entries ----------------------------------------------

def racer(args: dict) -> None:
    """ADD the same paths as the other racers (one must win each), and tag one shared entry."""
    from memgrove import BatchRejected, Memory

    rid = args["rid"]
    won, lost = [], []
    with Memory.open(args["home"], durable=False, lock_timeout=60) as mem:
        while not os.path.exists(args["go"]):
            time.sleep(0.002)
        for k in range(args["n"]):
            path = f"race/claims/c_{k}.md"
            try:
                mem.curate([{"op": "ADD", "path": path, "content": f"claimed by racer {rid}", "reason": "claim"}])
                won.append(path)
            except BatchRejected as exc:
                lost.append(str(exc))
            mem.curate([{"op": "UPDATE", "path": "race/shared/tally.md", "tags": [f"r{rid}k{k}"],
                         "reason": "count me"}])
    with open(args["out"], "w") as fh:
        json.dump({"won": won, "lost": lost}, fh)


# -- many small commits --------------------------------------------------------

def churn(args: dict) -> None:
    from memgrove import Memory

    with Memory.open(args["home"], durable=False) as mem:
        _mark("START")
        deadline = time.monotonic() + args["seconds"]
        stop = args.get("stop_file")
        for i in range(args["n"]):
            if time.monotonic() > deadline or (stop and os.path.exists(stop)):
                break
            mem.curate([{"op": "UPSERT", "path": f"churn/notes/e_{i % 40}.md", "content": f"churn note {i}",
                         "reason": "churn"}])


# -- one large batch, to be killed ----------------------------------------------

def batch(args: dict) -> None:
    from memgrove import Memory
    from memgrove.tree.base import fsio
    from memgrove.tree.writes import write_path
    from memgrove.tree.writes.journal import Journal

    pause = args.get("pause")  # where to stop and wait for SIGKILL; None = run freely
    if pause == "before_pending":
        Journal.write_pending = lambda self, records: _park("PAUSED")
    elif pause == "after_pending":
        orig_wp = Journal.write_pending

        def write_pending(self, records):
            orig_wp(self, records)
            _park("PAUSED")
        Journal.write_pending = write_pending
    elif pause and pause.startswith("mid_write:"):
        # the Nth entry write stops halfway through its temp file
        stop_at = int(pause.split(":")[1])
        calls = {"n": 0}
        orig_aw = write_path.atomic_write

        def atomic_write(path, data, *, durable=True, **how):
            if path.suffix == ".md" and path.name != "context.md":
                calls["n"] += 1
                if calls["n"] == stop_at:
                    import tempfile
                    fd, _tmp = tempfile.mkstemp(prefix=fsio.TEMP_PREFIX, suffix=".tmp", dir=path.parent)
                    raw = data.encode("utf-8")
                    os.write(fd, raw[: len(raw) // 2])
                    os.fsync(fd)
                    _park("PAUSED")
            orig_aw(path, data, durable=durable, **how)
        write_path.atomic_write = atomic_write
    elif pause == "after_append":
        orig_ap = Journal.append

        def append(self, records, *, dedupe=False):
            orig_ap(self, records, dedupe=dedupe)
            _park("PAUSED")
        Journal.append = append
    elif pause == "after_clear":
        orig_cl = Journal.clear_pending

        def clear_pending(self):
            orig_cl(self)
            _park("PAUSED")
        Journal.clear_pending = clear_pending

    mem = Memory.open(args["home"], durable=True)
    ops = [{"op": "UPSERT", "path": p, "title": t, "content": c, "reason": f"round {args['round']}"}
           for p, t, c in args["ops"]]
    _mark("START")
    t0 = time.monotonic()
    mem.curate(ops, actor="batch")
    _mark(f"DONE {time.monotonic() - t0:.3f}")
    mem.close()


# -- reindex ----------------------------------------------------------------------

def reindex(args: dict) -> None:
    from memgrove import Memory
    from memgrove.tree.index.tantivy_engine import TantivyEngine
    from memgrove.tree.index.whoosh_engine import WhooshEngine

    if args.get("pause"):  # stop while the new index is being built, on either engine
        for engine in (WhooshEngine, TantivyEngine):
            engine.rebuild = lambda self, docs, **kw: _park("PAUSED")
    with Memory.open(args["home"], durable=False) as mem:
        _mark(f"REINDEXED {mem.reindex()}")


# -- lock holder ----------------------------------------------------------------

def hold(args: dict) -> None:
    from memgrove import Memory

    mem = Memory.open(args["home"], durable=False)
    with mem.tree.lock.hold():
        _mark(f"HELD {os.getpid()} {time.time()}")
        time.sleep(args["seconds"])
    _mark("RELEASED")
    mem.close()


if __name__ == "__main__":
    mode, raw = sys.argv[1], sys.argv[2]
    if raw.startswith("@"):  # arguments too long for a command line come in a file
        with open(raw[1:]) as fh:
            raw = fh.read()
    params = json.loads(raw)
    modes = {"writer": writer, "reader": reader, "racer": racer, "churn": churn, "batch": batch,
             "reindex": reindex, "hold": hold}
    modes[mode](params)

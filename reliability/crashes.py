"""Crash points: seeded SIGKILLs of writers at random moments, then everything checked.

Children are forked from this process (so a kill cycle costs milliseconds, not an
interpreter start) and run, until killed, one scenario in a loop: batches of
UPSERTs, MERGE and DELETE of entries and folders, an UPSERT then its undo,
doctor --fix and reindex after derived files were removed, and — on a tree of
more than 2,000 files, where the rebuild runs Whoosh worker processes — full
reindexes and the automatic rebuild inside a search. Before each op a child
writes what it is about to do (its *intent*, fsynced); after the op returns it
writes the journal ids (its *ack*, fsynced). Only acked ops are owed.

After each kill, before anyone repairs anything: every file of the tree parses
(nothing torn). Then: no process the child started is still alive (this
process is a child subreaper, so orphans come to it; they are killed and
counted), a fresh writer takes the lock within ``--lock-bound`` seconds; a
long-lived process that opened the tree before the crash undoes an earlier op
(a crashed batch must be rolled forward first, not torn); the next open
recovers and doctor (no --fix) is clean; every acked op is on disk and in the
journal exactly once, and the op in flight is there whole or not at all.

Every memory here opens with ``embed_ahead=False``: these are crashes of writes, and ~500 children
each starting a background embedder (the model's loading) they are killed before it pays would
multiply the section's time; the embedder across forks is the fork_safety section's.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from .common import SectionResult, append_fsync, duplicates, journal_ids, read_lines, torn_files
from .reaper import become_subreaper, reap_orphans

SECTION = "crashes"
SCENARIOS = {"batch": 5, "merge_delete": 3, "undo": 2, "doctor_fix": 1}
DOMAINS = [f"crash/d{d}/t{t}" for d in range(3) for t in range(3)]
SLOTS = [f"{f}/e_{k}.md" for f in DOMAINS for k in range(12)]


# -- the child (forked) ------------------------------------------------------------

def _content(marker: str) -> dict[str, str]:
    return {"narrative": f"Crash test entry, marker {marker}.", "facts": f"- marker {marker}"}


def _child(scenario: str, home: Path, model: dict[str, str | None], acks: Path, seed: int, ready_fd: int) -> None:
    from memgrove import Memory
    from memgrove.tree.doctor import diagnose
    from memgrove.tree.base.errors import BatchRejected, MemgroveError

    rng = random.Random(seed)
    mem = Memory.open(home, lock_timeout=30, embed_ahead=False)   # crashes of writes, not of the embedder
    os.write(ready_fd, b"r")
    os.close(ready_fd)
    n = 0

    def do(ops: list[dict], expects: list[dict[str, str | None]]) -> list[str] | None:
        nonlocal n
        n += 1
        before = {p: model.get(p) for e in expects for p in e}
        append_fsync(acks, {"n": n, "intent": expects, "before": before})
        try:
            results = mem.curate(ops, actor="crash")
        except (BatchRejected, MemgroveError) as exc:
            append_fsync(acks, {"n": n, "refused": str(exc)[:200]})
            return None
        append_fsync(acks, {"n": n, "ids": [r.id for r in results]})
        for e in expects:
            model.update(e)
        return [r.id for r in results]

    while True:
        live = [p for p in SLOTS if model.get(p)]
        if scenario == "batch":
            size = rng.choice([1, 3, 8, 20, 40, 80])
            paths = rng.sample(SLOTS, min(size, len(SLOTS)))
            ops, expects = [], []
            for p in paths:
                m = f"ck{seed}x{n}x{rng.randrange(10**6)}q"
                op = {"op": "UPSERT", "path": p, "title": f"Crash {p}", "content": _content(m), "reason": "crash batch"}
                if live and rng.random() < 0.3:
                    op["related"] = [rng.choice(live)]
                ops.append(op)
                expects.append({p: m})
            do(ops, expects)
        elif scenario == "merge_delete":
            r = rng.random()
            if len(live) >= 2 and r < 0.4:
                a, b = rng.sample(live, 2)
                do([{"op": "MERGE", "path": a, "merge_into": b, "reason": "crash merge"}], [{a: None}])
            elif live and r < 0.7:
                folder = rng.choice(sorted({p.rsplit("/", 1)[0] for p in live}))
                do([{"op": "DELETE", "path": folder, "reason": "crash delete folder"}],
                   [{p: None for p in SLOTS if p.startswith(folder + "/")}])
            elif live and r < 0.8:
                p = rng.choice(live)
                do([{"op": "DELETE", "path": p, "reason": "crash delete"}], [{p: None}])
            else:
                fresh = [p for p in SLOTS if not model.get(p)] or SLOTS
                picks = rng.sample(fresh, min(len(fresh), rng.randint(3, 15)))
                ms = {p: f"ck{seed}x{n}x{rng.randrange(10**6)}q" for p in picks}
                do([{"op": "UPSERT", "path": p, "content": _content(m), "reason": "refill"} for p, m in ms.items()],
                   [{p: m} for p, m in ms.items()])
        elif scenario == "undo":
            p = rng.choice(SLOTS)
            m = f"ck{seed}x{n}x{rng.randrange(10**6)}q"
            old = model.get(p)
            ids = do([{"op": "UPSERT", "path": p, "content": _content(m), "reason": "to be undone"}], [{p: m}])
            if ids:
                n += 1
                append_fsync(acks, {"n": n, "intent": [{p: old}], "before": {p: m}})
                try:
                    r = mem.undo(ids[0])
                except MemgroveError as exc:
                    append_fsync(acks, {"n": n, "refused": str(exc)[:200]})
                    continue
                append_fsync(acks, {"n": n, "ids": [r.id]})
                model[p] = old
        elif scenario == "doctor_fix":
            victim = rng.choice(["index", "index/catalog.db", "cache", "index/whoosh"])
            target = home / ".memgrove" / victim if (home / ".memgrove").exists() else home / victim
            shutil.rmtree(target, ignore_errors=True) if target.is_dir() else target.unlink(missing_ok=True)
            diagnose(mem.tree, fix=True)
            mem.reindex() if rng.random() < 0.5 else mem.search("crash test entry marker")
        elif scenario == "reindex":
            if rng.random() < 0.3:
                shutil.rmtree(home / ".memgrove" / "index" / "whoosh", ignore_errors=True)
                mem.search("crash test entry")   # the automatic rebuild inside a search
            else:
                mem.reindex()


# -- the parent ------------------------------------------------------------------------

class Checker:
    def __init__(self, res: SectionResult, home: Path, seed: int):
        self.res, self.home, self.seed = res, home, seed
        self.model: dict[str, str | None] = {}
        self.acked_ids: list[str] = []
        self.undoable: list[tuple[str, dict[str, str | None], dict[str, str | None]]] = []  # id, before, after
        self.counts = {"kills": 0, "acked_ops": 0, "inflight_applied": 0, "inflight_dropped": 0, "orphans": 0,
                       "survivor_undos": 0, "pending_at_kill": 0}
        self.fails: dict[str, int] = {}
        self.items: dict[str, int | None] = {}

    def fail(self, check: str, detail: str, repro: str, item: int | None = None) -> None:
        self.fails[check] = self.fails.get(check, 0) + 1
        self.items.setdefault(check, item)
        if self.fails[check] <= 3:
            self.res.fail(check, detail, repro, item)

    def replay(self, acks: Path) -> dict[str, str | None] | None:
        """Apply the acked intents to the model; return the intent in flight (merged), if any."""
        intents: dict[int, dict] = {}
        inflight = None
        for line in read_lines(acks):
            if "intent" in line:
                intents[line["n"]] = line
                inflight = line
            elif "ids" in line:
                it = intents[line["n"]]
                for e in it["intent"]:
                    self.model.update(e)
                self.acked_ids += line["ids"]
                self.counts["acked_ops"] += len(line["ids"])
                if len(line["ids"]) == 1 and len(it["intent"]) == 1:
                    self.undoable.append((line["ids"][0], dict(it["before"]), dict(it["intent"][0])))
                inflight = None
            elif "refused" in line:
                inflight = None
        if inflight is None:
            return None
        merged: dict[str, str | None] = {}
        for e in inflight["intent"]:
            merged.update(e)
        return merged

    def disk_marker(self, path: str) -> str | None:
        p = self.home / ".memgrove" / "tree" / path
        try:
            return p.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def holds(self, path: str, expect: str | None) -> bool:
        text = self.disk_marker(path)
        return text is None if expect is None else (text is not None and expect in text)


def _lock_probe(home: Path, bound: float) -> tuple[bool, float, str]:
    from memgrove.tree.base.errors import LockTimeout
    from memgrove.tree.writes.writer_lock import WriterLock

    lock = WriterLock(home / ".memgrove" / "write.lock", bound)
    t0 = time.monotonic()
    try:
        with lock.hold():
            pass
    except LockTimeout as exc:
        return False, time.monotonic() - t0, str(exc)
    return True, time.monotonic() - t0, ""


def kill_cycle(ck: Checker, scenario: str, i: int, rng: random.Random, survivor: Any, delay: float,
               lock_bound: float, repro: str) -> None:
    from memgrove import Memory
    from memgrove.tree.base.errors import MemgroveError

    home = ck.home
    acks = home.parent / f"acks_{scenario}_{i}.jsonl"
    r_fd, w_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(r_fd)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _child(scenario, home, dict(ck.model), acks, ck.seed * 100_000 + i, w_fd)
        except BaseException:  # noqa: BLE001 - a child's own failure: the parent sees no ack
            import traceback
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(w_fd)
    ready = os.read(r_fd, 1)
    os.close(r_fd)
    if ready:
        time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    ck.counts["kills"] += 1
    where = f"{repro} (kill {i}, scenario {scenario}, {delay:.3f} s after ready)"

    torn = torn_files(home / ".memgrove")
    if torn:
        ck.fail("torn file", f"{scenario}: {torn[0]} ({len(torn)} files)", where)
    # what the child left running is counted, but only after the lock was tried with it still there
    ok, waited, err = _lock_probe(home, lock_bound)
    orphans = reap_orphans(grace=1.0)
    if orphans:
        ck.counts["orphans"] += orphans
        ck.fail("orphaned process", f"{scenario}: {orphans} process(es) of the killed child still alive "
                f"{'and holding the writer lock' if not ok else ''}", where, 1)
    if not ok:
        ck.fail("lock left behind", f"{scenario}: a fresh writer waited {waited:.1f} s: {err}", where, 1)
        _lock_probe(home, 30)

    inflight = ck.replay(acks)
    pending = (home / ".memgrove" / "journal" / "pending.json").exists()
    ck.counts["pending_at_kill"] += pending
    if survivor is not None and pending and scenario != "reindex":
        # a process that opened the tree before the crash undoes an earlier, unrelated op
        busy = set(inflight or {})
        for op_id, before, after in reversed(ck.undoable[-40:]):
            if busy.isdisjoint(after) and all(ck.model.get(p) == m for p, m in after.items()):
                try:
                    survivor.undo(op_id)
                except MemgroveError:
                    pass
                except Exception as exc:  # noqa: BLE001
                    ck.fail("unexpected error", f"undo after a crash: {type(exc).__name__}: {exc}", where, 6)
                else:
                    ck.counts["survivor_undos"] += 1
                    ck.model.update(before)
                    ck.undoable = [u for u in ck.undoable if u[0] != op_id]
                break

    try:
        with Memory.open(home, lock_timeout=lock_bound, embed_ahead=False) as mem:
            report = mem.doctor()
            if not report.ok:
                ck.fail("doctor after reopen", f"{scenario}: {'; '.join(report.problems)[:240]}", where,
                        6 if any("context" in p or "journal" in p for p in report.problems) and pending else None)
                mem.doctor(fix=True)   # so that the next kill is judged on its own
            if scenario == "reindex" and (home / ".memgrove" / "index" / "whoosh.new").exists():
                mem.doctor(fix=True)
                if (home / ".memgrove" / "index" / "whoosh.new").exists():
                    ck.fail("leftover after reindex", "index/whoosh.new is still there after the next open "
                            "and doctor --fix", where, 13)
    except MemgroveError as exc:
        ck.fail("reopen", f"{scenario}: {exc}", where, 6 if "pending" in str(exc) else None)
    except Exception as exc:  # noqa: BLE001
        ck.fail("unexpected error", f"{scenario}: reopen/doctor: {type(exc).__name__}: {exc}", where)

    if inflight:
        informative = {p: m for p, m in inflight.items() if ck.model.get(p) != m}
        new = [p for p, m in informative.items() if ck.holds(p, m)]
        old = [p for p in informative if ck.holds(p, ck.model.get(p))]
        if informative and len(new) == len(informative):
            ck.model.update(inflight)
            ck.counts["inflight_applied"] += 1
        elif len(old) == len(informative):
            ck.counts["inflight_dropped"] += 1
        else:
            ck.fail("torn batch", f"{scenario}: of the batch in flight, {len(new)} of {len(informative)} entries "
                    f"are new and {len(old)} old", where, 6 if pending else None)
            for p in informative:       # go on from what is on disk
                if ck.holds(p, inflight[p]):
                    ck.model[p] = inflight[p]
    missing = [p for p, m in ck.model.items() if not ck.holds(p, m)]
    if missing:
        p = missing[0]
        ck.fail("acknowledged write missing", f"{scenario}: {p} should hold {ck.model[p]!r} "
                f"({len(missing)} entries differ)", where)
        for p in missing:
            text = ck.disk_marker(p)
            ck.model[p] = None if text is None else next((w for w in text.split() if w.startswith("ck")), "")
    ids = journal_ids(home / ".memgrove")
    dups = duplicates(ids)
    if dups:
        ck.fail("duplicate journal id", f"{scenario}: {len(dups)} duplicated id(s), e.g. {dups[0]}", where, 7)
    known = set(ids)
    gone = [x for x in ck.acked_ids if x not in known]
    if gone:
        ck.fail("acknowledged op not journaled", f"{scenario}: {len(gone)} acked id(s), e.g. {gone[0]}", where)
        ck.acked_ids = [x for x in ck.acked_ids if x in known]


def _no_fsync(home: Path) -> None:
    """A SIGKILL loses no page cache: fsync guards against power loss, not this, and costs most of a cycle."""
    (home / ".memgrove").mkdir(parents=True, exist_ok=True)
    (home / ".memgrove" / "config.toml").write_text("[tree]\ndurable = false\n")


def _build(home: Path, n: int, batch: int = 700) -> None:
    from memgrove import Memory

    _no_fsync(home)
    with Memory.open(home, create=True, durable=False, embed_ahead=False) as mem:
        for start in range(0, n, batch):
            mem.curate([{"op": "ADD", "path": f"big/f{i % 40}/e_{i}.md", "title": f"Big entry {i}",
                         "content": f"Crash test entry {i} of the large tree, words alpha beta {i % 97}.",
                         "reason": "large tree"} for i in range(start, min(n, start + batch))])


def run_section(work: Path, *, seed: int, kills: int, reindex_kills: int, reindex_files: int,
                lock_bound: float) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["scenario", "kills", "acked ops", "in flight: applied / dropped",
                                          "pending.json at kill", "undos by a process open before the crash",
                                          "orphans", "failures"])
    if not become_subreaper():
        res.notes.append("could not become a child subreaper: orphaned worker processes are not counted")
    rng = random.Random(seed)
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    repro = f"python -m reliability --sections crashes --seed {seed}"

    small = base / "small" / "proj"
    _no_fsync(small)
    with Memory.open(small, create=True, embed_ahead=False) as mem:
        seed_paths = SLOTS[::2]
        mem.curate([{"op": "ADD", "path": p, "content": _content(f"ckseed{k}q"), "reason": "seed"}
                    for k, p in enumerate(seed_paths)])
    ck = Checker(res, small, seed)
    ck.model = {p: f"ckseed{k}q" for k, p in enumerate(seed_paths)}
    survivor = Memory.open(small, watch=False, lock_timeout=lock_bound, embed_ahead=False)
    per: dict[str, dict[str, int]] = {}
    names, weights = zip(*SCENARIOS.items())
    delays = {"batch": 0.35, "merge_delete": 0.25, "undo": 0.2, "doctor_fix": 0.5}
    try:
        for i in range(kills):
            scenario = rng.choices(names, weights)[0]
            before = dict(ck.counts), sum(ck.fails.values())
            kill_cycle(ck, scenario, i, rng, survivor, rng.uniform(0, delays[scenario]), lock_bound, repro)
            _tally(per, scenario, before, ck)
    finally:
        survivor.close()

    if reindex_kills:
        big = base / "big" / "proj"
        t0 = time.monotonic()
        _build(big, reindex_files)
        with Memory.open(big, embed_ahead=False) as mem:
            t1 = time.monotonic()
            mem.reindex()
            took = time.monotonic() - t1
        res.notes.append(f"large tree: {reindex_files} entries built in {t1 - t0:.0f} s; a full reindex takes "
                         f"{took:.1f} s (index_procs workers from 2,000 files)")
        ckb = Checker(res, big, seed)
        ckb.model = {}
        for i in range(reindex_kills):
            before = dict(ckb.counts), sum(ckb.fails.values())
            kill_cycle(ckb, "reindex", i, rng, None, rng.uniform(0.3, took), lock_bound, repro)
            _tally(per, "reindex", before, ckb)
        for k, v in ckb.counts.items():
            ck.counts[k] += v
        for k, v in ckb.fails.items():
            ck.fails[k] = ck.fails.get(k, 0) + v
            ck.items.setdefault(k, ckb.items.get(k))
    for check, n in ck.fails.items():
        if n > 3:
            res.fail(check, f"… {n - 3} more of these (of {n})", repro, ck.items.get(check))
    for name, c in per.items():
        res.rows.append([name, c["kills"], c["acked_ops"], f"{c['inflight_applied']} / {c['inflight_dropped']}",
                         c["pending_at_kill"], c["survivor_undos"], c["orphans"], c["failures"]])
    res.summary.update(kills=ck.counts["kills"], acked_ops=ck.counts["acked_ops"], orphans=ck.counts["orphans"],
                       failures=sum(ck.fails.values()))
    res.notes.append("After every kill: every file parses; no live orphan; a fresh writer gets the lock within "
                     f"{lock_bound:g} s; when pending.json is left, a process that opened the tree before the "
                     "crash undoes an earlier op; the next open + doctor is clean; every acked op is on disk and "
                     "journaled once; the op in flight is whole or absent.")
    return res


def _tally(per: dict, scenario: str, before: tuple[dict, int], ck: Checker) -> None:
    row = per.setdefault(scenario, {k: 0 for k in (*ck.counts, "failures")})
    for k, v in ck.counts.items():
        row[k] += v - before[0][k]
    row["failures"] += sum(ck.fails.values()) - before[1]

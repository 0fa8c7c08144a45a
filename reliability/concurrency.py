"""Concurrency: K writer processes (library or CLI), readers and a hand editor on one tree, for a bounded time.

Per round (mode × K): K writers ADD entries carrying a unique marker and UPDATE
their own earlier ones (a revision token), acknowledging each op with an fsynced
line only after ``curate`` returned; a "hand editor" drops finished entry files
straight into the tree (a ``git pull``) and acknowledges them likewise; two warm
library readers and one CLI reader ask ``query``/``search`` for acknowledged
markers, and sometimes for markers about to be written, so that a "not in
memory" answer is cached before the entry exists.

A stale answer is counted without false positives:

- **in the run**, for entries a *curate* acknowledged before the question
  started: curate updates the index before it returns, so any answer without
  the entry is stale (hand-dropped files may lag the index while a writer holds
  the lock; those misses are reported, not counted);
- **after the run**, when everything is quiet and a plain search has brought the
  index in step: every acknowledged marker (curated or dropped) is asked again
  through a warm reader and through CLI queries; an answer without its entry is
  a stale cached answer (issue 13 item 3).

Then: every acknowledged op's journal id is in the journal, exactly once; every
acknowledged entry holds its marker and last revision; doctor is clean.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from .common import (MEMGROVE, SectionResult, append_fsync, child_args, cli, cli_repro, duplicates, journal_ids,
                     pct, read_lines, run, spawn_child)

SECTION = "concurrency"


# -- children --------------------------------------------------------------------

def _marker(rnd: str, wid: int, j: int) -> str:
    return f"qz{rnd}x{wid}x{j}"


def _ops_for(args: dict[str, Any], rng: random.Random, state: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """The next batch of a writer and what each op promises (for its ack)."""
    wid, rnd = args["wid"], args["round"]
    ops, promises = [], []
    for _ in range(1 if rng.random() < 0.7 else rng.randint(2, 3)):
        mine = state["mine"]
        if mine and rng.random() < 0.25:
            path = rng.choice(sorted(mine))
            mine[path]["rev"] += 1
            m, rev = mine[path]["marker"], mine[path]["rev"]
            if any(o["path"] == path for o in ops):
                mine[path]["rev"] -= 1
                continue
            ops.append({"op": "UPDATE", "path": path, "content": f"Entry marker {m}. Revision qr{rev}x{m}.",
                        "reason": "concurrency update"})
            promises.append({"kind": "update", "path": path, "marker": m, "rev": rev})
        else:
            state["j"] += 1
            j = state["j"]
            m = _marker(rnd, wid, j)
            path = f"conc/w{wid}/e_{j}.md"
            mine[path] = {"marker": m, "rev": 0}
            ops.append({"op": "ADD", "path": path, "title": f"Writer {wid} entry {j}",
                        "content": f"Entry marker {m}. Revision qr0x{m}.", "reason": "concurrency add"})
            promises.append({"kind": "add", "path": path, "marker": m, "rev": 0})
    return ops, promises


def lib_writer(args: dict[str, Any]) -> None:
    from memgrove import Memory
    from memgrove.tree.base.errors import LockTimeout

    rng = random.Random(args["seed"])
    state: dict[str, Any] = {"j": 0, "mine": {}}
    deadline = time.time() + args["seconds"]
    with Memory.open(args["home"]) as mem:
        while time.time() < deadline:
            ops, promises = _ops_for(args, rng, state)
            t0 = time.monotonic()
            try:
                results = mem.curate(ops, actor=f"writer-{args['wid']}")
            except LockTimeout as exc:
                append_fsync(args["acks"], {"kind": "timeout", "wait": time.monotonic() - t0, "error": str(exc)})
                _forget(state, promises)
                continue
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                append_fsync(args["acks"], {"kind": "error", "error": f"{type(exc).__name__}: {exc}"[:300]})
                _forget(state, promises)
                continue
            wait = time.monotonic() - t0
            for i, (p, r) in enumerate(zip(promises, results)):
                append_fsync(args["acks"], {**p, "ids": [r.id], "wait": wait if i == 0 else None, "t": time.time()})
            time.sleep(rng.uniform(0, 0.02))


def _forget(state: dict[str, Any], promises: list[dict]) -> None:
    for p in promises:
        if p["kind"] == "add":
            state["mine"].pop(p["path"], None)
        else:
            state["mine"][p["path"]]["rev"] -= 1


def cli_writer(args: dict[str, Any]) -> None:
    rng = random.Random(args["seed"])
    state: dict[str, Any] = {"j": 0, "mine": {}}
    deadline = time.time() + args["seconds"]
    ops_file = Path(args["acks"]).with_suffix(".ops.json")
    while time.time() < deadline:
        ops, promises = _ops_for(args, rng, state)
        ops_file.write_text(json.dumps(ops))
        r = cli(args["home"], "curate", "--ops", str(ops_file), "--json", timeout=120)
        if r.code != 0:
            kind = "timeout" if "gave up after" in r.text else "error"
            append_fsync(args["acks"], {"kind": kind, "wait": r.seconds,
                                        "error": (r.err.strip() or r.out.strip() or f"exit {r.code}")[-300:],
                                        "repro": cli_repro(args["home"], "curate", "--ops", json.dumps(ops))})
            _forget(state, promises)
            continue
        results = json.loads(r.out)["applied"]
        for i, (p, res) in enumerate(zip(promises, results)):
            append_fsync(args["acks"], {**p, "ids": [res["id"]], "wait": r.seconds if i == 0 else None,
                                        "t": time.time()})


def hand_editor(args: dict[str, Any]) -> None:
    """Drops finished entry files into the tree (renamed in from outside it), like a ``git pull``."""
    from memgrove.tree.entries.entry import Entry, serialize

    rng = random.Random(args["seed"])
    root = Path(args["home"]) / ".memgrove" / "tree"
    outside = Path(args["scratch"])
    outside.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args["seconds"]
    n = 0
    while time.time() < deadline:
        batch = []
        for _ in range(rng.randint(1, args.get("max_drop", 12))):
            n += 1
            m = _marker(args["round"], 99, n)
            rel = f"hand/drop_{args['round']}/h_{n}.md"
            text = serialize(Entry(title=f"Hand entry {n}", summary="", sections={"Narrative": f"Dropped by hand, marker {m}."}))
            tmp = outside / f"h_{n}.md"
            tmp.write_text(text, encoding="utf-8")
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, root / rel)
            batch.append({"kind": "hand", "path": rel, "marker": m, "rev": None})
        fd = os.open(root / f"hand/drop_{args['round']}", os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        for b in batch:
            append_fsync(args["acks"], {**b, "t": time.time()})
        time.sleep(rng.uniform(0.2, 0.6))


class AckReader:
    """Follows the ack files of a round: what was acknowledged, and when."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.offsets: dict[Path, int] = {}
        self.acked: dict[str, dict] = {}        # marker -> ack
        self.next_j: dict[int, int] = {}

    def poll(self) -> None:
        for f in self.folder.glob("*.acks"):
            off = self.offsets.get(f, 0)
            with f.open("rb") as fh:
                fh.seek(off)
                data = fh.read()
            end = data.rfind(b"\n") + 1
            self.offsets[f] = off + end
            for line in data[:end].split(b"\n")[:-1]:
                a = json.loads(line)
                if a.get("marker"):
                    self.acked[a["marker"]] = a
                    wid, j = (int(x) for x in a["marker"].split("x")[1:3])
                    self.next_j[wid] = max(self.next_j.get(wid, 0), j + 1)


def _answer_paths(ans: Any) -> tuple[list[str], bool, int, str]:
    if isinstance(ans, dict):
        return list(ans.get("sources") or []), bool(ans.get("cached")), int(ans.get("tier", -1)), ans.get("text", "")
    return list(ans.sources), bool(ans.cached), ans.tier, ans.text


def reader(args: dict[str, Any]) -> None:
    """Asks about acknowledged markers (and future ones); reports every answer that misses its entry."""
    from memgrove import Memory

    rng = random.Random(args["seed"])
    acks = AckReader(Path(args["acks_dir"]))
    stop = Path(args["stop"])
    use_cli = args["cli"]
    mem = None if use_cli else Memory.open(args["home"])
    asked = misses = 0
    try:
        while not stop.exists():
            acks.poll()
            started = time.time()   # every ack seen so far was fsynced before this instant
            if acks.next_j and rng.random() < 0.3:
                wid = rng.choice(sorted(acks.next_j))
                q, target = _marker(args["round"], wid, acks.next_j[wid] + rng.randint(0, 2)), None
            elif acks.acked:
                q = rng.choice(sorted(acks.acked))
                target = acks.acked[q]
            else:
                time.sleep(0.05)
                continue
            how = "search" if (not use_cli and rng.random() < 0.3) else "query"
            if use_cli:
                r = cli(args["home"], "query", q, "--json", timeout=60)
                if r.code != 0:
                    append_fsync(args["out"], {"kind": "error", "q": q, "error": (r.err or r.out)[-300:]})
                    continue
                paths, cached, tier, text = _answer_paths(json.loads(r.out))
            elif how == "search":
                paths, cached, tier, text = [h.path for h in mem.search(q, limit=5)], False, -1, ""
            else:
                paths, cached, tier, text = _answer_paths(mem.query(q))
            asked += 1
            if target is None or target["path"] in paths:
                continue
            misses += 1
            found = None if use_cli else target["path"] in [h.path for h in mem.search(q, limit=5)]
            append_fsync(args["out"], {"kind": "miss", "q": q, "path": target["path"], "ack": target["kind"],
                                       "how": how, "cached": cached, "tier": tier, "search_found": found,
                                       "after_ack": started - target["t"], "text": text[:160]})
    finally:
        append_fsync(args["out"], {"kind": "count", "asked": asked, "misses": misses})
        if mem is not None:
            mem.close()


# -- parent -------------------------------------------------------------------------

def _seed_tree(home: Path) -> None:
    from memgrove import Memory

    with Memory.open(home, create=True) as mem:
        mem.curate([{"op": "ADD", "path": f"seed/notes/n_{i}.md", "title": f"Seed note {i}",
                     "content": f"Seed note {i} about rotating refresh tokens and shared words.", "reason": "seed"}
                    for i in range(30)])


def run_round(res: SectionResult, work: Path, mode: str, k: int, seconds: float, seed: int, rnd: str,
              sweep: int) -> dict[str, Any]:
    from memgrove import Memory

    folder = work / f"{mode}_k{k}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    home = folder / "proj"
    _seed_tree(home)
    acks_dir = folder / "acks"
    acks_dir.mkdir()
    stop = folder / "stop"
    procs = []
    for w in range(k):
        procs.append(spawn_child("concurrency", f"{mode}_writer", {
            "home": str(home), "wid": w, "round": rnd, "seconds": seconds, "seed": seed * 1000 + w,
            "acks": str(acks_dir / f"w{w}.acks")}, folder, f"writer{w}"))
    procs.append(spawn_child("concurrency", "hand_editor", {
        "home": str(home), "round": rnd, "seconds": seconds, "seed": seed * 1000 + 99,
        "acks": str(acks_dir / "hand.acks"), "scratch": str(folder / "scratch")}, folder, "hand"))
    readers = []
    for i, use_cli in enumerate((False, False, True)):
        readers.append(spawn_child("concurrency", "reader", {
            "home": str(home), "round": rnd, "seed": seed * 1000 + 500 + i, "cli": use_cli, "stop": str(stop),
            "acks_dir": str(acks_dir), "out": str(folder / f"reader{i}.jsonl")}, folder, f"reader{i}"))
    t_end = time.monotonic() + seconds + 150
    for p in procs:
        try:
            p.wait(max(1.0, t_end - time.monotonic()))
        except Exception:  # noqa: BLE001 - a hung writer is killed and reported
            p.kill()
            p.wait()
            res.fail("writer hung", f"{mode} K={k}: a writer did not finish within {seconds + 150:.0f} s",
                     f"python -m reliability --sections concurrency --seed {seed}", 9)
    stop.touch()
    for p in readers:
        try:
            p.wait(90)
        except Exception:  # noqa: BLE001
            p.kill()
            p.wait()
    for p in procs + readers:
        if p.returncode not in (0, -9):
            err = (folder / "writer0.stderr").read_text()[-300:] if p in procs else ""
            res.fail("child crashed", f"{mode} K={k}: a child exited {p.returncode} {err}",
                     f"see {folder}/*.stderr")

    acked: list[dict] = []
    per_writer, timeouts, errors = [], [], []
    for w in range(k):
        lines = read_lines(acks_dir / f"w{w}.acks")
        ops = [a for a in lines if a["kind"] in ("add", "update")]
        per_writer.append(len({tuple(a["ids"]) for a in ops}))
        acked += ops
        timeouts += [a for a in lines if a["kind"] == "timeout"]
        errors += [a for a in lines if a["kind"] == "error"]
    hand = [a for a in read_lines(acks_dir / "hand.acks") if a["kind"] == "hand"]
    wait_values = [a["wait"] for a in acked if a.get("wait") is not None] + [t["wait"] for t in timeouts]

    # after the run, quiet: one plain search syncs the hand edits, then every marker again
    lost, stale_final = [], []
    with Memory.open(home) as mem:
        mem.search("seed note")
        ids = journal_ids(mem.home)
        known = set(ids)
        last: dict[str, dict] = {}
        for a in acked:
            if not set(a["ids"]) <= known:
                lost.append(f"{a['kind']} {a['path']} ({a['ids'][0]}) not in the journal")
            if a["kind"] == "add" or a["rev"] >= last.get(a["path"], {"rev": -1})["rev"]:
                last[a["path"]] = a
        for path, a in last.items():
            text = (mem.home / "tree" / path).read_text(encoding="utf-8") if (mem.home / "tree" / path).exists() else ""
            if a["marker"] not in text or f"qr{a['rev']}x{a['marker']}" not in text:
                lost.append(f"{path}: acknowledged revision {a['rev']} of {a['marker']} not on disk")
        for a in hand:
            if not (mem.home / "tree" / a["path"]).exists():
                lost.append(f"{a['path']}: dropped by hand, gone")
        rng = random.Random(seed)
        everything = [(a["marker"], a["path"]) for a in list(last.values()) + hand]
        sample = rng.sample(everything, min(sweep, len(everything)))
        for q, path in sample:
            ans = mem.query(q)
            if path not in ans.sources:
                in_search = path in [h.path for h in mem.search(q, limit=5)]
                stale_final.append((q, path, ans.tier, ans.cached, in_search))
        doctor = mem.doctor()
    for q, path in sample[: max(2, sweep // 20)]:   # cold CLI queries too
        r = cli(home, "query", q, "--json", timeout=60)
        if r.code == 0 and path not in json.loads(r.out)["sources"]:
            stale_final.append((q, path, "cli", json.loads(r.out).get("cached"), None))
    dups = duplicates(ids)

    asked = misses_ok = 0
    stale_run, lag = [], []
    for i in range(3):
        for line in read_lines(folder / f"reader{i}.jsonl"):
            if line["kind"] == "count":
                asked += line["asked"]
            elif line["kind"] == "error":
                res.fail("reader error", f"{mode} K={k}: {line['error']}",
                         cli_repro(home, "query", line["q"], "--json"), None)
            elif line["ack"] == "hand":
                # the index lagged a hand edit while a writer held the lock; an answer cached in that
                # time is keyed to the index's state, so it is the same lag, served again
                lag.append(line)
            else:
                stale_run.append(line)
    repro = f"python -m reliability --sections concurrency --seed {seed} (round {mode} K={k})"
    for line in stale_run[:5]:
        res.fail("stale answer", f"{mode} K={k}: {line['how']} {line['q']!r} (acknowledged {line['ack']} "
                 f"{line['after_ack']:.2f} s earlier) answered without {line['path']} (tier {line['tier']}, "
                 f"cached {line['cached']}, a fresh search finds it: {line['search_found']})", repro, 3)
    if len(stale_run) > 5:
        res.fail("stale answer", f"{mode} K={k}: … and {len(stale_run) - 5} more stale answers", repro, 3)
    for q, path, tier, cached, in_search in stale_final[:5]:
        res.fail("stale answer after the run", f"{mode} K={k}: query {q!r} answers without {path} "
                 f"(tier {tier}, cached {cached}) although search finds it: {in_search}",
                 repro + f"; then {cli_repro(home, 'query', q)}", 3)
    if len(stale_final) > 5:
        res.fail("stale answer after the run", f"{mode} K={k}: … and {len(stale_final) - 5} more", repro, 3)
    for what in lost[:5]:
        res.fail("lost write", f"{mode} K={k}: {what}", repro)
    for d in dups[:3]:
        res.fail("duplicate journal id", f"{mode} K={k}: {d}", repro, 7)
    # the hand editor drops entries without their folders' context.md, as a pull of entries alone would
    problems = [p for p in doctor.problems if not (p.startswith("hand/") and p.endswith("no context.md"))]
    if problems:
        res.fail("doctor", f"{mode} K={k}: {'; '.join(problems)[:200]}", repro)
    for t in timeouts[:3]:
        res.fail("writer timed out", f"{mode} K={k}: {t['error']}", repro, 9)
    for e in errors[:3]:
        res.fail("writer error", f"{mode} K={k}: {e['error']}", e.get("repro", repro))
    max_wait = max(wait_values, default=0.0)
    if max_wait > res.summary["max_wait_bound"]:
        res.fail("writer wait", f"{mode} K={k}: a writer waited {max_wait:.1f} s for one op "
                 f"(bound {res.summary['max_wait_bound']:g} s; per-writer ops {per_writer})", repro, 9)
    return {"mode": mode, "K": k, "seconds": seconds, "acked": len(acked), "hand": len(hand),
            "per_writer": per_writer, "asked": asked, "lost": len(lost), "dup_ids": len(dups),
            "stale_run": len(stale_run), "stale_final": len(stale_final), "hand_lag": len(lag),
            "p95_wait": pct(wait_values, 95), "max_wait": max_wait, "timeouts": len(timeouts),
            "errors": len(errors), "doctor": not problems}


def run_section(work: Path, *, seed: int, ks: list[int], modes: list[str], seconds: float, sweep: int,
                max_wait: float) -> SectionResult:
    res = SectionResult(SECTION, columns=["mode", "K", "s", "acked ops", "hand files", "ops per writer", "reader asks",
                                          "lost", "dup ids", "stale (run)", "stale (after)", "hand lag",
                                          "p95 wait s", "max wait s", "timeouts", "doctor"])
    res.summary["max_wait_bound"] = max_wait
    rows = []
    for mode in modes:
        for k in ks:
            r = run_round(res, work / SECTION, mode, k, seconds, seed + k, f"{mode[0]}{k}", sweep)
            rows.append(r)
            res.rows.append([mode, k, r["seconds"], r["acked"], r["hand"],
                             f"{min(r['per_writer'], default=0)}–{max(r['per_writer'], default=0)}", r["asked"],
                             r["lost"], r["dup_ids"], r["stale_run"], r["stale_final"], r["hand_lag"],
                             f"{r['p95_wait']:.2f}", f"{r['max_wait']:.2f}", r["timeouts"],
                             "ok" if r["doctor"] else "INCONSISTENT"])
    res.summary.update(rounds=rows, acked=sum(r["acked"] for r in rows), lost=sum(r["lost"] for r in rows),
                       dup_ids=sum(r["dup_ids"] for r in rows),
                       stale=sum(r["stale_run"] + r["stale_final"] for r in rows),
                       max_wait=max((r["max_wait"] for r in rows), default=0.0))
    res.notes.append("stale (run): answers without an entry a curate had acknowledged before the question; "
                     "stale (after): the same once the run is over and a search brought the index in step "
                     "(cached answers that outlived the change); hand lag: misses of hand-dropped files while a writer "
                     "held the lock, answered from (or cached under) the index as it was (reported, not a failure).")
    return res


if __name__ == "__main__" and "--child" in sys.argv:
    mode, a = child_args()
    {"lib_writer": lib_writer, "cli_writer": cli_writer, "hand_editor": hand_editor, "reader": reader}[mode](a)

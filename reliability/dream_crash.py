"""A ``memgrove dream`` run SIGKILLed at random instants, then ``memgrove dream --undo``.

A tree holds work for dream that its scan finds without a model: exact duplicates in other
folders (merged: MERGE), related notes (links: UPDATEs), near duplicates (queued for review).
An earlier run already applied one merge: the run a killed run must never undo. Each trial copies
that tree, starts a child that opens it and runs ``Memory.dream`` (what ``memgrove dream`` calls),
and kills the child's process group: half the trials at a uniform instant of the whole run (scan,
planning, the batch, the index, queueing), half inside the batch (after the child says it
begins, within the batch's measured length). Then, with nothing repaired by hand, the CLI runs
``memgrove dream --undo --json`` and the checks are:

- it ends cleanly (exit 0 or a one-line error), within the time a hang would exceed;
- it names the killed run (exit 0: ``run`` is its id) or says that run applied nothing (exit 1:
  its id and "applied nothing" in the message), and never names the earlier run as undone;
- the earlier run's record still says it is applied, and its merge is still in the tree;
- every entry file (``context.md`` aside: derived) is byte for byte what it was before the kill.

A kill that lands before the run recorded itself (its first milliseconds) leaves no record and
wrote nothing: the trial then checks only that the tree is untouched (``dream --undo`` would
rightly undo the newest run, the earlier one). The children rank without meaning
(``MEMGROVE_SEMANTIC=off``): meaning only changes which near duplicates and links a scan finds,
not how a run is recorded, applied, rolled forward or undone.
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from .common import MEMGROVE, PYTHON, SectionResult, child_args, child_env, journal_ids, kill_group, run

SECTION = "dream_crash"
ENV = {"MEMGROVE_SEMANTIC": "off"}
UNDO_TIMEOUT = 60.0
WORDS = ("staging production database port cache queue deploy rollback token session backup replica index "
         "schema migration latency budget owner team release version region cluster service worker job "
         "alert pager runbook incident review policy quota limit storage bucket network proxy gateway").split()


# -- children -------------------------------------------------------------------------

def build(args: dict[str, Any]) -> None:
    """The base tree: ``n`` notes, a share of them saved twice in another folder, some nearly
    twice; and the earlier run (one merge). Prints ``{"earlier": run id}``."""
    from memgrove import Memory
    from memgrove.tree.hygiene.dream import dream
    from memgrove.tree.hygiene.findings import Candidate

    rng = random.Random(args["seed"])
    n, root = args["n"], Path(args["root"])
    ops, texts = [], []
    for i in range(n):
        words = rng.sample(WORDS, 10)
        text = f"Note {i}: the {words[0]} {words[1]} uses {rng.randint(1, 65535)} for {' '.join(words[2:])}."
        texts.append(text)
        ops.append({"op": "ADD", "path": f"notes/topic_{i % 12}/note_{i}.md", "title": f"note {i}",
                    "content": text, "reason": "seed"})
    for j in range(n // 3):       # saved twice: exact duplicates (the scan merges them)
        ops.append({"op": "ADD", "path": f"chats/day_{j % 8}/copy_{j}.md", "title": f"note {j}",
                    "content": texts[j], "reason": "seed"})
    for j in range(n // 3, n // 3 + n // 10):   # said again in other words: near duplicates (queued)
        ops.append({"op": "ADD", "path": f"chats/later/again_{j}.md", "title": f"note {j} again",
                    "content": texts[j].replace("uses", "now uses") + " Confirmed.", "reason": "seed"})
    with Memory.open(root, create=True, durable=False) as mem:
        for start in range(0, len(ops), 200):
            mem.curate(ops[start:start + 200])
        first = Candidate("duplicate", ("notes/topic_0/note_0.md", "chats/day_0/copy_0.md"), "MERGE",
                          ({"op": "MERGE", "path": "chats/day_0/copy_0.md", "merge_into": "notes/topic_0/note_0.md",
                            "reason": "the same text"},), "the same text", 1.0)
        earlier = dream(mem.tree, candidates=[first])
    print(json.dumps({"earlier": earlier.run, "applied": len(earlier.applied)}))


def dream_child(args: dict[str, Any]) -> None:
    """Open the tree, say "ready", run dream (saying "batch" as its batch begins, "journaled" at its
    commit point, "committed" once the index has it), say "done"."""
    import sys

    from memgrove import Memory
    from memgrove.tree.writes import journal, write_path

    def say(word: str) -> None:
        sys.stdout.write(f"{word} {time.monotonic():.4f}\n")
        sys.stdout.flush()

    real = write_path.WritePath._apply

    def apply(self: Any, planned: Any) -> None:
        say("batch")
        real(self, planned)
        say("committed")

    real_append = journal.Journal.append

    def append(self: Any, records: Any, **kw: Any) -> None:
        real_append(self, records, **kw)
        say("journaled")

    write_path.WritePath._apply = apply          # type: ignore[method-assign]
    journal.Journal.append = append              # type: ignore[method-assign]
    mem = Memory.open(Path(args["root"]), durable=True)
    say("ready")
    out = mem.dream(use_model=False)
    say(f"done {out['run']}")
    mem.close()


# -- the parent ------------------------------------------------------------------------

class _Child:
    """A dream child in its own process group, and the time of each word it said."""

    def __init__(self, root: Path, work: Path):
        arg_file = work / "dream.args.json"
        arg_file.write_text(json.dumps({"root": str(root)}))
        self.proc = subprocess.Popen([PYTHON, "-m", "reliability.dream_crash", "--child", "dream", str(arg_file)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env(**ENV),
                                     start_new_session=True)
        self.said: dict[str, float] = {}
        self._buf = b""

    def wait_for(self, word: str, seconds: float) -> bool:
        """Read what it says until ``word``; False at its end or after ``seconds``."""
        deadline = time.monotonic() + seconds
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while word not in self.said:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return False
            chunk = os.read(fd, 4096)
            if not chunk:
                return False
            self._buf += chunk
            while b"\n" in self._buf:
                line, self._buf = self._buf.split(b"\n", 1)
                parts = line.decode(errors="replace").split()
                if len(parts) >= 2:
                    self.said[parts[0]] = float(parts[-1])
        return True

    def kill(self) -> None:
        kill_group(self.proc.pid)
        self.proc.wait(30)
        self.proc.stdout.close()  # type: ignore[union-attr]


def _entries(home: Path) -> dict[str, bytes]:
    root = home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md")) if p.name != "context.md"}


def _runs(home: Path) -> set[str]:
    d = home / "dream" / "runs"
    return {p.name[:-5] for p in d.glob("*.json")} if d.exists() else set()


def _trial(base: Path, work: Path, n: int, mode: str, timing: dict[str, float], rng: random.Random,
           earlier: str, res: SectionResult) -> dict[str, Any]:
    """One dream child killed (``mode``: at "any" instant of its run, or inside its "batch"; "none":
    it runs to the end and its phases' lengths go to ``timing``), then ``dream --undo``; the row."""
    root = work / f"t{n}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root, symlinks=True)
    home = root / ".memgrove"
    before, runs_before = _entries(home), _runs(home)
    child = _Child(root, work)
    row: dict[str, Any] = {"trial": n, "mode": mode}
    try:
        if not child.wait_for("ready", 60):
            res.fail("child start", f"trial {n}: the dream child did not open the tree within 60 s", _repro(n))
            return row
        if mode == "none":
            if not child.wait_for("done", 300):
                res.fail("run", f"trial {n}: the dream child did not finish within 300 s", _repro(n))
                return row
            timing["run"] = max(0.05, child.said["done"] - child.said["ready"])
            if "journaled" in child.said:
                timing["batch"] = max(0.01, child.said["journaled"] - child.said["batch"])
        elif mode == "batch":
            if child.wait_for("batch", 120):
                # the files and the journal, and a little past the commit point (the index's update)
                time.sleep(rng.uniform(0, 1.25 * timing["batch"]))
        else:
            time.sleep(rng.uniform(0, timing["run"]))
    finally:
        child.kill()
    new = sorted(_runs(home) - runs_before)
    killed = new[0] if new else None
    row["phase"] = _phase(home, killed, child.said)
    if killed is None:
        # killed before the run recorded itself (its first milliseconds): it must have written nothing
        if _entries(home) != before:
            res.fail("unrecorded run wrote", f"trial {n}: no run record, yet the entries changed", _repro(n))
        row["outcome"] = "not started, tree untouched"
        return row
    r = run([MEMGROVE, "--root", str(root), "dream", "--undo", "--json"], timeout=UNDO_TIMEOUT,
            env=child_env(**ENV))
    row["undo_s"] = r.seconds
    _check_undo(r, n, killed, earlier, res, row)
    earlier_rec = json.loads((home / "dream" / "runs" / f"{earlier}.json").read_text())
    if earlier_rec.get("status") == "undone":
        res.fail("earlier run undone", f"trial {n}: dream --undo after a kill undid the earlier run {earlier}",
                 _repro(n))
    after = _entries(home)
    if after != before:
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        res.fail("tree differs after undo", f"trial {n} ({row['phase']}): {len(changed)} entry file(s) differ "
                 f"from before the killed run, e.g. {changed[:3]}", _repro(n))
    return row


def _phase(home: Path, killed: str | None, said: dict[str, float]) -> str:
    """Where the kill landed, from what the child said and its run's record."""
    if killed is None:
        return "before its record"
    if "done" in said:
        return "finished"
    record = json.loads((home / "dream" / "runs" / f"{killed}.json").read_text())
    status = record.get("status")
    if status == "applying":      # the record is next updated once the batch is wholly done
        held = set(journal_ids(home)) >= set(record.get("applied") or ())
        if (home / "journal" / "pending.json").exists():
            return "batch committed, index updating" if held else "batch being written"
        return "batch done, record not yet updated" if held else "batch planned, not begun"
    return {"running": "scan or plan", "queueing": "queueing", "done": "finished"}.get(str(status), str(status))


def _check_undo(r: Any, n: int, killed: str, earlier: str, res: SectionResult, row: dict[str, Any]) -> None:
    if r.timed_out or r.code not in (0, 1):
        res.fail("undo ended badly", f"trial {n}: exit {r.code}, {r.seconds:.1f} s: {r.text.strip()[-200:]}", _repro(n))
        row["outcome"] = "undo failed"
        return
    try:
        out = json.loads(r.out)
    except ValueError:
        res.fail("undo output", f"trial {n}: not JSON: {r.out.strip()[:200]}", _repro(n))
        row["outcome"] = "undo failed"
        return
    if r.code == 0:
        row["outcome"] = "undone"
        if out.get("run") != killed or not out.get("started") or not out.get("operations"):
            res.fail("undo named another run", f"trial {n}: undid {out.get('run')} (killed: {killed}, earlier: "
                     f"{earlier}), started {out.get('started')}, {out.get('operations')} operation(s)", _repro(n))
        return
    message = str((out.get("error") or {}).get("message", ""))
    row["outcome"] = "applied nothing"
    if killed not in message or "applied nothing" not in message:
        res.fail("undo refusal unclear", f"trial {n}: the killed run {killed} is not named as having applied "
                 f"nothing: {message[:200]}", _repro(n))


def _repro(n: int) -> str:
    return f"python -m reliability --sections dream_crash (trial {n}; see reliability/dream_crash.py)"


def run_section(work: Path, *, seed: int = 0, trials: int = 30, notes: int = 300) -> SectionResult:
    res = SectionResult(SECTION, columns=["where the kill landed", "trials", "dream --undo answered", "undo s (max)"])
    base_dir = work / SECTION
    shutil.rmtree(base_dir, ignore_errors=True)
    base_dir.mkdir(parents=True)
    rng = random.Random(seed)
    base = base_dir / "base"
    arg_file = base_dir / "build.args.json"
    arg_file.write_text(json.dumps({"root": str(base), "n": notes, "seed": seed}))
    b = run([PYTHON, "-m", "reliability.dream_crash", "--child", "build", str(arg_file)], timeout=300,
            env=child_env(**ENV))
    if b.code != 0:
        res.fail("build", (b.err.strip().splitlines() or ["?"])[-1], _repro(0))
        return res
    earlier = json.loads(b.out.strip().splitlines()[-1])["earlier"]
    timing = {"run": 2.0, "batch": 0.5}
    # the first trial runs to the end: the run's and its batch's lengths, and the undo of a finished run
    modes = ["none"] + ["batch" if i % 2 else "any" for i in range(1, max(1, trials))]
    rows = [_trial(base, base_dir, i, mode, timing, rng, earlier, res) for i, mode in enumerate(modes)]
    by_phase: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_phase.setdefault(row.get("phase", "?"), []).append(row)
    for phase, rs in sorted(by_phase.items()):
        outcomes: dict[str, int] = {}
        for r in rs:
            outcomes[str(r.get("outcome", "?"))] = outcomes.get(str(r.get("outcome", "?")), 0) + 1
        undo_s = [r["undo_s"] for r in rs if "undo_s" in r]
        res.rows.append([phase, len(rs), ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items())),
                         f"{max(undo_s):.1f}" if undo_s else "-"])
    res.summary = {"trials": len(rows), "killed": sum(1 for r in rows if r.get("phase") != "finished"),
                   "run_s": round(timing["run"], 2), "batch_s": round(timing["batch"], 3), "notes": notes}
    res.notes.append(
        f"A tree of {notes} notes plus {notes // 3} exact copies and {notes // 10} near copies; an earlier run "
        f"merged one copy. Each trial copies it, runs Memory.dream in a child (MEMGROVE_SEMANTIC=off: meaning "
        f"changes what a scan finds, not how a run is recorded or undone) and SIGKILLs it: half the trials at a "
        f"uniform instant of the run ({timing['run']:.1f} s from the open tree), half inside the batch "
        f"(within 1.25 x the {timing['batch']:.2f} s from its start to its journal append); the first runs to "
        f"the end. Then `memgrove dream --undo --json`: it must name the killed run (or say it applied nothing), never undo the earlier run, and leave every entry "
        f"file (context.md aside) as before the kill.")
    return res


if __name__ == "__main__" and "--child" in __import__("sys").argv:
    mode, a = child_args()
    {"build": build, "dream": dream_child}[mode](a)

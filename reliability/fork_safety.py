"""Fork safety: a memory opened with the product's defaults (meaning on: its background embedder
loads the model, then computes vectors) and forked at the worst moments, as gunicorn ``--preload``,
Celery's prefork pool and ``multiprocessing`` on Linux do.

Each scenario runs in a fresh process (the *parent*) that opens the memory and forks children:

- ``model_load``: at once and again while the embedder loads the model (a fresh process each round:
  the model loads once per process);
- ``writes``: while two threads of the parent write and search;
- ``embedding``: while the embedder computes the vectors of a backlog the parent just wrote.

Every child searches (more than one hit, ranked by meaning), writes an entry and acknowledges it
(an fsynced line), within ``CHILD_BOUND`` seconds of its fork or it is killed and counted as hung;
the parent's every ``fork()`` returns within ``FORK_BOUND`` seconds (before the fix: children waited
for ever on a lock of the parent's embedder, and a parent sat in ``fork()`` inside OpenBLAS's fork
handler). Afterwards every acknowledged write, the children's and the parent's, is on disk, and
``doctor`` is clean.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

from .common import PYTHON, SectionResult, append_fsync, child_args, child_env, read_lines, run

SECTION = "fork_safety"
CHILD_BOUND = 60.0      # a forked child that has not searched and written by then hangs
FORK_BOUND = 40.0       # a fork() taking longer is a parent's hang (a fork waits at most ~30 s by design)
LOAD_FORKS = 3          # children forked while one process loads the model (it takes about a second)
QUESTION = "postgres orders database latency"
WORDS = "postgres orders database index query latency cache replica backup schema".split()


def _entries(n: int, folder: str, start: int = 0) -> list[dict[str, Any]]:
    return [{"op": "ADD", "path": f"{folder}/f{i % 4}/e{i}.md", "title": f"Note {i}",
             "content": " ".join(WORDS[(i * j + 3) % 10] for j in range(50)) + f" marker {i}", "reason": "seed"}
            for i in range(start, start + n)]


# -- a forked child -------------------------------------------------------------------

def _forked_child(mem: Any, scenario: str, i: int, acks: str) -> None:
    code = 2
    try:
        hits = mem.search(QUESTION)
        path = f"forked/{scenario}/c{os.getpid()}.md"
        marker = f"fk{os.getpid()}x{i}q"
        mem.curate([{"op": "ADD", "path": path, "title": f"Forked {i}", "content": f"Child write {marker}.",
                     "reason": "fork safety"}])
        append_fsync(acks, {"path": path, "marker": marker})
        code = 0 if len(hits) > 1 else 3
    except BaseException:  # noqa: BLE001 - told on stderr; the parent counts the exit code
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


# -- the parent (a child process of this section) -----------------------------------------

def parent(args: dict[str, Any]) -> None:
    from memgrove import Memory

    home, scenario, forks, acks = Path(args["home"]), args["scenario"], args["forks"], args["acks"]
    mem = Memory.open(home, semantic_weight="auto")     # the product's default, named
    stop = threading.Event()
    threads: list[threading.Thread] = []
    if scenario == "writes":
        def write() -> None:
            k = 0
            while not stop.is_set():
                path = f"parent/writes/w{os.getpid()}x{k}.md"
                mem.curate([{"op": "UPSERT", "path": path, "content": f"Parent write {k} about postgres orders.",
                             "reason": "fork safety"}])
                append_fsync(acks, {"path": path, "marker": f"Parent write {k} "})
                k += 1

        def search() -> None:
            while not stop.is_set():
                mem.search(QUESTION)
        threads = [threading.Thread(target=write), threading.Thread(target=search)]
        mem.search(QUESTION)
    elif scenario == "embedding":
        mem.search(QUESTION)                             # the model loaded
        mem.curate(_entries(args["backlog"], "backlog", 1000 * args["round"]))   # queued for the embedder
    for t in threads:
        t.start()
    forked: list[tuple[int, float]] = []
    fork_s: list[float] = []
    busy = 0
    for i in range(forks):
        if scenario == "model_load":
            time.sleep(0 if i == 0 else 0.05)
            busy += mem.tree.embedder is not None and mem.tree.encoder is None
        elif scenario == "embedding":
            time.sleep(0.1)
            busy += mem.tree.embedder is not None and not mem.tree.embedder.idle()
        else:
            time.sleep(0.1)
            busy += all(t.is_alive() for t in threads)
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _forked_child(mem, scenario, i, acks)
        fork_s.append(time.monotonic() - t0)
        forked.append((pid, time.monotonic()))
    stop.set()
    for t in threads:
        t.join(CHILD_BOUND)
    hung, failed = 0, 0
    for pid, at in forked:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                failed += status != 0
                break
            if time.monotonic() - at > CHILD_BOUND:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                hung += 1
                break
            time.sleep(0.05)
    print(json.dumps({"fork_s": fork_s, "hung": hung, "failed": failed, "busy": busy}), flush=True)
    os._exit(0)      # the embedder's catch-up is not waited for


# -- the section -------------------------------------------------------------------------

def run_section(work: Path, *, forks: int, load_rounds: int, backlog: int) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["scenario", "forks", "asked amid the moment", "children hung",
                                          "children failed", "slowest fork (s)", "acknowledged writes missing"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    home = base / "proj"
    with Memory.open(home, create=True, embed_ahead=False, semantic_weight="auto", durable=False) as mem:
        mem.curate(_entries(24, "seed"))
    repro = (f"python -m reliability --sections fork_safety --fork-forks {forks} --fork-load-rounds {load_rounds} "
             f"--fork-backlog {backlog}")
    plan = [("model_load", r, LOAD_FORKS) for r in range(load_rounds)]
    plan += [("writes", 0, forks), ("embedding", 0, forks)]
    per: dict[str, dict[str, Any]] = {}
    for scenario, rnd, n in plan:
        acks = base / f"acks_{scenario}.jsonl"
        args = base / f"{scenario}_{rnd}.json"
        args.write_text(json.dumps({"home": str(home), "scenario": scenario, "forks": n, "acks": str(acks),
                                    "round": rnd, "backlog": backlog}))
        r = run([PYTHON, "-m", "reliability.fork_safety", "--child", "parent", str(args)],
                timeout=FORK_BOUND + CHILD_BOUND + 120, env=child_env())
        row = per.setdefault(scenario, {"forks": 0, "busy": 0, "hung": 0, "failed": 0, "slowest": 0.0})
        if r.timed_out or r.code != 0 or not r.out.strip():
            res.fail("parent hung or failed", f"{scenario}: " + (f"no answer in {r.seconds:.0f} s (killed)"
                     if r.timed_out else (r.err.strip().splitlines() or ["?"])[-1]), repro)
            continue
        got = json.loads(r.out.strip().splitlines()[-1])
        row["forks"] += len(got["fork_s"])
        row["busy"] += got["busy"]
        row["hung"] += got["hung"]
        row["failed"] += got["failed"]
        row["slowest"] = max([row["slowest"], *got["fork_s"]])
        if got["hung"]:
            res.fail("forked child hung", f"{scenario}: {got['hung']} of {n} children did not search and write "
                     f"within {CHILD_BOUND:g} s", repro, 1)
        if got["failed"]:
            res.fail("forked child failed", f"{scenario}: {got['failed']} of {n} children failed "
                     f"(see {args.with_suffix('.stderr')})", repro, 1)
            (base / f"{scenario}_{rnd}.stderr").write_text(r.err)
        if max(got["fork_s"], default=0) > FORK_BOUND:
            res.fail("parent stalled in fork", f"{scenario}: a fork() took {max(got['fork_s']):.1f} s", repro, 1)
    with Memory.open(home, embed_ahead=False, semantic_weight="auto") as mem:
        for scenario, row in per.items():
            acked = read_lines(base / f"acks_{scenario}.jsonl")
            missing = [a["path"] for a in acked if not mem.tree.exists(a["path"])
                       or a["marker"] not in mem.tree.read_text(a["path"])]
            row["missing"] = f"{len(missing)} of {len(acked)}"
            if missing:
                res.fail("acknowledged write missing", f"{scenario}: {missing[0]} ({len(missing)} of {len(acked)})",
                         repro)
        report = mem.doctor()
        if not report.ok:
            res.fail("doctor after the forks", "; ".join(report.problems)[:240], repro)
    for scenario, row in per.items():
        res.rows.append([scenario, row["forks"], row["busy"], row["hung"], row["failed"], f"{row['slowest']:.2f}",
                         row.get("missing", "?")])
    res.summary.update(forks=sum(r["forks"] for r in per.values()), hung=sum(r["hung"] for r in per.values()),
                       failed=sum(r["failed"] for r in per.values()))
    res.notes.append(f"Each scenario's parent is a fresh process opening the memory with the product's defaults "
                     f"(meaning on); \"asked amid the moment\": fork() called while the model was still loading "
                     f"(model_load; the fork then waits for the loading), the two threads still wrote and searched "
                     f"(writes), or the embedder still had work (embedding). A child must search (> 1 hit) and "
                     f"write within {CHILD_BOUND:g} s; a fork() must return within {FORK_BOUND:g} s.")
    return res


if __name__ == "__main__" and "--child" in __import__("sys").argv:
    mode, a = child_args()
    {"parent": parent}[mode](a)

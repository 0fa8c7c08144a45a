"""`memgrove dream` without an LLM on a generated tree: how long a run and its undo take.

A seeded tree of N entries (notes in 40 topics) holds known hygiene work: ``--dup-share`` of the
entries have an exact copy in another folder (what a perfect scan finds as ``duplicate``), and
``--link-share`` of them a closely related entry they do not link (``link``). One run per size,
side by side:

- ``scan``: the dry run (the scan alone, when ``tree/hygiene/scan.py`` is there; else skipped);
- ``dream``: a run (scan, the lossless candidates applied as one journaled batch, the rest queued);
- ``undo``: ``dream --undo`` of that run (every file back, checked byte for byte);
- baseline (up to ``--baseline-max`` entries): the same candidates applied one batch per candidate,
  as ``memgrove curate`` calls would, on a copy of the tree.

``--candidates generated`` gives the run the known candidates instead of scanning (the apply and
undo paths alone); ``auto`` (default) scans when the scan exists. ``--locomo N`` also runs on the
first N LoCoMo conversations curated twice (a chat export imported again: every message repeated).

    .venv/bin/python benchmarks/dream.py --sizes 2000 10000
    .venv/bin/python benchmarks/dream.py --sizes --locomo 3
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.report import RESULTS, publish, table
from harness.stats import timed
import harness.words_only  # noqa: F401 - ranks by words alone (see there)

WORDS = ("staging production database port cache queue deploy rollback token session backup replica index "
         "schema migration latency budget owner team release version region cluster service worker job "
         "alert pager runbook incident review policy quota limit storage bucket network proxy gateway").split()


def build(root: Path, n: int, seed: int, dup_share: float, link_share: float) -> tuple[list, dict]:
    """A tree of ``n`` entries; the candidates a perfect scan finds in it; what it holds."""
    from memgrove import Memory
    from memgrove.tree.hygiene.findings import Candidate

    rng = random.Random(seed)
    n_dup = int(n * dup_share)
    n_orig = n - n_dup
    texts = []
    for i in range(n_orig):
        words = rng.sample(WORDS, 12)
        texts.append(f"Note {i}: the {words[0]} {words[1]} uses {rng.randint(1, 65535)} for {' '.join(words[2:])}.")
    ops, paths = [], []
    for i, t in enumerate(texts):
        p = f"notes/topic_{i % 40}/note_{i}.md"
        paths.append(p)
        ops.append({"op": "ADD", "path": p, "title": f"note {i}", "content": t, "reason": "generated"})
    cands = []
    for j, i in enumerate(rng.sample(range(n_orig), n_dup)):
        p = f"chats/day_{j % 30}/copy_{j}.md"
        # the same title and text in another folder: a note saved twice (a note's title is part of what it says)
        ops.append({"op": "ADD", "path": p, "title": f"note {i}", "content": texts[i], "reason": "generated"})
        cands.append(Candidate("duplicate", (paths[i], p), "MERGE",
                               ({"op": "MERGE", "path": p, "merge_into": paths[i], "reason": "the same text"},),
                               "the same text after normalization", 1.0))
    taken = {c.paths[0] for c in cands}
    free = [p for p in paths if p not in taken]
    rng.shuffle(free)
    for k in range(int(n * link_share)):
        a, b = free[2 * k], free[2 * k + 1]
        cands.append(Candidate("link", (a, b), "LINK", (
            {"op": "UPDATE", "path": a, "related": [b], "reason": "closely related"},
            {"op": "UPDATE", "path": b, "related": [a], "reason": "closely related"}), "closely related", 0.7))
    with Memory.open(root, create=True, durable=False) as mem:
        for start in range(0, len(ops), 500):
            mem.curate(ops[start:start + 500])
    return cands, {"entries": len(ops), "duplicates": n_dup, "links": int(n * link_share)}


def entries(home: Path) -> dict[str, bytes]:
    root = home / "tree"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.md") if p.name != "context.md"}


def scan_available() -> bool:
    try:
        import memgrove.tree.hygiene.scan  # noqa: F401
    except ImportError:
        return False
    return True


def one_size(n: int, args: argparse.Namespace, work: Path) -> dict:
    from memgrove import Memory
    from memgrove.tree.hygiene.dream import dream

    root = work / f"n{n}"
    (cands, held), build_s = timed(lambda: build(root, n, args.seed, args.dup_share, args.link_share))
    out: dict = {"size": n, **held, "build_s": round(build_s, 2)}
    use_scan = args.candidates == "scan" or (args.candidates == "auto" and scan_available())
    out["candidates_from"] = "scan" if use_scan else "generated"
    baseline_copy = None
    if n <= args.baseline_max:
        baseline_copy = work / f"n{n}-baseline"
        shutil.copytree(root, baseline_copy)
    with Memory.open(root) as mem:
        mem.tree.ensure_fresh()
        if use_scan:
            found, scan_s = timed(lambda: dream(mem.tree, dry_run=True).candidates)
            out["scan_s"] = round(scan_s, 3)
            out["scan_found"] = {k: sum(1 for c in found if c["kind"] == k) for k in sorted({c["kind"] for c in found})}
        out.update(run_and_undo(mem, None if use_scan else cands))
    if baseline_copy is not None:
        with Memory.open(baseline_copy) as mem:
            mem.tree.ensure_fresh()
            t = time.perf_counter()
            for c in cands:
                mem.curate([dict(op) for op in c.ops])
            out["baseline_batch_per_candidate_s"] = round(time.perf_counter() - t, 3)
    return out


def run_and_undo(mem: Any, candidates: list | None = None) -> dict:
    """A run (of ``candidates``, else of what the scan finds) and its undo, timed; whether the undo put every
    entry back byte for byte."""
    from memgrove.tree.hygiene.dream import dream, undo_run

    before = entries(mem.home)
    rep, dream_s = timed(lambda: dream(mem.tree, candidates=candidates))
    after = mem.count()
    undone, undo_s = timed(lambda: undo_run(mem.tree, rep.run))
    return {"dream_s": round(dream_s, 3), "counts": rep.counts(), "applied_ops": len(rep.applied),
            "entries_after": after, "undo_s": round(undo_s, 3), "undo_ops": len(undone["undo"]),
            "undo_exact": entries(mem.home) == before}


def on_locomo(n: int, work: Path) -> dict:
    """A run and its undo on the first ``n`` LoCoMo conversations, each curated twice."""
    from harness.datasets import locomo
    from memgrove import Memory

    root = work / "locomo"
    with Memory.open(root, create=True, durable=False) as mem:
        for again in ("", "_again"):
            for s in locomo.load_samples(locomo.default_data())[:n]:
                conv = locomo.to_conversation(s)
                mem.ingest(conversation={**conv, "id": conv["id"] + again})
    with Memory.open(root) as mem:
        mem.tree.ensure_fresh()
        out: dict = {"size": f"locomo x{n}, twice", "entries": mem.count(), "candidates_from": "scan"}
        out.update(run_and_undo(mem))
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2000, 10000])
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--dup-share", type=float, default=0.1)
    ap.add_argument("--link-share", type=float, default=0.05)
    ap.add_argument("--candidates", choices=("auto", "scan", "generated"), default="auto")
    ap.add_argument("--baseline-max", type=int, default=2000)
    ap.add_argument("--locomo", type=int, default=0, metavar="N", help="also the first N LoCoMo chats, curated twice")
    ap.add_argument("--out", default=str(RESULTS / "dream"), help="results path without extension ('' = none)")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mg-dream-bench-") as tmp:
        for n in args.sizes:
            rows.append(one_size(n, args, Path(tmp)))
            print(json.dumps(rows[-1]), file=sys.stderr)
        if args.locomo:
            rows.append(on_locomo(args.locomo, Path(tmp)))
            print(json.dumps(rows[-1]), file=sys.stderr)
    from memgrove.tree.settings import TreeSettings

    result = {"engine": TreeSettings().engine, "seed": args.seed, "rows": rows}
    return publish(result, markdown(result).rstrip("\n"), Path(args.out) if args.out else None, indent=1)


def markdown(result: dict) -> str:
    lines = [f"# dream without an LLM (engine {result['engine']}, seed {result['seed']})", "",
             *table(["entries", "candidates from", "scan s", "dream s", "applied ops", "undo s", "undo exact",
                     "baseline: a batch per candidate, s"],
                    [[r["entries"], r["candidates_from"], r.get("scan_s", "–"), r["dream_s"], r["applied_ops"],
                      r["undo_s"], r["undo_exact"], r.get("baseline_batch_per_candidate_s", "–")]
                     for r in result["rows"]])]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

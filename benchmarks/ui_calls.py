#!/usr/bin/env python
"""What the library calls behind the web page's views cost at scale, warm: a probe, not a report.

    python benchmarks/ui_calls.py --tree /tmp/t25k [--big /tmp/big5k] [--reps 7] [--out benchmarks/runs/ui_calls]

``--tree``: a built memory (harness/synthetic.py ``build_tree``; its journal holds one ADD per entry);
``--big``: one whose folder ``bulk/big`` holds 5,000 entries. Each call runs once untimed (warm-up),
then ``--reps`` times; medians and maxima in ms, the load average before and after. Review items
(500, queued once) and dream run records (40, written once) are added to ``--tree`` if it has none.
Writes ``--out``.json and .md (benchmarks/runs/ is not committed: benchmarks/ui_views.py is the report).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.stats import pct  # noqa: E402
from harness.synthetic import titles  # noqa: E402


def timed(fn: Callable[[], Any], reps: int) -> dict[str, Any]:
    fn()
    xs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t0)
    return {"p50_ms": round(pct(xs, 50) * 1000, 2), "max_ms": round(max(xs) * 1000, 2), "n": reps}


def seed_review(mem: Any, n: int) -> None:
    """``n`` pending UPDATE proposals over distinct entries, as dream queues them."""
    from memgrove.tree.hygiene import review

    if len(review.pending(mem.tree)) >= n:
        return
    paths = sorted(p for p in mem.tree.catalog.files() if not p.endswith("context.md"))[:n]
    rejected: set[str] = set()
    for p in paths:
        review.queue(mem.tree, review.proposal([{"op": "UPDATE", "path": p, "tags": ["reviewed"],
                                                 "reason": "probe: a proposed tag"}], kind="curate"),
                     proposed_by="dream", rejected=rejected)


def seed_runs(mem: Any, n: int) -> None:
    """``n`` dream run records of the shape dream.py writes (each with 200 candidate rows)."""
    from memgrove.tree.hygiene import dream_state

    if len(dream_state.run_ids(mem.home)) >= n:
        return
    rows = [{"kind": "link", "paths": [f"a/b/e{i}.md", f"a/b/f{i}.md"], "status": "applied", "reason": "x" * 80}
            for i in range(200)]
    for i in range(n):
        rid = f"20261201T{i // 60:02d}{i % 60:02d}00-{i:010x}"
        dream_state.save_run(mem.home, {"run": rid, "started": "2026-12-01T00:00:00Z", "status": "done",
                                        "applied": [], "candidates": rows, "finished": "2026-12-01T00:01:00Z"},
                             durable=False)


def list_before(t: Any, rel: str) -> dict[str, Any]:
    """``ContextTree.list_folder`` as it was before paging (a07fb77): every entry parsed, every subtree
    walked for its count: the baseline of ``list``."""
    from memgrove.tree.entries import entry as entry_mod
    from memgrove.tree.entries.paths import CONTEXT_FILE, is_entry_file, natural_key
    from memgrove.tree.index import contexts
    from memgrove.tree.index.catalog import scan

    base = t._abs(rel) if rel else t.root
    folders, entries = [], []
    for child in sorted(base.iterdir(), key=lambda p: natural_key(p.name)):
        if child.name.startswith((".", "_")) or child.is_symlink():
            continue
        crel = f"{rel}/{child.name}" if rel else child.name
        if child.is_dir():
            n = sum(1 for p in scan(child) if p.rsplit("/", 1)[-1] != CONTEXT_FILE)
            folders.append({"path": crel, "title": contexts.folder_title(child), "entries": n})
        elif is_entry_file(crel):
            e = entry_mod.parse(child.read_text(encoding="utf-8"), where=crel)
            entries.append({"path": crel, "title": e.title, "summary": e.summary})
    return {"folders": folders, "entries": entries}


def history_before(t: Any, limit: int | None, rel: str | None) -> list[Any]:
    """``ContextTree.history`` as it was (a07fb77): the whole journal parsed, then filtered and reversed."""
    out = [r for r in t.journal.records()
           if rel is None or r.path == rel or any(c.path == rel or c.path.startswith(rel + "/") for c in r.changes())]
    out.reverse()
    return out[:limit] if limit else out


def probe(tree: Path, big: Path | None, reps: int) -> dict[str, Any]:
    from memgrove import Memory
    from memgrove.tree.hygiene import dream_state

    out: dict[str, Any] = {}
    mem = Memory.open(tree, durable=False, embed_ahead=False, semantic_weight=0.0)
    seed_review(mem, 500)
    seed_runs(mem, 40)
    t = mem.tree
    # a server is long-lived: after ``watch_after`` seconds its checks are a watcher's (tree/index/sync.py)
    t.ensure_fresh()
    time.sleep(t.settings.watch_after + 0.2)
    t.ensure_fresh()
    paths = sorted(p for p in t.catalog.files() if not p.endswith("context.md"))
    rng = random.Random(0)
    entry = rng.choice(paths)
    if not any(r.op == "UPDATE" for r in mem.history(limit=200)):    # a few recent edits, to filter by kind
        mem.curate([{"op": "UPDATE", "path": p, "tags": ["probe"], "reason": "probe: an edit"}
                    for p in rng.sample(paths, 20)])
    domain, topic = entry.split("/")[0], "/".join(entry.split("/")[:2])
    out["shape"] = {"entries": len(paths), "journal_bytes": t.journal.size(), "entry": entry,
                    "watcher": t._watcher is not None}
    pool = titles(tree)
    from memgrove.graphs.stats import QueryLog, query_stats
    from memgrove.tree.writes.journal_read import find_with_later

    def find_before(records: Any, op_id: str) -> Any:
        found, later = None, []
        for r in records:
            if found is not None:
                later.append(r)
            elif r.id == op_id:
                found = r
        return found, later

    newest, oldest = mem.history(limit=1)[0].id, next(iter(t.journal.records())).id
    qlog = tree.parent / "query-log-100k.jsonl"
    if not qlog.exists():
        row = json.dumps({"at": "2026-12-07T17:41:11.419814Z", "question": "what do we know about x y z?",
                          "tier": 2, "latency_ms": 415.66, "cached": False, "top_score": 0.99,
                          "sources": ["a/b/c_1.md", "a/b/d_2.md", "a/e/f_3.md"], "out_of_domain": False,
                          "llm": False, "error": None})
        qlog.write_text((row + "\n") * 100_000)
    warm_log = QueryLog(qlog)
    ask = random.Random(time.time())    # questions never asked before: the answer cache is on disk
    qs = iter([f"what do we know about {ask.choice(pool)}?" for _ in range(10 * reps + 10)])
    calls: dict[str, Callable[[], Any]] = {
        "list(root) BEFORE": lambda: list_before(t, ""),
        "list(root)": lambda: mem.list(""),
        "list(root, limit=100)": lambda: mem.list("", limit=100),
        f"list(domain {domain}) BEFORE": lambda: list_before(t, domain),
        f"list(domain {domain})": lambda: mem.list(domain),
        f"list(topic {topic}) BEFORE": lambda: list_before(t, topic),
        f"list(topic {topic}, limit=100)": lambda: mem.list(topic, limit=100),
        "show(entry)": lambda: mem.show(entry),
        "history(limit=50) BEFORE": lambda: history_before(t, 50, None),
        "history(limit=50)": lambda: mem.history(limit=50),
        "history(path=entry) BEFORE": lambda: history_before(t, 50, entry),
        "history(path=entry): whole journal, bytes prefilter": lambda: mem.history(limit=50, path=entry),
        "history_page(path=entry)": lambda: mem.history_page(50, path=entry),
        "history(path=topic folder) BEFORE": lambda: history_before(t, 50, topic),
        "history_page(path=topic folder)": lambda: mem.history_page(50, path=topic),
        "op=UPDATE, newest 50 BEFORE": lambda: [r for r in history_before(t, None, None) if r.op == "UPDATE"][:50],
        "history_page(kinds=UPDATE)": lambda: mem.history_page(50, kinds=["UPDATE"]),
        "history_page(kinds=DELETE): none, stops at the budget": lambda: mem.history_page(50, kinds=["DELETE"]),
        "journal.find(newest op) BEFORE: Journal.find from the start": lambda: t.journal.find(newest),
        "tree.operation(newest op)": lambda: t.operation(newest),
        "tree.operation(oldest op)": lambda: t.operation(oldest),
        "undo's find_with_later(newest op)": lambda: find_with_later(t.journal.file, newest),
        "undo's find_with_later(newest op) BEFORE": lambda: find_before(t.journal.records(), newest),
        "review() (500 pending)": lambda: mem.review(),
        "dream runs: every run loaded (40)": lambda: [dream_state.load_run(mem.home, r)
                                                     for r in dream_state.run_ids(mem.home)],
        "stats(): 100,000 queries logged, BEFORE (whole log)": lambda: query_stats(qlog),
        "stats(): 100,000 queries logged, warm QueryLog": lambda: warm_log.stats(),
        "stats()": lambda: mem.stats(),
        "tree.vector_state()": lambda: t.vector_state(),
        "tree.entry_count()": lambda: t.entry_count(),
        "count()": lambda: mem.count(),
        "search(title words)": lambda: mem.search(next(qs)),
        "query(new question)": lambda: mem.query(next(qs)),
        "doctor()": lambda: mem.doctor(),
    }
    load = [os.getloadavg()]
    for name, fn in calls.items():
        out[name] = timed(fn, reps if name != "doctor()" else max(3, reps // 2))
        print(f"{name:45s} {out[name]}", file=sys.stderr, flush=True)
    mem.close()
    if big is not None:
        with Memory.open(big, durable=False, embed_ahead=False, semantic_weight=0.0) as bm:
            for name, fn in {"list(bulk/big: 5,000 entries) BEFORE": lambda: list_before(bm.tree, "bulk/big"),
                             "list(bulk/big: 5,000 entries)": lambda: bm.list("bulk/big"),
                             "list(bulk/big, limit=100)": lambda: bm.list("bulk/big", limit=100),
                             "list(bulk/big, offset=4900, limit=100)": lambda: bm.list("bulk/big", offset=4900, limit=100),
                             "list(bulk)": lambda: bm.list("bulk")}.items():
                out[name] = timed(fn, reps)
                print(f"{name:45s} {out[name]}", file=sys.stderr, flush=True)
    load.append(os.getloadavg())
    out["loadavg"] = [[round(x, 2) for x in la] for la in load]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--big", type=Path)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "runs" / "ui_calls")
    a = ap.parse_args()
    res = probe(a.tree, a.big, a.reps)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()

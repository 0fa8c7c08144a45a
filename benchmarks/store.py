#!/usr/bin/env python
"""Store benchmark: ``ContextTreeStore`` in-process and over HTTP, against ``InMemoryStore`` and ``SqliteStore``, same run.

    python benchmarks/store.py                      # 1,000 and 10,000 items, seed 0
    python benchmarks/store.py --sizes 1000 2000    # a shorter run
    python benchmarks/store.py --quick --out /tmp/s # 200 items, few calls (for tests)

For every size N, every store (each in a fresh temp folder; SqliteStore on a file there;
``RemoteContextTreeStore`` is ``ContextTreeStore(url=...)`` against a ``memgrove serve`` started
on 127.0.0.1 for a project there, so its numbers are the in-process store's plus HTTP and the
server's queue), all open at once:

1. fill: N items put in batches of ``--batch`` (``store.batch`` of PutOps: one curate batch each
   for the tree), items ``("bench", "user_<i % 20>")`` / ``item_<i>`` / ``{"text": <seeded words>,
   "n": i}``;
2. ``put``: ``--calls`` single puts of new keys (what a tool's ``runtime.store.put`` costs);
3. ``get``: ``--calls`` gets of random existing keys;
4. ``search``: ``--calls`` queries of 2–3 words from the corpus's vocabulary, prefix ``("bench",)``,
   limit 10. InMemoryStore and SqliteStore have no embedding index here (none can be reached
   offline), and without one both ignore ``query``: their number is a prefix listing, not a
   search. ContextTreeStore ranks by BM25;
5. ``list``: ``--calls`` searches without a query in one user's namespace (N/20 items), limit 10.

Steps 2-5 run side by side: call i of an operation runs on every store in turn, the order rotating
with i, so the machine's busy moments fall on all stores alike. Latencies are medians (and p90)
in milliseconds; ratios are against InMemoryStore and SqliteStore, and the remote store's against
the in-process one.
Results: ``benchmarks/results/store.{json,md}`` (``--out`` to choose).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import platform
import random
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from memgrove.store.tree_store import ContextTreeStore

from harness.machine import commit  # noqa: E402
from harness.report import RESULTS, publish, table  # noqa: E402
from harness.served import Served  # noqa: E402
from harness.stats import timed_ms  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)

STORES = ("ContextTreeStore", "RemoteContextTreeStore", "InMemoryStore", "SqliteStore")
OPS = ("put", "get", "search", "list")
SERVER_READY_S = 90.0
USERS = 20
_WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
          "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember fjord "
          "grove harbor island jasper kestrel lagoon meadow nectar orchid pebble quartz raven saffron tundra "
          "umber violet willow yarrow zephyr token rotate deploy friday editor theme lisbon vim coffee").split()


def vocabulary(seed: int, size: int = 2000) -> list[str]:
    """``size`` distinct made-up words (two syllables of the list above), seeded."""
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add(rng.choice(_WORDS)[:4] + rng.choice(_WORDS)[-4:])
    return sorted(words)


def item(i: int, vocab: list[str], seed: int) -> tuple[tuple[str, ...], str, dict[str, Any]]:
    rng = random.Random(seed * 1_000_003 + i)   # item i is the same at every size
    text = " ".join(rng.choice(vocab) for _ in range(rng.randint(8, 24)))
    return ("bench", f"user_{i % USERS}"), f"item_{i}", {"text": text.capitalize() + ".", "n": i}


def open_store(kind: str, folder: Path, stack: ExitStack) -> BaseStore:
    if kind == "ContextTreeStore":
        return stack.enter_context(ContextTreeStore(folder / "project"))
    if kind == "RemoteContextTreeStore":
        from memgrove import Memory

        Memory.open(folder / "project", create=True).close()
        srv = Served(folder / "project", log=folder / "serve.log", timeout=SERVER_READY_S)
        stack.callback(srv.stop)
        return stack.enter_context(ContextTreeStore(url=srv.url, token=srv.token))
    if kind == "InMemoryStore":
        return InMemoryStore()
    store = stack.enter_context(SqliteStore.from_conn_string(str(folder / "store.sqlite")))
    store.setup()
    return store


def summary(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"median_ms": round(statistics.median(ms), 3), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3),
            "n": len(ms)}


def measure(kinds: tuple[str, ...], n: int, calls: int, batch: int, seed: int) -> list[dict[str, Any]]:
    """Every store of ``kinds`` filled with the same N items, then measured side by side: call i of
    an operation runs on each store in turn (the order rotating with i), so a busy moment of the
    machine falls on all of them alike."""
    vocab = vocabulary(seed)
    rng = random.Random(seed + n)
    queries = [" ".join(rng.sample(vocab, rng.randint(2, 3))) for _ in range(calls)]
    get_keys = [rng.randrange(n) for _ in range(calls)]
    users = [rng.randrange(USERS) for _ in range(calls)]
    out: dict[str, dict[str, Any]] = {k: {"store": k, "size": n} for k in kinds}
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp, ExitStack() as stack:
        stores: dict[str, BaseStore] = {}
        for k in kinds:
            (Path(tmp) / k).mkdir()
            stores[k] = open_store(k, Path(tmp) / k, stack)
        for k, store in stores.items():
            t = time.perf_counter()
            for start in range(0, n, batch):
                store.batch([PutOp(*item(i, vocab, seed)) for i in range(start, min(n, start + batch))])
            out[k]["fill_s"] = round(time.perf_counter() - t, 3)
            out[k]["fill_items_per_s"] = round(n / max(out[k]["fill_s"], 1e-9), 1)
            store.search(("bench",), query=queries[0], limit=10)   # warm: the index searcher, caches
        hits: dict[str, list[int]] = {k: [] for k in kinds}

        def side_by_side(op: str, call: Callable[[str, BaseStore, int], Any]) -> None:
            ms: dict[str, list[float]] = {k: [] for k in kinds}
            for i in range(calls):
                for k in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:
                    ms[k].append(timed_ms(lambda: call(k, stores[k], i)))
            for k in kinds:
                out[k][op] = summary(ms[k])

        side_by_side("put", lambda k, s, i: s.put(*item(n + i, vocab, seed)))
        side_by_side("get", lambda k, s, i: s.get(("bench", f"user_{get_keys[i] % USERS}"), f"item_{get_keys[i]}"))
        side_by_side("search", lambda k, s, i: hits[k].append(len(s.search(("bench",), query=queries[i], limit=10))))
        side_by_side("list", lambda k, s, i: s.search(("bench", f"user_{users[i]}"), limit=10))
        for k, store in stores.items():
            out[k]["search"]["mean_hits"] = round(sum(hits[k]) / len(hits[k]), 2)
            out[k]["check"] = {"get_found": all(store.get(("bench", f"user_{g % USERS}"), f"item_{g}") is not None
                                                for g in get_keys[:20])}
    return [out[k] for k in kinds]


def ratios(rows: list[dict[str, Any]], store: str, refs: tuple[str, ...], digits: int) -> dict[str, dict[str, Any]]:
    """``store``'s median over each reference's, per size, reference and operation."""
    by = {(r["store"], r["size"]): r for r in rows}
    return {str(size): {ref: {op: round(r[op]["median_ms"] / max(by[(ref, size)][op]["median_ms"], 1e-6), digits)
                              for op in OPS} for ref in refs if (ref, size) in by}
            for (kind, size), r in by.items() if kind == store}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Store benchmark ({report['date']}, commit {report['commit']})", "",
             f"{report['machine']}; seed {report['seed']}; {report['calls']} calls per operation; fill in batches of "
             f"{report['batch']}; operations measured side by side (call i on each store in turn). Medians (p90) in ms.", ""]
    lines += table(["size", "store", "fill s", "fill items/s", *OPS],
                   [[f"{r['size']:,}", r["store"], f"{r['fill_s']:.2f}", f"{r['fill_items_per_s']:,.0f}",
                     *(f"{r[op]['median_ms']:.2f} ({r[op]['p90_ms']:.2f})" for op in OPS)] for r in report["rows"]])
    lines += ["", "ContextTreeStore's (in-process) median ÷ the reference's:", ""] + table(
        ["size", "against", *OPS], [[f"{int(size):,}", ref, *(f"{r[op]}×" for op in OPS)]
                                    for size, refs in report["ratios"].items() for ref, r in refs.items()])
    lines += ["", "RemoteContextTreeStore (`ContextTreeStore(url=...)`, HTTP to `memgrove serve` on 127.0.0.1) ÷ "
              "ContextTreeStore in-process, medians of the same run:", ""] + table(
        ["size", *OPS], [[f"{int(size):,}", *(f"{r[op]}×" for op in OPS)]
                         for size, r in report.get("remote_ratios", {}).items()])
    lines += ["", "`search` for InMemoryStore and SqliteStore is a prefix listing: without an embedding index "
              "both ignore the query. ContextTreeStore's (both) is a BM25 search returning ranked, scored matches "
              f"(mean hits per query: {', '.join(str(r['search']['mean_hits']) for r in report['rows'] if 'Context' in r['store'])})."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="200 items, 12 calls (for tests)")
    ap.add_argument("--out", type=Path, default=None, help="results path without extension")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.calls = [200], 12
    out = args.out or RESULTS / ("store_quick" if args.quick else "store")
    rows = []
    for n in args.sizes:
        for row in measure(STORES, n, args.calls, args.batch, args.seed):
            rows.append(row)
            print(f"{n:>6} {row['store']:<22} fill {row['fill_s']:>7.2f} s  put {row['put']['median_ms']:>7.2f}  "
                  f"get {row['get']['median_ms']:>6.3f}  search {row['search']['median_ms']:>7.2f}  "
                  f"list {row['list']['median_ms']:>7.2f} ms", flush=True)
    report = {"date": dt.date.today().isoformat(), "commit": commit() or "?", "seed": args.seed, "calls": args.calls,
              "batch": args.batch, "sizes": args.sizes,
              "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
                         f"langgraph {importlib.metadata.version('langgraph')}",
              "rows": rows, "ratios": ratios(rows, "ContextTreeStore", ("InMemoryStore", "SqliteStore"), 1),
              "remote_ratios": {size: r["ContextTreeStore"]    # HTTP's cost: the remote store over the in-process one
                                for size, r in ratios(rows, "RemoteContextTreeStore", ("ContextTreeStore",), 2).items()}}
    return publish(report, markdown(report).rstrip("\n"), out)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)

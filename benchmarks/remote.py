#!/usr/bin/env python
"""``Memory.connect`` against ``Memory.open``: p50 of search and curate, side by side.

    python benchmarks/remote.py                                   # 5,000 entries, 300 rounds (~5 min)
    python benchmarks/remote.py --sizes 5000 25000                # both sizes (~25 min)
    python benchmarks/remote.py --sizes 500 --rounds 30 --out /tmp/r   # smoke (~1 min)

Per size, a seeded tree is built like benchmarks/scale.py's (the same corpus, ``mem.curate`` in
batches of ADDs, ``durable=False`` while building) and copied: one copy is served by ``memgrove
serve`` (a subprocess on 127.0.0.1) and used through ``Memory.connect``, the other is opened in
this process with ``Memory.open``. Each round asks both the same novel search (``search``, 10
hits: the index, not the answer cache) and makes the same one-entry ADD on both (``curate``,
durable as configured by default: fsync'd), alternating which goes first, so the machine's noise
falls on both. After warm-up rounds, p50/p95 per operation and mode, and the ratio and the
difference of the medians (what the HTTP hop costs).

Results: ``benchmarks/results/remote.{json,md}`` (``--out PREFIX`` writes elsewhere). The machine
is shared and has 2 cores: the server and this process share them; read the ratios, measured
in the same run, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.machine import brief, loadavg  # noqa: E402
from harness.report import RESULTS, log, publish, table  # noqa: E402
from harness.served import Served  # noqa: E402
from harness.stats import pct, timed_ms as timed  # noqa: E402
from harness.synthetic import Corpus, build_tree  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)

WARMUP = 10


def run_size(n: int, rounds: int, seed: int, batch: int, corpus: Any) -> dict[str, Any]:
    from memgrove import Memory

    tmp = Path(tempfile.mkdtemp(prefix=f"memgrove-remote-{n}-"))
    try:
        log(f"[{n}] building")
        build_s = build_tree(tmp / "served", n, corpus, batch)
        with Memory.open(tmp / "served") as built:      # the server (a clean environment) keeps its engine
            engine = built.tree.engine.name
        config = tmp / "served" / ".memgrove" / "config.toml"
        if not config.exists():
            config.write_text(f'[tree]\nengine = "{engine}"\n', encoding="utf-8")
        shutil.copytree(tmp / "served", tmp / "local")
        srv = Served(tmp / "served")
        log(f"[{n}] built in {build_s:.0f} s; server up in {srv.started_s:.1f} s")
        times: dict[str, dict[str, list[float]]] = {op: {"connect": [], "open": []} for op in ("search", "curate")}
        rng = random.Random(f"remote-{seed}-{n}")
        try:
            with Memory.connect(srv.url, srv.token) as remote, Memory.open(tmp / "local") as local:
                mems = {"connect": remote, "open": local}
                for i in range(WARMUP + rounds):
                    q = corpus.query(rng)
                    op = {**corpus.op(n + i), "path": f"bench/remote/entry_{i}.md"}
                    order = ["connect", "open"] if i % 2 else ["open", "connect"]
                    for mode in order:
                        t = timed(lambda: mems[mode].search(q, 10))
                        if i >= WARMUP:
                            times["search"][mode].append(t)
                    for mode in order:
                        t = timed(lambda: mems[mode].curate([op]))
                        if i >= WARMUP:
                            times["curate"][mode].append(t)
                same = [h.path for h in remote.search(q, 10)] == [h.path for h in local.search(q, 10)]
        finally:
            code = srv.stop()
        out: dict[str, Any] = {"size": n, "engine": engine, "build_s": round(build_s, 1), "rounds": rounds,
                               "server_exit": code,
                               "same_hits_last_round": same}
        for op, by_mode in times.items():
            row = {mode: {"p50_ms": pct(xs, 50, 3), "p95_ms": pct(xs, 95, 3)} for mode, xs in by_mode.items()}
            row["ratio_p50"] = round(row["connect"]["p50_ms"] / row["open"]["p50_ms"], 2)
            row["extra_p50_ms"] = round(row["connect"]["p50_ms"] - row["open"]["p50_ms"], 3)
            out[op] = row
            log(f"[{n}] {op}: connect p50 {row['connect']['p50_ms']} ms, open p50 {row['open']['p50_ms']} ms "
                f"(x{row['ratio_p50']})")
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def render(report: dict[str, Any]) -> str:
    lines = ["# `Memory.connect` vs `Memory.open`", "",
             f"{report['date']} · commit {report['commit']} · `{report['command']}` · {report['machine']['cpus']} cores "
             f"(shared) · load {report['loadavg_start']} → {report['loadavg_end']}", "",
             "Same run, interleaved round by round; a novel 2–4 word search (10 hits) and a one-entry ADD "
             "(fsync'd) per round on each; medians after warm-up.", ""]
    lines += table(["entries", "operation", "connect p50 ms", "open p50 ms", "ratio", "extra ms", "connect p95 ms",
                    "open p95 ms"],
                   [[f"{s['size']:,}", op, r["connect"]["p50_ms"], r["open"]["p50_ms"], f"×{r['ratio_p50']}",
                     f"{r['extra_p50_ms']:+}", r["connect"]["p95_ms"], r["open"]["p95_ms"]]
                    for s in report["sizes"] for op in ("search", "curate") if (r := s[op])], "rlrrrrrr")
    lines += ["", "Rounds per size: " + ", ".join(f"{s['size']:,}: {s['rounds']}" for s in report["sizes"])
              + "; the two copies gave the same hits in the last round: "
              + ", ".join(str(s["same_hits_last_round"]) for s in report["sizes"]) + ".", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "remote"), help="prefix of the .json and .md written")
    args = ap.parse_args(argv)

    corpus = Corpus(args.seed)
    report: dict[str, Any] = {**brief("remote.py", argv), "config": vars(args), "sizes": []}
    for n in sorted(args.sizes):
        report["sizes"].append(run_size(n, args.rounds, args.seed, args.batch, corpus))
    report["loadavg_end"] = loadavg()
    return publish(report, render(report).rstrip("\n"), Path(args.out))


if __name__ == "__main__":
    main()

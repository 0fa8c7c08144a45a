#!/usr/bin/env python
"""What meaning and the dense leg cost a search at scale, side by side with a baseline in the same run.

    python benchmarks/dense_scale.py warm --tree /tmp/dense25k --build 25000 [--grow-from /tmp/dense5k]
    python benchmarks/dense_scale.py cold --tree /tmp/dense5k --build 5000 --base-python OLD_PYTHON

``warm``: one process, three memories on one tree of ``--build`` synthetic entries (harness/synthetic.py),
every vector stored: words only (``semantic_weight`` 0), meaning as a re-sort of the best 50 (0.5,
``dense_k`` 0: main's default) and meaning with the dense leg (0.5, ``--dense-k``). Each question (an
entry's title, "what do we know about T?") is asked once per arm, the arms' order alternating; the
first ``--warmup`` questions are not counted (the model's load, the matrix's first read). Medians,
p95 and each arm's ratio to words only.

``cold``: a fresh ``python -m memgrove.cli --root TREE --no-server query Q --json`` per run, meaning on
(``semantic_weight = 0.5`` in the tree's config.toml), every vector stored: the baseline's interpreter
(``--base-python``, a checkout of the commit before, its package first on PYTHONPATH) on one copy of
the tree and this checkout's on another (``dense_k`` in its config; the two catalogs differ), in
turns, a new question each run (so each searches: tier 2). Medians and their ratio.

The vectors stored are seeded random unit vectors, each under its entry's key as the interpreter
that searches computes it (its own ``key_of``): computing 25,000 real ones takes half an hour here,
and the time of a search does not depend on their values. The question's vector is the real
encoder's. Writes ``--out`` JSON and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.stats import pct  # noqa: E402
from harness.synthetic import Corpus, build_tree, titles  # noqa: E402
from harness.tier_runs import child  # noqa: E402

FILL = """
import sys
import numpy as np
from memgrove import Memory
from memgrove.tree.meaning.vectors import key_of
m = Memory.open(sys.argv[1], durable=False, embed_ahead=False, semantic_weight=0.5)
enc = m.tree.meaning_encoder()
texts = sorted(set(m.tree._meaning_texts(sorted(m.tree.catalog.files())).values()))
rng = np.random.default_rng(0)
v = rng.standard_normal((len(texts), enc.dim)).astype(np.float32)
v /= np.linalg.norm(v, axis=1, keepdims=True)
m.tree.vectors.put_many((key_of(enc.name, t), r.tobytes()) for t, r in zip(texts, v))
m.tree.vectors.checkpoint()
print(len(texts))
m.close()
"""


def built(tree: Path, n: int, grow_from: Path | None = None) -> None:
    """A tree of ``n`` synthetic entries at ``tree``; with ``grow_from`` (a built tree of n / c entries),
    its folders copied c times under new names and indexed at once (curating 25,000 entries one batch
    at a time takes most of an hour on this shared machine)."""
    if (tree / ".memgrove").exists():
        return
    t0 = time.perf_counter()
    if grow_from is None:
        build_tree(tree, n, Corpus(0), 500, semantic_weight=0.0, embed_ahead=False)
    else:
        from memgrove import Memory
        src = grow_from / ".memgrove" / "tree"
        copies = max(1, round(n / len(titles(grow_from))))
        for c in range(copies):
            for d in sorted(x for x in src.iterdir() if x.is_dir()):
                shutil.copytree(d, tree / ".memgrove" / "tree" / f"{d.name}{c or ''}")
        with Memory.open(tree, create=True, durable=False, semantic_weight=0.0, embed_ahead=False) as m:
            m.reindex()
    print(f"built {len(titles(tree))} entries in {time.perf_counter() - t0:.0f} s", flush=True)


def fill(python: list[str], tree: Path, env: dict[str, str]) -> int:
    out, el = child(python + ["-c", FILL, str(tree)], env=env)
    print(f"stored {out.strip()} vectors in {el:.0f} s", flush=True)
    return int(out.strip())


def stats(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(pct(xs, 50) * 1000, 1), "p95_ms": round(pct(xs, 95) * 1000, 1), "n": len(xs)}


def warm(a: argparse.Namespace) -> dict:
    from memgrove import Memory

    built(a.tree, a.build, a.grow_from)
    fill([sys.executable], a.tree, dict(os.environ))
    arms = {"words": {"semantic_weight": 0.0}, "meaning_rerank": {"semantic_weight": 0.5, "dense_k": 0},
            "meaning_dense": {"semantic_weight": 0.5, "dense_k": a.dense_k}}
    mems = {k: Memory.open(a.tree, durable=False, embed_ahead=False, **v) for k, v in arms.items()}
    rng = random.Random(a.seed)
    pool = titles(a.tree)
    times: dict[str, list[float]] = {k: [] for k in arms}
    load = [os.getloadavg()]
    for r in range(a.warmup + a.rounds):
        q = f"what do we know about {rng.choice(pool)}?"
        for k in (list(arms) if r % 2 == 0 else list(arms)[::-1]):
            t0 = time.perf_counter()
            hits = mems[k].search(q)
            if r >= a.warmup:
                times[k].append(time.perf_counter() - t0)
            assert hits, q
    load.append(os.getloadavg())
    counts = mems["meaning_dense"].tree.vector_counts()
    for m in mems.values():
        m.close()
    base = pct(times["words"], 50)
    return {"benchmark": "dense_scale warm", "tree": str(a.tree), "entries": len(pool), "vectors": counts,
            "dense_k": a.dense_k, "rounds": a.rounds, "loadavg": load,
            "arms": {k: {**stats(v), "ratio_p50": round(pct(v, 50) / base, 2)} for k, v in times.items()}}


def cold(a: argparse.Namespace) -> dict:
    built(a.tree, a.build)
    trees = {"base": a.tree.with_name(a.tree.name + "-base"), "new": a.tree}
    if not trees["base"].exists():
        shutil.copytree(a.tree, trees["base"])
    env = {k: v for k, v in os.environ.items() if k != "MEMGROVE_SEMANTIC"}
    pythons = {"base": [a.base_python], "new": [sys.executable]}
    config = {"base": "[tree]\nsemantic_weight = 0.5\n",
              "new": f"[tree]\nsemantic_weight = 0.5\ndense_k = {a.dense_k}\n"}
    pool = titles(a.tree)
    rng = random.Random(a.seed)
    for k, tree in trees.items():
        (tree / ".memgrove" / "config.toml").write_text(config[k], encoding="utf-8")
        # the first query rebuilds a catalog another checkout wrote, and loads what is cached on disk
        child(pythons[k] + ["-m", "memgrove.cli", "--root", str(tree), "--no-server", "query", "warm up", "--json"],
              env=env)
        fill(pythons[k], tree, env)
    times: dict[str, list[float]] = {k: [] for k in trees}
    cpu: dict[str, list[float]] = {k: [] for k in trees}     # the child's own CPU: what load does not inflate
    tiers: dict[str, dict[str, int]] = {k: {} for k in trees}
    load = [os.getloadavg()]
    for r in range(a.rounds):
        for k in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            q = f"what do we know about {rng.choice(pool)}?"
            c0 = _child_cpu()
            out, el = child(pythons[k] + ["-m", "memgrove.cli", "--root", str(trees[k]), "--no-server", "query", q,
                                          "--json"], env=env)
            tier = str(json.loads(out)["tier"])
            tiers[k][tier] = tiers[k].get(tier, 0) + 1
            times[k].append(el)
            cpu[k].append(_child_cpu() - c0)
    load.append(os.getloadavg())
    return {"benchmark": "dense_scale cold", "tree": str(a.tree), "entries": len(pool), "dense_k": a.dense_k,
            "rounds": a.rounds, "loadavg": load,
            "arms": {k: {**stats(v), "cpu_p50_ms": round(pct(cpu[k], 50) * 1000, 1), "tiers": tiers[k]}
                     for k, v in times.items()},
            "ratio_p50": round(pct(times["new"], 50) / pct(times["base"], 50), 3),
            "cpu_ratio_p50": round(pct(cpu["new"], 50) / pct(cpu["base"], 50), 3)}


def _child_cpu() -> float:
    """User + system seconds of the children waited for so far."""
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("warm", "cold"))
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--build", type=int, default=25000)
    ap.add_argument("--dense-k", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grow-from", type=Path, default=None, help="warm: build --tree by copying this built tree")
    ap.add_argument("--base-python", default="", help="cold: the baseline's interpreter")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    report = warm(a) if a.mode == "warm" else cold(a)
    print(json.dumps(report, indent=2))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()

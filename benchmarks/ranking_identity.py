#!/usr/bin/env python
"""Ranking output, question by question, to check that a change to ranking's code changes no ranking.

    python benchmarks/ranking_identity.py record locomo --split test --out runs/identity_new.jsonl
    python benchmarks/ranking_identity.py record beam --split test --tier 100K --questions 10 --out ...
    python benchmarks/ranking_identity.py compare runs/identity_old.jsonl runs/identity_new.jsonl

``record`` curates each conversation (chat) of a half once (the verbatim curator, as every benchmark),
then asks ``tree.search`` every question (or the first ``--questions`` of each) at each ``--limits``,
with meaning off and, when the model is installed, on (``semantic_weight`` 0.5, every entry's vector
computed first, as ``ablation.py`` warms, so no search waits for the encoder). One JSON line per
question, limit and mode: the hits in order, each with its path and its scores (exact floats:
``score``, the lifted ``bm25``, ``relevance``, ``coverage``) and matched terms.

Recency reads each entry's file time and the clock, which differ from run to run: every file of the
tree gets one fixed time after curating and the tree's clock a fixed now. A score sums the IDF of
the terms an entry matched in their set's order, which follows the string hash: ``record`` runs
with ``PYTHONHASHSEED=0`` (it says so otherwise), so two runs of the same code record the same
floats, to the last bit. ``compare`` counts the lines that differ (0 is the aim). Run ``record`` once
on the old code (a worktree at the old commit, its package first on ``PYTHONPATH``) and once on the
new.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import beam  # noqa: E402
import locomo  # noqa: E402
import splits  # noqa: E402

FIXED_MTIME = 1_780_000_000            # 2026-05-28: every entry's file time after curating
FIXED_NOW = datetime(2026, 6, 30, tzinfo=timezone.utc)


def conversations(dataset: str, split: str, tier: str) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    """(id, conversation in memgrove's format, questions) of each conversation of the half."""
    if dataset == "locomo":
        for s in locomo.load_samples(locomo.default_data()):
            if splits.in_split("locomo", s["sample_id"], split):
                turns = locomo.turns_of(s)
                yield s["sample_id"], locomo.to_conversation(s), [q.question for q in locomo.questions_of(s, turns)]
        return
    root = beam.default_data()
    for d in beam.chat_dirs(root, tier):
        if splits.in_split("beam", d.name, split, tier):
            chat = beam.load_chat(d, tier)
            yield chat.id, beam.to_conversation(chat.id, chat.messages), [q.question for q in chat.questions]


def hit_row(h: Any) -> list[Any]:
    return [h.path, h.score, h.bm25, h.relevance, h.coverage, list(h.matched), h.kind]


def record(a: argparse.Namespace) -> None:
    from memgrove import Memory
    from memgrove.tree.base import model_files
    import memgrove

    meaning = [False] + ([True] if not a.no_meaning and model_files.model_available("") else [])
    limits = [int(x) for x in a.limits.split(",") if x]
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"code": str(Path(memgrove.__file__).parent), "dataset": a.dataset, "split": a.split,
                            "tier": a.tier, "questions": a.questions, "limits": limits, "meaning": meaning}) + "\n")
        for cid, conv, questions in conversations(a.dataset, a.split, a.tier):
            if a.conversations and n >= a.conversations:
                break
            n += 1
            questions = questions[:a.questions] if a.questions else questions
            work = Path(tempfile.mkdtemp(prefix="memgrove-identity-"))
            t0 = time.perf_counter()
            try:
                mem = Memory.open(work, create=True, durable=False, semantic_weight=0.0)
                try:
                    mem.ingest(conversation=conv, window=1)
                    tree = mem.tree
                    for p in tree.root.rglob("*"):
                        if p.is_file():
                            os.utime(p, (FIXED_MTIME, FIXED_MTIME))
                    tree._clock = lambda: FIXED_NOW
                    tree.ensure_fresh()
                    start = tree.settings
                    locomo.log(f"{cid}: curated {tree.entry_count()} entries in {time.perf_counter() - t0:.1f} s")
                    for on in meaning:
                        tree.settings = start.replace(semantic_weight=0.5 if on else 0.0)
                        if on:
                            t1 = time.perf_counter()
                            tree.embed()
                            locomo.log(f"  vectors in {time.perf_counter() - t1:.1f} s")
                        t1 = time.perf_counter()
                        for i, q in enumerate(questions):
                            for limit in limits:
                                hits = tree.search(q, limit=limit)
                                f.write(json.dumps({"conv": cid, "q": i, "limit": limit, "meaning": on,
                                                    "hits": [hit_row(h) for h in hits]}) + "\n")
                        locomo.log(f"  meaning {'on' if on else 'off'}: {len(questions)} questions × "
                                   f"{len(limits)} limits in {time.perf_counter() - t1:.1f} s")
                    tree.settings = start
                finally:
                    mem.close()
            finally:
                shutil.rmtree(work, ignore_errors=True)
            f.flush()


def compare(a: argparse.Namespace) -> int:
    def lines(path: str) -> tuple[dict[str, Any], dict[tuple, list]]:
        rows = Path(path).read_text(encoding="utf-8").splitlines()
        head = json.loads(rows[0])
        got = {}
        for r in rows[1:]:
            d = json.loads(r)
            got[(d["conv"], d["q"], d["limit"], d["meaning"])] = d["hits"]
        return head, got

    (ha, old), (hb, new) = lines(a.old), lines(a.new)
    keys = sorted(old.keys() & new.keys(), key=str)
    differ = [k for k in keys if old[k] != new[k]]
    by: dict[str, list[int]] = {}
    for k in keys:
        c = by.setdefault(f"meaning {'on' if k[3] else 'off'}, limit {k[2]}", [0, 0])
        c[0] += 1
        c[1] += k in set(differ)
    print(f"old: {ha['code']}\nnew: {hb['code']}")
    for name, (total, bad) in sorted(by.items()):
        print(f"{name}: {total} searches compared, {bad} differ")
    only = len(old.keys() ^ new.keys())
    print(f"in one file only: {only}; conversations: {len({k[0] for k in keys})}; "
          f"hits compared: {sum(len(old[k]) for k in keys)}")
    for k in differ[:5]:
        print("differs:", k, "\n  old:", old[k][:5], "\n  new:", new[k][:5])
    return 1 if differ or only else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("dataset", choices=("locomo", "beam"))
    r.add_argument("--split", default="test", choices=splits.SPLITS)
    r.add_argument("--tier", default="100K")
    r.add_argument("--questions", type=int, default=0, help="the first N questions of each conversation (0: all)")
    r.add_argument("--conversations", type=int, default=0, help="the first N conversations of the half (0: all)")
    r.add_argument("--limits", default="10,50")
    r.add_argument("--no-meaning", action="store_true")
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    a = ap.parse_args(argv)
    if a.cmd == "record" and os.environ.get("PYTHONHASHSEED") != "0":
        raise SystemExit("run record with PYTHONHASHSEED=0: a sum over a set of terms follows the string hash")
    if a.cmd == "record":
        record(a)
        return 0
    return compare(a)


if __name__ == "__main__":
    sys.exit(main())

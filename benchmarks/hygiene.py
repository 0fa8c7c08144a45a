#!/usr/bin/env python
"""A memory over time: does the scan find what a year of chats repeats, changes and links? (issue 31)

    python benchmarks/hygiene.py                          # 1,000 and 10,000 messages, seed 0
    python benchmarks/hygiene.py --sizes 300 --out /tmp/h.json   # a smoke run

For each size: a seeded stream of chats with known ground truth (``hygiene_stream.generate``:
facts said, repeated word for word, paraphrased, changed one to three times, among small talk and
everyday filler) is curated verbatim into a fresh memory (``Memory.ingest``, one entry per
message), then scanned (``tree.scan.scan``, no LLM). Reported per kind of candidate, against
the truth:

- ``duplicate``: a proposed merge is right when both messages have the same words; recall is over
  the fact statements repeated word for word (each repeat must land in its first statement's group);
- ``near_duplicate``: right when both entries state the same value of the same fact; recall is
  over the paraphrases (each must be grouped with another statement of that value);
- ``superseded``: right when the newer entry states a later value of the same fact; recall is over
  the statements whose fact later took another value (found when the entry, or the one it is
  merged into, is proposed as superseded by a later value);
- ``link``: right when both entries are about the same fact, judged on the links that touch a fact
  (two filler messages sharing words may well be related: those are counted, not judged); recall is
  over the entries of facts said in at least two entries that no other finding joins, once
  duplicates are merged (found when linked to one of them);
- ``archive``: no truth (the stream is curated today; nothing is old): the count, and the count
  when the scan looks 400 days ahead.

``--locomo N`` (3 by default) also scans a memory of the first N LoCoMo conversations, where nothing
is known to repeat or change: the candidates of each kind and a sample of each show what fires
spuriously on real chats.

Also: the entries, the time to curate and to scan, and (for the lead's after-dream comparison)
the questions ``generate`` gives, asked before any dream: how often the current value is in the
first hit for "current" questions, and the old value within the first five for "before" ones.
Results: ``benchmarks/results/hygiene.{json,md}`` (``--out`` to choose).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

from hygiene_stream import Stream, generate  # noqa: E402,F401 - benchmarks/ is not a package; generate: the lead's entry point
from harness.machine import machine_info  # noqa: E402
from harness.report import RESULTS, log, publish  # noqa: E402
from harness.report import ratio as _ratio  # noqa: E402
from harness.resources import scratch_dir  # noqa: E402
from harness.stats import timed  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)

KINDS = ("duplicate", "near_duplicate", "superseded", "link", "archive")
SURE = 0.7   # superseded candidates this sure said their value changed ("now", "moved", "from ... to")


def build(home: Path, stream: Stream, engine: str) -> tuple[Any, float]:
    """A memory holding the stream, curated verbatim; (the open Memory, seconds)."""
    from memgrove import Memory

    mem = Memory.open(home, create=True, durable=False, engine=engine)
    t = time.perf_counter()
    for conv in stream.conversations:
        mem.ingest(conversation=conv)
    return mem, time.perf_counter() - t


def refs_of(mem: Any) -> dict[str, list[str]]:
    """entry path -> the message references its sources hold."""
    out = {}
    for p in mem.tree.entry_paths():
        e = mem.read(p)
        out[p] = [s["ref"] for s in e.sources if s.get("kind") == "conversation" and s.get("ref")]
    return out


def evaluate(cands: list[Any], stream: Stream, refs: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Precision and recall of each kind of candidate against the stream's truth."""
    truth = stream.truth
    path_of = {r: p for p, rs in refs.items() for r in rs}

    def fact(path: str) -> list[dict[str, Any]]:
        return [truth[r] for r in refs.get(path, ()) if r in truth and truth[r]["fact"]]

    by_kind: dict[str, list[Any]] = defaultdict(list)
    for c in cands:
        by_kind[c.kind].append(c)
    # where each entry ends up once duplicates are merged
    kept_of: dict[str, str] = {}
    for c in by_kind["duplicate"] + by_kind["near_duplicate"]:
        for p in c.paths[1:]:
            kept_of[p] = c.paths[0]

    def home(p: str) -> str:
        seen = set()
        while p in kept_of and p not in seen:
            seen.add(p)
            p = kept_of[p]
        return p

    out: dict[str, dict[str, Any]] = {}
    # exact duplicates
    group_of = {p: i for i, c in enumerate(by_kind["duplicate"]) for p in c.paths}
    pairs = [(c.paths[0], p) for c in by_kind["duplicate"] for p in c.paths[1:]]
    right = sum(1 for a, b in pairs if {truth[r]["text"].lower() for r in refs[a] + refs[b]} and
                len({" ".join(truth[r]["text"].lower().split()) for r in refs[a] + refs[b]}) == 1)
    first_ref: dict[tuple[str, int, str], str] = {}
    need = found = 0
    for ref, t in sorted(truth.items(), key=lambda kv: kv[1]["at"]):
        if t["fact"] is None:
            continue
        key = (t["fact"], t["step"], t["text"])
        if key not in first_ref:
            first_ref[key] = ref
            continue
        need += 1
        a, b = path_of.get(first_ref[key]), path_of.get(ref)
        found += a is not None and b is not None and a in group_of and group_of.get(b) == group_of[a]
    out["duplicate"] = {"proposed": len(by_kind["duplicate"]), "pairs": len(pairs),
                        "precision": _ratio(right, len(pairs)), "recall": _ratio(found, need), "truth": need}
    # near duplicates
    pairs = [(c.paths[0], p) for c in by_kind["near_duplicate"] for p in c.paths[1:]]
    right = sum(1 for a, b in pairs if {(t["fact"], t["step"]) for t in fact(a)} & {(t["fact"], t["step"]) for t in fact(b)})
    statements: dict[tuple[str, int], list[str]] = defaultdict(list)
    for ref, t in truth.items():
        if t["fact"] is not None and ref in path_of:
            statements[(t["fact"], t["step"])].append(ref)
    need = found = 0
    for ref, t in truth.items():
        if t["kind"] != "paraphrase" or ref not in path_of:
            continue
        others = {home(path_of[o]) for o in statements[(t["fact"], t["step"])] if truth[o]["text"] != t["text"]}
        if not others:
            continue
        need += 1
        found += home(path_of[ref]) in others
    out["near_duplicate"] = {"proposed": len(by_kind["near_duplicate"]), "pairs": len(pairs),
                             "precision": _ratio(right, len(pairs)), "recall": _ratio(found, need), "truth": need}
    # superseded
    right = sure = sure_right = 0
    closed_by: dict[str, list[str]] = defaultdict(list)
    for c in by_kind["superseded"]:
        new, old = c.paths
        closed_by[old].append(new)
        ok = any(tn["fact"] == to["fact"] and tn["step"] > to["step"] for tn in fact(new) for to in fact(old))
        right += ok
        if c.confidence >= SURE:
            sure += 1
            sure_right += ok
    last_step: dict[str, int] = defaultdict(int)
    for t in truth.values():
        if t["fact"] is not None:
            last_step[t["fact"]] = max(last_step[t["fact"]], t["step"])
    need = found = 0
    for ref, t in truth.items():
        if t["fact"] is None or t["step"] >= last_step[t["fact"]] or ref not in path_of:
            continue
        need += 1
        p = home(path_of[ref])
        found += any(tn["fact"] == t["fact"] and tn["step"] > t["step"] for n in closed_by.get(p, ()) for tn in fact(n))
    out["superseded"] = {"proposed": len(by_kind["superseded"]), "precision": _ratio(right, len(by_kind["superseded"])),
                         "recall": _ratio(found, need), "truth": need,
                         f"proposed_at_{SURE}": sure, f"precision_at_{SURE}": _ratio(sure_right, sure)}
    # links
    # two filler messages sharing words may well be related: only links touching a fact are judged
    judged = [c for c in by_kind["link"] if fact(c.paths[0]) or fact(c.paths[1])]
    right = sum(1 for c in judged if {t["fact"] for t in fact(c.paths[0])} & {t["fact"] for t in fact(c.paths[1])})
    joined = {frozenset((a, b)) for c in cands if c.kind != "link" for a in c.paths for b in c.paths}
    linked: dict[str, set[str]] = defaultdict(set)
    for c in by_kind["link"]:
        linked[c.paths[0]].add(c.paths[1])
        linked[c.paths[1]].add(c.paths[0])
    entries_of: dict[str, set[str]] = defaultdict(set)   # a fact -> the entries saying it, once merged
    for p in refs:
        for t in fact(p):
            entries_of[t["fact"]].add(home(p))
    need = found = 0
    for f, ps in entries_of.items():
        for p in ps:
            mates = {q for q in ps if q != p and frozenset((p, q)) not in joined}
            if mates:
                need += 1
                found += bool(linked[p] & mates)
    out["link"] = {"proposed": len(by_kind["link"]), "judged": len(judged), "precision": _ratio(right, len(judged)),
                   "recall": _ratio(found, need), "truth": need}
    out["archive"] = {"proposed": len(by_kind["archive"]), "precision": None, "recall": None, "truth": None}
    return out


def ask(mem: Any, stream: Stream) -> dict[str, Any]:
    """The questions before any dream: current value in the first hit, old value in the first five."""
    cur = [q for q in stream.questions if q["type"] == "current"]
    before = [q for q in stream.questions if q["type"] == "before"]

    def texts(q: dict[str, Any], k: int) -> list[str]:
        return [mem.read(h.path).body.lower() for h in mem.search(q["question"], limit=k) if h.kind == "entry"]

    first = sum(1 for q in cur if (hits := texts(q, 1)) and q["expected"].lower() in hits[0])
    old_first = sum(1 for q in cur if (hits := texts(q, 1)) and any(o.lower() in hits[0] for o in q["old"])
                    and q["expected"].lower() not in hits[0])
    top5 = sum(1 for q in before if any(q["expected"].lower() in t for t in texts(q, 5)))
    return {"current_questions": len(cur), "current_first_hit": _ratio(first, len(cur)),
            "old_value_first_hit": _ratio(old_first, len(cur)),
            "before_questions": len(before), "before_in_top5": _ratio(top5, len(before))}


def run_size(n: int, seed: int, engine: str, cfg: dict[str, Any]) -> dict[str, Any]:
    from memgrove.tree.hygiene.scan import scan

    stream = generate(n, seed)
    out: dict[str, Any] = {"messages": stream.messages(), "conversations": len(stream.conversations),
                           "facts": len(stream.facts), "questions": len(stream.questions)}
    with scratch_dir(f"memgrove-hygiene-{n}-", cfg, out) as tmp:
        log(f"{n} messages: curating {len(stream.conversations)} chats")
        mem, secs = build(tmp, stream, engine)
        with contextlib.closing(mem):
            out["curate_s"] = round(secs, 1)
            out["entries"] = mem.count()
            cands, scan_s = timed(lambda: scan(mem.tree))
            out["scan_s"] = round(scan_s, 2)
            log(f"  {out['entries']} entries, scanned in {out['scan_s']} s: {len(cands)} candidates")
            refs = refs_of(mem)
            out["kinds"] = evaluate(cands, stream, refs)
            later = mem.tree._clock() + timedelta(days=400)
            out["kinds"]["archive"]["proposed_400_days_on"] = len(scan(mem.tree, kinds="archive", now=later))
            out["before_dream"] = ask(mem, stream)
            out["samples"] = {k: [c.to_dict() for c in cands if c.kind == k][:2] for k in KINDS}
            out["after_dream"] = dream_and_approve(mem, stream)
            log(f"  after dream + approve: {out['after_dream']}")
    return out


def dream_and_approve(mem: Any, stream: Stream) -> dict[str, Any]:
    """``memgrove dream`` without a model (it applies exact duplicates and links, queues the rest),
    then every queued change approved, as a user saying yes to all would; the questions again."""
    run, dream_s = timed(lambda: mem.dream(use_model=False))
    queued = len(mem.review())
    approved, approve_s = timed(lambda: mem.review_approve(all=True))
    out = {"dream_s": round(dream_s, 2), "applied_by_dream": sum(c["status"] == "applied" for c in run["candidates"]),
           "queued": queued, "approve_s": round(approve_s, 2),
           "approved": len(approved["applied"]), "conflicts": len(approved["conflicts"]), "left_in_queue": len(mem.review()),
           "entries": mem.count()}
    out.update(ask(mem, stream))
    return out


def run_locomo(n: int, engine: str, cfg: dict[str, Any], samples_per_kind: int = 3) -> dict[str, Any]:
    """The scan on real chats, where nothing is known to repeat or change: the first ``n`` LoCoMo
    conversations curated verbatim, the candidates of each kind and a sample of each (what fires
    spuriously shows here)."""
    import random

    from harness.datasets import locomo
    from memgrove import Memory
    from memgrove.tree.hygiene.scan import scan

    samples = locomo.load_samples(locomo.default_data())[:n]
    out: dict[str, Any] = {"conversations": [s["sample_id"] for s in samples]}
    with scratch_dir("memgrove-hygiene-locomo-", cfg, out) as tmp:
        with Memory.open(tmp, create=True, durable=False, engine=engine) as mem:
            for s in samples:
                mem.ingest(conversation=locomo.to_conversation(s))
            out["entries"] = mem.count()
            cands, scan_s = timed(lambda: scan(mem.tree))
            out["scan_s"] = round(scan_s, 2)
            out["found"] = {k: sum(c.kind == k for c in cands) for k in KINDS}
            later = mem.tree._clock() + timedelta(days=400)
            out["found"]["archive_400_days_on"] = len(scan(mem.tree, kinds="archive", now=later))
            pick = random.Random(0)
            out["samples"] = {}
            for k in KINDS:
                some = [c for c in cands if c.kind == k]
                pick.shuffle(some)
                out["samples"][k] = [{"confidence": c.confidence, "reason": c.reason,
                                      "texts": [" ".join(mem.read(p).body.split())[:160] for p in c.paths]}
                                     for c in some[:samples_per_kind]]
    return out


def render(report: dict[str, Any]) -> str:
    lines = ["# hygiene: the scan on a generated year of chats", "",
             f"seed {report['config']['seed']}, engine {report['config']['engine']}, "
             f"commit {report['machine'].get('commit')}", ""]
    for run in report["runs"]:
        lines += [f"## {run['messages']:,} messages ({run['conversations']} chats, {run['facts']} facts, "
                  f"{run['entries']:,} entries): curated in {run['curate_s']} s, scanned in {run['scan_s']} s", "",
                  "| kind | proposed | precision | recall | truth |", "|---|---|---|---|---|"]
        for k in KINDS:
            r = run["kinds"][k]
            extra = f" ({r['proposed_400_days_on']} looking 400 days on)" if "proposed_400_days_on" in r else \
                f" ({r['judged']} touching a fact)" if "judged" in r else \
                f" ({r[f'proposed_at_{SURE}']} at confidence >= {SURE}: precision {r[f'precision_at_{SURE}']})" \
                if f"proposed_at_{SURE}" in r else ""
            lines.append(f"| {k} | {r['proposed']}{extra} | {r['precision'] if r['precision'] is not None else 'n/a'} | "
                         f"{r['recall'] if r['recall'] is not None else 'n/a'} | {r['truth'] if r['truth'] is not None else 'n/a'} |")
        b = run["before_dream"]
        lines += ["", f"Before any dream: the current value is in the first hit for {b['current_first_hit']} of "
                  f"{b['current_questions']} \"current\" questions (an old value is, alone, for {b['old_value_first_hit']}); "
                  f"the old value is in the first five for {b['before_in_top5']} of {b['before_questions']} \"before\" questions.", ""]
        a = run.get("after_dream")
        if a:
            lines += [f"After `dream` (no model: {a['applied_by_dream']} applied, {a['queued']} queued, {a['dream_s']} s) "
                      f"and approving the queue ({a['approved']} approved, {a['conflicts']} conflicts, {a['approve_s']} s): "
                      f"{a['entries']:,} entries; the current value is in the first hit for {a['current_first_hit']} "
                      f"(an old value alone for {a['old_value_first_hit']}); the old value is in the first five for "
                      f"{a['before_in_top5']} of the \"before\" questions.", ""]
    lo = report.get("locomo")
    if lo:
        f = lo["found"]
        lines += [f"## LoCoMo, {len(lo['conversations'])} conversations ({lo['entries']:,} entries), scanned in "
                  f"{lo['scan_s']} s", "",
                  "Found: " + ", ".join(f"{k} {f[k]}" for k in KINDS)
                  + f" ({f['archive_400_days_on']} archive candidates looking 400 days on).", ""]
        for k in KINDS:
            for smp in lo["samples"][k]:
                lines.append(f"- {k} ({smp['confidence']}): " + " / ".join(repr(t) for t in smp["texts"]))
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engine", default="whoosh", choices=["whoosh", "tantivy"])
    ap.add_argument("--out", type=Path, default=RESULTS / "hygiene.json")
    ap.add_argument("--keep", action="store_true", help="keep the built memories (their folders are in the report)")
    ap.add_argument("--locomo", type=int, default=3, metavar="N",
                    help="also scan the first N LoCoMo conversations (0: none; the data: benchmarks/locomo.py)")
    a = ap.parse_args(argv)
    cfg = {"sizes": a.sizes, "seed": a.seed, "engine": a.engine, "keep": a.keep, "locomo": a.locomo}
    report: dict[str, Any] = {"config": cfg, "argv": list(argv if argv is not None else sys.argv[1:]),
                              "runs": [run_size(n, a.seed, a.engine, cfg) for n in a.sizes]}
    if a.locomo:
        report["locomo"] = run_locomo(a.locomo, a.engine, cfg)
    report["machine"] = machine_info(a.seed)
    return publish(report, render(report), a.out.with_suffix(""))


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Changed facts in chats: is the current value what the user reads first, and does ``dream`` find the changes?

The set (``benchmarks/data/changed_facts/``, written for this benchmark; ``build.py`` there writes it
from its sources and checks it): six conversations (team chats, a user with an assistant), January to
August 2026, in which 45 facts change inside ordinary multi-sentence messages (8 of them twice), beside
facts that never change and values restated unchanged. Per fact a "now" question (the current value)
and a "before" question (an earlier value). Dev and test halves by conversation (each source's ``SPLIT``).

Each conversation is curated into a fresh memory as ``memgrove curate --conversation`` does (verbatim
curator, one entry per message, no LLM), its vectors computed (``memgrove reindex``'s warm-up), then:

- every question is asked with ``Memory.query`` (the answer without a model). A hit: the asked value
  stands in the **first sentence** of ``answer`` (the sentence the user reads, speaker and day left
  aside); "old first": the first sentence gives another value of the fact and not the asked one.
  Beside it, the top-3 entries: "found" when an entry stating the asked value is among them, so a
  miss reads as "not found" or "found, not picked";
- ``dream --dry-run`` (``Memory.dream(dry_run=True, use_model=False)``): its ``superseded``
  proposals against the gold (``supersessions.jsonl``: every message stating a value -> the first
  message stating the next value). A proposal is right when its older entry states a value of a
  fact and its newer entry a later value of the same fact; recall is the share of gold pairs whose
  older message is proposed as superseded by a later value of that fact; false proposals are the
  share of proposals that are right for no fact.

    python benchmarks/changed_facts.py                 # both halves -> results/changed_facts.{json,md}
    python benchmarks/changed_facts.py --split dev --no-publish

Raw per-question rows and proposals go to ``benchmarks/runs/changed_facts-<split>.jsonl``.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "changed_facts"
RUNS = HERE / "runs"

from harness.report import RESULTS, log, pct, publish, table  # noqa: E402

ARMS = ("as curated", "approved")    # asked right after curating, then after approving every superseded proposal
_ABBREV = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|vs|e\.g|i\.e|etc)\.$")
_SAID = re.compile(r"\s*\([^()]*\d{4}[^()]*\)\s*$")      # "(Dana, 23 March 2026)" after the quote


def load() -> tuple[list[dict], list[dict], list[dict]]:
    convs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((DATA / "conversations").glob("*.json"))]
    qs = [json.loads(line) for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    gold = [json.loads(line) for line in (DATA / "supersessions.jsonl").read_text(encoding="utf-8").splitlines()
            if line]
    return convs, qs, gold


def holds(text: str, value: str) -> bool:
    """``value`` stands in ``text`` on token boundaries ("6" not in "16", "Tuesday" in "Tuesdays";
    "$8.25" as "8.25" too)."""
    v = value.lower().lstrip("$")
    plural = "s?" if v[-1:].isalpha() else ""
    return re.search(r"(?<![\w.,])" + re.escape(v) + plural + r"(?![\w]|[.,]\d)", text.lower()) is not None


def first_sentence(answer: str) -> str:
    """The first sentence of a shown answer, the speaker and day it ends with left aside."""
    text = _SAID.sub("", " ".join(answer.split()))
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", text)
    out = parts[0] if parts else ""
    for p in parts[1:]:
        if not _ABBREV.search(out):
            break
        out += " " + p
    return out


def ask(mem: Any, q: dict, top: int = 3) -> dict:
    ans = mem.query(q["question"])
    first = first_sentence(ans.answer or "")
    refs = [[r.split("#", 1)[-1] for r in e.get("refs") or []] for e in ans.evidence[:top]]
    stating = set(q["answer_messages"])
    found = [i for i, ids in enumerate(refs) if stating & set(ids)]
    hit = holds(first, q["answer"])
    other = [v for v in q["wrong"] if holds(first, v)]
    return {"qid": q["qid"], "split": q["split"], "kind": q["kind"], "question": q["question"], "gold": q["answer"],
            "hit": hit, "other_first": bool(other) and not hit, "other_values": other,
            "found_top3": bool(found), "found_rank": found[0] + 1 if found else None,
            "first_sentence": first, "answer": ans.answer, "tier": ans.tier,
            "top3": [{"path": e["path"], "messages": ids, "text": e.get("text", "")[:240]}
                     for e, ids in zip(ans.evidence[:top], refs)]}


def score_dream(props: list[dict], facts: dict[str, list[dict]], gold: list[dict]) -> tuple[list[dict], list[dict]]:
    """Each proposal marked with the facts it is right for; each gold pair marked found or not."""
    def right_for(older: set[str], newer: set[str]) -> list[str]:
        out = []
        for fid, history in facts.items():
            idx_old = [i for i, h in enumerate(history) if older & set(h["messages"])]
            idx_new = [i for i, h in enumerate(history) if newer & set(h["messages"])]
            if idx_old and idx_new and min(idx_old) < max(idx_new):
                out.append(fid)
        return out

    for p in props:
        p["right_for"] = right_for(set(p["older_messages"]), set(p["newer_messages"]))
    for g in gold:
        g["found"] = any(g["fact_id"] in p["right_for"] and g["older"] in p["older_messages"] for p in props)
    return props, gold


BASELINE_REV = "c584502"     # main before issue 44: dream compared whole one-line messages
_BASELINE_MODULES = ("scan_corpus", "statement_values", "find_superseded")


@functools.lru_cache(maxsize=1)
def baseline_finder(rev: str = BASELINE_REV) -> Any:
    """``find_superseded`` and ``read_corpus`` as they are at ``rev`` (git), loaded beside today's
    (``memgrove.tree.hygiene._base_*``), with the overlap setting's default there: the dream of
    before, in the same run."""
    import subprocess
    import types

    loaded = {}
    for name in _BASELINE_MODULES:
        src = subprocess.run(["git", "show", f"{rev}:tree/hygiene/{name}.py"], cwd=HERE.parent, check=True,
                             capture_output=True, text=True).stdout
        for other in _BASELINE_MODULES:
            src = src.replace(f"from .{other} import", f"from ._base_{other} import")
        mod = types.ModuleType(f"memgrove.tree.hygiene._base_{name}")
        mod.__package__ = "memgrove.tree.hygiene"
        sys.modules[mod.__name__] = mod
        exec(compile(src, f"{rev}:tree/hygiene/{name}.py", "exec"), mod.__dict__)
        loaded[name] = mod
    settings = subprocess.run(["git", "show", f"{rev}:tree/settings.py"], cwd=HERE.parent, check=True,
                              capture_output=True, text=True).stdout
    overlap = float(re.search(r"dream_supersede_overlap: float = setting\(([\d.]+)", settings).group(1))
    return loaded["find_superseded"].find_superseded, loaded["scan_corpus"].read_corpus, overlap


def baseline_proposals(tree: Any) -> list[tuple[str, str]]:
    """(older, newer) paths ``dream --dry-run`` proposed as superseded at ``BASELINE_REV``."""
    find, read, overlap = baseline_finder()
    return [(c.paths[1], c.paths[0]) for c in find(read(tree), tree.settings.replace(dream_supersede_overlap=overlap))]


def run_conversation(conv: dict, qs: list[dict], gold: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    from memgrove import Memory
    from memgrove.tree.hygiene.scan import scan
    from memgrove.tree.hygiene.scan_corpus import read_corpus

    work = Path(tempfile.mkdtemp(prefix="memgrove-changed-facts-"))
    try:
        with Memory.open(work / "curated", create=True, durable=False) as mem:
            mem.ingest(conversation=conv)
            mem.embed()
            found = mem.dream(dry_run=True, use_model=False)["candidates"]
            # a dream row names the entries; the scan it ran says which statements and values (same tree, same list)
            said = {tuple(c.paths): c for c in scan(mem.tree, kinds="superseded")}
            corpus = read_corpus(mem.tree)
            before = baseline_proposals(mem.tree)
            rows = [{**ask(mem, q), "arm": ARMS[0]} for q in qs]
        msgs = {it.path: sorted(m.split("#", 1)[-1] for m in it.messages) for it in corpus.items}
        props = []
        for c in found:
            if c["kind"] != "superseded":
                continue
            newer, older = c["paths"][:2]
            ev = said[tuple(c["paths"])].evidence if tuple(c["paths"]) in said else {}
            props.append({"conversation": conv["id"], "older": older, "newer": newer,
                          "older_messages": msgs.get(older, []), "newer_messages": msgs.get(newer, []),
                          "old_value": ev.get("old_value"), "new_value": ev.get("new_value"),
                          "old_statement": ev.get("old_statement"), "new_statement": ev.get("new_statement"),
                          "statements": len(ev.get("statements") or [1]), "whole_entry": ev.get("whole_entry"),
                          "op": (c.get("ops") or [{}])[0].get("op"), "confidence": c.get("confidence")})
        props += [{"conversation": conv["id"], "baseline": BASELINE_REV, "older": o, "newer": n,
                   "older_messages": msgs.get(o, []), "newer_messages": msgs.get(n, [])} for o, n in before]
        # the same questions on the same curation with every superseded proposal approved (what approving
        # them all in `memgrove review` writes), in a memory of its own: the first arm's questions leave
        # retrieval signals that would rank this arm's entries differently
        with Memory.open(work / "approved", create=True, durable=False) as mem:
            mem.ingest(conversation=conv)
            mem.embed()
            for c in scan(mem.tree, kinds="superseded"):
                mem.curate([dict(op) for op in c.ops])
            rows += [{**ask(mem, q), "arm": ARMS[1]} for q in qs]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    facts = {q["fact_id"]: q["history"] for q in qs if q["kind"] == "now"}
    now = [p for p in props if "baseline" not in p]
    base = [p for p in props if "baseline" in p]
    now, gold = score_dream(now, facts, [dict(g) for g in gold])
    base, gold_base = score_dream(base, facts, [dict(g) for g in gold])
    for g, b in zip(gold, gold_base):
        g["found_baseline"] = b["found"]
    return rows, now + base, gold


def summarize(rows: list[dict], props: list[dict], gold: list[dict]) -> dict:
    def share(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    out: dict[str, Any] = {}
    for arm, kind in [(a, k) for a in ARMS for k in ("now", "before")]:
        rs = [r for r in rows if r["kind"] == kind and r["arm"] == arm]
        out[kind if arm == ARMS[0] else f"{kind} ({arm})"] = {"questions": len(rs), "first_sentence": share([r["hit"] for r in rs]),
                     "other_value_first": share([r["other_first"] for r in rs]),
                     "found_top3": share([r["found_top3"] for r in rs]),
                     "found_not_picked": share([r["found_top3"] and not r["hit"] for r in rs]),
                     "not_found": share([not r["found_top3"] and not r["hit"] for r in rs])}
    facts = {g["fact_id"] for g in gold}
    for key, found, ps in (("dream", "found", [p for p in props if "baseline" not in p]),
                           (f"dream at {BASELINE_REV}", "found_baseline", [p for p in props if "baseline" in p])):
        out[key] = {"gold_pairs": len(gold), "recall": share([g[found] for g in gold]), "facts": len(facts),
                    "facts_found": share([any(g[found] for g in gold if g["fact_id"] == f) for f in facts]),
                    "proposals": len(ps), "false": sum(1 for p in ps if not p["right_for"]),
                    "false_share": share([not p["right_for"] for p in ps])}
    return out


def render(rep: dict) -> str:
    lines = ["# Changed facts: the current value first, and what `dream` finds", "",
             f"Command: `{rep['command']}` · wall time {rep['wall_s']:.0f} s · {rep['set']}", "",
             "First sentence the user reads (`Memory.query`, no model) holds the asked value; top-3 entries beside it.",
             ""]
    rows = []
    for split, s in rep["splits"].items():
        for kind in [k for k in s if not k.startswith("dream")]:
            k = s[kind]
            rows.append([split, kind, k["questions"], pct(k["first_sentence"]), pct(k["other_value_first"]),
                         pct(k["found_top3"]), pct(k["found_not_picked"]), pct(k["not_found"])])
    lines += table(["split", "question", "n", "value in 1st sentence", "another value first", "found in top 3",
                    "found, not picked", "not found"], rows, "llrrrrrr")
    lines += ["", "`dream --dry-run` superseded proposals against the gold supersessions:", ""]
    lines += table(["split", "dream", "gold pairs", "recall", "facts found", "proposals", "false proposals"],
                   [[split, "today" if key == "dream" else key.removeprefix("dream "), d["gold_pairs"],
                     pct(d["recall"]), pct(d["facts_found"]), d["proposals"], f"{d['false']} ({pct(d['false_share'])})"]
                    for split, s in rep["splits"].items() for key, d in s.items() if key.startswith("dream")],
                   "llrrrrr")
    lines += ["", "- *another value first*: the first sentence gives an older (or, for \"before\", a newer) value of the "
              "fact and not the one asked; *found in top 3*: an entry stating the asked value is among the first "
              "three; *found, not picked*: found, but its value is not in the first sentence.",
              "- *(approved)*: the same curation in a fresh memory with every superseded proposal approved. A "
              "proposal about a message that says more than what changed records the statement "
              "(`supersededStatements`) and leaves the entry current; the answer does not read that record yet, so "
              "only whole-entry closures can change these rows.",
              "- *recall*: gold pairs (every message stating a value -> the first stating the next) whose older "
              "message is proposed as superseded by a later value of that fact; *false*: proposals right for no "
              "fact. Dev was tuned on; the test half was also read while developing (its failures, not its "
              "thresholds), so it is not a clean held-out number."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="all")
    ap.add_argument("--conversations", nargs="*", help="only these conversation ids")
    ap.add_argument("--no-publish", action="store_true", help="write only the raw rows to benchmarks/runs/")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    convs, qs, gold = load()
    splits = ("dev", "test") if args.split == "all" else (args.split,)
    rep: dict[str, Any] = {"command": " ".join(["python benchmarks/changed_facts.py", *(argv or sys.argv[1:])]),
                           "set": f"{len(convs)} conversations, {len(qs) // 2} changed facts, {len(gold)} gold supersessions",
                           "splits": {}}
    RUNS.mkdir(exist_ok=True)
    for split in splits:
        rows, props, golds = [], [], []
        for conv in convs:
            cq = [q for q in qs if q["conversation"] == conv["id"]]
            if not cq or cq[0]["split"] != split or (args.conversations and conv["id"] not in args.conversations):
                continue
            log(f"{split}: {conv['id']} ({len(conv['messages'])} messages, {len(cq)} questions)")
            r, p, g = run_conversation(conv, cq, [x for x in gold if x["conversation"] == conv["id"]])
            rows += r
            props += p
            golds += g
        with (RUNS / f"changed_facts-{split}.jsonl").open("w", encoding="utf-8") as f:
            for rec in [{"row": "question", **r} for r in rows] + [{"row": "proposal", **p} for p in props] + \
                    [{"row": "gold", **g} for g in golds]:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        rep["splits"][split] = summarize(rows, props, golds)
    rep["wall_s"] = round(time.perf_counter() - started, 1)
    return publish(rep, render(rep), None if args.no_publish else RESULTS / "changed_facts")


if __name__ == "__main__":
    main()

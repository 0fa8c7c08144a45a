#!/usr/bin/env python
"""Answers first on BEAM: does the first sentence the user reads answer, by question type?

    python benchmarks/answer_first_beam.py               # the 100K tier, dev and test halves
    python benchmarks/answer_first_beam.py --split dev   # the dev half only (benchmarks/splits.py)
    python benchmarks/answer_first_beam.py --chats 2     # quicker

Each chat is curated as ``benchmarks/beam.py`` curates it (its shortened file where BEAM
ships one; verbatim curator, one entry per message) into a fresh memory, and every question
is asked as a user asks it: ``Memory.query``, no model, every setting at its default (every
entry's vector computed after curating, as in ``answer_first.py``). The
first sentence is ``answer_first.first_sentence`` (the answer's first sentence with its
attribution, who said it and when). BEAM's gold answers are written by an LLM, long and
abstractive ("I notice you've mentioned contradictory information …"), so a whole gold
answer is almost never quoted; two rules, each saying what it counts:

- **value** — the gold's short answer: the values the gold answer (``answer`` /
  ``ideal_answer`` / ``ideal_response`` / ``ideal_summary``) states that stand in the
  question's evidence messages as written (for knowledge_update, in its ``updated_info``
  messages: the current value). A value is a token holding a digit ("250ms", "1,200", "78%",
  "4:30"; a month and its day are one value, "April 22", the year dropped), or a number word
  from two to twelve; matched normalised on word boundaries (``harness.metrics``:
  lower-cased, punctuation removed, so "1,200" is "1200"); "250ms" not in the evidence
  falls back to "250". A question counts only when at least one value stands in its
  evidence ("values" column): most knowledge_update questions, few summaries. A hit = every
  value in the text.
- **evidence** — the first sentence (without who and when) is a sentence of one of the
  question's evidence messages (``source_chat_ids``; at least 3 words, normalised, inside
  the message's text). For knowledge_update, "current" = of an ``updated_info`` message,
  and **old first** = of an ``original_info`` message only (the old value led); for
  contradiction_resolution "current" = of the later statement (by message order), old first
  = of the earlier one (its gold asks which is right: either statement is current + old
  first; a quote of both, the ideal, is not measured).

Beside each, where the gold was: the values (or an evidence message) in the answer's top 3
entries, or in any chosen entry (reachable); a miss is "not found" or "found, not picked".
Headline per type: **value** where the type has a short answer (knowledge_update,
information_extraction, temporal_reasoning, multi_session_reasoning, event_ordering);
**evidence** for contradiction_resolution (no value to quote: the answer is to point at
the statements), instruction_following and preference_following (no gold answer; the
evidence is the instruction) and summarization. Abstention has no evidence: the share
answered "not in memory" is given. Per-question records go to
``benchmarks/runs/<the report's name>_questions.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import splits  # noqa: E402
from answer_first import RUNS, answer_views, commit, embed, rate, semantic_weight  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.datasets.beam import (  # noqa: E402
    DEFAULT_TIER, TYPES, chat_dirs, chat_file, default_data, evidence_ids, messages_of, to_conversation)
from harness.report import log, table, write  # noqa: E402
from harness.retrievers import env_without  # noqa: E402

RESULTS = HERE / "results"
HALVES = ("dev", "test", "all")
CURRENT = ("knowledge_update", "contradiction_resolution")
BY_EVIDENCE = ("contradiction_resolution", "instruction_following", "preference_following", "summarization")
GOLD_KEYS = ("answer", "ideal_answer", "ideal_response", "ideal_summary")
NOT_IN_MEMORY = "not in memory"

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH = set(_MONTHS) | {m[:3] for m in _MONTHS} | {"sept"}
_NUMBER_WORDS = {"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
_DAY = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?$")
_YEAR = re.compile(r"^(19|20)\d\d$")


def gold_of(qa: dict[str, Any]) -> str:
    return next((str(qa[k]) for k in GOLD_KEYS if qa.get(k)), "")


def values_of(gold: str) -> list[list[str]]:
    """The values a gold answer states, each as its forms to try (normalised, best first):
    ``[["250ms", "250"], ["april 22"]]``."""
    words = rm.normalize_text(gold).split()
    out: list[list[str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        day = _DAY.match(words[i + 1]) if i + 1 < len(words) and w in _MONTH else None
        if day:
            out.append([f"{w} {day.group(1)}"])
            i += 3 if i + 2 < len(words) and _YEAR.match(words[i + 2]) else 2
            continue
        if any(c.isdigit() for c in w):
            digits = re.match(r"^\d+", w)
            out.append([w] + ([digits.group(0)] if digits and digits.group(0) != w else []))
        elif w in _NUMBER_WORDS:
            out.append([w])
        i += 1
    return out


def in_text(value: str, text_norm: str) -> bool:
    return f" {value} " in f" {text_norm} "


def key_values(gold: str, evidence_texts: list[str]) -> list[str]:
    """The gold's values that stand in the evidence (the first form of each that does), deduplicated."""
    ev = [rm.normalize_text(t) for t in evidence_texts]
    out: list[str] = []
    for forms in values_of(gold):
        found = next((f for f in forms if any(in_text(f, e) for e in ev)), None)
        if found and found not in out:
            out.append(found)
    return out


def from_messages(sentence: str, texts: list[str]) -> bool:
    s = rm.normalize_text(sentence)
    return len(s.split()) >= 3 and any(s in rm.normalize_text(t) for t in texts)


def ids_of(raw: Any, *keys: str) -> list[str]:
    """Message ids of ``source_chat_ids`` (of ``keys`` when it is a dict and they are given)."""
    if isinstance(raw, dict) and keys:
        return evidence_ids([raw.get(k) for k in keys])
    return evidence_ids(raw)


def message_ids(refs: list[list[str]], chat: str) -> list[set[str]]:
    return [{r.rpartition("#")[2] for r in rs if r.rpartition("#")[0] == chat} for rs in refs]


def current_and_old(qtype: str, raw: Any, texts: dict[str, str]) -> tuple[list[str], list[str]]:
    """The evidence messages that hold the answer now, and those that held it before: for
    knowledge_update its ``updated_info`` and ``original_info``; for contradiction_resolution the
    later statement and the earlier one (by message order: BEAM's ``first_statement`` is not always
    the earlier); for the other types every evidence message, and none."""
    if qtype == "knowledge_update":
        current = [i for i in ids_of(raw, "updated_info") if i in texts]
        return current, [i for i in ids_of(raw, "original_info") if i in texts and i not in current]
    if qtype == "contradiction_resolution" and isinstance(raw, dict):
        said = [ids for ids in ([i for i in ids_of(raw, k) if i in texts] for k in raw) if ids]
        if len(said) >= 2:
            said.sort(key=lambda ids: max(int(i) if i.isdigit() else -1 for i in ids))
            current = said[-1]
            return current, [i for ids in said[:-1] for i in ids if i not in current]
    return [i for i in ids_of(raw) if i in texts], []


def score(qtype: str, qa: dict[str, Any], views: dict[str, Any], texts: dict[str, str],
          chat: str) -> dict[str, Any]:
    """One question's hits: value (first, top3, reachable), evidence (first, top3, reachable),
    and where an answer changed (``current_and_old``), the old one first."""
    raw = qa.get("source_chat_ids")
    ev = [i for i in ids_of(raw) if i in texts]
    current, old = current_and_old(qtype, raw, texts)
    gold = gold_of(qa)
    values = key_values(gold, [texts[i] for i in current]) if gold and current else []
    firsts = {"first": views["first"], "top3": views["top3"], "reachable": views["reachable"]}
    rec: dict[str, Any] = {"values": values, "evidence": ev, "current": current, "old": old,
                           "refs": [sorted(h) for h in message_ids(views["refs"], chat)],
                           "sentence": views["sentence"][:500],
                           "not_in_memory": NOT_IN_MEMORY in views["answer"].lower()}
    if values:
        norm = {k: rm.normalize_text(v) for k, v in firsts.items()}
        rec["value"] = {k: all(in_text(v, n) for v in values) for k, n in norm.items()}
    if current:
        held = message_ids(views["refs"], chat)
        rec["from_evidence"] = {"first": from_messages(views["sentence"], [texts[i] for i in current]),
                                "top3": any(set(current) & h for h in held[:3]),
                                "reachable": any(set(current) & h for h in held)}
        if old:
            rec["old_first"] = from_messages(views["sentence"], [texts[i] for i in old]) \
                and not rec["from_evidence"]["first"]
    return rec


def run(chat_paths: list[Path], tier: str, full: bool, settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    settings = settings or {}
    from memgrove import Memory

    records: list[dict[str, Any]] = []
    for d in chat_paths:
        chat = f"beam-{tier.lower()}-{d.name}"
        msgs = messages_of(json.loads(chat_file(d, full).read_text(encoding="utf-8")))
        texts = {m.id: m.text for m in msgs}
        probing = json.loads((d / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
        work = Path(tempfile.mkdtemp(prefix="memgrove-answer-first-beam-"))
        mem = Memory.open(work, create=True, durable=False, **settings)
        t0 = time.perf_counter()
        try:
            mem.ingest(conversation=to_conversation(chat, msgs), window=1)
            embed(mem)
            with env_without("MEMGROVE_MODEL"):
                for qtype in TYPES:
                    for n, qa in enumerate(probing.get(qtype) or []):
                        views = answer_views(mem, str(qa["question"]))
                        records.append({"chat": d.name, "qtype": qtype, "n": n, "question": qa["question"],
                                        "gold": gold_of(qa)[:300], "answer": views["answer"][:500],
                                        "first": views["first"][:500], "tier": views["tier"],
                                        **score(qtype, qa, views, texts, chat)})
        finally:
            mem.close()
            shutil.rmtree(work, ignore_errors=True)
        log(f"{chat}: {len(msgs)} messages, {sum(1 for r in records if r['chat'] == d.name)} questions "
            f"in {time.perf_counter() - t0:.1f} s")
    return records


KINDS = ("not found", "in top 3, not picked", "in entries 4–5, not picked")


def kind(hit: dict[str, bool]) -> str:
    if hit["first"]:
        return "hit"
    if hit["top3"]:
        return KINDS[1]
    return KINDS[2] if hit["reachable"] else KINDS[0]


def tally(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in ("all", *TYPES):
        mine = [r for r in records if t == "all" or r["qtype"] == t]
        row: dict[str, Any] = {"questions": len(mine),
                               "not_in_memory": rate([r["not_in_memory"] for r in mine])}
        for rule in ("value", "from_evidence"):
            scored = [r[rule] for r in mine if rule in r]
            row[rule] = {"questions": len(scored), **{k: rate([h[k] for h in scored])
                                                     for k in ("first", "top3", "reachable")},
                         "misses": {k: sum(1 for h in scored if kind(h) == k) for k in KINDS}}
        olds = [r["old_first"] for r in mine if "old_first" in r]
        row["old_first"] = {"questions": len(olds), "rate": rate(olds)}
        out[t] = row
    return out


def headline(t: str) -> str:
    return "from_evidence" if t in BY_EVIDENCE else "value"


def report_of(records: list[dict[str, Any]], tier: str, seconds: float) -> dict[str, Any]:
    half = {c: h for h in ("dev", "test") for c in splits.members("beam", h, tier=tier)}
    by_half = {}
    for h in HALVES:
        mine = [r for r in records if h == "all" or half.get(r["chat"]) == h]
        if mine:
            by_half[h] = {"chats": sorted({r["chat"] for r in mine}, key=int), "types": tally(mine)}
    tiers: dict[str, int] = defaultdict(int)
    for r in records:
        tiers[str(r["tier"])] += 1
    return {"benchmark": "answer_first_beam", "tier": tier, "questions": len(records), "seconds": round(seconds, 1),
            "tiers": dict(sorted(tiers.items())), "headline": {t: headline(t) for t in TYPES}, "halves": by_half}


def _p(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}%"


def render(rep: dict[str, Any]) -> str:
    lines = [f"# Answers first on BEAM {rep['tier']}: the first sentence the user reads, by question type", "",
             f"{rep['questions']} questions, {rep['seconds']} s; answers by tier "
             + ", ".join(f"{t}: {n}" for t, n in rep["tiers"].items())
             + f". Made by `{rep.get('command')}` at {rep.get('commit')} (the rules in its docstring), ranking "
             f"by meaning {rep.get('meaning', {}).get('semantic_weight')}. "
             "**value**: the gold's values that stand in the evidence (knowledge_update: the updated "
             "messages), all in the text; **evidence**: the first sentence is a sentence of an evidence "
             "message (knowledge_update: an updated one; contradiction_resolution: the later statement; **old first**: "
             "a sentence of the original / earlier one instead). Headline (bold): value, or evidence for "
             + ", ".join(BY_EVIDENCE) + ".", ""]
    for h, b in rep["halves"].items():
        lines += [f"## {h} half (chats {', '.join(b['chats'])})" if h != "all" else "## both halves", ""]
        rows = []
        for t in TYPES:
            r = b["types"][t]
            v, e = r["value"], r["from_evidence"]
            bold = headline(t) if t != "abstention" else ""
            cell = (lambda rule, x: f"**{x}**" if rule == bold else x)
            rows.append([t, r["questions"], v["questions"], cell("value", _p(v["first"])), _p(v["top3"]),
                         _p(v["reachable"]), e["questions"], cell("from_evidence", _p(e["first"])), _p(e["top3"]),
                         _p(e["reachable"]),
                         _p(r["old_first"]["rate"]) if r["old_first"]["questions"] else "",
                         _p(r["not_in_memory"])])
        lines += table(["type", "n", "values n", "value in 1st sentence", "in top 3", "in chosen",
                        "evidence n", "1st sentence from evidence", "in top 3", "in chosen",
                        "old first", "'not in memory'"], rows)
        lines += ["", "First sentence misses (headline rule), by where the gold was:", ""]
        lines += table(["type", *KINDS], [[t, *(b["types"][t][headline(t)]["misses"][k] for k in KINDS)]
                                          for t in TYPES if t != "abstention"])
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="the BEAM directory (default: as benchmarks/beam.py)")
    ap.add_argument("--tier", default=DEFAULT_TIER, help=f"100K or 500K (default {DEFAULT_TIER})")
    ap.add_argument("--split", default="all", choices=splits.SPLITS, help="the half to run (default: both)")
    ap.add_argument("--chats", type=int, default=None, help="only the first N chats of the half")
    ap.add_argument("--full-chats", action="store_true", help="chat.json even where BEAM ships a shortened file")
    ap.add_argument("--out", type=Path, default=None, help="the report, without .json/.md "
                    "(default results/answer_first_beam, with the tier when not 100K)")
    ap.add_argument("--semantic-weight", type=float, default=None,
                    help="ranking by meaning (default: the product's, 0.5 where the model is installed; 0: off)")
    ap.add_argument("--no-write", action="store_true", help="print the report only")
    ap.add_argument("--from-records", type=Path, nargs="+", default=None, metavar="JSONL",
                    help="no run: the report of the per-question records of earlier runs (the halves run apart)")
    a = ap.parse_args(argv)
    code = commit()     # the code the run loads, before anything is edited while it runs
    t0 = time.perf_counter()
    if a.from_records:
        records = [json.loads(line) for f in a.from_records for line in f.read_text(encoding="utf-8").splitlines()
                   if line.strip()]
    else:
        root = (a.data or default_data()).resolve()
        dirs = [d for d in chat_dirs(root, a.tier) if splits.in_split("beam", d.name, a.split, a.tier)][: a.chats]
        records = run(dirs, a.tier, a.full_chats,
                      {} if a.semantic_weight is None else {"semantic_weight": a.semantic_weight})
    rep = report_of(records, a.tier, time.perf_counter() - t0)
    rep["command"] = "python benchmarks/answer_first_beam.py " + " ".join(argv if argv is not None else sys.argv[1:]).strip()
    rep["meaning"] = {"semantic_weight": semantic_weight() if a.semantic_weight is None else a.semantic_weight}
    rep["commit"] = code
    md = render(rep)
    print(md)
    RUNS.mkdir(exist_ok=True)
    out = a.out or RESULTS / ("answer_first_beam" + ("" if a.tier == DEFAULT_TIER else f"_{a.tier.lower()}"))
    if not a.from_records:
        (RUNS / f"{out.name}_questions.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if not a.no_write:
        write(out, rep, md)
    return rep


if __name__ == "__main__":
    main()

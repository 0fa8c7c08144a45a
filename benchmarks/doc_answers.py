#!/usr/bin/env python
"""Answers on real documentation: is the gold answer in the first sentence the user reads?

    python benchmarks/doc_answers.py                 # both halves, the table to benchmarks/runs/
    python benchmarks/doc_answers.py --split dev     # choose on dev
    python benchmarks/doc_answers.py --split test --results   # the report: benchmarks/results/doc_answers.{json,md}
    python benchmarks/doc_answers.py --check         # only check the set (every answer stands in its page)

The set (``benchmarks/data/docqa/``, SOURCE.md): pages of two projects' documentation the team
did not write (Poetry, uv; MIT), committed unchanged, and ``questions.jsonl``: questions asked as
a user would, each with a short answer that stands verbatim (modulo case, punctuation and spaces)
in its page, other verbatim forms (``alternatives``), the page, the section and the kind of answer.
Dev and test halves are split by page: pages in sorted order alternate dev, test, dev ...

The pages are curated as a user would: copied to ``docs/`` in a fresh temporary project, then
``Memory.ingest(files=["docs"])`` -- the verbatim curator, no LLM, the embedded default -- and
every entry's vector computed before the first question (``Memory.embed``), so a run does not
depend on how far the background embedder got. Each question is then asked as the README shows:

- **first sentence**: ``Memory.query(question).answer`` (without a model, the sentence the
  answer step picks), its first line cut at the first sentence end -- what the user reads first;
- **top 3**: ``Memory.search(question, limit=3)``, each entry read whole (title, summary, body).

A hit = ``harness.metrics.answer_in_text`` (lower-cased, punctuation removed, on word
boundaries) for the answer or one of its alternatives, each markdown link read as its text
(``readable``). Each question is "answered" (gold in the first sentence), "found, not picked"
(gold in a top-3 entry, not in the first sentence) or "not found". Reported per half: the share
answered; the share found in the top 3; among those found, the share answered; beside them the
gold anywhere in the answer's text and in the evidence it quotes. Nothing is random (no sampling;
questions in file order): two runs give the same table.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

from harness import metrics as rm  # noqa: E402
from harness.report import log, table  # noqa: E402

DATA = HERE / "data" / "docqa"
QUESTIONS = DATA / "questions.jsonl"
RUNS = HERE / "runs"
RESULTS = HERE / "results"
FIELDS = ("id", "question", "answer", "alternatives", "page", "section", "kind", "split")
STATUSES = ("answered", "found, not picked", "not found")

# a sentence ends at . ! ? followed by space and something that starts a sentence
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*_])")
_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*(?:\s[^)]*)?\)")


# -- the set --------------------------------------------------------------------

def pages() -> list[str]:
    """Every documentation page of the set, relative to DATA, sorted (SOURCE.md is not a page)."""
    return sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.md") if p.parent != DATA)


def page_split(page: str) -> str:
    """Pages in sorted order alternate dev, test."""
    return ("dev", "test")[pages().index(page) % 2]


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def golds(q: dict[str, Any]) -> list[str]:
    return [q["answer"], *q.get("alternatives", [])]


def readable(text: str) -> str:
    """A markdown link as a reader sees it: its text, without its target. (Removing punctuation would
    glue "[`nox-poetry`](https://github.com/...)" into one word no answer matches.)"""
    return _LINK.sub(r"\1", text)


def hit(q: dict[str, Any], text: str) -> bool:
    seen = readable(text)
    return any(rm.answer_in_text(g, seen) for g in golds(q))


def check(questions: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the set: a missing field, a repeated id or question, a page that is not
    in the set, a split that is not its page's, an answer that does not stand in its page."""
    problems: list[str] = []
    known = set(pages())
    seen_ids: set[str] = set()
    seen_questions: set[str] = set()
    for q in questions:
        qid = q.get("id", "?")
        missing = [f for f in FIELDS if f not in q]
        if missing:
            problems.append(f"{qid}: missing {missing}")
            continue
        if qid in seen_ids:
            problems.append(f"{qid}: id repeated")
        if q["question"].lower() in seen_questions:
            problems.append(f"{qid}: question repeated")
        seen_ids.add(qid)
        seen_questions.add(q["question"].lower())
        if q["page"] not in known:
            problems.append(f"{qid}: page {q['page']} is not in {DATA}")
            continue
        if q["split"] != page_split(q["page"]):
            problems.append(f"{qid}: split {q['split']}, its page's is {page_split(q['page'])}")
        text = readable((DATA / q["page"]).read_text(encoding="utf-8"))
        for g in golds(q):
            if not rm.answer_in_text(g, text):
                problems.append(f"{qid}: {g!r} does not stand in {q['page']}")
        if rm.answer_in_text(q["answer"], q["question"]):
            problems.append(f"{qid}: the question gives its answer away")
    return problems


# -- what the user reads --------------------------------------------------------

def first_sentence(answer: str) -> str:
    """The answer's first non-empty line, cut at its first sentence end."""
    line = next((ln.strip() for ln in answer.splitlines() if ln.strip()), "")
    return _SENTENCE_END.split(line, maxsplit=1)[0]


def entry_text(mem: Any, path: str) -> str:
    e = mem.read(path)
    return "\n".join([e.title, e.summary, e.body])


def curate(work: Path) -> Any:
    """The set's pages curated into a fresh memory at ``work``, every vector computed."""
    from memgrove import Memory

    docs = work / "docs"
    for page in pages():
        dst = docs / page
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / page, dst)
    mem = Memory.open(work, create=True, durable=False, embed_ahead=False)
    mem.ingest(files=[docs])
    mem.embed()
    return mem


def ask(mem: Any, q: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    answer = mem.query(q["question"])
    ms = (time.perf_counter() - started) * 1000
    first = first_sentence(answer.answer or "")
    top = mem.search(q["question"], limit=3)
    found_at = next((i + 1 for i, h in enumerate(top) if hit(q, entry_text(mem, h.path))), 0)
    in_first = hit(q, first)
    # what the answer quotes below its first sentence (the chosen entries, clipped as shown)
    quoted = "\n".join(f"{e.get('title', '')}\n{e.get('text', '')}" for e in answer.evidence or [])
    status = "answered" if in_first else ("found, not picked" if found_at else "not found")
    return {"id": q["id"], "split": q["split"], "kind": q["kind"], "question": q["question"], "gold": q["answer"],
            "first_sentence": first, "in_first": in_first, "in_answer": hit(q, answer.answer or ""),
            "found_at": found_at, "status": status,
            "in_evidence": hit(q, quoted),
            "tier": answer.tier, "cached": bool(answer.cached),
            "top3": [h.path for h in top], "page": q["page"], "ms": round(ms, 1)}


# -- the report -----------------------------------------------------------------

def rate(xs: list[bool]) -> float:
    return round(100.0 * sum(xs) / len(xs), 1) if xs else 0.0


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    found = [r for r in rows if r["found_at"]]
    return {"questions": len(rows),
            "answered": rate([r["in_first"] for r in rows]),
            "found_top3": rate([bool(r["found_at"]) for r in rows]),
            "answered_when_found": rate([r["in_first"] for r in found]),
            "in_whole_answer": rate([r["in_answer"] for r in rows]),
            "found_top1": rate([r["found_at"] == 1 for r in rows]),
            "in_evidence": rate([r["in_evidence"] for r in rows]),
            "status": dict(Counter(r["status"] for r in rows)),
            "tiers": dict(sorted(Counter(str(r["tier"]) for r in rows).items())),
            "by_kind": {k: {"questions": len(rs), "answered": rate([r["in_first"] for r in rs]),
                            "found_top3": rate([bool(r["found_at"]) for r in rs])}
                        for k, rs in sorted(_group(rows, "kind").items())}}


def _group(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return out


def run(split: str) -> dict[str, Any]:
    questions = load_questions()
    problems = check(questions)
    if problems:
        raise SystemExit("the set has problems:\n" + "\n".join(problems))
    asked = [q for q in questions if split == "all" or q["split"] == split]
    work = Path(tempfile.mkdtemp(prefix="memgrove-doc-answers-"))
    started = time.perf_counter()
    try:
        mem = curate(work)
        try:
            entries = mem.count()
            curated_s = time.perf_counter() - started
            log(f"{len(pages())} pages -> {entries} entries in {curated_s:.1f} s")
            rows = [ask(mem, q) for q in asked]
        finally:
            mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    halves = [h for h in ("dev", "test") if split in ("all", h)]
    return {"split": split, "pages": len(pages()), "entries": entries, "curate_seconds": round(curated_s, 1),
            "seconds": round(time.perf_counter() - started, 1),
            "query_ms_median": sorted(r["ms"] for r in rows)[len(rows) // 2] if rows else 0.0,
            "halves": {h: summarise([r for r in rows if r["split"] == h]) for h in halves},
            "rows": rows}


def render(rep: dict[str, Any]) -> str:
    lines = [f"Documentation QA ({rep['pages']} pages -> {rep['entries']} entries, curated in "
             f"{rep['curate_seconds']} s; {rep['seconds']} s in all, median query {rep['query_ms_median']} ms)", ""]
    lines += table(["half", "questions", "answered (gold in 1st sentence)", "found in top 3",
                    "answered when found", "gold anywhere in the answer", "found at rank 1",
                    "gold in the quoted evidence"],
                   [[h, s["questions"], f"{s['answered']:.1f}%", f"{s['found_top3']:.1f}%",
                     f"{s['answered_when_found']:.1f}%", f"{s['in_whole_answer']:.1f}%", f"{s['found_top1']:.1f}%",
                     f"{s['in_evidence']:.1f}%"]
                    for h, s in rep["halves"].items()])
    lines += [""] + [f"{h}: " + ", ".join(f'"{k}" {s["status"].get(k, 0)}' for k in STATUSES)
                     + "; the query's tier " + ", ".join(f"{t}: {n}" for t, n in s["tiers"].items())
                     for h, s in rep["halves"].items()]
    for h, s in rep["halves"].items():
        lines += ["", f"{h}, by kind of answer:"]
        lines += table(["kind", "questions", "answered", "found in top 3"],
                       [[k, v["questions"], f"{v['answered']:.1f}%", f"{v['found_top3']:.1f}%"]
                        for k, v in s["by_kind"].items()])
    return "\n".join(lines)


def render_rows(rows: list[dict[str, Any]]) -> str:
    def cell(s: str, n: int = 140) -> str:
        # a quoted markdown link stays text here (its target is relative to the page it came from)
        s = " ".join(str(s).split()).replace("|", "\\|").replace("[", "\\[")
        return s if len(s) <= n else s[: n - 1] + "…"

    out = ["| id | half | question | gold | first sentence | top 3 |", "|---|---|---|---|---|---|"]
    for r in rows:
        where = r["status"] + (f" (rank {r['found_at']})" if r["found_at"] else "")
        out.append(f"| {r['id']} | {r['split']} | {cell(r['question'])} | {cell(r['gold'], 60)} | "
                   f"{cell(r['first_sentence'])} | {where} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test", "all"), default="all")
    ap.add_argument("--json", action="store_true", help="print the report as JSON (without the rows)")
    ap.add_argument("--check", action="store_true", help="only check the set and count it")
    ap.add_argument("--results", action="store_true",
                    help="also write the summary to benchmarks/results/doc_answers.{json,md} (the final run)")
    args = ap.parse_args(argv)
    if args.check:
        qs = load_questions()
        problems = check(qs)
        print("\n".join(problems) or f"ok: {len(qs)} questions over {len(pages())} pages; "
              f"by half {dict(Counter(q['split'] for q in qs))}; by kind {dict(Counter(q['kind'] for q in qs))}")
        raise SystemExit(1 if problems else 0)
    rep = run(args.split)
    summary = {k: v for k, v in rep.items() if k != "rows"}
    text = render(rep)
    RUNS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (RUNS / f"doc_answers-{args.split}-{stamp}.json").write_text(json.dumps(rep, indent=2), encoding="utf-8")
    (RUNS / f"doc_answers-{args.split}-{stamp}.md").write_text(text + "\n\n" + render_rows(rep["rows"]) + "\n",
                                                               encoding="utf-8")
    log(f"per-question table: {RUNS / f'doc_answers-{args.split}-{stamp}.md'}")
    if args.results:
        (RESULTS / "doc_answers.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        (RESULTS / "doc_answers.md").write_text(
            "# Documentation QA: the answer's first sentence and the top 3 entries\n\n"
            f"`python benchmarks/doc_answers.py --split {args.split} --results`, {time.strftime('%Y-%m-%d')} "
            "(the set and its sources: benchmarks/data/docqa/SOURCE.md; the protocol: the script's docstring; "
            "the per-question table of each run: benchmarks/runs/doc_answers-*.md)\n\n" + text + "\n",
            encoding="utf-8")
    print(json.dumps(summary, indent=2) if args.json else text)
    return rep


if __name__ == "__main__":
    main()

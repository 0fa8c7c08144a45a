#!/usr/bin/env python
"""Answers first on LoCoMo: is the gold answer in the first sentence the user reads?

    python benchmarks/answer_first.py                    # all 10 conversations, dev and test halves
    python benchmarks/answer_first.py --split dev        # the dev half only (benchmarks/splits.py)
    python benchmarks/answer_first.py --conversations 2  # quicker

For every question of categories 1–4 with a gold answer, the conversation is curated
as in ``benchmarks/locomo.py`` (verbatim curator, one entry per message) into a fresh
memory and asked as a user asks it: ``Memory.query`` with no model configured
(``MEMGROVE_MODEL`` unset), every setting at its default (with ranking by meaning on where
the model is installed, every entry's vector computed after curating: ``embed``, which
keeps them in ``benchmarks/runs/answer_first_vectors.db`` for the next run). Out of
that one answer, same run:

- **first sentence** (the headline): what the user reads first. The answer's text
  (``Answer.answer``, the Summary line) is ``<quoted text> (<who, when>) (<label>)``: the
  parenthesised groups that close it are its attribution (who said it and when, what a
  relative time names, a closed fact's "until …"). The first sentence is the quoted
  text's first sentence (``first_sentence``: split where ``.``, ``!`` or ``?`` and a space
  precede what can start a sentence — the product's rule, frozen here so the measure does
  not move with it; a quoted table row is one sentence with its header) followed by the
  attribution, which is printed on the same line;
- **first sentence, without who and when**: the same without the attribution;
- **shown answer**: the whole Summary line (what the issue's "22.5%" counted);
- **old rule**: the top entry's title and first sentence (its summary), what led every
  answer without a model before ``graphs/answer_pick.py``;
- **picker before issue 33**: ``graphs/answer_pick.py`` at ``BASELINE_REV``, read from git,
  over the same chosen entries, shown as ``tiers.pick_answer`` showed it then;
- **top 3 entries**, **chosen entries** (reachable): the gold answer anywhere in the title
  or text of the answer's first 3 evidence entries, or of all of them
  (``direct_max_entries``, 5): a first sentence that misses is "found, not picked" when
  the gold is in the chosen entries, "not found" when it is not, split by whether one of
  the question's evidence messages is among them (``miss_kind``).

A hit = the normalised gold answer occurs on word boundaries in the text
(``harness.metrics.answer_in_text``: lower-cased, punctuation removed; category 3 uses
the text before ';'). Beside it (``rates_any_day_format``): a gold answer that is one day
also counts written in the other order ("1 May 2023" for "May 1, 2023"). Reported per
half (``benchmarks/splits.json``: decide on dev, report test) and per category, with the
texts' mean length in words (a longer text contains more by chance). Per-question records
go to ``benchmarks/runs/<the report's name>_questions.jsonl``.
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
from typing import Any, Callable, Iterable

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import splits  # noqa: E402
from harness.datasets import locomo  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.report import log, table, write  # noqa: E402
from harness.retrievers import env_without  # noqa: E402

RESULTS = HERE / "results"
RUNS = HERE / "runs"
# what each question's answer is scored on; "first" is the headline
TEXTS = ("first", "sentence", "new", "old", "main", "top3", "reachable")
SHOWN = ("first", "sentence", "new", "old", "main")        # what a user reads (mean length reported)
NAMES = {"first": "**first sentence the user reads** (with who and when)",
         "sentence": "first sentence, without who and when",
         "new": "shown answer (the whole Summary line)",
         "old": "old rule: top entry's title and first sentence",
         "main": "picker before issue 33, as shown",
         "top3": "gold anywhere in the top 3 entries",
         "reachable": "gold anywhere in the chosen entries (reachable)"}
# the picker before issue 33 (answer types, the message before, relative times): read from git, same run
BASELINE_REV = "4edd657"
HALVES = ("dev", "test", "all")

# -- the first sentence --------------------------------------------------------------------------

# a sentence ends at . ! or ? followed by a space and what can start one ("3.50", "e.g. the" do not
# end one): graphs/answer_pick.py's rule when this benchmark was written, kept fixed here
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[*`_]*[A-Z0-9])")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _closing_group(text: str) -> int | None:
    """Where the balanced parenthesised group that ends ``text`` starts ("… (Ana, 8 May (part 1 of 2))"),
    or None."""
    if not text.endswith(")"):
        return None
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def attribution(answer: str) -> tuple[str, str]:
    """``(quoted text, attribution)``: the parenthesised groups that close an answer
    ("… (Caroline, 8 May 2023; 7 May 2023) (until …)") split off its quoted text."""
    text, tail = answer.strip(), []
    while True:
        at = _closing_group(text)
        if not at:     # none, or the whole text is one group
            return text, " ".join(tail)
        tail.insert(0, text[at:])
        text = text[:at].rstrip()


def first_sentence(answer: str, *, who: bool = True) -> str:
    """The first sentence the user reads of an answer's text (``who``: with its attribution)."""
    text, tail = attribution(answer)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 3 and _TABLE_RULE.match(lines[1]):      # a table row under its header
        first = "\n".join(lines[:3])
    else:
        joined = " ".join(text.split())
        first = _SPLIT.split(joined, maxsplit=1)[0] if joined else ""
    return f"{first} {tail}".strip() if who and tail else first


# -- one question ---------------------------------------------------------------------------------

def baseline_picker(rev: str = BASELINE_REV) -> Any:
    """``graphs/answer_pick.py`` as it was at ``rev`` (standard library only), loaded as a module."""
    import subprocess
    import types

    src = subprocess.run(["git", "show", f"{rev}:graphs/answer_pick.py"], cwd=HERE.parent, check=True,
                         capture_output=True, text=True).stdout
    mod = types.ModuleType("answer_pick_baseline")
    sys.modules[mod.__name__] = mod   # dataclasses looks its module up
    exec(compile(src, f"{rev}:graphs/answer_pick.py", "exec"), mod.__dict__)
    return mod


# the most of an entry's text a pick reads (graphs/tiers.py PICK_CHARS when this was written)
PICK_CHARS = 8_000


def baseline_answer(base: Any, tree: Any, question: str, bodies: list[str], contexts: list[str],
                    said: list[str]) -> str:
    """The answer as the baseline picker showed it (``tiers.pick_answer`` at ``BASELINE_REV``)."""
    terms = tree.engine.terms(question)
    clipped = [b[:PICK_CHARS] for b in bodies]
    found = base.pick(terms, tree.engine.idf(terms) if terms else {}, clipped, tree.engine.terms, contexts)
    if found is None:
        return ""
    text = base.shown(found, base.candidates(clipped))
    who = said[found.rank] if found.rank < len(said) else ""
    return f"{text} ({who})" if who and who not in text else text


# vectors computed before, by key (the model and the text): a text's vector is the same in every run,
# so a run encodes only texts no earlier run did (an ignored file; delete it to encode everything again)
VECTORS = RUNS / "answer_first_vectors.db"


def embed(mem: Any, cache: Path | None = VECTORS) -> None:
    """Every entry's vector, computed right after curating (``memgrove reindex``'s warm-up) when
    ranking by meaning is on: every search then sees the memory its embedder catches up to, not a
    race with the background thread. Vectors an earlier run computed (``cache``) are stored first."""
    import sqlite3

    tree = mem.tree
    if tree.settings.semantic_weight <= 0:
        return
    from memgrove.tree.meaning.vectors import key_of
    t0 = time.perf_counter()
    name = tree.meaning_encoder().name
    keys = sorted({key_of(name, t) for t in tree._meaning_texts(sorted(tree.catalog.files())).values()})
    db = None
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(cache)
        db.execute("create table if not exists v (k text primary key, b blob)")
        known = dict(r for i in range(0, len(keys), 500) for r in db.execute(
            f"select k, b from v where k in ({','.join('?' * len(keys[i:i + 500]))})", keys[i:i + 500]))
        tree.vectors.put_many(known.items())
    n = tree.embed()[0]
    if db is not None:
        db.executemany("insert or replace into v values (?, ?)", tree.vectors.get_many(keys).items())
        db.commit()
        db.close()
    log(f"  {n} entries with a vector in {time.perf_counter() - t0:.1f} s"
        + (f" ({len(known)} of {len(keys)} texts from {cache.name})" if cache is not None else ""))


def read_entry(tree: Any, path: str) -> Any:
    try:
        return tree.read(path)
    except Exception:  # noqa: BLE001 - an entry gone since the answer: no text
        return None


def answer_views(mem: Any, question: str, base: Any = None) -> dict[str, Any]:
    """One question asked as a user asks it (``Memory.query``, no model), and the texts scored:
    ``TEXTS`` plus ``refs`` (per chosen entry, its sources' refs), ``tier`` and ``answer``."""
    a = mem.query(question)
    evidence = list(a.evidence or [])
    entries = [read_entry(mem.tree, e["path"]) for e in evidence]
    bodies = [((en.body or en.summary).strip() if en else e.get("text", "")) for e, en in zip(evidence, entries)]
    texts = [f"{e['title']}\n{b}" for e, b in zip(evidence, bodies)]
    out: dict[str, Any] = {"answer": a.answer, "tier": a.tier, "refs": [list(e.get("refs", [])) for e in evidence],
                           "first": first_sentence(a.answer) if evidence else "",
                           "sentence": first_sentence(a.answer, who=False) if evidence else "",
                           "new": a.answer if evidence else "",
                           "top3": "\n".join(texts[:3]), "reachable": "\n".join(texts)}
    if not evidence:
        return {**out, "old": "", "main": ""}
    top, title = entries[0], evidence[0]["title"]
    summary = (top.summary if top else "") or bodies[0][:200]
    out["old"] = title if not summary or summary in title else f"{title}: {summary}"
    said = [e["title"] if en and any(s.get("kind") == "conversation" for s in en.sources) else ""
            for e, en in zip(evidence, entries)]
    contexts = [f"{e['title']} {e['path'].replace('/', ' ')}" for e in evidence]
    out["main"] = (baseline_answer(base, mem.tree, question, bodies, contexts, said) if base else "") or out["old"]
    return out


# -- the tally --------------------------------------------------------------------------------------

def commit() -> str:
    """The checkout's commit (short), and "+" when it has changes not committed."""
    import subprocess
    git = ["git", "-C", str(HERE.parent)]
    rev = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    return rev + ("+" if dirty else "")


def semantic_weight() -> float:
    """``semantic_weight`` as a new memory resolves it here (0.5 where the model is installed)."""
    from memgrove.tree.settings import TreeSettings
    return TreeSettings().semantic_weight


def rate(xs: list[bool]) -> float | None:
    return round(100.0 * sum(xs) / len(xs), 1) if xs else None


def miss_kind(rec: dict[str, Any]) -> str:
    """Why the first sentence misses: "hit"; the gold in none of the chosen entries, with none of the
    question's evidence messages among them (the search missed) or with one (the gold is written
    otherwise there: a paraphrase, a relative day, a list gathered from several messages, an
    inference); "in top 3, not picked"; "in entries 4–5, not picked"."""
    hit = rec["hit"]
    if hit["first"]:
        return "hit"
    if hit["top3"]:
        return MISS_KINDS[2]
    if hit["reachable"]:
        return MISS_KINDS[3]
    return MISS_KINDS[1] if rec.get("evidence_chosen") else MISS_KINDS[0]


MISS_KINDS = ("not found: no evidence message chosen", "not found: an evidence message chosen, gold written otherwise",
              "in top 3, not picked", "in entries 4–5, not picked")


# words a gold answer may carry that its text need not ("in 2022" for "last year = 2022")
_LIGHT = frozenset("a an the in on at of to and or for with his her their my our your its is was were be been by from "
                   "as that this".split())


def every_word(gold: str, text: str) -> bool:
    """Every word of ``gold`` but ``_LIGHT`` ones in ``text``, in any order (normalised): how much the
    strict rule (the gold as one phrase) costs, e.g. "the week before 15 April 2022" against
    "(…; last week = the week before 15 April 2022)" passes both, "in 2022" only this one."""
    words = [w for w in rm.normalize_text(gold).split() if w not in _LIGHT]
    have = set(rm.normalize_text(text).split())
    return bool(words) and all(w in have for w in words)


def tally(records: list[dict[str, Any]], group_of: Callable[[dict[str, Any]], str], groups: Iterable[str],
          texts: Iterable[str] = TEXTS) -> dict[str, Any]:
    """Rates (%) per text and group ("all" and each of ``groups``), counts, the misses by kind,
    and the shown texts' mean length in words."""
    groups = ["all", *groups]
    members = {g: [r for r in records if g == "all" or group_of(r) == g] for g in groups}
    out: dict[str, Any] = {
        "counts": {g: len(m) for g, m in members.items()},
        "rates": {t: {g: rate([r["hit"][t] for r in m]) for g, m in members.items()} for t in texts},
        "evidence_chosen": {g: rate([bool(r.get("evidence_chosen")) for r in m]) for g, m in members.items()},
        # the first sentence, or the gold in a chosen entry: what the best pick of those entries could reach
        "pick_ceiling": {g: rate([r["hit"]["first"] or r["hit"]["reachable"] for r in m]) for g, m in members.items()},
        "first_every_word": {g: rate([r["hit"]["first"] or every_word(r["gold"], r["first"]) for r in m])
                             for g, m in members.items()},
        "evidence_top3": {g: rate([bool(r.get("evidence_top3")) for r in m]) for g, m in members.items()},
        "misses": {g: {k: sum(1 for r in m if miss_kind(r) == k) for k in MISS_KINDS}
                   for g, m in members.items()},
        "mean_words": {t: round(sum(r["words"][t] for r in records) / len(records), 1) if records else None
                       for t in SHOWN if t in texts},
    }
    if any("day" in r for r in records):
        out["rates_any_day_format"] = {t: rate([r["day"][t] for r in records]) for t in texts}
    return out


def score(answer: str, views: dict[str, Any]) -> dict[str, Any]:
    return {"hit": {t: rm.answer_in_text(answer, views[t]) for t in TEXTS},
            "day": {t: rm.answer_or_its_day_in_text(answer, views[t]) for t in TEXTS},
            "words": {t: rm.word_count(views[t]) for t in SHOWN}}


def run(samples: list[dict[str, Any]], settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    settings = settings or {}
    from memgrove import Memory

    records: list[dict[str, Any]] = []
    base = baseline_picker()
    for sample in samples:
        turns = locomo.turns_of(sample)
        qs = [q for q in locomo.questions_of(sample, turns) if q.category in (1, 2, 3, 4) and q.answer]
        work = Path(tempfile.mkdtemp(prefix="memgrove-answer-first-"))
        mem = Memory.open(work, create=True, durable=False, **settings)
        t0 = time.perf_counter()
        try:
            mem.ingest(conversation=locomo.to_conversation(sample))
            embed(mem)
            with env_without("MEMGROVE_MODEL"):
                for q in qs:
                    views = answer_views(mem, q.question, base)
                    chosen = [{r.rpartition("#")[2] for r in refs} for refs in views["refs"]]
                    records.append({"conv": sample["sample_id"], "index": q.index, "category": q.category,
                                    "question": q.question, "gold": q.answer, "answer": views["answer"],
                                    "first": views["first"], "tier": views["tier"], "evidence": q.evidence,
                                    "evidence_chosen": any(set(q.evidence) & c for c in chosen),
                                    "evidence_top3": any(set(q.evidence) & c for c in chosen[:3]),
                                    **score(q.answer, views)})
        finally:
            mem.close()
            shutil.rmtree(work, ignore_errors=True)
        log(f"{sample['sample_id']}: {len(qs)} questions in {time.perf_counter() - t0:.1f} s")
    return records


def report_of(records: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    half = {c: h for h in ("dev", "test") for c in splits.members("locomo", h)}
    by_half = {}
    for h in HALVES:
        mine = [r for r in records if h == "all" or half.get(r["conv"]) == h]
        if mine:
            by_half[h] = {"conversations": sorted({r["conv"] for r in mine}),
                          **tally(mine, lambda r: str(r["category"]), ("1", "2", "3", "4"))}
    tiers: dict[str, int] = defaultdict(int)
    for r in records:
        tiers[str(r["tier"])] += 1
    return {"benchmark": "answer_first", "questions": len(records), "seconds": round(seconds, 1),
            "baseline_rev": BASELINE_REV, "tiers": dict(sorted(tiers.items())), "halves": by_half}


def _p(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}%"


def render(rep: dict[str, Any]) -> str:
    groups = ("all", "1", "2", "3", "4")
    lines = [f"# Answers first on LoCoMo: the gold answer in the first sentence the user reads", "",
             f"{rep['questions']} questions (categories 1–4), {rep['seconds']} s; answers by tier "
             + ", ".join(f"{t}: {n}" for t, n in rep["tiers"].items())
             + f". Made by `{rep.get('command', 'python benchmarks/answer_first.py')}` at {rep.get('commit', '?')} "
             f"(definitions in its docstring), ranking by meaning {rep.get('meaning', {}).get('semantic_weight')}.", ""]
    for h, b in rep["halves"].items():
        lines += [f"## {h} half ({len(b['conversations'])} conversations)" if h != "all"
                  else "## both halves", ""]
        lines += table(["gold answer in …", "all", "cat 1", "cat 2", "cat 3", "cat 4", "mean words"],
                       [[NAMES[t], *(_p(b['rates'][t][g]) for g in groups), b["mean_words"].get(t, "—")]
                        for t in TEXTS]
                       + [[f"(an evidence message in the {w})", *(_p(b[k][g]) for g in groups), ""]
                          for k, w in (("evidence_top3", "top 3"), ("evidence_chosen", "chosen entries")) if k in b]
                       + [[w, *(_p(b[k][g]) for g in groups), ""] for k, w in (
                           ("pick_ceiling", "(the best pick of the chosen entries: first sentence, or the gold in them)"),
                           ("first_every_word", "(first sentence, every word of the gold in any order)")) if k in b]
                       + [["questions", *(b["counts"][g] for g in groups), ""]])
        lines += ["", "First sentence misses, by where the gold answer was:", ""]
        lines += table(["miss", *groups], [[k, *(b["misses"][g][k] for g in groups)] for k in MISS_KINDS])
        if "rates_any_day_format" in b:
            lines += ["", "A day in the gold written in the other order also counts, all: "
                      + ", ".join(f"{t} {_p(b['rates_any_day_format'][t])}" for t in TEXTS)]
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None, help="locomo10.json (default: as benchmarks/locomo.py)")
    ap.add_argument("--split", default="all", choices=splits.SPLITS, help="the half to run (default: both)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--out", type=Path, default=RESULTS / "answer_first", help="the report, without .json/.md")
    ap.add_argument("--no-write", action="store_true", help="print the report only")
    ap.add_argument("--semantic-weight", type=float, default=None,
                    help="ranking by meaning (default: the product's, 0.5 where the model is installed; 0: off)")
    ap.add_argument("--from-records", type=Path, default=None, metavar="JSONL",
                    help="no run: the report of an earlier run's per-question records (runs/<name>_questions.jsonl)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON, write nothing")
    args = ap.parse_args(argv)
    samples = [s for s in locomo.load_samples(args.data or locomo.default_data())
               if splits.in_split("locomo", s["sample_id"], args.split)][: args.conversations]
    code = commit()     # the code the run loads, before anything is edited while it runs
    t0 = time.perf_counter()
    if args.from_records:
        records = [json.loads(line) for line in args.from_records.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        records = run(samples, {} if args.semantic_weight is None else {"semantic_weight": args.semantic_weight})
    rep = report_of(records, time.perf_counter() - t0)
    rep["command"] = "python benchmarks/answer_first.py " + " ".join(argv if argv is not None else sys.argv[1:]).strip()
    rep["meaning"] = {"semantic_weight": semantic_weight() if args.semantic_weight is None else args.semantic_weight}
    rep["commit"] = code
    md = render(rep)
    print(json.dumps(rep, indent=2) if args.json else md)
    RUNS.mkdir(exist_ok=True)
    if not args.from_records:
        (RUNS / f"{args.out.name}_questions.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    if not (args.no_write or args.json):
        write(args.out, rep, md)
    return rep


if __name__ == "__main__":
    main()

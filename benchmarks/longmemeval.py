#!/usr/bin/env python
"""LongMemEval retrieval benchmark: memgrove vs flat BM25, LongMemEval's own retrieval metrics, same run.

    python benchmarks/longmemeval.py data/longmemeval_s.json               # every question (~500)
    python benchmarks/longmemeval.py data/longmemeval_s.json --limit 20    # smoke run
    python benchmarks/longmemeval.py data/longmemeval_s.json --types multi-session knowledge-update
    python benchmarks/longmemeval.py tests/data/longmemeval_tiny.json --out /tmp/lme   # the test file

Data: a LongMemEval file (xiaowu0162/LongMemEval: ``longmemeval_s.json``,
``longmemeval_oracle.json``, ``longmemeval_m.json`` or their ``_cleaned``
versions), not shipped here. A JSON list of questions with ``question_id``
(``_abs`` at the end = abstention), ``question_type``, ``question``, ``answer``,
``question_date``, ``haystack_session_ids`` / ``haystack_dates`` /
``haystack_sessions`` (parallel lists; a session is a list of turns
``{"role": "user"|"assistant", "content": ..., "has_answer": true}`` on
evidence turns) and ``answer_session_ids``.

Per question (abstention questions are not run: the official code leaves them
out of every retrieval average, they have no evidence location):

1. **memgrove**: a fresh memory (``Memory.open(tmp, create=True, durable=False)``)
   holding that question's haystack only, curated with the verbatim curator
   (``Memory.ingest(conversation=conv, window=1)``: one entry per message). The
   conversation: id = question_id; one message per turn with non-empty content,
   id ``s<session index>t<turn index>`` (0-based positions in the haystack, so
   an entry's provenance ``<question_id>#s3t4`` maps back to session 3, turn 4),
   speaker = role, text = content, time = the session's haystack date,
   session = the session id. The question text (only; no question date, as in
   the official retrieval) goes through the query graph
   ``mem.graph("query", settings=load_query_settings(home, prefetch_limit=N))``
   (default N = 50, every other setting default, no LLM); ranked retrieval =
   the graph's entry hits in order (``benchmarks/locomo.py``'s
   ``MemgroveRetriever``: an entry's text is its file without frontmatter).
2. **bm25-turns**: flat BM25 (``bm25s`` defaults, lower-cased ``\\w+`` tokens,
   no stemming, no stopwords; ``BM25Retriever``) over the official
   turn-level corpus: every *user* turn's content. Item = that turn.
3. **bm25-sessions**: the same over the official session-level corpus: per
   session, its *user* turns' contents joined by spaces (``process_item_flat_index``
   in ``src/retrieval/run_retrieval.py`` indexes user turns only). Item = the
   whole session, all its turns (what the official reader is given for a
   retrieved session with ``useronly=false``, the recommended setting).

Metrics. **LongMemEval's** (``src/retrieval/eval_utils.py``, reimplemented and
checked in ``benchmarks/harness/metrics.py``): recall_any@k, recall_all@k,
ndcg_any@k for k = 1, 3, 5, 10, at session and turn level. The corpora and gold
follow ``run_retrieval.py`` exactly: session documents have the session id,
except that an id containing "answer" whose user turns have no ``has_answer``
becomes "noans"; turn documents are user turns only, id
``<session id>_<turn index, 1-based over all turns>``, with "answer" -> "noans"
in sessions containing "answer" for turns without ``has_answer``; gold = the
document ids containing "answer". Averages skip abstention questions and (as
the current official code does) questions with no ``has_answer`` user turn in
the haystack (mostly single-session-assistant, whose evidence is an assistant
turn). Rankings: for memgrove, session level = sessions in order of first
appearance among the ranked entries' provenance (deduplicated); turn level =
user turns in order of first appearance, so entries holding an assistant turn
contribute nothing at turn level (verbatim window 1: an entry is one message).
bm25-turns is also scored at session level the same way (sessions of its ranked
turns, deduplicated; the official ``evaluate_retrieval_turn2session`` would
instead extend k over turns until k sessions are covered, which gives the same
recalls but a different NDCG). A system's ranking holds only what it returned
(memgrove: at most ``prefetch_limit`` entries; BM25: positive scores), never
padded. **Evidence recall at 1,000 / 2,000 / 4,000 words** (LoCoMo's budget rule,
``harness.metrics.within_budget``: whole turns, in rank order, stop at the first
turn that does not fit): evidence = turns with ``has_answer`` true (user or
assistant); a question without any falls back to all turns of its answer
sessions (counted). All non-abstention questions with evidence count. Ratios =
memgrove ÷ baseline.

Cache: a question's curated memory is kept under ``--cache`` (default
``$XDG_CACHE_HOME/memgrove-bench/longmemeval``, i.e. ``~/.cache/...``), keyed by
the question id and a sha256 of its haystack (ids, dates, sessions), the curator
(sha256 of ``tree/inputs/curator.py`` and ``tree/verbatim_*.py`` + memgrove version + the tree's ``INDEX_FORMAT``),
the window and tree overrides (a change to how entries are written or indexed
that bumps none of these needs ``--no-cache``). A run copies the cached memory to a temp dir and queries the copy, so
the cache stays as curated (the query graph records signals, a query log and its
answer cache). ``--no-cache`` re-curates every question and replaces its cache
entry. About 7-9 MB of disk per longmemeval_s-sized question (~3.5-4.5 GB for the file; the
journal is not kept): delete the directory to reclaim it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

from harness import cli  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.datasets.longmemeval import (  # noqa: E402,F401  (names the tests read here)
    BUDGET_BASELINES, BUDGET_KEYS, BUDGETS, KS, LEVEL_BASELINES, LEVEL_SYSTEMS, LEVELS, METRICS, OVERALL,
    QUESTION_TYPES, REQUIRED, SYSTEMS, TYPE_ABBREV, bm25_sessions, bm25_turns, haystack_of, is_abstention,
    load_questions, parse_turn_key, ranking, score, to_conversation)
from longmemeval_cache import CURATIONS, curator_version, default_cache, open_retriever, prepare_memory  # noqa: E402,F401
from longmemeval_report import render_markdown  # noqa: E402
from harness.report import RESULTS, conversation_versions, log  # noqa: E402
from harness.retrievers import DEFAULT_VARIANT, VARIANTS, Retrieved, Variant, env_without  # noqa: E402

# enough entries to fill the largest budget: 4,000 words is ~150 message entries (LoCoMo-like turns of
# ~25 words); with 50, memgrove ran out at ~1,750 words while the BM25 baselines return every match,
# so its R@2000w and R@4000w measured the hit limit, not the ranking (seen on a LoCoMo-built haystack)
DEFAULT_PREFETCH = 200


# -- the run -----------------------------------------------------------------------------------

def select(questions: list[dict[str, Any]], types: Sequence[str] | None, limit: int | None
           ) -> tuple[list[dict[str, Any]], int]:
    """(questions to run, abstention questions left out), after the type filter, before the limit."""
    chosen = [q for q in questions if not types or q["question_type"] in types]
    runnable = [q for q in chosen if not is_abstention(q)]
    return (runnable[:limit] if limit is not None else runnable), len(chosen) - len(runnable)


def run(questions: list[dict[str, Any]], *, variant: Variant = VARIANTS[DEFAULT_VARIANT],
        prefetch_limit: int = DEFAULT_PREFETCH, cache_root: Path | None = None, use_cache: bool = True,
        keep_questions: bool = True) -> dict[str, Any]:
    curator = curator_version()
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    reported_ms: list[float] = []
    tiers: Counter = Counter()
    segmenting: Counter = Counter()
    hits_hist: Counter = Counter()
    cache = {"hits": 0, "curated": 0, "curation_seconds": 0.0, "load_seconds": 0.0, "open_seconds": 0.0}
    skipped_turns = 0
    for n, q in enumerate(questions, 1):
        qid = str(q["question_id"])
        hay = haystack_of(q)
        conv, skipped = to_conversation(hay)
        skipped_turns += skipped
        workdir, curation, cached = prepare_memory(q, conv, variant, cache_root, use_cache, curator)
        if cached:
            cache["hits"] += 1
            cache["load_seconds"] += curation["load_seconds"]
        else:
            cache["curated"] += 1
            cache["curation_seconds"] += curation["seconds"]
        t0 = time.perf_counter()
        try:
            mg = open_retriever(workdir, qid, variant, prefetch_limit, curation)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        cache["open_seconds"] += time.perf_counter() - t0
        systems: dict[str, tuple[Callable[[str], Retrieved], Sequence[str]]] = {
            "memgrove": (mg, LEVELS), "bm25-turns": (bm25_turns(hay), LEVELS),
            "bm25-sessions": (bm25_sessions(hay), ("session",))}
        rec: dict[str, Any] = {"question_id": qid, "type": q["question_type"], "scored": hay.scored,
                               "evidence": len(hay.evidence), "evidence_source": hay.evidence_source,
                               "sessions": len(hay.sessions), "turns": len(hay.turns), "words": hay.words(),
                               "cached": cached, "curation_s": curation["seconds"], "entries": curation["entries"],
                               "systems": {}}
        try:
            with env_without("MEMGROVE_MODEL"):   # retrieval only: the graph answers without an LLM
                for name, (retr, levels) in systems.items():
                    r = retr(str(q["question"]))
                    latencies[name].append(r.latency_ms)
                    rec["systems"][name] = score(hay, r.items, levels)
                    if name == "memgrove":
                        tiers[str(r.info["tier"])] += 1
                        rec["tier"] = r.info["tier"]
                        hits_hist[r.info["entries"]] += 1
                        if r.info.get("reported_ms") is not None:
                            reported_ms.append(float(r.info["reported_ms"]))
        finally:
            segmenting.update(mg.segmenting)
            mg.close()
        records.append(rec)
        log(f"[{n}/{len(questions)}] {qid} ({q['question_type']}): {len(hay.sessions)} sessions, "
            f"{hay.words():,} words, "
            + (f"cached ({curation['load_seconds']:.2f} s)" if cached else f"curated in {curation['seconds']:.2f} s")
            + (f"; memgrove session R_any@5 {rec['systems']['memgrove']['session']['recall_any@5']:.0f}"
               if hay.scored else "; not scored (no has_answer user turn)"))
    cache = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in cache.items()}
    by_system = {s: aggregate(records, s) for s in SYSTEMS}
    report: dict[str, Any] = {
        "systems": by_system,
        "ratios": ratios(by_system),
        "latency_ms": {s: rm.latency_summary(v) for s, v in latencies.items()},
        "memgrove": {
            "cache": {**cache, "dir": str(cache_root) if cache_root is not None else None, "curator_version": curator},
            "tiers": dict(sorted(tiers.items())),
            "reported_latency_ms": rm.latency_summary(reported_ms),
            "entries_mean": rm.mean(r["entries"] for r in records),
            "entries_hist": {str(k): v for k, v in sorted(hits_hist.items())},
            "segmenting": dict(segmenting),
            "empty_turns_not_curated": skipped_turns,
            "lost_evidence_4000w": {s: rm.where_lost(r["systems"][s] for r in records) for s in SYSTEMS},
        },
        "data": data_summary(records),
    }
    if keep_questions:
        report["questions"] = [
            {k: v for k, v in r.items() if k != "systems"}
            | {s: _rounded({k: v for k, v in r["systems"][s].items() if k != "lost"}) for s in SYSTEMS}
            for r in records]
    return report


def _rounded(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (_rounded(v) if isinstance(v, dict) else round(v, 4) if isinstance(v, float) else v)
            for k, v in d.items()}


def groups_of(records: list[dict[str, Any]]) -> list[str]:
    seen = {r["type"] for r in records}
    return [t for t in QUESTION_TYPES if t in seen] + sorted(seen - set(QUESTION_TYPES)) + [OVERALL]


def aggregate(records: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Means per question type and overall (micro: every question counts once, as the official average)."""
    out: dict[str, Any] = {level: {} for level in LEVELS if level in LEVEL_SYSTEMS and system in LEVEL_SYSTEMS[level]}
    out["budget"] = {}
    for g in groups_of(records):
        recs = [r for r in records if g == OVERALL or r["type"] == g]
        for level in out:
            if level == "budget":
                continue
            xs = [r["systems"][system][level] for r in recs if r["scored"]]
            row: dict[str, Any] = {"n": len(xs)}
            for m in METRICS:
                row[m] = rm.mean(x[m] for x in xs)
            row["returned_mean"] = rm.mean(x["returned"] for x in xs)
            out[level][g] = row
        xs = [r["systems"][system] for r in recs if "R@1000w" in r["systems"][system]]
        row = {"n": len(xs)}
        for k in BUDGET_KEYS:
            row[k] = rm.mean(x[k] for x in xs)
        row["filled_4000w"] = rm.mean(float(x["filled"]) for x in xs)
        row["items_mean"] = rm.mean(r["systems"][system]["n_items"] for r in recs)
        out["budget"][g] = row
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def ratios(by_system: dict[str, Any]) -> dict[str, Any]:
    """memgrove ÷ baseline, per level (and budget), baseline, group, metric."""
    mg = by_system["memgrove"]
    out: dict[str, Any] = {}
    for level, bases in list(LEVEL_BASELINES.items()) + [("budget", BUDGET_BASELINES)]:
        keys = BUDGET_KEYS if level == "budget" else METRICS
        out[level] = {b: {g: {k: _ratio(mg[level][g][k], by_system[b][level][g][k]) for k in keys}
                          for g in mg[level]} for b in bases}
    return out


def data_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    return {
        "questions": n,
        "by_type": {g: sum(1 for r in records if r["type"] == g) for g in groups_of(records) if g != OVERALL},
        "scored": sum(1 for r in records if r["scored"]),
        "not_scored_no_user_evidence": dict(Counter(r["type"] for r in records if not r["scored"])),
        "evidence_source": dict(Counter(r["evidence_source"] for r in records)),
        "evidence_fallback_to_answer_sessions": [r["question_id"] for r in records
                                                 if r["evidence_source"] == "answer_sessions"],
        "no_evidence": [r["question_id"] for r in records if r["evidence_source"] == "none"],
        "sessions_mean": rm.mean(r["sessions"] for r in records),
        "turns_mean": rm.mean(r["turns"] for r in records),
        "words_mean": rm.mean(r["words"] for r in records),
        "evidence_turns_mean": rm.mean(r["evidence"] for r in records),
    }


def gold_check(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Scored questions whose official session gold (ids containing "answer") is not their answer_session_ids
    (unscored ones always differ: their answer sessions became "noans")."""
    out = []
    for q in questions:
        hay = haystack_of(q)
        if not hay.scored:
            continue
        official = {hay.sessions[i] for i, d in enumerate(hay.session_docs) if "answer" in d}
        declared = {str(s) for s in q.get("answer_session_ids") or []} & set(hay.sessions)
        if official != declared:
            out.append({"question_id": q["question_id"], "official": sorted(official),
                        "answer_session_ids": sorted(declared)})
    return {"mismatches": len(out), "examples": out[:10]}


# -- the report --------------------------------------------------------------------------------


def output_stem(data_path: Path, variant: str, prefetch_limit: int, types: Sequence[str] | None,
                limit: int | None, total: int) -> str:
    """``longmemeval`` for longmemeval_s(_cleaned).json with the defaults; suffixes otherwise."""
    stem = "longmemeval"
    m = re.match(r"^longmemeval_(.+)$", data_path.stem.lower())
    tag = m.group(1) if m else re.sub(r"[^a-z0-9]+", "_", data_path.stem.lower()).strip("_")
    if tag not in ("s", "s_cleaned"):
        stem += f"_{tag}"
    if variant != DEFAULT_VARIANT:
        stem += f"_{variant}"
    if prefetch_limit != DEFAULT_PREFETCH:
        stem += f"_p{prefetch_limit}"
    if types:
        stem += "_" + "-".join(TYPE_ABBREV.get(t, t) for t in types)
    if limit is not None and limit < total:
        stem += f"_n{limit}"
    return stem


def _is_fixture(path: Path) -> bool:
    try:
        path.resolve().relative_to((REPO / "tests").resolve())
        return True
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = cli.parser(__doc__)
    ap.add_argument("data", type=Path, help="a LongMemEval JSON file (longmemeval_s / _oracle / _m format)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N (non-abstention) questions")
    ap.add_argument("--types", nargs="+", default=None,
                    help="question types to run (space- or comma-separated): " + ", ".join(QUESTION_TYPES))
    ap.add_argument("--cache", type=Path, default=None,
                    help=f"cache dir of curated memories (default {default_cache()})")
    ap.add_argument("--no-cache", action="store_true", help="re-curate every question (and replace its cache entry)")
    cli.memgrove_options(ap, out=RESULTS, prefetch=DEFAULT_PREFETCH, tree=False)
    ap.add_argument("--seed", type=int, default=0, help="recorded only: nothing here is random")
    a = ap.parse_args(argv)

    data_path = a.data.resolve()
    if not data_path.exists():
        raise SystemExit(f"{data_path}: no such file (LongMemEval is not shipped here: download longmemeval_s.json "
                         "from xiaowu0162/LongMemEval and give its path)")
    if not a.no_write and a.out.resolve() == RESULTS.resolve() and _is_fixture(data_path):
        raise SystemExit(f"{data_path} is a test fixture, not LongMemEval: its results do not belong in "
                         f"{RESULTS}; give --out (e.g. /tmp/lme) or --no-write")
    types = None
    if a.types:
        types = [t.strip() for x in a.types for t in x.split(",") if t.strip()]
        unknown = [t for t in types if t not in QUESTION_TYPES]
        if unknown:
            raise SystemExit(f"--types: unknown {unknown}; choose from {', '.join(QUESTION_TYPES)}")
    raw = data_path.read_bytes()
    questions = load_questions(data_path)
    chosen, abstention = select(questions, types, a.limit)
    if not chosen:
        raise SystemExit("no question to run (all abstention, or none of the given types)")
    variant = VARIANTS[a.variant]
    cache_root = (a.cache or default_cache()).expanduser().resolve()

    command, machine = cli.start("longmemeval.py", argv, a.seed)
    log(f"memgrove LongMemEval benchmark: {len(chosen)} questions ({abstention} abstention left out), variant "
        f"{variant.name}, prefetch_limit {a.prefetch_limit}, cache {cache_root}"
        + (" (not read: --no-cache)" if a.no_cache else "") + f", load avg {machine['loadavg']}")
    t0 = time.perf_counter()
    body = run(chosen, variant=variant, prefetch_limit=a.prefetch_limit, cache_root=cache_root,
               use_cache=not a.no_cache, keep_questions=not a.no_questions)
    cli.load_end(machine)
    report = {
        "benchmark": "longmemeval",
        "machine": machine,
        "versions": conversation_versions(),
        "command": command,
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(data_path), "data_sha256": hashlib.sha256(raw).hexdigest(),
                   "file_questions": len(questions), "types": types, "limit": a.limit,
                   "abstention_excluded": abstention, "variant": dataclasses.asdict(variant),
                   "prefetch_limit": a.prefetch_limit, "ks": list(KS), "budgets": list(BUDGETS),
                   "cache": str(cache_root), "no_cache": a.no_cache, "words": "whitespace-separated tokens",
                   "metrics": "LongMemEval src/retrieval/eval_utils.py (recall_any, recall_all, ndcg_any), "
                              "corpora and gold of src/retrieval/run_retrieval.py"},
        "gold_check": gold_check(chosen),
        **body,
    }
    stem = output_stem(data_path, a.variant, a.prefetch_limit, types, a.limit, len(select(questions, types, None)[0]))
    cli.finish(report, render_markdown(report), a.out, stem, not a.no_write)
    return report


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""LoCoMo retrieval benchmark: evidence recall of memgrove vs flat BM25 baselines, same run, same metric code.

    python benchmarks/locomo.py                         # all 10 conversations, variant verbatim-w1
    python benchmarks/locomo.py --conversations 2       # smoke run
    python benchmarks/locomo.py --variant verbatim-w3   # another memgrove variant (see VARIANTS)
    python benchmarks/locomo.py --llm                   # + answers and LLM-judge accuracy (needs a model)

Data: ``locomo10.json`` (snap-research/locomo), by default
``../shared/datasets/locomo/locomo10.json`` relative to the repository root, or
``$LOCOMO_PATH``, or ``--data``.

For every conversation:

1. **memgrove**: the conversation is converted to memgrove's conversation format
   (id = sample_id; per turn: id = dia_id, speaker, session = "session_N",
   time = that session's date_time string, text = the turn text plus
   " [shares a photo: <blip_caption>]" for image turns) and curated into a fresh
   temp memory with the verbatim curator (``Memory.ingest(conversation=conv,
   window=W)``; ``--llm`` and ``--llm-curator``: ``Memory.learn``). Every question then goes
   through the query graph, ``mem.graph("query", settings=...)`` with
   ``prefetch_limit`` raised (``--prefetch-limit``, default 50; the product
   default of 10 cannot fill a 1,000-word budget) and every other setting at its
   default. Retrieved = the graph state's ``hits`` of kind "entry", in order;
   an entry's provenance = its ``sources`` (``<conv id>#<dia_id>``); its text =
   the entry file without the YAML frontmatter (``mem.tree.read_text``), i.e.
   its title heading and sections, as a reader sees it.
2. **bm25-turns**: flat BM25 (``bm25s``, its defaults: Lucene BM25, k1 1.5,
   b 0.75) over single turns, each "<Speaker>: <text>" (with the photo caption),
   lower-cased ``\\w+`` tokens, no stemming, no stopwords. Item = one turn.
3. **bm25-sessions**: the same over whole sessions (all the session's turns,
   speaker-prefixed, one per line). Item = the session, i.e. all its turns.

Metrics (``benchmarks/harness/metrics.py``, the same code for every system):
evidence recall at k = 5 and 10 items and at budgets of 100 / 200 / 500 / 1,000
words of retrieved text (whole turns only, in rank order, stop at the first turn
that does not fit); answer-in-context rate per budget; per category and
overall for categories 1–4 (category 5 = adversarial is reported, not pooled).
Evidence ids are split on ``[;, ]`` and normalised ("D:11:26" -> "D11:26",
"D30:05" -> "D30:5"); ids that are malformed or not in the conversation are
dropped and counted; questions left without evidence are excluded from recall
and counted. Gold answers are lower-cased with punctuation removed; category 3
uses the text before ';'. Recall is against the raw LoCoMo evidence (not the
audit's corrections).

memgrove entries are split into per-turn segments: an entry of one message is
one segment (all its words); for a window of several messages the verbatim
curator writes one "**Speaker**: text" paragraph per message in the Narrative
section, in the order of ``sources``; the words before the Narrative (the
title heading) go to the first message's segment, anything after it to the last.
When the paragraphs do not match the sources one to one (e.g. LLM-curated
entries) the entry's words are split evenly across its sources (counted in the
report as ``segmenting.even``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
if str(HERE) not in sys.path:  # `import harness` however this file is run
    sys.path.insert(0, str(HERE))

from harness import cli  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.datasets.locomo import (  # noqa: E402,F401  (names the tests and other benchmarks read here)
    AIC_KEYS, BASELINES, BUDGETS, CATEGORIES, KS, OVERALL, POOLED, RECALL_KEYS, SYSTEMS, Question, Turn, bm25_sessions,
    bm25_turns, default_data, load_samples, normalize_evidence, parse_evidence_id, questions_of, to_conversation,
    turns_of)
from harness.report import conversation_versions, dump_json, log, meaning  # noqa: E402,F401
from harness.retrievers import (  # noqa: E402,F401
    DEFAULT_PREFETCH, DEFAULT_VARIANT, VARIANTS, MemgroveRetriever, Retrieved, Variant, entry_body, entry_segments, env_without,
    memgrove_system, with_tree_overrides)
from locomo_analysis import (  # noqa: E402,F401
    judge_prompt, lexical_reach, llm_answer_and_judge, llm_summary, lost_evidence, lost_vs, order_effect, parse_label,
    reach_summary)
from locomo_report import render_markdown  # noqa: E402

# Issue: flat BM25 over speaker-prefixed LoCoMo turns (bm25s, lower-cased), categories 1-4, by budget.
EXPECTED_BM25_TURNS = {100: 0.364, 200: 0.468, 500: 0.579, 1000: 0.643}


# -- scoring one question -------------------------------------------------------------------

def score(q: Question, r: Retrieved) -> dict[str, Any]:
    return rm.score_items(r.items, q.evidence, q.answer, KS, BUDGETS)


def aggregate(records: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Means per category and pooled over categories 1-4, for one system."""
    groups: dict[str, list[dict]] = {str(c): [] for c in CATEGORIES}
    for rec in records:
        groups[str(rec["category"])].append(rec)
    groups[OVERALL] = [rec for rec in records if rec["category"] in POOLED]
    out = {}
    for g, recs in groups.items():
        s = [rec["systems"][system] for rec in recs]
        with_ev = [x for x in s if "R@5" in x]
        with_ans = [x for x in s if "AIC@100w" in x]
        row: dict[str, Any] = {"questions": len(s), "with_evidence": len(with_ev), "with_answer": len(with_ans)}
        for key in RECALL_KEYS + ["R@all"]:
            row[key] = rm.mean(x[key] for x in with_ev)
        for key in AIC_KEYS:
            row[key] = rm.mean(float(x[key]) for x in with_ans)
        row["items_mean"] = rm.mean(x["n_items"] for x in s)
        row["filled_1000w"] = rm.mean(float(x["filled"]) for x in s)
        out[g] = row
    return out


# -- the run -----------------------------------------------------------------------------------

def run(samples: list[dict[str, Any]], *, variant: Variant, prefetch_limit: int, model: Any = None,
        llm_systems: Sequence[str] = (), llm_budget: int = 1000, keep_questions: bool = True) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    tiers: Counter = Counter()
    tiers_by_cat: dict[int, Counter] = defaultdict(Counter)
    reported_ms: list[float] = []
    context_tokens: dict[str, list[int]] = {"sent": [], "files": []}
    context_entries, token_method = None, None
    curation, conv_rows = [], []
    segmenting: Counter = Counter()
    body_words, n_bodies, n_segs = 0, 0, 0
    hits_hist: Counter = Counter()
    reach: dict[int, list[tuple[float, float]]] = defaultdict(list)
    dropped = {"malformed": [], "unknown": []}
    llm_rows: list[dict[str, Any]] = []
    for sample in samples:
        cid = str(sample["sample_id"])
        turns = turns_of(sample)
        qs = questions_of(sample, turns)
        for q in qs:
            for kind in ("malformed", "unknown"):
                dropped[kind] += [{"conv": cid, "question": q.index, "id": x} for x in q.dropped[kind]]
        for c, v in lexical_reach(sample, turns, qs).items():
            reach[c] += v
        conv = to_conversation(sample)
        log(f"{cid}: {len(turns)} turns, {len(qs)} questions; curating ({variant.name}) ...")
        mg = memgrove_system(conv, window=variant.window, curator=variant.curator, prefetch_limit=prefetch_limit,
                             query_overrides=variant.query, tree_overrides=variant.tree, model=model,
                             fresh_signals=variant.fresh_signals, dream=variant.dream)
        curation.append({"conv": cid, **mg.curation})
        context_entries = mg.settings.direct_max_entries
        systems: dict[str, Callable[[str], Retrieved]] = {"memgrove": mg, "bm25-turns": bm25_turns(turns),
                                                          "bm25-sessions": bm25_sessions(turns)}
        speakers = (str(sample["conversation"].get("speaker_a", "A")), str(sample["conversation"].get("speaker_b", "B")))
        t0 = time.perf_counter()
        try:
            with env_without("MEMGROVE_MODEL"):   # the query graph answers without an LLM (retrieval only)
                for q in qs:
                    rec = {"conv": cid, "index": q.index, "category": q.category, "evidence": q.evidence,
                           "quarter": min(3, 4 * q.index // max(1, len(qs))), "systems": {}}
                    for name, retr in systems.items():
                        r = retr(q.question)
                        latencies[name].append(r.latency_ms)
                        rec["systems"][name] = score(q, r)
                        if name == "memgrove":
                            tiers[str(r.info["tier"])] += 1
                            tiers_by_cat[q.category][str(r.info["tier"])] += 1
                            if r.info.get("reported_ms") is not None:
                                reported_ms.append(float(r.info["reported_ms"]))
                            if "context_tokens" in r.info:
                                context_tokens["sent"].append(r.info["context_tokens"])
                                context_tokens["files"].append(r.info["context_tokens_files"])
                                token_method = r.info["token_method"]
                            rec["tier"] = r.info["tier"]
                            hits_hist[r.info["entries"]] += 1
                        if model is not None and name in llm_systems and q.category in POOLED and q.raw_answer is not None:
                            ctx = rm.within_budget(r.items, llm_budget).text
                            res = llm_answer_and_judge(model, q, ctx, speakers)
                            llm_rows.append({"conv": cid, "index": q.index, "category": q.category, "system": name,
                                             **res})
                    records.append(rec)
        finally:
            for segs, _how in mg.bodies.values():
                body_words += sum(s.words for s in segs)
                n_bodies += 1
                n_segs += len(segs)
            segmenting.update(mg.segmenting)
            mg.close()
        conv_rows.append({"conv": cid, "turns": len(turns), "turn_words": sum(rm.word_count(t.prefixed) for t in turns),
                          "sessions": len({t.session for t in turns}), "questions": len(qs),
                          "query_seconds": round(time.perf_counter() - t0, 1), **{k: mg.curation[k] for k in
                                                                                  ("seconds", "ops", "entries")}})
        log(f"  curated in {mg.curation['seconds']:.1f} s ({mg.curation['entries']} entries); "
            f"{len(qs)} questions x {len(systems)} systems in {time.perf_counter() - t0:.1f} s")

    by_system = {s: aggregate(records, s) for s in SYSTEMS}
    ratios = {}
    for b in BASELINES:
        ratios[b] = {g: {k: (by_system["memgrove"][g][k] / by_system[b][g][k]
                             if by_system["memgrove"][g][k] is not None and by_system[b][g][k] else None)
                         for k in RECALL_KEYS + AIC_KEYS} for g in by_system["memgrove"]}
    n_turns = sum(c["turns"] for c in conv_rows)
    turn_words = sum(c["turn_words"] for c in conv_rows)
    excluded = Counter(str(r["category"]) for r in records if not r["evidence"])
    report: dict[str, Any] = {
        "systems": by_system,
        "ratios": ratios,
        "latency_ms": {s: rm.latency_summary(v) for s, v in latencies.items()},
        "memgrove": {
            "tiers": dict(sorted(tiers.items())),
            "tiers_by_category": {str(c): dict(sorted(v.items())) for c, v in sorted(tiers_by_cat.items())},
            "reported_latency_ms": rm.latency_summary(reported_ms),
            "llm_context_tokens": {"direct_max_entries": context_entries, "token_method": token_method,
                                   **{k: rm.latency_summary(v) for k, v in context_tokens.items()}},
            "curation": curation,
            "curation_seconds_total": round(sum(c["seconds"] for c in curation), 2),
            "entries_total": sum(c["entries"] for c in curation),
            "entries_hist": {str(k): v for k, v in sorted(hits_hist.items())},
            "segmenting": dict(segmenting),
            "retrieved_entry_words_mean": round(body_words / n_bodies, 1) if n_bodies else None,
            "retrieved_segment_words_mean": round(body_words / n_segs, 1) if n_segs else None,
            "distinct_entries_retrieved": n_bodies,
            "lost_evidence_1000w": {s: lost_evidence(records, s) for s in SYSTEMS},
            "lost_vs_bm25_turns_1000w": lost_vs(records, "memgrove", "bm25-turns"),
        },
        "order_effect": order_effect(records),
        "lexical_reach": reach_summary(reach),
        "data": {
            "conversations": conv_rows,
            "turns": n_turns,
            "turn_words_mean": round(turn_words / n_turns, 1) if n_turns else None,
            "questions": len(records),
            "by_category": {str(c): sum(1 for r in records if r["category"] == c) for c in CATEGORIES},
            "excluded_no_evidence": dict(sorted(excluded.items())),
            "evidence_dropped": dropped,
        },
        "baseline_check": {str(b): {"expected": EXPECTED_BM25_TURNS[b],
                                     "measured": by_system["bm25-turns"][OVERALL][f"R@{b}w"]} for b in BUDGETS},
    }
    if model is not None and llm_systems:
        report["llm"] = llm_summary(llm_rows, llm_budget)
    if keep_questions:
        report["questions"] = [
            {"conv": r["conv"], "index": r["index"], "category": r["category"], "tier": r.get("tier"),
             **{s: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r["systems"][s].items()
                    if k != "lost"} for s in SYSTEMS}} for r in records]
        if llm_rows:
            report["llm_answers"] = llm_rows
    return report


# -- the report --------------------------------------------------------------------------------


def output_stem(variant: str, n: int | None, total: int, llm: bool, llm_curator: bool,
                prefetch_limit: int = DEFAULT_PREFETCH, tree: Sequence[str] = ()) -> str:
    stem = "locomo"
    if variant != DEFAULT_VARIANT:
        stem += f"_{variant}"
    for kv in tree:  # --tree overrides (an ablation, or the engine) name their own files
        key, _, value = kv.partition("=")
        stem += f"_{key.strip()}-{value.strip()}"
    if prefetch_limit != DEFAULT_PREFETCH:
        stem += f"_p{prefetch_limit}"
    if llm_curator:
        stem += "_llmcurator"
    if n is not None and n < total:
        stem += f"_c{n}"
    if llm:
        stem += "_llm"
    return stem


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = cli.parser(__doc__)
    ap.add_argument("--data", type=Path, default=None,
                    help="locomo10.json (default: $LOCOMO_PATH or ../shared/datasets/locomo/locomo10.json from the repo)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"),
                    help="the fixed half of the conversations (benchmarks/splits.json; default all)")
    ap.add_argument("--window", type=int, default=None, help="override the variant's curation window")
    cli.memgrove_options(ap, out=RESULTS, prefetch=DEFAULT_PREFETCH)
    ap.add_argument("--llm", action="store_true",
                    help="LLM mode: curate with the LLM curator (Memory.learn), answer every question from the "
                         "retrieved context with the model and grade it with the LLM judge")
    ap.add_argument("--verbatim", action="store_true",
                    help="with --llm: keep the verbatim curator (answers and judge only)")
    ap.add_argument("--llm-curator", action="store_true",
                    help="curate with the LLM curator only (recall, no answers or judge)")
    ap.add_argument("--llm-systems", default="memgrove",
                    help="comma-separated systems to answer with --llm (default: memgrove)")
    ap.add_argument("--llm-budget", type=int, default=1000, help="words of retrieved context given to the model")
    ap.add_argument("--seed", type=int, default=0, help="recorded only: nothing here is random")
    a = ap.parse_args(argv)
    if a.verbatim and not a.llm:
        raise SystemExit("--verbatim goes with --llm (without it the verbatim curator is the default)")

    model = None
    if a.llm or a.llm_curator:
        from memgrove.graphs.llm import ModelUnavailable, model_configured, resolve_model

        if not model_configured():
            raise SystemExit("--llm/--llm-curator need a model: set MEMGROVE_MODEL and OPENAI_API_KEY (or "
                             "OPENAI_BASE_URL for a local server). Nothing was run; no accuracy is reported.")
        try:
            model = resolve_model(timeout=120.0, retries=2)
        except ModelUnavailable as exc:
            raise SystemExit(f"--llm/--llm-curator: {exc}. Nothing was run; no accuracy is reported.")
    llm_systems = [s.strip() for s in a.llm_systems.split(",") if s.strip()] if a.llm else []
    unknown = [s for s in llm_systems if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"--llm-systems: unknown {unknown}; choose from {', '.join(SYSTEMS)}")

    data_path = (a.data or default_data()).resolve()
    if not data_path.exists():
        raise SystemExit(f"LoCoMo data not found at {data_path} (give --data or set LOCOMO_PATH)")
    raw = data_path.read_bytes()
    samples = load_samples(data_path)
    import splits   # benchmarks/splits.py: the fixed dev/test halves
    samples = [s for s in samples if splits.in_split("locomo", s["sample_id"], a.split)]
    chosen = samples[:a.conversations] if a.conversations else samples
    variant = VARIANTS[a.variant]
    variant = with_tree_overrides(variant, a.tree)
    if a.window is not None:
        variant = dataclasses.replace(variant, window=a.window, name=f"{variant.name}@window{a.window}")
    llm_curator = a.llm_curator or (a.llm and not a.verbatim)
    if llm_curator:
        variant = dataclasses.replace(variant, curator="llm", name=f"{variant.name}+llm-curator")

    command, machine = cli.start("locomo.py", argv, a.seed)
    log(f"memgrove LoCoMo benchmark: {len(chosen)} conversations, variant {variant.name}, "
        f"prefetch_limit {a.prefetch_limit}, load avg {machine['loadavg']}")
    t0 = time.perf_counter()
    body = run(chosen, variant=variant, prefetch_limit=a.prefetch_limit, model=model, llm_systems=llm_systems,
               llm_budget=a.llm_budget, keep_questions=not a.no_questions)
    cli.load_end(machine)
    report = {
        "benchmark": "locomo",
        "machine": machine,
        "versions": conversation_versions(),
        "command": command,
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(data_path), "data_sha256": hashlib.sha256(raw).hexdigest(),
                   "conversations": [s["sample_id"] for s in chosen], "variant": dataclasses.asdict(variant),
                   "meaning": meaning(variant.tree), "prefetch_limit": a.prefetch_limit, "ks": list(KS), "budgets": list(BUDGETS),
                   "model": os.environ.get("MEMGROVE_MODEL") if model is not None else None,
                   "llm_systems": llm_systems, "words": "whitespace-separated tokens",
                   "evidence": "raw LoCoMo evidence, normalised; not the audit's corrections"},
        **body,
    }
    stem = output_stem(a.variant if a.window is None else f"{a.variant}-w{a.window}", len(chosen), len(samples),
                       bool(llm_systems), llm_curator, a.prefetch_limit, a.tree) \
        + ("" if a.split == "all" else f"_{a.split}")
    cli.finish(report, render_markdown(report), a.out, stem, not a.no_write)
    return report


if __name__ == "__main__":
    main()

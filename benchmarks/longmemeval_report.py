"""The LongMemEval report's markdown (benchmarks/longmemeval.py writes it beside the JSON)."""

from __future__ import annotations

from typing import Any

from harness.datasets.longmemeval import (BUDGET_BASELINES, BUDGET_KEYS, KS, LEVEL_BASELINES, LEVEL_SYSTEMS, LEVELS,
                                          METRICS, OVERALL, SYSTEMS)
from harness.report import conversation_machine_line, head, latency_table, table
from harness.report import pct as _pct
from harness.report import times as _x


def _short(m: str) -> str:
    return m.replace("recall_any", "R_any").replace("recall_all", "R_all").replace("ndcg_any", "NDCG")


def _level_table(report: dict[str, Any], level: str, group: str) -> list[str]:
    syst, rat = report["systems"], report["ratios"][level]
    names = LEVEL_SYSTEMS[level]
    bases = LEVEL_BASELINES[level]
    returned = [syst[s][level][group]["returned_mean"] for s in names]
    return table(["metric", *names, *(f"memgrove ÷ {b}" for b in bases)],
                 [[_short(m), *(_pct(syst[s][level][group][m]) for s in names), *(_x(rat[b][group][m]) for b in bases)]
                  for m in METRICS]
                 + [[f"{'sessions' if level == 'session' else 'user turns'} returned (mean)",
                     *("—" if v is None else f"{v:.1f}" for v in returned), *[""] * len(bases)]])


def _budget_table(report: dict[str, Any], group: str) -> list[str]:
    syst, rat = report["systems"], report["ratios"]["budget"]
    return table(["budget", *SYSTEMS, *(f"memgrove ÷ {b}" for b in BUDGET_BASELINES)],
                 [[k, *(_pct(syst[s]["budget"][group][k]) for s in SYSTEMS),
                   *(_x(rat[b][group][k]) for b in BUDGET_BASELINES)] for k in BUDGET_KEYS])


def render_markdown(report: dict[str, Any]) -> str:
    c, d, mg = report["config"], report["data"], report["memgrove"]
    syst = report["systems"]
    L = head("# memgrove LongMemEval retrieval benchmark", conversation_machine_line(report), report,
             f" · data `{c['data']}` (sha256 {c['data_sha256'][:12]}…, {c['file_questions']} questions in the file; "
             f"run: {d['questions']} questions"
             + (f" of types {', '.join(c['types'])}" if c["types"] else "")
             + (f", the first {c['limit']}" if c["limit"] is not None else "")
             + f"; {c['abstention_excluded']} abstention questions left out)")
    v = c["variant"]
    cache = mg["cache"]
    L.append(f"**memgrove** = one fresh memory per question holding its haystack, curated by the verbatim curator "
             f"(variant `{v['name']}`: window {v['window']}"
             + (f", tree overrides {v['tree']}" if v["tree"] else "")
             + (f", query overrides {v['query']}" if v["query"] else "")
             + f"), queried with the question text through the query graph, `prefetch_limit={c['prefetch_limit']}` "
             "(product default 10), every other setting default, no LLM; ranked = the graph's entry hits. "
             "**bm25-turns** / **bm25-sessions** = `bm25s` defaults, lower-cased `\\w+` tokens, over LongMemEval's "
             "official retrieval corpora: user turns / sessions as their user turns joined (the official code "
             "indexes user turns only); a retrieved session brings all its turns. Percent; ratio = memgrove ÷ baseline.")
    L.append("")
    L.append(f"Official metrics (LongMemEval `eval_utils.py`: recall_any@k, recall_all@k, NDCG@k; gold = corpus ids "
             f"containing \"answer\") over {d['scored']} questions: abstention questions and questions without a "
             f"`has_answer` user turn (not scored: {d['not_scored_no_user_evidence'] or 'none'}) are skipped, as the "
             "official code does. Session ranking = sessions by first appearance among the ranked items' turns; turn "
             "ranking = user turns by first appearance (memgrove entries holding an assistant turn contribute nothing "
             "at turn level). Rankings are what a system returned, not padded.")
    L.append("")
    L.append("## Overall")
    L.append("")
    for level in LEVELS:
        L.append(f"**{level.capitalize()} level** ({syst['memgrove'][level][OVERALL]['n']} questions)")
        L.append("")
        L.extend(_level_table(report, level, OVERALL))
        L.append("")
    b = syst["memgrove"]["budget"][OVERALL]
    L.append(f"**Evidence recall within a word budget** ({b['n']} questions; evidence = turns with `has_answer`, "
             f"user or assistant; fallback to the answer sessions' turns for "
             f"{len(d['evidence_fallback_to_answer_sessions'])}; budget rule of `harness/metrics.py`: whole turns "
             f"in rank order, stop at the first that does not fit; a haystack averages {d['words_mean'] or 0:,.0f} "
             "words)")
    L.append("")
    L.extend(_budget_table(report, OVERALL))
    L.append("")
    L.append("Budget filled at 4,000 words (the system returned at least that much text): "
             + ", ".join(f"{s} {_pct(syst[s]['budget'][OVERALL]['filled_4000w'])}%" for s in SYSTEMS)
             + f"; memgrove returns at most `prefetch_limit` = {c['prefetch_limit']} entries.")
    L.append("")
    L.append("bm25-turns returns user turns only, so evidence in assistant turns (single-session-assistant) is out "
             "of its reach at any budget; memgrove and bm25-sessions return assistant turns too.")
    L.append("")
    L.append("## Per question type")
    L.append("")
    groups = [g for g in syst["memgrove"]["budget"] if g != OVERALL]
    for level in LEVELS:
        L.append(f"**{level.capitalize()} level** (k = {', '.join(map(str, KS))})")
        L.append("")
        L += table(["type", "n", "system", *map(_short, METRICS)],
                   [[g, row["n"], s, *(_pct(row[k]) for k in METRICS)] for g in groups for s in LEVEL_SYSTEMS[level]
                    if (row := syst[s][level][g])["n"]]) + [""]
    L.append("**Evidence recall within a budget**")
    L.append("")
    L += table(["type", "n", *(f"{s} {k}" for k in BUDGET_KEYS for s in SYSTEMS)],
               [[g, syst["memgrove"]["budget"][g]["n"], *(_pct(syst[s]["budget"][g][k]) for k in BUDGET_KEYS
                                                          for s in SYSTEMS)] for g in groups])
    L.append("")
    L.append("## memgrove: curation, cache, tiers, latency")
    L.append("")
    L.append(f"Curation: {cache['curated']} questions curated now ({cache['curation_seconds']:.1f} s of "
             f"`Memory.ingest`), {cache['hits']} copied from the cache ({cache['load_seconds']:.1f} s); opening the "
             f"memories and building the graphs took {cache['open_seconds']:.1f} s. Cache `{cache['dir']}` (curator "
             f"{cache['curator_version']}). Entries per memory (mean): {mg['entries_mean'] or 0:.0f}; empty turns not "
             f"curated: {mg['empty_turns_not_curated']}; entry segmenting: {mg['segmenting']}.")
    L.append("")
    total_q = sum(mg["tiers"].values()) or 1
    L.append("Tier distribution (answer[\"tier\"]): " + ", ".join(
        f"tier {t}: {n} ({n / total_q * 100:.1f}%)" for t, n in mg["tiers"].items()) + ". Entry hits per question: "
             + ", ".join(f"{k}: {n}" for k, n in mg["entries_hist"].items()) + ".")
    L.append("")
    L.extend(latency_table(report["latency_ms"], SYSTEMS))
    L.append("")
    L.append("Where the evidence is at 4,000 words (evidence turns): " + "; ".join(
        f"{s}: " + ", ".join(f"{k} {n}" for k, n in dd.items()) for s, dd in mg["lost_evidence_4000w"].items()) + ".")
    L.append("")
    gc = report["gold_check"]
    L.append(f"Data: {d['questions']} questions, {d['sessions_mean'] or 0:.1f} sessions / {d['turns_mean'] or 0:.1f} "
             f"turns / {d['words_mean'] or 0:,.0f} words per haystack (mean), {d['evidence_turns_mean'] or 0:.1f} "
             f"evidence turns per question; evidence from `has_answer` for {d['evidence_source'].get('has_answer', 0)}, "
             f"from the answer sessions for {len(d['evidence_fallback_to_answer_sessions'])}, none for "
             f"{len(d['no_evidence'])}. Official session gold (ids containing \"answer\") differs from "
             f"`answer_session_ids` for {gc['mismatches']} of the {d['scored']} scored questions.")
    L.append("")
    return "\n".join(L)

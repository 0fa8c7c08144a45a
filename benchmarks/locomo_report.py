"""The LoCoMo report's markdown (benchmarks/locomo.py writes it beside the JSON)."""

from __future__ import annotations

from typing import Any

from harness.datasets.locomo import (AIC_KEYS, BASELINES, BUDGETS, CATEGORIES, KS, OVERALL, POOLED, RECALL_KEYS,
                                      SYSTEMS)
from harness.report import conversation_machine_line, head, latency_table, meaning_phrase, table
from harness.report import pct as _pct
from harness.report import times as _x

AIC_TABLE_BUDGETS = (200, 500)


METRIC_LABELS = {**{f"R@{k}": f"R@{k}" for k in KS}, **{f"R@{b}w": f"R@{b}w" for b in BUDGETS},
                 **{f"AIC@{b}w": f"answer-in-context @{b}w" for b in BUDGETS}}
TABLE_METRICS = RECALL_KEYS + [f"AIC@{b}w" for b in AIC_TABLE_BUDGETS]


machine_line = conversation_machine_line


def render_markdown(report: dict[str, Any]) -> str:
    c = report["config"]
    syst, ratios, mg, data = report["systems"], report["ratios"], report["memgrove"], report["data"]
    L = head("# memgrove LoCoMo retrieval benchmark", machine_line(report), report,
             f" · data `{c['data']}` (sha256 {c['data_sha256'][:12]}…, {len(data['conversations'])} conversations, "
             f"{data['turns']:,} turns, {data['questions']:,} questions)")
    v = c["variant"]
    L.append(f"**memgrove** = variant `{v['name']}` ({v['description']}): curator {v['curator']}, window "
             f"{v['window']}, query graph `prefetch_limit={c['prefetch_limit']}` (product default 10)"
             + (f", query overrides {v['query']}" if v["query"] else "")
             + (f", tree overrides {v['tree']}" if v["tree"] else "") + meaning_phrase(c)
             + ", all other settings default, no LLM in the query graph; `Memory.open(..., durable=False)`. "
             "Retrieved = the graph's entry hits in order; text = the entry file without frontmatter (its title "
             "heading and sections, as a reader sees it). **bm25-turns** / **bm25-sessions** = `bm25s` defaults over "
             "speaker-prefixed turns / whole sessions, lower-cased `\\w+` tokens. Recall: fraction of a question's "
             "evidence dia_ids (raw LoCoMo evidence, normalised) among the retrieved items' provenance; at k items, "
             "and at a word budget (whole turns only, in rank order, stop at the first that does not fit). "
             "Answer-in-context: the normalised gold answer (category 3: before ';') occurs in the text within the "
             "budget. Percent; ratio = memgrove ÷ baseline.")
    L.append("")
    L.append("## Overall, categories 1–4")
    L.append("")
    L.extend(_compare_table(syst, ratios, OVERALL))
    L.append("")
    bc = report["baseline_check"]
    L.append("Baseline check (bm25-turns, categories 1–4, expected from the issue): " + ", ".join(
        f"@{b}w {_pct(x['measured'])} vs {x['expected'] * 100:.1f}" for b, x in bc.items()) + ".")
    L.append("")
    lr = report.get("lexical_reach", {}).get(OVERALL)
    if lr and lr["own_words"] is not None:
        L.append(f"Lexical reach (categories 1–4): {_pct(lr['own_words'])}% of a question's evidence turns (mean per "
                 f"question) share a word with it (memgrove's analyzer, the speakers' names not counted), "
                 f"{_pct(lr['with_reply_keywords'])}% counting the question each turn answers; the rest only links, "
                 "folders or the speaker can reach. Per category in the JSON (`lexical_reach`).")
        L.append("")
    L.append("## Per category")
    L.append("")
    for cat in [str(k) for k in CATEGORIES]:
        row = syst["memgrove"][cat]
        L.append(f"### {cat} {CATEGORIES[int(cat)]} ({row['questions']} questions, {row['with_evidence']} with "
                 f"evidence, {row['with_answer']} with an answer to look for)")
        L.append("")
        L.extend(_compare_table(syst, ratios, cat))
        L.append("")
    L.append("## Per system, all metrics by category")
    L.append("")
    groups = [str(k) for k in CATEGORIES] + [OVERALL]
    for s in SYSTEMS:
        L.append(f"**{s}**")
        L.append("")
        keys = RECALL_KEYS + ["R@all"] + AIC_KEYS
        L += table(["category", "n (evidence)", *(METRIC_LABELS.get(k, k) for k in keys), "items returned (mean)",
                    "1,000 w filled"],
                   [[OVERALL if g == OVERALL else f"{g} {CATEGORIES[int(g)]}", r["with_evidence"],
                     *(_pct(r[k]) for k in keys), f"{r['items_mean']:.1f}", f"{_pct(r['filled_1000w'])}%"]
                    for g in groups if (r := syst[s][g])]) + [""]
    L.append("R@all = recall over every item the system returned (memgrove: all entry hits of the graph, at most "
             f"`prefetch_limit` = {c['prefetch_limit']}; baselines: every item with a positive score).")
    L.append("")
    L.append("## memgrove: tiers, latency, curation")
    L.append("")
    total_q = sum(mg["tiers"].values())
    L.append("Tier distribution (answer[\"tier\"]): " + ", ".join(
        f"tier {t}: {n} ({n / total_q * 100:.1f}%)" for t, n in mg["tiers"].items()) + ". By category: " + "; ".join(
        f"{cat}: " + ", ".join(f"t{t} {n}" for t, n in d.items()) for cat, d in mg["tiers_by_category"].items()) + ".")
    L.append("")
    L.extend(latency_table(report["latency_ms"], SYSTEMS))
    lat = mg["reported_latency_ms"]
    L.append(f"| memgrove answer[\"latency_ms\"] (self-reported) | {lat['n']} | {lat['p50']} | {lat['p95']} | "
             f"{lat['p99']} | {lat['mean']} | {lat['max']} |")
    L.append("")
    L.append(f"Latency is with `prefetch_limit={c['prefetch_limit']}` (each search parses that many entries), on a "
             "shared 2-core machine with the baselines' queries interleaved.")
    L.append("")
    ctx = mg.get("llm_context_tokens") or {}
    if ctx.get("sent", {}).get("n"):
        sent, files = ctx["sent"], ctx["files"]
        L.append(f"LLM context: the entries tier 3 would send a model for each question (its best "
                 f"{ctx['direct_max_entries']} hits plus one hop of their links, each as its reader view: title, "
                 f"sources, updated, body) are {sent['p50']:.0f} tokens p50, {sent['p95']:.0f} p95 "
                 f"({ctx['token_method']}); the "
                 f"same entries as whole files with their frontmatter would be {files['p50']:.0f} / {files['p95']:.0f} "
                 f"({files['p50'] / sent['p50']:.2f}× at p50). No model ran.")
        L.append("")
    L += table(["conversation", "sessions", "turns", "words", "questions", "curation s", "ops", "entries",
                "query phase s"],
               [[r["conv"], r["sessions"], r["turns"], f"{r['turn_words']:,}", r["questions"], f"{r['seconds']:.2f}",
                 r["ops"], r["entries"], r["query_seconds"]] for r in data["conversations"]]
               + [["**total**", "", f"{data['turns']:,}", "", f"{data['questions']:,}",
                   f"{mg['curation_seconds_total']:.2f}", "", f"{mg['entries_total']:,}", ""]])
    L.append("")
    L.append(f"Entry size: retrieved entries average {mg['retrieved_entry_words_mean']} words of text "
             f"({mg['retrieved_segment_words_mean']} per turn they hold; {mg['distinct_entries_retrieved']:,} distinct "
             f"entries) vs {data['turn_words_mean']} words per speaker-prefixed turn for the baselines. "
             f"Segmenting: {mg['segmenting']}.")
    L.append("")
    hist = mg["entries_hist"]
    L.append("Entry hits per question (count of questions): " + ", ".join(f"{k}: {n}" for k, n in hist.items()) + ".")
    L.append("")
    lost = mg["lost_evidence_1000w"]
    L.append("Where the evidence is at 1,000 words (categories 1–4, evidence ids): " + "; ".join(
        f"{s}: " + ", ".join(f"{k} {n}" for k, n in sorted(d.items())) for s, d in lost.items()) + ".")
    lv = mg["lost_vs_bm25_turns_1000w"]
    L.append(f"Evidence bm25-turns has within 1,000 words but memgrove does not: {sum(lv.values())} ids; memgrove "
             + ", ".join(f"{k} {n}" for k, n in sorted(lv.items())) + ".")
    L.append("")
    oe = report["order_effect"]
    L.append("Recall by position in the conversation's question list (categories 1–4; quarter 1 = asked first, "
             "each conversation queried in file order through one memory):")
    L.append("")
    L += table(["system", *(f"Q{k} {m}" for k in range(1, 5) for m in ("R@10", "R@1000w"))],
               [[s, *(_pct(oe[s][str(k)][m]) for k in range(1, 5) for m in ("R@10", "R@1000w"))] for s in SYSTEMS])
    L.append("")
    L.append(f"Data: questions without valid evidence (excluded from recall) by category: "
             f"{data['excluded_no_evidence'] or 'none'}; evidence ids dropped: "
             f"{len(data['evidence_dropped']['malformed'])} malformed "
             f"({', '.join(repr(x['id']) for x in data['evidence_dropped']['malformed']) or '-'}), "
             f"{len(data['evidence_dropped']['unknown'])} not in the conversation "
             f"({', '.join(x['conv'] + ' ' + x['id'] for x in data['evidence_dropped']['unknown']) or '-'}).")
    L.append("")
    if report.get("llm"):
        llm = report["llm"]
        L.append(f"## LLM answers (model `{c.get('model')}`, context = the first {llm['context_budget_words']} words "
                 "of retrieved text, graded by the Mem0 CORRECT/WRONG judge prompt, categories 1–4)")
        L.append("")
        L += table(["system", *(f"{k} {CATEGORIES[k]}" for k in POOLED), "overall 1–4", "unparsed"],
                   [[s, *(f"{_pct(c_[g]['accuracy'])} (n={c_[g]['n']})" for g in [*map(str, POOLED), OVERALL]),
                     d["unparsed_labels"]] for s, d in llm["by_system"].items() if (c_ := d["by_category"])])
        L.append("")
    else:
        L.append("No LLM ran: no answer accuracy is reported.")
        L.append("")
    return "\n".join(L)


def _compare_table(syst: dict, ratios: dict, group: str) -> list[str]:
    return table(["metric", "memgrove", "bm25-turns", "bm25-sessions", "memgrove ÷ turns", "memgrove ÷ sessions"],
                 [[METRIC_LABELS[k], *(_pct(syst[s][group][k]) for s in SYSTEMS),
                   *(_x(ratios[b][group][k]) for b in BASELINES)] for k in TABLE_METRICS])

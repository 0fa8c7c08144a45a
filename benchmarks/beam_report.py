"""The BEAM report's markdown (benchmarks/beam.py writes it beside the JSON), and that of ``--compare``."""

from __future__ import annotations

from typing import Any

from harness.datasets.beam import (BUDGETS, OVERALL, PAIRED_KEYS, POOLED, RECALL_KEYS, SESSION_KEYS, SYSTEMS)
from harness.report import conversation_machine_line, head, latency_table, meaning_phrase, table
from harness.report import pct as _pct
from harness.report import times as _x

ARM_SYSTEMS = ("bm25-user-turns", "bm25-turns")   # references run once beside the arms


def render_compare(report: dict[str, Any]) -> str:
    c, syst = report["config"], report["systems"]
    names = list(report["arms"])
    L = [f"# memgrove BEAM {c['tier']}: search settings side by side", "",
         f"`{report['command']}` — {len(c['chats'])} chats, {report['data']['questions']} questions, "
         f"variant `{c['variant']['name']}`; each chat curated once, each arm's questions with a cleared cache "
         "and the same signals. Recall pooled over the types with evidence (abstention left out).", ""]
    L += table(["arm", *RECALL_KEYS, "p50 ms"], [[s, *(_pct(syst[s][OVERALL][k]) for k in RECALL_KEYS), f"{lat['p50']:.1f}"
                                                 if (lat := report["latency_ms"].get(s)) else ""]
                                                for s in names + list(ARM_SYSTEMS)])
    if report.get("embedded"):
        e = report["embedded"]
        L += ["", f"Every entry's vector computed after curating (`--embed`, as `memgrove reindex` does): "
              f"{e['entries']:,} entries in {e['seconds']:,.1f} s, {e['ms_per_entry']} ms each; the arms' "
              "latencies are warm searches."]
    if len(names) > 1:
        L += ["", f"Paired against `{names[0]}` (mean difference in points, questions won / lost):", ""] + table(
            ["arm", *PAIRED_KEYS], [[n, *(f"{100 * p[k]['mean_diff']:+.1f} ({p[k]['wins']}/{p[k]['losses']})"
                                          for k in PAIRED_KEYS)] for n in names[1:] if (p := report["paired"][n])])
    for k in ("R@10", "R@200w", "R@500w"):
        L += ["", f"{k} by question type:", ""] + table(["arm", *POOLED], [[s, *(_pct(syst[s][t][k]) for t in POOLED)]
                                                                           for s in names + list(ARM_SYSTEMS)])
    return "\n".join(L)


def _recall_table(report: dict[str, Any], group: str) -> list[str]:
    syst, ratio, rmsg = report["systems"], report["ratio_to_best_baseline"], report["ratio_to_best_message_baseline"]
    return table(["metric", *SYSTEMS, "memgrove ÷ best baseline", "÷ best message baseline"],
                 [[k, *(_pct(syst[s][group][k]) for s in SYSTEMS), _x(ratio[group][k]), _x(rmsg[group][k])]
                  for k in RECALL_KEYS] + [[f"sessions {k}", *(_pct(syst[s][group][k]) for s in SYSTEMS), "", ""]
                                           for k in SESSION_KEYS])


def render_markdown(report: dict[str, Any]) -> str:
    c, syst, data = report["config"], report["systems"], report["data"]
    L = head("# memgrove BEAM retrieval benchmark", conversation_machine_line(report), report,
             f" · data `{c['data']}` tier {c['tier']} ({len(data['chats'])} chats, {data['messages']:,} messages, "
             f"{data['questions']:,} questions; files {', '.join(sorted({r['file'] for r in data['chats']}))})")
    v = c["variant"]
    L.append(f"**memgrove** = variant `{v['name']}` ({v['description']}): verbatim curator, window {v['window']}, "
             f"roles kept (speaker = role), query graph `prefetch_limit={c['prefetch_limit']}`"
             + (f", tree overrides {v['tree']}" if v["tree"] else "") + meaning_phrase(c) + ", all other settings "
             "default, no LLM. **bm25-turns** / **bm25-user-turns** / **bm25-sessions** = `bm25s` defaults over "
             "role-prefixed messages / the user's messages only / whole sessions, lower-cased `\\w+` tokens. "
             "Recall = share of a question's `source_chat_ids` among the retrieved messages, at k items and at a "
             "word budget (whole messages, rank order, stop at the first that does not fit: LoCoMo's code). "
             "Percent. No LLM ran: no answer accuracy is reported.")
    L.append("")
    n = syst["memgrove"][OVERALL]["with_evidence"]
    L.append(f"## Overall: the nine question types with evidence ({n} questions; abstention left out)")
    L.append("")
    L.extend(_recall_table(report, OVERALL))
    L.append("")
    L.append("Best message baseline = the better of bm25-turns and bm25-user-turns. sessions S@k = share of the "
             "evidence's sessions among the sessions of the top k items; S@k-all = all of them there (the issue's "
             "session-level view). Where a chat has no more than k sessions, bm25-sessions' top k is the whole chat.")
    L.append("")
    L.append("## Per question type")
    L.append("")
    L += table(["type", "n", *(f"{s} R@10 / @200w / @500w" for s in SYSTEMS)], [
        [t, syst["memgrove"][t]["with_evidence"],
         *(" / ".join(_pct(syst[s][t][k]) for k in ("R@10", "R@200w", "R@500w")) for s in SYSTEMS)] for t in POOLED])
    L.append("")
    L.append("Every metric per type and system is in the JSON (`systems.<system>.<type>`).")
    L.append("")
    L.append("## Where the words and the evidence are, by role")
    L.append("")
    er = data["evidence_roles"]
    tot = sum(er.values()) or 1
    L.append(f"Evidence ids of the pooled questions: {er.get('user', 0)} in user messages "
             f"({er.get('user', 0) / tot * 100:.0f}%), {er.get('assistant', 0)} in assistant messages.")
    L.append("")
    L += table(["system", *(f"assistant share @{b}w" for b in BUDGETS), *(f"user ev. @{b}w" for b in (200, 1000)),
                *(f"assistant ev. @{b}w" for b in (200, 1000)), "wrong top-5 items (roles)", "wrong top-1 (roles)"],
               [[s, *(_pct(syst[s][OVERALL][f"assistant_share@{b}w"]) for b in BUDGETS),
                 *(_pct(br[who][f"R@{b}w"]) for who in ("user", "assistant") for b in (200, 1000)),
                 *(", ".join(f"{k} {n}" for k, n in br[f"wrong_top{i}_roles"].items()) for i in (5, 1))]
                for s in SYSTEMS if (br := report["by_role"][s])])
    L.append("")
    L += table(["system", *(f"used / empty / stopped by an assistant message @{b}w" for b in BUDGETS)], [
        [s, *(" / ".join(_pct(syst[s][OVERALL][f"{k}@{b}w"]) for k in ("used", "empty", "blocked_by_assistant"))
              for b in BUDGETS)] for s in SYSTEMS])
    L.append("")
    L.append("Assistant share = assistant words ÷ all words within the budget (pooled over the questions). "
             "User / assistant ev. = recall of the evidence ids in user / assistant messages (pooled over ids). "
             "Wrong top-5 = the top-5 items holding none of the question's evidence, by the role of their message "
             "(a session is mixed); wrong top-1 = the same for the first item. Used = words taken ÷ budget; empty = "
             "questions whose budget took nothing (the first message did not fit); stopped by an assistant message = "
             "questions whose budget walk ended at an assistant message that did not fit (percent of questions).")
    L.append("")
    conf = report["by_role"]["memgrove"].get("conflated_top5")
    if conf:
        L.append("memgrove's top-5 items that match the question on a term only through the analyzer (a stem or the "
                 "word-form table joining words that differ by more than an inflection): " + "; ".join(
                     f"{k} items {v['with_conflated_match']} of {v['items']} "
                     f"({v['with_conflated_match'] / max(1, v['items']) * 100:.0f}%)" for k, v in conf.items())
                 + ". Most frequent among the wrong items (question word → item word): "
                 + ", ".join(f"{p} ({n})" for p, n in list(conf["wrong"]["top_pairs"].items())[:12]) + ".")
        L.append("")
    L.append("## Paired per question: memgrove − baseline (pooled questions with evidence)")
    L.append("")
    L += table(["baseline", *(f"{k} mean diff (wins/losses/ties)" for k in PAIRED_KEYS)], [
        [b, *(f"{d[k]['mean_diff'] * 100:+.1f} ({d[k]['wins']}/{d[k]['losses']}/{d[k]['ties']})"
              if d[k]["mean_diff"] is not None else "—" for k in PAIRED_KEYS)] for b, d in report["paired"].items()])
    L.append("")
    L.append("## Latency and curation")
    L.append("")
    L.extend(latency_table(report["latency_ms"], SYSTEMS))
    L.append("")
    mg = report["memgrove"]
    L.append(f"Tier distribution: " + ", ".join(f"tier {t}: {n}" for t, n in mg["tiers"].items())
             + f". Retrieved entries average {mg['retrieved_entry_words_mean']} words "
             f"({mg['distinct_entries_retrieved']:,} distinct).")
    L.append("")
    L += table(["chat", "file", "sessions", "messages", "user words", "assistant words", "questions", "curation s",
                "entries", "query phase s"],
               [[r["chat"], r["file"], r["sessions"], r["messages"], f"{r['user_words']:,}", f"{r['assistant_words']:,}",
                 r["questions"], f"{r['seconds']:.1f}", r["entries"], r["query_seconds"]] for r in data["chats"]])
    L.append("")
    L.append(f"Data: questions without evidence by type: {data['without_evidence'] or 'none'}; evidence ids not in "
             f"the chat file read (dropped): {len(data['evidence_dropped'])}.")
    return "\n".join(L)

"""The curation cost report's markdown (benchmarks/curate_cost.py writes it beside the JSON)."""

from __future__ import annotations

from typing import Any, Callable

from harness.machine import machine_line
from harness.report import head, table


def _n(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if v.is_integer():
            return f"{int(v):,}"
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.2f}"
    return f"{v:,}"


def _r(v: Any) -> str:
    return "n/a" if v is None else f"{v:.2f}×"


PART_NAMES = {
    "system_prompt": "system prompt (curate_v1.md)", "tool_schemas": "tool schemas (4 tools, JSON)",
    "chunk_material": "chunk: new material", "earlier_context": "chunk: earlier context (overlap)",
    "prefetched_entries": "chunk: prefetched similar entries", "chunk_header": "chunk: header (label, now, domains)",
    "earlier_replies": "the model's own curate call, resent (closing call)",
    "tool_results": "curate tool result (closing call)",
    "message_overhead": "per-message overhead", "other": "other",
}


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def render_markdown(report: dict[str, Any]) -> str:
    m, c, rows, t = report["machine"], report["config"], report["rows"], report["summary"]
    real = c["real"]
    v = report["versions"]
    L = head("# memgrove curation cost benchmark (LoCoMo)",
             machine_line(m, f" · langchain {v.get('langchain')} · langgraph {v.get('langgraph')}"), report,
             f" (both settings) · data `{c['data']}` ({len(rows)} conversations) · chunk_chars {c['chunk_chars']}, "
             f"overlap {c['overlap']}")
    settings_text = ("Each conversation is curated twice, each time into a fresh temp memory, with "
                     "`Memory.learn(conversation=conv, settings=CurateSettings(chunk_chars=…, "
                     "chunk_overlap_chars=…, finish_on_curate=…))`: **ours** = `finish_on_curate=True`, the product "
                     "default (a chunk's agent loop ends as soon as a `curate` call has written); **ours, closing "
                     "call** = `finish_on_curate=False`, the previous behaviour (after the `curate` tool's answer the "
                     "model is called again and replies with a closing line). Both runs use today's "
                     "graphs/prompts/curate_v1.md, which no longer asks for a closing line, so the closing-call "
                     "columns are the old loop with the new prompt, not a replay of the first run.")
    if real:
        L.append(f"Model: **{c['model']}** (real, `MEMGROVE_MODEL`). {settings_text} Our tokens are the usage the "
                 f"model returned. ByteRover's prompt tokens are estimated with {report['token_method']}, its "
                 f"completion taken equal to ours (default setting).")
    else:
        L.append("Model: the scripted **echo curator** (deterministic, no LLM; these are estimates of what the "
                 "curator's loop sends, not measurements of a real LLM): to a chunk it replies with one `curate` "
                 "call (an UPSERT per 3-4 messages, ~60% of their words); to the `curate` tool's answer, when it is "
                 "asked, with one closing line. So it makes 1 call per chunk with finish_on_curate and 2 without, "
                 "the fewest a tool-calling curator can make: a real model that searches or reads before writing "
                 "(the prompt asks it to look) makes more calls, each resending the whole chunk conversation, so "
                 "these are lower bounds for calls and prompt tokens. It runs inside memgrove's real curate graph, "
                 "which sums the `usage_metadata` it attaches. " + settings_text)
        L.append("")
        L.append("Tokens: " + report["token_method"] + ", +3 per message +3 per reply (OpenAI cookbook); "
                 "characters are in the JSON. ByteRover (computed, not run): one call per session, prompt = "
                 "graphs/prompts/curate_v1.md as a stand-in for its system prompt (whose length we do not have) + "
                 "the session's full text, no tool schemas; completion = our `curate` calls' output for that "
                 "session.")
    L.append("")
    ratios = ("ratio_calls", "ratio_prompt_tokens", "ratio_calls_closing", "ratio_prompt_tokens_closing")
    L += table(["conversation", "sessions", "messages", "words", "chunks", "calls", "prompt tok", "completion tok",
                "closing: calls", "closing: prompt tok", "closing: completion tok", "BR calls", "BR prompt tok",
                "BR completion tok", "calls ours/BR", "prompt ours/BR", "calls closing/BR", "prompt closing/BR"],
               [[r["conversation"], r["sessions"], f"{r['messages']:,}", f"{r['words']:,}", r["ours"]["chunks"],
                 *(x for o in (r["ours"], r["ours_closing"], r["byterover"])
                   for x in (o["calls"], _n(o["prompt_tokens"]), _n(o["completion_tokens"]))),
                 *(_r(r[k]) for k in ratios)] for r in rows]
               + [[name, *(_n(s[k]) for k in ("sessions", "messages", "words", "chunks", "calls", "prompt_tokens",
                                              "completion_tokens", "calls_closing", "prompt_tokens_closing",
                                              "completion_tokens_closing", "br_calls", "br_prompt_tokens",
                                              "br_completion_tokens")), *(_r(s[k]) for k in ratios)]
                  for name, s in (("**total**", t["total"]), ("**median**", t["median"]))])
    L.append("")
    L.append("Calls / prompt tok / completion tok: ours (finish_on_curate, default); \"closing:\" the same with "
             "finish_on_curate=False. Words: the turns' text with image captions appended (\"[shares a photo: …]\"). "
             "Median row: the median of each column (ratios: the median of the per-conversation ratios); total row "
             "ratios: total ÷ total.")
    L.append("")
    if not real:
        pd, pc = report["prompt_tokens_by_part"], report["prompt_tokens_by_part_closing"]
        wd, wc = sum(pd.values()), sum(pc.values())
        L.append("Where our prompt tokens go (all conversations):")
        L.append("")
        L += table(["part", "ours: tokens", "share", "closing call: tokens", "share"],
                   [[PART_NAMES.get(k, k), f"{pd.get(k, 0):,}", _pct(pd.get(k, 0), wd), f"{pc.get(k, 0):,}",
                     _pct(pc.get(k, 0), wc)] for k in sorted(set(pd) | set(pc), key=lambda k: (-pd.get(k, 0),
                                                                                             -pc.get(k, 0)))
                    if pd.get(k, 0) or pc.get(k, 0)] + [["**total**", f"{wd:,}", "100%", f"{wc:,}", "100%"]])
        brp = report["byterover_prompt_tokens_by_part"]
        L.append("")
        L.append(f"ByteRover's computed prompt: system prompt {brp['system_prompt']:,}, session text "
                 f"{brp['session_text']:,}, overhead {brp['message_overhead']:,} tokens. Tool schemas bound per call: "
                 + ", ".join(f"`{k}` {v:,}" for k, v in report["tool_schema_tokens"].items()) + " tokens.")
        bkc = report["prompt_tokens_by_kind_closing"]
        ck, ckc = report["calls_by_kind"], report["calls_by_kind_closing"]
        comp_c = report["completion_tokens_by_kind_closing"]
        tt = t["total"]
        same = [r["same_curate_calls"] for r in rows]
        if wc and tt["calls_closing"]:
            L.append("")
            L.append(
                f"Measured, closing call vs finish_on_curate: with finish_on_curate=False the closing-line calls "
                f"were {ckc.get('final', 0):,} of {tt['calls_closing']:,} calls and took {bkc.get('final', 0):,} "
                f"prompt tokens ({_pct(bkc.get('final', 0), wc)} of that setting's) for "
                f"{comp_c.get('final', 0):,} completion tokens: each resends the system prompt, tool schemas, chunk "
                f"and the model's own `curate` call to get one line back. With finish_on_curate (the default) the "
                f"echo curator made {ck.get('final', 0)} closing calls: calls {tt['calls_closing']:,} → {tt['calls']:,} "
                f"(−{_pct(tt['calls_closing'] - tt['calls'], tt['calls_closing'])}), prompt tokens {wc:,} → {wd:,} "
                f"(−{_pct(wc - wd, wc)}), and ours/ByteRover goes from {_r(tt['ratio_calls_closing'])} to "
                f"{_r(tt['ratio_calls'])} in calls and from {_r(tt['ratio_prompt_tokens_closing'])} to "
                f"{_r(tt['ratio_prompt_tokens'])} in prompt tokens. The `curate` calls themselves are the same in "
                f"both settings (same prompt and reply tokens, call by call, and the same entries written) in "
                f"{sum(same)} of {len(same)} conversations.")
        if wd and tt["br_prompt_tokens"]:
            diff = wd - tt["br_prompt_tokens"]
            schemas, prefetched = pd.get("tool_schemas", 0), pd.get("prefetched_entries", 0)
            sysdiff = pd.get("system_prompt", 0) - brp["system_prompt"]
            rest = diff - schemas - prefetched - sysdiff
            L.append(
                f"What remains with finish_on_curate: {ck.get('curate', 0):,} `curate` calls for {tt['br_calls']:,} "
                f"sessions ({_r(tt['ratio_calls'])}: a chunk never spans two sessions, and a session longer than "
                f"chunk_chars makes more than one chunk), and {_r(tt['ratio_prompt_tokens'])} ByteRover's prompt "
                f"tokens. Of the {diff:,} prompt tokens more, the tool schemas bound to every call are {schemas:,} "
                f"({_pct(schemas, diff)}), the prefetched similar entries {prefetched:,} ({_pct(prefetched, diff)}), "
                f"the system prompt sent per chunk rather than per session {sysdiff:,} ({_pct(sysdiff, diff)}), and "
                f"the rest {rest:,} ({_pct(rest, diff)}: chunk headers, overlap context and message overhead; the new "
                f"material is the same messages as ByteRover's session text). No prompt caching is assumed anywhere: every call's whole prompt "
                f"counts.")
        L.append("")
    L.append("Checks per conversation and setting (fresh temp memory each; ours / closing call): entries written, "
             "`Memory.count()` (entries + context.md files), a search for a word (6+ letters) whose first 6 letters "
             "only one message has and the curated text keeps (seeded choice), whether that message's entry is in the "
             "top 5, and errors"
             + (" (a real model may paraphrase the word away)." if real else
                "; and whether memgrove's CurateReport totals (calls, prompt and completion tokens) equal the "
                "benchmark's own per-call records (consistent)."))
    L.append("")
    def pair(r: dict, f: Callable[[dict], Any]) -> str:
        return f"{f(r['ours'])} / {f(r['ours_closing'])}"

    def errs(o: dict) -> int:
        return len(o["errors"]) + (1 if o["stopped"] else 0) + len(o.get("model_errors", []))

    L += table(["conversation", "ops applied", "count", "search word", "hits", "its message in top 5", "curate s",
                "errors", *([] if real else ["consistent"])],
               [[r["conversation"], pair(r, lambda o: format(o["applied"], ",")),
                 pair(r, lambda o: format(o["count"], ",")), r["ours"]["search"]["word"],
                 pair(r, lambda o: o["search"]["hits"]), pair(r, lambda o: "yes" if o["search"]["message_in_top5"] else "no"),
                 pair(r, lambda o: format(o["curate_s"], ".1f")), pair(r, errs),
                 *([] if real else [pair(r, lambda o: "yes" if o["consistent"] else "NO")])] for r in rows])
    L.append("")
    return "\n".join(L)

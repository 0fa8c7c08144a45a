#!/usr/bin/env python
"""Curation cost benchmark: LLM calls and tokens of memgrove's LLM curator per LoCoMo conversation.

    python benchmarks/curate_cost.py                     # all 10 LoCoMo conversations, echo curator, seed 0
    python benchmarks/curate_cost.py --conversations 2   # smoke run
    python benchmarks/curate_cost.py --real              # the model of MEMGROVE_MODEL (OPENAI_API_KEY/BASE_URL)

Each conversation of ``locomo10.json`` is converted to memgrove's conversation
format (id = sample_id; per turn: id = dia_id, session = "session_N",
time = that session's date_time string as given, text = the turn text plus
"[shares a photo: <blip_caption>]" for image turns) and curated into a fresh
temp memory with ``Memory.learn(conversation=conv, model=..., settings=...)``:
the real LLM curator graph (graphs/curate.py: chunking, the curate_v1 system
prompt, prefetched entries, the ``create_agent`` loop with the four memory
tools), with a scripted model in the LLM's seat. Every conversation is curated
twice, each into its own fresh temp memory, with
``CurateSettings(chunk_chars=..., chunk_overlap_chars=..., finish_on_curate=...)``:

- **ours**: ``finish_on_curate=True``, the product default: a chunk's agent
  loop ends as soon as a ``curate`` call has written (graphs/curate.py
  ``_finish_on_curate``), so the model is not called again after it;
- **ours, closing call**: ``finish_on_curate=False``, the previous behaviour:
  after the ``curate`` tool's answer the model is called once more.

The scripted **echo curator** answers deterministically (seeded): to a chunk
it replies with ONE ``curate`` call, an UPSERT per 3-4 consecutive messages
(path ``people/<speaker>/<session>_<first message id>.md``, title, summary,
content restating those messages with ~60% of their words, keywords, tags,
sources = the message ids, a reason); to the tool's answer, when it is asked
(finish_on_curate off, or the call failed), it replies with one line. So it
makes the minimum a tool-calling curator can make: 1 call per chunk with
finish_on_curate, 2 without, no search or read. A real model that looks
before it writes (the prompt asks it to) makes more calls, each resending the
whole conversation so far, so the echo numbers are a lower bound for calls and
prompt tokens, not a measurement of an LLM. Every
reply carries ``usage_metadata``: input = estimated tokens of everything sent
in that call (system prompt, all messages, tool calls, tool results and the
JSON schemas of the bound tools), output = the reply (content + JSON of its
tool calls). memgrove sums those into the ``CurateReport``; the benchmark
checks that its own per-call tally gives the same sums, and that both settings
send the same ``curate`` calls (token for token) and write the same entries.

The **ByteRover** column is computed, not run: one curation call per session
whose prompt is a curation system prompt (graphs/prompts/curate_v1.md as a
stand-in for ByteRover's, whose length we do not have) plus the session's full
text formatted as ours (``tree.chunks.message_line``), no tool schemas; its
completion is taken equal to our ``curate`` calls' output for that session.

Tokens: tiktoken's ``o200k_base`` if it can be loaded (offline it cannot: the
encoding is downloaded on first use), else ceil(characters / 4), OpenAI's rule
of thumb, per segment; plus 3 tokens per message and 3 to prime the reply
(OpenAI cookbook ``num_tokens_from_messages``). Characters are reported too.

``--real`` runs the model configured by ``MEMGROVE_MODEL`` (with
``OPENAI_API_KEY`` or ``OPENAI_BASE_URL``) through ``Memory.learn`` and
reports the usage the model returned (``curate_cost_real.*``; both settings, so
twice the model calls of one run); without that
configuration it exits with a message. No number is made up for a real model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from curate_cost_echo import PER_MESSAGE, REPLY_PRIMING, _WORD, EchoCurator, kept_words  # noqa: E402
from curate_cost_report import render_markdown  # noqa: E402
from harness.datasets.locomo import default_data, to_conversation as locomo_conversation  # noqa: E402
from harness.machine import start, versions  # noqa: E402
from harness.report import RESULTS, log, publish, ratio as _ratio  # noqa: E402
from harness.stats import timed  # noqa: E402
from harness.tokens import TokenCounter  # noqa: E402
import harness.words_only  # noqa: E402,F401 - ranks by words alone (see there)
from memgrove import Memory  # noqa: E402
from memgrove.graphs.llm import prompt as load_prompt  # noqa: E402
from memgrove.graphs.settings import CurateSettings  # noqa: E402
from memgrove.tree.inputs.chunks import message_line  # noqa: E402
from memgrove.tree.entries.paths import snake_case  # noqa: E402

DATA = default_data()


def to_conversation(sample: dict[str, Any]) -> dict[str, Any]:
    """The harness's LoCoMo conversation, a message's time left out when its session has none."""
    conv = locomo_conversation(sample)
    return {"id": str(conv["id"]), "messages": [{k: v for k, v in m.items() if k != "time" or v}
                                                for m in conv["messages"]]}


def sessions_of(conv: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for m in conv["messages"]:
        out.setdefault(snake_case(m["session"]), []).append(m)
    return out


# -- ByteRover baseline (computed) ---------------------------------------------------------

def byterover(conv: dict[str, Any], system: str, count: TokenCounter,
              completion_of: Callable[[str], int | None]) -> dict[str, Any]:
    """One curation call per session: system prompt + the session's full text."""
    per = []
    for session, msgs in sessions_of(conv).items():
        text = "\n".join(message_line(m) for m in msgs)
        tokens = {"system_prompt": count(system), "session_text": count(text),
                  "message_overhead": 2 * PER_MESSAGE + REPLY_PRIMING}
        per.append({"session": session, "messages": len(msgs), "prompt_chars": len(system) + len(text),
                    "prompt_tokens": sum(tokens.values()), "prompt_tokens_by_part": tokens,
                    "completion_tokens": completion_of(session)})
    comp = [s["completion_tokens"] for s in per]
    return {"calls": len(per), "prompt_tokens": sum(s["prompt_tokens"] for s in per),
            "prompt_chars": sum(s["prompt_chars"] for s in per),
            "completion_tokens": None if any(c is None for c in comp) else sum(comp),
            "prompt_tokens_by_part": {k: sum(s["prompt_tokens_by_part"][k] for s in per)
                                      for k in ("system_prompt", "session_text", "message_overhead")},
            "sessions": per}


# -- one conversation --------------------------------------------------------------------------

def _sum_parts(records: list[dict[str, Any]], key: str) -> dict[str, int]:
    out: Counter = Counter()
    for r in records:
        out.update(r[key])
    return dict(out)


def search_check(mem: Memory, conv: dict[str, Any], seed: int) -> dict[str, Any]:
    """A word (6+ letters) no other message shares and the curated text keeps (seeded choice): is it found?"""
    msgs = list(conv["messages"])
    df: dict[str, int] = {}   # messages per 6-letter prefix (so 'positively' is not matched by 'positive')
    for m in msgs:
        for w in {w.lower()[:6] for w in _WORD.findall(m["text"])}:
            df[w] = df.get(w, 0) + 1
    random.Random(f"memgrove-curate-cost-search|{seed}|{conv['id']}").shuffle(msgs)
    for m in msgs:  # the first message (in seeded order) with a word of 6+ letters no other message shares
        words = sorted({w.lower() for w in _WORD.findall(kept_words(m["text"]))
                        if len(w) >= 6 and w.isalpha() and df.get(w.lower()[:6]) == 1}, key=lambda w: (-len(w), w))
        if not words:
            continue
        hits = mem.search(words[0], 5)
        ref = f"{conv['id']}#{m['id']}"
        return {"word": words[0], "message": m["id"], "hits": len(hits),
                "message_in_top5": any(s.get("ref") == ref for h in hits for s in h.sources),
                "top_path": hits[0].path if hits else None}
    return {"word": None, "message": None, "hits": 0, "message_in_top5": False, "top_path": None}


SETTINGS = (("ours", True), ("ours_closing", False))   # row key, CurateSettings.finish_on_curate
LABELS = {"ours": "ours (finish_on_curate, default)", "ours_closing": "ours, closing call (finish_on_curate=False)"}


def curate_with(conv: dict[str, Any], cfg: dict[str, Any], count: TokenCounter, finish: bool) -> dict[str, Any]:
    """Curate ``conv`` into a fresh temp memory with ``finish_on_curate=finish``; what it cost and the checks."""
    settings = CurateSettings(chunk_chars=cfg["chunk_chars"], chunk_overlap_chars=cfg["overlap"],
                              finish_on_curate=finish)
    with tempfile.TemporaryDirectory(prefix="memgrove-curate-cost-") as tmp:
        mem = Memory.open(tmp, create=True)
        try:
            model = None if cfg["real"] else EchoCurator(seed=cfg["seed"], counter=count)
            rep, curate_s = timed(lambda: mem.learn(conversation=conv, model=model, settings=settings))
            if rep.curator != "llm":
                raise SystemExit(f"{conv['id']}: the verbatim curator ran instead of the LLM curator: {rep.summary}")
            n_count = mem.count()
            search = search_check(mem, conv, cfg["seed"])
        finally:
            mem.close()
    statuses = dict(Counter(a.status for a in rep.applied))
    ours: dict[str, Any] = {
        "finish_on_curate": finish, "chunks": rep.chunks, "calls": rep.model_calls,
        "prompt_tokens": rep.prompt_tokens, "completion_tokens": rep.completion_tokens, "applied": len(rep.applied),
        "statuses": statuses, "errors": rep.errors, "stopped": rep.stopped,
        "curate_s": round(curate_s, 2), "count": n_count, "search": search,
    }
    if cfg["real"]:
        # the model's own usage; no per-call breakdown (it is inside the graph)
        ours["usage_reported"] = bool(rep.prompt_tokens or rep.completion_tokens) or rep.model_calls == 0
        return ours
    recs = model.records
    kinds = ("curate", "final", "other")
    per_session: dict[str, int] = {}
    for r in recs:
        if r["kind"] == "curate":
            per_session[r["session"]] = per_session.get(r["session"], 0) + r["output_tokens"]
    ours.update({
        "prompt_chars": sum(r["input_chars"] for r in recs),
        "completion_chars": sum(r["output_chars"] for r in recs),
        "prompt_tokens_by_part": _sum_parts(recs, "input_tokens_by_part"),
        "prompt_chars_by_part": _sum_parts(recs, "input_chars_by_part"),
        "calls_by_kind": {k: sum(1 for r in recs if r["kind"] == k) for k in kinds},
        "prompt_tokens_by_kind": {k: sum(r["input_tokens"] for r in recs if r["kind"] == k) for k in kinds},
        "completion_tokens_by_kind": {k: sum(r["output_tokens"] for r in recs if r["kind"] == k) for k in kinds},
        "curate_completion_tokens_by_session": per_session,
        "operations_sent": sum(r["operations"] for r in recs),
        "tool_schema_tokens": recs[0]["tool_schema_tokens"] if recs else {},
        "model_errors": [r["error"] for r in recs if r["error"]],
        # (input, output) tokens of each curate call in order: both settings must send the same curate calls
        "curate_call_tokens": [[r["input_tokens"], r["output_tokens"]] for r in recs if r["kind"] == "curate"],
    })
    # the benchmark's own tally must agree with what memgrove summed from usage_metadata
    ours["consistent"] = (len(recs) == rep.model_calls
                          and sum(r["input_tokens"] for r in recs) == rep.prompt_tokens
                          and sum(r["output_tokens"] for r in recs) == rep.completion_tokens
                          and ours["operations_sent"] == len(rep.applied))
    if cfg.get("keep_calls"):
        ours["call_records"] = recs
    return ours


def run_conversation(sample: dict[str, Any], cfg: dict[str, Any], count: TokenCounter, system: str) -> dict[str, Any]:
    conv = to_conversation(sample)
    sessions = sessions_of(conv)
    row: dict[str, Any] = {
        "conversation": conv["id"], "sessions": len(sessions), "messages": len(conv["messages"]),
        "words": sum(len(m["text"].split()) for m in conv["messages"]),
        "chars": sum(len(m["text"]) for m in conv["messages"]),
        "image_turns": sum(1 for m in conv["messages"] if "[shares a photo: " in m["text"]),
    }
    for key, finish in SETTINGS:
        row[key] = curate_with(conv, cfg, count, finish)
    ours = row["ours"]
    if cfg["real"]:
        br = byterover(conv, system, count, lambda s: None)
        if ours["usage_reported"]:  # same output size as ours (default setting), for the whole conversation
            br["completion_tokens"] = ours["completion_tokens"]
    else:
        per_session = ours["curate_completion_tokens_by_session"]
        br = byterover(conv, system, count, lambda s: per_session.get(s, 0))
        # the two settings differ only in the closing calls: the curate calls must be the same, token for token
        row["same_curate_calls"] = (ours["curate_call_tokens"] == row["ours_closing"]["curate_call_tokens"]
                                    and ours["applied"] == row["ours_closing"]["applied"])
    row["byterover"] = br
    for key, suffix in (("ours", ""), ("ours_closing", "_closing")):
        o = row[key]
        row["ratio_calls" + suffix] = _ratio(o["calls"], br["calls"])
        row["ratio_prompt_tokens" + suffix] = (_ratio(o["prompt_tokens"], br["prompt_tokens"])
                                               if not cfg["real"] or o["usage_reported"] else None)
    return row


# -- totals ---------------------------------------------------------------------------------------

def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def col(f: Callable[[dict], Any]) -> list[Any]:
        return [f(r) for r in rows]

    cols: dict[str, list[Any]] = {
        "sessions": col(lambda r: r["sessions"]), "messages": col(lambda r: r["messages"]),
        "words": col(lambda r: r["words"]), "chunks": col(lambda r: r["ours"]["chunks"]),
    }
    for key, suffix in (("ours", ""), ("ours_closing", "_closing")):
        for f in ("calls", "prompt_tokens", "completion_tokens"):
            cols[f + suffix] = col(lambda r, key=key, f=f: r[key][f])
    for f in ("calls", "prompt_tokens", "completion_tokens"):
        cols["br_" + f] = col(lambda r, f=f: r["byterover"][f])
    for k in ("ratio_calls", "ratio_prompt_tokens", "ratio_calls_closing", "ratio_prompt_tokens_closing"):
        cols[k] = col(lambda r, k=k: r[k])
    total, median = {}, {}
    for k, xs in cols.items():
        ok = [x for x in xs if x is not None]
        median[k] = statistics.median(ok) if ok and len(ok) == len(xs) else None
        if not k.startswith("ratio"):
            total[k] = sum(ok) if ok and len(ok) == len(xs) else None
    for suffix in ("", "_closing"):
        total["ratio_calls" + suffix] = _ratio(total["calls" + suffix], total["br_calls"])
        total["ratio_prompt_tokens" + suffix] = (_ratio(total["prompt_tokens" + suffix], total["br_prompt_tokens"])
                                                 if median["ratio_prompt_tokens" + suffix] is not None else None)
    return {"total": total, "median": median}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=None, help="the first N conversations (default all)")
    ap.add_argument("--chunk-chars", type=int, default=CurateSettings.chunk_chars)
    ap.add_argument("--overlap", type=int, default=CurateSettings.chunk_overlap_chars)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--real", action="store_true",
                    help="run the model of MEMGROVE_MODEL (needs OPENAI_API_KEY or OPENAI_BASE_URL)")
    ap.add_argument("--data", type=Path, default=DATA, help="locomo10.json (default ../shared/datasets/locomo)")
    ap.add_argument("--out", type=Path, default=RESULTS, help="folder for curate_cost.json/.md (default benchmarks/results)")
    ap.add_argument("--no-write", action="store_true", help="only print the table")
    ap.add_argument("--keep-calls", action="store_true", help="keep every model call's record in the JSON")
    a = ap.parse_args(argv)

    model_name = os.environ.get("MEMGROVE_MODEL", "").strip()
    if a.real and not (model_name and (os.environ.get("OPENAI_API_KEY", "").strip()
                                       or os.environ.get("OPENAI_BASE_URL", "").strip())):
        raise SystemExit("--real needs a model: set MEMGROVE_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for a "
                         "local OpenAI-compatible server). Without --real the scripted echo curator runs.")
    try:
        samples = json.loads(a.data.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"cannot read {a.data}: {exc.strerror}") from None
    if a.conversations is not None:
        samples = samples[:a.conversations]
    cfg = {"seed": a.seed, "chunk_chars": a.chunk_chars, "overlap": a.overlap, "real": a.real,
           "model": model_name if a.real else "echo-curator (scripted)", "data": str(a.data),
           "conversations": len(samples), "keep_calls": a.keep_calls,
           "settings": {key: {"finish_on_curate": finish} for key, finish in SETTINGS}}
    count = TokenCounter()
    system = load_prompt("curate_v1")
    command, machine = start("curate_cost.py", argv, a.seed, skip_results=False)
    log(f"memgrove curation cost benchmark: {len(samples)} conversations, {cfg['model']}, tokens: {count.method}")
    t0 = time.perf_counter()
    rows = []
    for i, sample in enumerate(samples, 1):
        row = run_conversation(sample, cfg, count, system)
        br = row["byterover"]
        log(f"[{i}/{len(samples)}] {row['conversation']}: {row['sessions']} sessions, {row['messages']} messages; "
            f"ByteRover {br['calls']} calls, {br['prompt_tokens']:,} prompt tokens")
        for key, _ in SETTINGS:
            o = row[key]
            log(f"  {LABELS[key]}: {o['chunks']} chunks, {o['calls']} calls, {o['prompt_tokens']:,} prompt + "
                f"{o['completion_tokens']:,} completion tokens; {o['applied']} ops applied, count {o['count']}, "
                f"search {o['search']['word']!r}: {o['search']['hits']} hits ({o['curate_s']:.1f} s)")
            if o["errors"] or o["stopped"] or o.get("model_errors") or o.get("consistent") is False:
                log(f"  ! errors {o['errors']} stopped {o['stopped']!r} model {o.get('model_errors')} "
                    f"consistent {o.get('consistent')}")
        if row.get("same_curate_calls") is False:
            log("  ! the curate calls differ between the two settings")
        rows.append(row)
    report: dict[str, Any] = {
        "machine": machine, "versions": versions("langchain", "langchain-core", "langgraph", "tiktoken"), "config": cfg,
        "command": command,
        "token_method": count.method, "wall_s": round(time.perf_counter() - t0, 1),
        "system_prompt_chars": len(system), "system_prompt_tokens": count(system),
        "rows": rows, "summary": totals(rows),
    }
    if not a.real:
        for key, suffix in (("ours", ""), ("ours_closing", "_closing")):
            for part in ("prompt_tokens_by_part", "prompt_chars_by_part", "calls_by_kind", "prompt_tokens_by_kind",
                         "completion_tokens_by_kind"):
                report[part + suffix] = _sum_parts([r[key] for r in rows], part)
        report["byterover_prompt_tokens_by_part"] = _sum_parts([r["byterover"] for r in rows], "prompt_tokens_by_part")
        report["tool_schema_tokens"] = rows[0]["ours"]["tool_schema_tokens"] if rows else {}
        report["same_curate_calls"] = all(r["same_curate_calls"] for r in rows)
    return publish(report, render_markdown(report),
                   None if a.no_write else a.out / ("curate_cost_real" if a.real else "curate_cost"), ensure_ascii=False)


if __name__ == "__main__":
    main()

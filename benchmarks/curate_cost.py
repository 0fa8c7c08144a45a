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
import functools
import itertools
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE.parent.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
if str(HERE) not in sys.path:  # `import scale` however this file is run
    sys.path.insert(0, str(HERE))

from scale import machine_info, versions  # noqa: E402  (benchmarks/scale.py: machine/seed/date header, versions)

from langchain_core.callbacks import CallbackManagerForLLMRun  # noqa: E402
from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from pydantic import ConfigDict, Field  # noqa: E402

from memgrove import Memory  # noqa: E402
from memgrove.graphs.llm import prompt as load_prompt  # noqa: E402
from memgrove.graphs.settings import CurateSettings  # noqa: E402
from memgrove.tree.chunks import message_line  # noqa: E402
from memgrove.tree.paths import snake_case  # noqa: E402

log = functools.partial(print, file=sys.stderr, flush=True)

MATERIAL = "New material to curate:"       # graphs/curate.py chunk_prompt: the last part of the user turn
PER_MESSAGE = 3                             # OpenAI cookbook: <|start|>role ... <|end|> per message
REPLY_PRIMING = 3                           # ... and <|start|>assistant to prime the reply
KEEP = 0.6                                  # share of a message's words the echo curator restates
GROUP = (3, 4)                              # messages per entry
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_LINE = re.compile(r"^\[(?P<id>[^\]]+)\](?: \((?P<time>[^)]*)\))? (?P<speaker>[^:]+): (?P<text>.*)$")
_LABEL = re.compile(r"^Chunk: conversation (?P<conv>.*), (?P<session>.+?), messages? ")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


# -- tokens ------------------------------------------------------------------------------

class TokenCounter:
    """tiktoken o200k_base when it loads; otherwise ceil(chars / 4)."""

    def __init__(self) -> None:
        self._enc = None
        try:
            import tiktoken

            self._enc = tiktoken.get_encoding("o200k_base")
            self.method = "tiktoken o200k_base"
        except Exception as exc:  # noqa: BLE001 - offline: the encoding file cannot be downloaded
            self.method = (f"ceil(characters / 4) per segment (tiktoken o200k_base could not be loaded: "
                           f"{type(exc).__name__})")

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if self._enc is not None:
            return len(self._enc.encode(text, disallowed_special=()))
        return math.ceil(len(text) / 4)


def _text(m: BaseMessage) -> str:
    c = m.content
    if isinstance(c, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c)


def _calls_json(calls: list[dict[str, Any]]) -> str:
    return json.dumps([{"name": c["name"], "arguments": c["args"]} for c in calls], ensure_ascii=False) if calls else ""


def split_user_turn(text: str) -> dict[str, str]:
    """The chunk prompt's parts: material, earlier context (overlap), prefetched entries, the header."""
    parts = {"chunk_material": "", "earlier_context": "", "prefetched_entries": "", "chunk_header": ""}
    marks = [("prefetched_entries", "\n\nExisting entries most like this chunk:\n"),
             ("earlier_context", "\n\nEarlier, already curated (context only):\n"),
             ("chunk_material", "\n\n" + MATERIAL + "\n")]
    found = sorted((text.find(m), key, m) for key, m in marks if text.find(m) >= 0)
    if not found:
        return {**parts, "chunk_header": text}
    parts["chunk_header"] = text[:found[0][0]]
    for j, (start, key, _) in enumerate(found):
        end = found[j + 1][0] if j + 1 < len(found) else len(text)
        parts[key] = text[start:end]
    return parts


def measure(messages: list[BaseMessage], tools: list[dict[str, Any]], count: TokenCounter) -> tuple[dict, dict]:
    """Tokens and characters of one request, by part (the parts add up to the total)."""
    chars: dict[str, int] = {}
    tokens: dict[str, int] = {}

    def add(key: str, text: str) -> None:
        chars[key] = chars.get(key, 0) + len(text)
        tokens[key] = tokens.get(key, 0) + count(text)

    for m in messages:
        if isinstance(m, SystemMessage):
            add("system_prompt", _text(m))
        elif isinstance(m, HumanMessage):
            for key, part in split_user_turn(_text(m)).items():
                add(key, part)
        elif isinstance(m, AIMessage):
            add("earlier_replies", _text(m) + _calls_json(m.tool_calls))
        elif isinstance(m, ToolMessage):
            add("tool_results", _text(m))
        else:
            add("other", _text(m))
    for t in tools:
        add("tool_schemas", json.dumps(t, ensure_ascii=False))
    tokens["message_overhead"] = PER_MESSAGE * len(messages) + REPLY_PRIMING
    chars["message_overhead"] = 0
    return tokens, chars


# -- the scripted curator ------------------------------------------------------------------

_ids = itertools.count(1)


def parse_material(text: str) -> list[dict[str, str]]:
    """The messages of a chunk prompt's 'New material to curate' section (tree.chunks.message_line)."""
    body = text[text.index(MATERIAL) + len(MATERIAL):]
    out = []
    for line in body.strip("\n").split("\n"):
        m = _LINE.match(line)
        if m:
            out.append({k: (v or "") for k, v in m.groupdict().items()})
        elif out:  # not expected (message_line flattens whitespace): keep it with the message before
            out[-1]["text"] += " " + line
    return out


def kept_words(text: str, keep: float = KEEP) -> str:
    words = text.split()
    return " ".join(words[:max(1, math.ceil(keep * len(words)))])


class EchoCurator(BaseChatModel):
    """A deterministic tool-calling 'curator': one ``curate`` call per chunk; a closing line if asked after it.

    Records every call (tokens and characters by part) in ``records``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    seed: int = 0
    counter: Any = None
    records: list[dict[str, Any]] = Field(default_factory=list)
    topics: set = Field(default_factory=set)     # people/<speaker> folders it has given a context for

    @property
    def _llm_type(self) -> str:
        return "memgrove-echo-curator"

    def bind_tools(self, tools: Any, **kwargs: Any):
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        count = self.counter or TokenCounter()
        tools = list(kwargs.get("tools") or [])
        last = messages[-1] if messages else None
        label = next((_text(m).split("\n", 1)[0] for m in messages if isinstance(m, HumanMessage)), "")
        session = self._session(label)
        error = ""
        if isinstance(last, HumanMessage) and MATERIAL in _text(last):
            kind = "curate"
            ops = self.curation(_text(last), label, session)
            n = next(_ids)
            reply = AIMessage(content="", tool_calls=[{"name": "curate", "args": {"operations": ops},
                                                       "id": f"call_echo_{n}", "type": "tool_call"}],
                              id=f"echo-{n}")
        elif isinstance(last, ToolMessage) and last.name == "curate":
            kind = "final"
            try:
                written = len(json.loads(_text(last))["applied"])
                line = f"Curated {written} entries."
            except (ValueError, KeyError, TypeError):
                error = _text(last).split("\n", 1)[0][:300]
                line = f"The curate call failed: {error}"
            reply = AIMessage(content=line, id=f"echo-{next(_ids)}")
        else:
            kind = "other"
            reply = AIMessage(content="Nothing to curate.", id=f"echo-{next(_ids)}")
        tokens, chars = measure(messages, tools, count)
        out_text = _text(reply) + _calls_json(reply.tool_calls)
        usage = {"input_tokens": sum(tokens.values()), "output_tokens": count(out_text)}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        reply.usage_metadata = usage
        self.records.append({
            "kind": kind, "chunk": label.removeprefix("Chunk: "), "session": session,
            "messages": len(messages), "input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
            "input_chars": sum(chars.values()), "output_chars": len(out_text),
            "input_tokens_by_part": tokens, "input_chars_by_part": chars,
            "operations": len(reply.tool_calls[0]["args"]["operations"]) if reply.tool_calls else 0,
            "tools": [t["function"]["name"] for t in tools],
            "tool_schema_tokens": {t["function"]["name"]: count(json.dumps(t, ensure_ascii=False)) for t in tools},
            "error": error,
        })
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @staticmethod
    def _session(label: str) -> str:
        m = _LABEL.match(label)
        return snake_case(m.group("session")) if m else "session"

    def curation(self, user_turn: str, label: str, session: str) -> list[dict[str, Any]]:
        """UPSERT one entry per 3-4 consecutive messages of the chunk's new material."""
        msgs = parse_material(user_turn)
        rng = random.Random(f"memgrove-curate-cost|{self.seed}|{label}")
        groups, i = [], 0
        while i < len(msgs):
            size = rng.choice(GROUP)
            groups.append(msgs[i:i + size])
            i += size
        human_session = session.replace("_", " ").capitalize()
        ops = []
        for g in groups:
            words: dict[str, int] = {}
            for m in g:
                words[m["speaker"]] = words.get(m["speaker"], 0) + len(m["text"].split())
            speaker = max(words, key=lambda s: words[s])          # ties: the first to speak
            others = [s for s in words if s != speaker]
            first, last = g[0], g[-1]
            span = first["id"] if len(g) == 1 else f"{first['id']}–{last['id']}"
            when = first["time"] or "an unknown date"
            body = [f"On {when} ({human_session}, messages {span}):", ""]
            body += [f"- {m['speaker']}: {kept_words(m['text'])}" for m in g]
            lead = next((m for m in g if m["speaker"] == speaker), first)
            title_words = lead["text"].split()[:7]
            seen: dict[str, None] = {}
            for m in g:
                for w in _WORD.findall(kept_words(m["text"])):
                    if len(w) >= 6:
                        seen.setdefault(w.lower(), None)
            keywords = sorted(seen, key=lambda w: -len(w))[:4]
            topic = snake_case(speaker) or "someone"
            op: dict[str, Any] = {
                "op": "UPSERT",
                "path": f"people/{topic}/{session}_{snake_case(first['id'])}.md",
                "title": f"{speaker}, {human_session}: {' '.join(title_words)}",
                "summary": (f"{speaker}" + (f" with {', '.join(others)}" if others else "") +
                            f" on {when}: {' '.join(kept_words(lead['text']).split()[:14])}"),
                "content": "\n".join(body),
                "tags": [topic, session],
                "keywords": keywords,
                "sources": [{"kind": "conversation", "ref": m["id"], **({"at": m["time"]} if m["time"] else {})}
                            for m in g],
                "reason": f"Records what {' and '.join(words)} said in {span} ({human_session}).",
            }
            if topic not in self.topics:
                self.topics.add(topic)
                op["context"] = {"domain": "People in the conversations: what they said, did and plan.",
                                 "topic": f"What {speaker} said, did and plans."}
            ops.append(op)
        return ops


# -- data ------------------------------------------------------------------------------------

def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text") or "").strip()
    cap = str(turn.get("blip_caption") or "").strip()
    if cap:
        text = f"{text} [shares a photo: {cap}]".strip()
    return text


def to_conversation(sample: dict[str, Any]) -> dict[str, Any]:
    """A LoCoMo sample in memgrove's conversation format (sessions in chronological order)."""
    c = sample["conversation"]
    keys = sorted((k for k in c if _SESSION_KEY.match(k)), key=lambda k: int(_SESSION_KEY.match(k).group(1)))
    messages = []
    for key in keys:
        when = c.get(f"{key}_date_time")
        for t in c[key]:
            m = {"id": str(t["dia_id"]), "speaker": str(t["speaker"]), "text": turn_text(t), "session": key}
            if when:
                m["time"] = str(when)
            messages.append(m)
    return {"id": str(sample["sample_id"]), "messages": messages}


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
    out: dict[str, int] = {}
    for r in records:
        for k, v in r[key].items():
            out[k] = out.get(k, 0) + v
    return out


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
            t0 = time.perf_counter()
            rep = mem.learn(conversation=conv, model=model, settings=settings)
            curate_s = round(time.perf_counter() - t0, 2)
            if rep.curator != "llm":
                raise SystemExit(f"{conv['id']}: the verbatim curator ran instead of the LLM curator: {rep.summary}")
            n_count = mem.count()
            search = search_check(mem, conv, cfg["seed"])
        finally:
            mem.close()
    statuses: dict[str, int] = {}
    for a in rep.applied:
        statuses[a.status] = statuses.get(a.status, 0) + 1
    ours: dict[str, Any] = {
        "finish_on_curate": finish, "chunks": rep.chunks, "calls": rep.model_calls,
        "prompt_tokens": rep.prompt_tokens, "completion_tokens": rep.completion_tokens, "applied": len(rep.applied),
        "statuses": statuses, "errors": rep.errors, "stopped": rep.stopped,
        "curate_s": curate_s, "count": n_count, "search": search,
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


def _ratio(a: int | None, b: int | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


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


# -- report ---------------------------------------------------------------------------------------

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
    L = ["# memgrove curation cost benchmark (LoCoMo)", ""]
    L.append(f"{m['date']} · seed {m['seed']} · {m['cores']} cores ({m['cpu']}) · {m['ram_gb']} GB RAM · "
             f"Python {m['python']} · langchain {report['versions'].get('langchain')} · langgraph "
             f"{report['versions'].get('langgraph')} · memgrove {m['memgrove']} @ {m['commit']}"
             + (f" + uncommitted changes to {', '.join(m['uncommitted'])}" if m.get("uncommitted") else "")
             + f" · load average at start {m['loadavg']}")
    L.append("")
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s (both settings) · data "
             f"`{c['data']}` ({len(rows)} conversations) · chunk_chars {c['chunk_chars']}, overlap {c['overlap']}")
    L.append("")
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
    L.append("| conversation | sessions | messages | words | chunks | calls | prompt tok | completion tok "
             "| closing: calls | closing: prompt tok | closing: completion tok | BR calls | BR prompt tok "
             "| BR completion tok | calls ours/BR | prompt ours/BR | calls closing/BR | prompt closing/BR |")
    L.append("|---" * 18 + "|")
    for r in rows:
        o, oc, b = r["ours"], r["ours_closing"], r["byterover"]
        L.append(f"| {r['conversation']} | {r['sessions']} | {r['messages']:,} | {r['words']:,} | {o['chunks']} | "
                 f"{o['calls']} | {_n(o['prompt_tokens'])} | {_n(o['completion_tokens'])} | "
                 f"{oc['calls']} | {_n(oc['prompt_tokens'])} | {_n(oc['completion_tokens'])} | {b['calls']} | "
                 f"{_n(b['prompt_tokens'])} | {_n(b['completion_tokens'])} | {_r(r['ratio_calls'])} | "
                 f"{_r(r['ratio_prompt_tokens'])} | {_r(r['ratio_calls_closing'])} | "
                 f"{_r(r['ratio_prompt_tokens_closing'])} |")
    for name, s in (("**total**", t["total"]), ("**median**", t["median"])):
        L.append(f"| {name} | {_n(s['sessions'])} | {_n(s['messages'])} | {_n(s['words'])} | {_n(s['chunks'])} | "
                 f"{_n(s['calls'])} | {_n(s['prompt_tokens'])} | {_n(s['completion_tokens'])} | "
                 f"{_n(s['calls_closing'])} | {_n(s['prompt_tokens_closing'])} | "
                 f"{_n(s['completion_tokens_closing'])} | {_n(s['br_calls'])} | "
                 f"{_n(s['br_prompt_tokens'])} | {_n(s['br_completion_tokens'])} | {_r(s['ratio_calls'])} | "
                 f"{_r(s['ratio_prompt_tokens'])} | {_r(s['ratio_calls_closing'])} | "
                 f"{_r(s['ratio_prompt_tokens_closing'])} |")
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
        L.append("| part | ours: tokens | share | closing call: tokens | share |")
        L.append("|---|---|---|---|---|")
        for k in sorted(set(pd) | set(pc), key=lambda k: (-pd.get(k, 0), -pc.get(k, 0))):
            if pd.get(k, 0) or pc.get(k, 0):
                L.append(f"| {PART_NAMES.get(k, k)} | {pd.get(k, 0):,} | {_pct(pd.get(k, 0), wd)} | "
                         f"{pc.get(k, 0):,} | {_pct(pc.get(k, 0), wc)} |")
        L.append(f"| **total** | {wd:,} | 100% | {wc:,} | 100% |")
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
    L.append("| conversation | ops applied | count | search word | hits | its message in top 5 | curate s | errors "
             + ("|" if real else "| consistent |"))
    L.append("|---" * (8 if real else 9) + "|")

    def pair(f: Callable[[dict], Any]) -> str:
        a, b = f(r["ours"]), f(r["ours_closing"])
        return f"{a} / {b}"

    for r in rows:
        def errs(o: dict) -> int:
            return len(o["errors"]) + (1 if o["stopped"] else 0) + len(o.get("model_errors", []))
        line = (f"| {r['conversation']} | {pair(lambda o: format(o['applied'], ','))} | "
                f"{pair(lambda o: format(o['count'], ','))} | {r['ours']['search']['word']} | "
                f"{pair(lambda o: o['search']['hits'])} | "
                f"{pair(lambda o: 'yes' if o['search']['message_in_top5'] else 'no')} | "
                f"{pair(lambda o: format(o['curate_s'], '.1f'))} | {pair(errs)} |")
        if not real:
            line += f" {pair(lambda o: 'yes' if o['consistent'] else 'NO')} |"
        L.append(line)
    L.append("")
    return "\n".join(L)


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
    command = "python benchmarks/curate_cost.py " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(a.seed)
    try:  # product files changed but not committed make a run less reproducible
        machine["uncommitted"] = [ln[3:] for ln in subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE, capture_output=True, text=True,
            timeout=5).stdout.splitlines() if ln.strip()]
    except (OSError, subprocess.SubprocessError):
        machine["uncommitted"] = None
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
        "command": command.strip(),
        "token_method": count.method, "wall_s": round(time.perf_counter() - t0, 1),
        "system_prompt_chars": len(system), "system_prompt_tokens": count(system),
        "rows": rows, "summary": totals(rows),
    }
    if not a.real:
        for key, suffix in (("ours", ""), ("ours_closing", "_closing")):
            ours = [r[key] for r in rows]
            report["prompt_tokens_by_part" + suffix] = _sum_parts(ours, "prompt_tokens_by_part")
            report["prompt_chars_by_part" + suffix] = _sum_parts(ours, "prompt_chars_by_part")
            report["calls_by_kind" + suffix] = _sum_parts(ours, "calls_by_kind")
            report["prompt_tokens_by_kind" + suffix] = _sum_parts(ours, "prompt_tokens_by_kind")
            report["completion_tokens_by_kind" + suffix] = _sum_parts(ours, "completion_tokens_by_kind")
        report["byterover_prompt_tokens_by_part"] = _sum_parts([r["byterover"] for r in rows], "prompt_tokens_by_part")
        report["tool_schema_tokens"] = rows[0]["ours"]["tool_schema_tokens"] if rows else {}
        report["same_curate_calls"] = all(r["same_curate_calls"] for r in rows)
    md = render_markdown(report)
    print(md)
    if not a.no_write:
        stem = "curate_cost_real" if a.real else "curate_cost"
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / f"{stem}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        (a.out / f"{stem}.md").write_text(md + "\n", encoding="utf-8")
        log(f"wrote {a.out / (stem + '.json')} and {a.out / (stem + '.md')}")
    return report


if __name__ == "__main__":
    main()

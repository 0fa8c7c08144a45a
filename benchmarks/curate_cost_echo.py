"""The curation cost benchmark's scripted curator and its token accounting: ``EchoCurator`` curates like a
model would (reads the material, writes entries restating ~60% of each message's words, calls the tools) so
the prompts memgrove sends can be measured without a model; ``measure`` splits a call's prompt tokens by part."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from harness.tokens import TokenCounter, message_text as _text
from memgrove.tree.entries.paths import snake_case

_ids = itertools.count(1)


MATERIAL = "New material to curate:"       # graphs/curate.py chunk_prompt: the last part of the user turn
PER_MESSAGE = 3                             # OpenAI cookbook: <|start|>role ... <|end|> per message
REPLY_PRIMING = 3                           # ... and <|start|>assistant to prime the reply
KEEP = 0.6                                  # share of a message's words the echo curator restates
GROUP = (3, 4)                              # messages per entry
_LINE = re.compile(r"^\[(?P<id>[^\]]+)\](?: \((?P<time>[^)]*)\))? (?P<speaker>[^:]+): (?P<text>.*)$")
_LABEL = re.compile(r"^Chunk: conversation (?P<conv>.*), (?P<session>.+?), messages? ")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


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

"""BEAM (a benchmark of chats of 100K to 10M tokens, probing questions in 10 types with gold source message
ids): ``<root>/<tier>/<n>/chat.json`` (or its truncated form) and ``probing_questions/``. The root is
``--data``, else ``$BEAM_PATH``, else ``../shared/datasets/beam`` beside the repository."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from harness import metrics as rm
from harness.datasets.locomo import BUDGETS as LOCOMO_BUDGETS, KS as LOCOMO_KS
from harness.retrievers import BM25Retriever

REPO = Path(__file__).resolve().parents[3]

TYPES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
         "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
         "summarization", "temporal_reasoning")
ROLES = ("user", "assistant")
POOLED = tuple(t for t in TYPES if t != "abstention")
OVERALL = "overall"
KS = LOCOMO_KS
BUDGETS = LOCOMO_BUDGETS
SYSTEMS = ("memgrove", "bm25-turns", "bm25-user-turns", "bm25-sessions")
BASELINES = SYSTEMS[1:]
RECALL_KEYS = [f"R@{k}" for k in KS] + [f"R@{b}w" for b in BUDGETS]
SESSION_KEYS = [f"S@{k}" for k in KS] + [f"S@{k}-all" for k in KS]
PAIRED_KEYS = ("R@10", "R@200w", "R@500w", "R@1000w")
DEFAULT_TIER = "100K"
TRUNCATED = "chat_trunecated.json"   # BEAM's spelling
# BEAM appends "->-> <session>,<turn>" (sometimes with a stray ")" or "N/A") to most user messages
MARKER = re.compile(r"\s*->->[^\n]{0,20}\Z")
MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]+)-(\d{1,2})-(\d{4})$")


def default_data() -> Path:
    env = os.environ.get("BEAM_PATH", "").strip()
    return Path(env) if env else REPO.parent / "shared" / "datasets" / "beam"


@dataclass(frozen=True)
class Message:
    id: str
    role: str
    text: str
    session: str
    time: str | None

    @property
    def prefixed(self) -> str:
        return f"{self.role.capitalize()}: {self.text}"


@dataclass
class Question:
    chat: str
    index: int
    qtype: str
    question: str
    evidence: list[str]
    dropped: list[str]


def chat_dirs(root: Path, tier: str) -> list[Path]:
    base = root / tier
    if not base.is_dir():
        raise SystemExit(f"BEAM tier {tier!r} not found at {base} (give --data or set BEAM_PATH)")
    return sorted((p for p in base.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))


def chat_file(d: Path, full: bool = False) -> Path:
    return d / "chat.json" if full or not (d / TRUNCATED).exists() else d / TRUNCATED


def readable_anchor(anchor: Any) -> str | None:
    """BEAM's "March-15-2024" -> "March 15, 2024" (a date memgrove reads); None for none."""
    if not anchor:
        return None
    m = MONTH_DAY_YEAR.match(str(anchor).strip())
    return f"{m.group(1)} {int(m.group(2))}, {m.group(3)}" if m else str(anchor).strip()


def strip_marker(text: str) -> str:
    return MARKER.sub("", str(text)).strip()


def messages_of(sessions: list[dict[str, Any]]) -> list[Message]:
    """Every message of a BEAM chat in order; each carries its session's time anchor (BEAM puts it on
    the session or on the session's first user message only)."""
    out = []
    for n, s in enumerate(sessions, 1):
        session = f"session_{s.get('batch_number', n)}"
        msgs = [m for exchange in s.get("turns", []) for m in exchange]
        when = readable_anchor(s.get("time_anchor") or next((m["time_anchor"] for m in msgs if m.get("time_anchor")),
                                                            None))
        for m in msgs:
            out.append(Message(str(m["id"]), str(m["role"]), strip_marker(m.get("content", "")), session, when))
    return [m for m in out if m.text]


def to_conversation(chat_id: str, msgs: list[Message]) -> dict[str, Any]:
    """A BEAM chat in memgrove's conversation format; speaker = role, as for OpenAI-style chats."""
    return {"id": chat_id,
            "messages": [{"id": m.id, "speaker": m.role, "role": m.role, "text": m.text, "session": m.session,
                          **({"time": m.time} if m.time else {})} for m in msgs]}


def evidence_ids(raw: Any) -> list[str]:
    """``source_chat_ids`` flattened: a list of ids, a dict of lists, nested lists; in order, deduplicated."""
    out: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif x is not None and not isinstance(x, bool) and str(x).strip():
            if str(x).strip() not in out:
                out.append(str(x).strip())

    walk(raw)
    return out


def questions_of(chat_id: str, probing: dict[str, Any], valid: set[str]) -> list[Question]:
    out = []
    for qtype in TYPES:
        for qa in probing.get(qtype, []) or []:
            ids = evidence_ids(qa.get("source_chat_ids"))
            out.append(Question(chat_id, len(out), qtype, str(qa["question"]),
                                [i for i in ids if i in valid], [i for i in ids if i not in valid]))
    unknown = sorted(set(probing) - set(TYPES))
    if unknown:
        raise SystemExit(f"{chat_id}: unknown question types {unknown}")
    return out


@dataclass
class Chat:
    id: str
    path: Path
    messages: list[Message]
    questions: list[Question]


def load_chat(d: Path, tier: str, full: bool = False) -> Chat:
    path = chat_file(d, full)
    msgs = messages_of(json.loads(path.read_text(encoding="utf-8")))
    probing = json.loads((d / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
    cid = f"beam-{tier.lower()}-{d.name}"
    return Chat(cid, path, msgs, questions_of(cid, probing, {m.id for m in msgs}))


def bm25_turns(msgs: list[Message], roles: Sequence[str] = ROLES) -> BM25Retriever:
    mine = [m for m in msgs if m.role in roles]
    return BM25Retriever([rm.Item(rm.segments_from_texts([(m.id, m.prefixed)]), key=m.id) for m in mine],
                                [m.prefixed for m in mine])


def bm25_sessions(msgs: list[Message]) -> BM25Retriever:
    by_session: dict[str, list[Message]] = defaultdict(list)
    for m in msgs:
        by_session[m.session].append(m)
    items = [rm.Item(rm.segments_from_texts([(m.id, m.prefixed) for m in ms]), key=s) for s, ms in by_session.items()]
    return BM25Retriever(items, ["\n".join(m.prefixed for m in ms) for ms in by_session.values()])

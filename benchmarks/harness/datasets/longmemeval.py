"""LongMemEval (``longmemeval_s`` / ``longmemeval_oracle``): per question a haystack of dated sessions, the
question's type and the ids of the sessions (and turns, ``has_answer``) that answer it. Scored with the
official metrics (recall_any / recall_all / ndcg_any at k) at the session and turn level, and by word budget.
The file is given on the command line, or by ``$LONGMEMEVAL_PATH``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from harness import metrics as rm
from harness.retrievers import BM25Retriever


QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "multi-session", "temporal-reasoning", "knowledge-update")
TYPE_ABBREV = {"single-session-user": "ssu", "single-session-assistant": "ssa", "single-session-preference": "ssp",
               "multi-session": "ms", "temporal-reasoning": "tr", "knowledge-update": "ku"}
OVERALL = "overall"
KS = (1, 3, 5, 10)
BUDGETS = (1000, 2000, 4000)
LEVELS = ("session", "turn")
SYSTEMS = ("memgrove", "bm25-turns", "bm25-sessions")
LEVEL_SYSTEMS = {"session": ("memgrove", "bm25-sessions", "bm25-turns"), "turn": ("memgrove", "bm25-turns")}
LEVEL_BASELINES = {"session": ("bm25-sessions", "bm25-turns"), "turn": ("bm25-turns",)}
BUDGET_BASELINES = ("bm25-turns", "bm25-sessions")
METRICS = [f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any") for k in KS]
BUDGET_KEYS = [f"R@{b}w" for b in BUDGETS]
REQUIRED = ("question_id", "question_type", "question", "haystack_session_ids", "haystack_dates",
            "haystack_sessions", "answer_session_ids")
TURN_KEY = re.compile(r"^s(\d+)t(\d+)$")


def load_questions(path: Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not data:
        raise SystemExit(f"{path}: not a LongMemEval file (a non-empty JSON list of questions)")
    for i, q in enumerate(data):
        missing = [k for k in REQUIRED if not isinstance(q, dict) or k not in q]
        if missing:
            raise SystemExit(f"{path}: question {i} lacks {', '.join(missing)} (not LongMemEval's format)")
        n = len(q["haystack_session_ids"])
        if len(q["haystack_sessions"]) != n or len(q["haystack_dates"]) != n:
            raise SystemExit(f"{path}: question {q['question_id']}: haystack_session_ids, haystack_dates and "
                             "haystack_sessions differ in length")
    return data


def is_abstention(q: dict[str, Any]) -> bool:
    return "_abs" in str(q["question_id"])   # the official test ('_abs' in question_id)


def turn_key(si: int, ti: int) -> str:
    return f"s{si}t{ti}"


def parse_turn_key(key: str) -> tuple[int, int] | None:
    m = TURN_KEY.match(key)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class Turn:
    si: int               # session position in the haystack
    ti: int               # turn position in the session (0-based)
    session: str          # the session id
    role: str
    content: str
    has_answer: bool
    date: str

    @property
    def key(self) -> str:
        return turn_key(self.si, self.ti)

    @property
    def text(self) -> str:
        """As the baselines' items show it (and count its words)."""
        return f"{self.role}: {self.content}"


# The official corpus ids (process_item_flat_index in src/retrieval/run_retrieval.py).

def session_doc_id(session_id: str, turns: Sequence[dict[str, Any]]) -> str:
    if "answer" in session_id and all(not t.get("has_answer") for t in turns if t.get("role") == "user"):
        return session_id.replace("answer", "noans")
    return session_id


def turn_doc_id(session_id: str, index: int, has_answer: bool) -> str:
    """``index`` 0-based over all the session's turns (the id is 1-based)."""
    doc = f"{session_id}_{index + 1}"
    if "answer" in session_id and not has_answer:
        doc = doc.replace("answer", "noans")
    return doc


@dataclass
class Haystack:
    """One question's haystack: its turns, the official corpora and gold, and the evidence turns."""

    q: dict[str, Any]
    turns: list[Turn]
    sessions: list[str]                    # session ids, haystack order
    session_docs: list[str]                # official session-level corpus ids (one per session)
    turn_docs: list[str]                   # official turn-level corpus ids (user turns)
    turn_doc_keys: list[str]               # the turn key of each turn-level document
    evidence: list[str]                    # turn keys
    evidence_source: str                   # "has_answer", "answer_sessions" or "none"
    scored: bool                           # counted in the official averages (some user turn has has_answer)
    by_key: dict[str, Turn] = field(default_factory=dict)
    doc_of_key: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key = {t.key: t for t in self.turns}
        self.doc_of_key = {k: i for i, k in enumerate(self.turn_doc_keys)}

    @property
    def gold(self) -> dict[str, list[str]]:
        """Official gold per level: the corpus ids containing "answer"."""
        return {"session": sorted({d for d in self.session_docs if "answer" in d}),
                "turn": sorted({d for d in self.turn_docs if "answer" in d})}

    def corpus(self, level: str) -> list[str]:
        return self.session_docs if level == "session" else self.turn_docs

    def words(self) -> int:
        return sum(rm.word_count(t.content) for t in self.turns)


def haystack_of(q: dict[str, Any]) -> Haystack:
    turns, session_docs, turn_docs, turn_doc_keys = [], [], [], []
    sids = [str(s) for s in q["haystack_session_ids"]]
    for si, (sid, date, sess) in enumerate(zip(sids, q["haystack_dates"], q["haystack_sessions"])):
        session_docs.append(session_doc_id(sid, sess))
        for ti, t in enumerate(sess):
            turn = Turn(si, ti, sid, str(t.get("role", "")), str(t.get("content") or ""), bool(t.get("has_answer")),
                        str(date or ""))
            turns.append(turn)
            if turn.role == "user":
                turn_docs.append(turn_doc_id(sid, ti, turn.has_answer))
                turn_doc_keys.append(turn.key)
    evidence, source = [t.key for t in turns if t.has_answer], "has_answer"
    if not evidence:
        answer_sessions = {str(s) for s in q.get("answer_session_ids") or []}
        evidence, source = [t.key for t in turns if t.session in answer_sessions], "answer_sessions"
        if not evidence:
            source = "none"
    scored = any(t.has_answer for t in turns if t.role == "user")
    return Haystack(q, turns, sids, session_docs, turn_docs, turn_doc_keys, evidence, source, scored)


def to_conversation(hay: Haystack) -> tuple[dict[str, Any], int]:
    """The haystack in memgrove's conversation format, and how many empty turns were left out (the curator
    refuses a message without text)."""
    msgs = [{"id": t.key, "speaker": t.role or "unknown", "text": t.content, "time": t.date, "session": t.session}
            for t in hay.turns if t.content.strip()]
    return {"id": str(hay.q["question_id"]), "messages": msgs}, len(hay.turns) - len(msgs)


def ranking(items: Sequence[rm.Item], hay: Haystack, level: str) -> list[int]:
    """Indices into the level's corpus, in order of first appearance among the items' provenance."""
    out: list[int] = []
    seen: set[int] = set()
    for it in items:
        for ident in it.ids:
            pos = parse_turn_key(ident)
            if pos is None or ident not in hay.by_key:
                continue
            if level == "session":
                idx = pos[0]
            else:
                idx = hay.doc_of_key.get(ident)   # None for an assistant turn: nothing at turn level
                if idx is None:
                    continue
            if idx not in seen:
                seen.add(idx)
                out.append(idx)
    return out


def official_metrics(rank: Sequence[int], gold: Sequence[str], corpus: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        ra, rall, nd = rm.evaluate_retrieval(rank, gold, corpus, k=k)
        out[f"recall_any@{k}"], out[f"recall_all@{k}"], out[f"ndcg_any@{k}"] = ra, rall, nd
    return out


def score(hay: Haystack, items: Sequence[rm.Item], levels: Sequence[str]) -> dict[str, Any]:
    """One system's scores on one question: the official metrics per level and the budget recalls."""
    out = rm.score_items(items, hay.evidence, None, (), BUDGETS if hay.evidence else ())   # recall within budgets
    gold = hay.gold
    for level in (levels if hay.scored else ()):   # the official averages skip it: no metric to compute
        rank = ranking(items, hay, level)
        out[level] = {"returned": len(rank), **official_metrics(rank, gold[level], hay.corpus(level))}
    return out


def bm25_turns(hay: Haystack) -> BM25Retriever:
    """The official turn corpus: user turns, indexed by their content; item = the turn."""
    users = [hay.by_key[k] for k in hay.turn_doc_keys]
    items = [rm.Item(rm.segments_from_texts([(t.key, t.text)]), key=doc) for t, doc in zip(users, hay.turn_docs)]
    return BM25Retriever(items, [t.content for t in users])


def bm25_sessions(hay: Haystack) -> BM25Retriever:
    """The official session corpus: a session's user turns joined by spaces; item = the whole session."""
    items, texts = [], []
    for si, doc in enumerate(hay.session_docs):
        ts = [t for t in hay.turns if t.si == si]
        items.append(rm.Item(rm.segments_from_texts([(t.key, t.text) for t in ts]), key=doc))
        texts.append(" ".join(t.content for t in ts if t.role == "user"))
    return BM25Retriever(items, texts)

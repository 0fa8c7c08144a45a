"""LoCoMo (snap-research/locomo, ``locomo10.json``): 10 long conversations, questions in 5 categories with
gold evidence turn ids. The file is ``--data``, else ``$LOCOMO_PATH``, else
``../shared/datasets/locomo/locomo10.json`` beside the repository."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from harness import metrics as rm
from harness.retrievers import BM25Retriever

REPO = Path(__file__).resolve().parents[3]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
POOLED = (1, 2, 3, 4)          # category 5 (adversarial) is reported, not pooled
OVERALL = "1-4"
KS = (5, 10)
BUDGETS = (100, 200, 500, 1000)
SYSTEMS = ("memgrove", "bm25-turns", "bm25-sessions")
BASELINES = ("bm25-turns", "bm25-sessions")
RECALL_KEYS = [f"R@{k}" for k in KS] + [f"R@{b}w" for b in BUDGETS]
AIC_KEYS = [f"AIC@{b}w" for b in BUDGETS]


SESSION_KEY = re.compile(r"^session_(\d+)$")
EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")


def default_data() -> Path:
    env = os.environ.get("LOCOMO_PATH", "").strip()
    return Path(env) if env else REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"


def load_samples(path: Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise SystemExit(f"{path}: not a LoCoMo file (a JSON list of samples with 'conversation')")
    return data


def session_keys(conv: dict[str, Any]) -> list[str]:
    """``session_<n>`` keys holding turns, in numeric order (date keys without a session are skipped)."""
    keys = [k for k in conv if SESSION_KEY.match(k) and isinstance(conv[k], list)]
    return sorted(keys, key=lambda k: int(SESSION_KEY.match(k).group(1)))


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str           # with the photo caption
    session: str
    time: str

    @property
    def prefixed(self) -> str:
        return f"{self.speaker}: {self.text}"


def turns_of(sample: dict[str, Any]) -> list[Turn]:
    conv = sample["conversation"]
    out = []
    for k in session_keys(conv):
        when = str(conv.get(f"{k}_date_time") or "")
        for t in conv[k]:
            out.append(Turn(str(t["dia_id"]), str(t["speaker"]), turn_text(t), k, when))
    return out


def to_conversation(sample: dict[str, Any]) -> dict[str, Any]:
    """A LoCoMo sample in memgrove's conversation format (tree/inputs/curator.py ``check_conversation``)."""
    return {"id": sample["sample_id"],
            "messages": [{"id": t.id, "speaker": t.speaker, "text": t.text, "time": t.time, "session": t.session}
                         for t in turns_of(sample)]}


def parse_evidence_id(part: str) -> str | None:
    m = EVIDENCE_ID.match(part.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def normalize_evidence(raw: Sequence[Any], valid: set[str]) -> dict[str, list[str]]:
    """``{"ids": [...], "malformed": [...], "unknown": [...]}``: split on ``[;, ]``, normalised, deduplicated."""
    ids, malformed, unknown = [], [], []
    for s in raw or []:
        for part in re.split(r"[;,\s]+", str(s)):
            if not part:
                continue
            norm = parse_evidence_id(part)
            if norm is None:
                malformed.append(part)
            elif norm not in valid:
                unknown.append(norm)
            elif norm not in ids:
                ids.append(norm)
    return {"ids": ids, "malformed": malformed, "unknown": unknown}


def gold_answer(qa: dict[str, Any]) -> str | None:
    """The answer to look for in the context; category 5 has none (its ``adversarial_answer`` is a trap)."""
    if int(qa.get("category", 0)) == 5 or qa.get("answer") is None:
        return None
    ans = str(qa["answer"])
    if int(qa["category"]) == 3:
        ans = ans.split(";")[0]
    return ans.strip() or None


@dataclass
class Question:
    conv: str
    index: int
    question: str
    category: int
    evidence: list[str]
    answer: str | None
    raw_answer: Any
    dropped: dict[str, list[str]]


def questions_of(sample: dict[str, Any], turns: list[Turn]) -> list[Question]:
    valid = {t.id for t in turns}
    out = []
    for i, qa in enumerate(sample.get("qa", [])):
        ev = normalize_evidence(qa.get("evidence", []), valid)
        out.append(Question(sample["sample_id"], i, str(qa["question"]), int(qa["category"]), ev["ids"],
                            gold_answer(qa), qa.get("answer", qa.get("adversarial_answer")),
                            {"malformed": ev["malformed"], "unknown": ev["unknown"]}))
    return out


def bm25_turns(turns: list[Turn]) -> BM25Retriever:
    items = [rm.Item(rm.segments_from_texts([(t.id, t.prefixed)]), key=t.id) for t in turns]
    return BM25Retriever(items, [t.prefixed for t in turns])


def bm25_sessions(turns: list[Turn]) -> BM25Retriever:
    by_session: dict[str, list[Turn]] = defaultdict(list)
    for t in turns:
        by_session[t.session].append(t)
    items, texts = [], []
    for s, ts in by_session.items():
        items.append(rm.Item(rm.segments_from_texts([(t.id, t.prefixed) for t in ts]), key=s))
        texts.append("\n".join(t.prefixed for t in ts))
    return BM25Retriever(items, texts)

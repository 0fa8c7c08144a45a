#!/usr/bin/env python
"""BEAM retrieval benchmark: evidence recall of memgrove vs flat BM25 baselines in user–assistant chats.

    python benchmarks/beam.py                    # every chat of the 100K tier, variant verbatim-w1
    python benchmarks/beam.py --chats 3          # the first 3 chats (a short run)
    python benchmarks/beam.py --tier 500K        # the 500K tier
    python benchmarks/beam.py --tree keywords_boost=0   # an ablation of a [tree] setting
    python benchmarks/beam.py --compare "" --compare near_weight=0 --compare folder_weight=0.3,near_weight=0.3
                                                 # search-time settings side by side, each chat curated once

Data: BEAM (mohammadtavakoli78/BEAM), by default ``../shared/datasets/beam/`` relative to the
repository root, or ``$BEAM_PATH``, or ``--data``; ``<tier>/<n>/chat.json`` and
``<tier>/<n>/probing_questions/probing_questions.json``. Where BEAM ships a shortened
``chat_trunecated.json`` (sic) its own answer generation reads that file, and so does this
benchmark (``--full-chats``: ``chat.json`` always).

The chats are between a user and an AI assistant, unlike LoCoMo's two people; most memgrove users
record chats of this kind. Per chat:

1. **memgrove**: the chat, in memgrove's conversation format (per message: id = BEAM's message id,
   speaker = role = "user" / "assistant", session = "session_<batch_number>", time = the session's
   time anchor, text with BEAM's trailing "->-> b,n" marker stripped), is curated into a fresh temp
   memory by the verbatim curator (``Memory.ingest(conversation=..., window=W)``), which keeps the
   role in each entry's sources and the speaker in its tags. Every question goes through the query
   graph exactly as in ``benchmarks/locomo.py`` (``locomo.memgrove_system``: ``prefetch_limit``
   raised to fill a 1,000-word budget, every other setting at its default, no LLM).
2. **bm25-turns**: flat BM25 (``bm25s`` defaults) over every message, each "<Role>: <text>".
3. **bm25-user-turns**: the same over the user's messages only (a retriever that never returns
   the assistant's words).
4. **bm25-sessions**: the same over whole sessions (an item is every message of the session).

Metrics: ``benchmarks/retrieval_metrics.py``, the code LoCoMo is scored by (``score_items``):
evidence recall at k = 5, 10 items and at 100 / 200 / 500 / 1,000 words (whole messages only, in
rank order, stop at the first that does not fit), per question type and pooled over the nine types
with evidence (abstention has none by design and is left out). Evidence = the question's
``source_chat_ids`` (a list, or a dict of lists such as original_info / updated_info, flattened);
ids not in the chat are dropped and counted. Also, per system: the share of each budget's words
that is assistant text, recall of user and of assistant evidence separately, the roles of the
top-5 items that hold no evidence, paired per-question differences memgrove − baseline, latency.
Also, the same run re-sorts memgrove's own hits with the assistant's scores scaled by 0.95, 0.9, 0.8 and 0
(``memgrove-assistant×w``): a simulation within the 50 hits, to size a role prior before any ranking
code changes; the product's ranking is untouched.
No answers are generated or judged: BEAM's answers need an LLM judge and none is reachable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
if str(HERE) not in sys.path:  # `import locomo`, `import retrieval_metrics` however this file is run
    sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (benchmarks/locomo.py: BM25 retriever, memgrove system, variants, report helpers)
import retrieval_metrics as rm  # noqa: E402
from scale import machine_info  # noqa: E402

TYPES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction",
         "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
         "summarization", "temporal_reasoning")
POOLED = tuple(t for t in TYPES if t != "abstention")
OVERALL = "overall"
KS = locomo.KS
BUDGETS = locomo.BUDGETS
SYSTEMS = ("memgrove", "bm25-turns", "bm25-user-turns", "bm25-sessions")
BASELINES = SYSTEMS[1:]
# not systems: memgrove's own hits re-sorted with the assistant's scores scaled by w (w = 0: every user hit
# first), to size the role prior the numbers call for before any ranking code changes
ROLE_PRIORS = (0.95, 0.9, 0.8, 0.0)
SIMULATED = tuple(f"memgrove-assistant×{w:g}" for w in ROLE_PRIORS)
ROLES = ("user", "assistant")
RECALL_KEYS = [f"R@{k}" for k in KS] + [f"R@{b}w" for b in BUDGETS]
SESSION_KEYS = [f"S@{k}" for k in KS] + [f"S@{k}-all" for k in KS]
PAIRED_KEYS = ("R@10", "R@200w", "R@500w", "R@1000w")
DEFAULT_TIER = "100K"
TRUNCATED = "chat_trunecated.json"   # BEAM's spelling
# BEAM appends "->-> <session>,<turn>" (sometimes with a stray ")" or "N/A") to most user messages
MARKER = re.compile(r"\s*->->[^\n]{0,20}\Z")
MONTH_DAY_YEAR = re.compile(r"^([A-Za-z]+)-(\d{1,2})-(\d{4})$")
log = locomo.log


def default_data() -> Path:
    env = os.environ.get("BEAM_PATH", "").strip()
    return Path(env) if env else REPO.parent / "shared" / "datasets" / "beam"


# -- the data ---------------------------------------------------------------------------

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


# -- baselines ---------------------------------------------------------------------------

def bm25_turns(msgs: list[Message], roles: Sequence[str] = ROLES) -> locomo.BM25Retriever:
    mine = [m for m in msgs if m.role in roles]
    return locomo.BM25Retriever([rm.Item(rm.segments_from_texts([(m.id, m.prefixed)]), key=m.id) for m in mine],
                                [m.prefixed for m in mine])


def bm25_sessions(msgs: list[Message]) -> locomo.BM25Retriever:
    by_session: dict[str, list[Message]] = defaultdict(list)
    for m in msgs:
        by_session[m.session].append(m)
    items = [rm.Item(rm.segments_from_texts([(m.id, m.prefixed) for m in ms]), key=s) for s, ms in by_session.items()]
    return locomo.BM25Retriever(items, ["\n".join(m.prefixed for m in ms) for ms in by_session.values()])


# -- scoring ---------------------------------------------------------------------------------

def item_role(item: rm.Item, roles: dict[str, str]) -> str:
    """The role of the message(s) an item holds: "user", "assistant", "mixed" or "unknown"."""
    found = {roles.get(s.id, "unknown") for s in item.segments}
    return found.pop() if len(found) == 1 else "mixed"


WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
INFLECTIONS = ("'s", "s", "es", "ed", "d", "ing", "en", "n")


def _bases(word: str) -> set[str]:
    out = set()
    stems = [word[:-len(x)] for x in INFLECTIONS if word.endswith(x) and len(word) - len(x) >= 2]
    if word.endswith("ies"):
        stems.append(word[:-3] + "y")
    for w in [word] + stems:
        w = w.rstrip("e")
        out.add(w[:-1] if len(w) > 2 and w[-1] == w[-2] else w)   # "running" -> "runn" -> "run"
    return out


def inflection(a: str, b: str) -> bool:
    """Whether two words differ only by an inflection ("days"/"day", "used"/"use", "running"/"run"):
    a match the analyzer should make. Anything else it joins ("publications"/"public", "kids"/"children",
    "currently"/"current") is a conflation worth counting."""
    return bool(_bases(a) & _bases(b))


class Conflation:
    """Which of a question's terms a text matches only through the analyzer (a stem or the word-form
    table joining two different words, e.g. "publications" and "public", "kids" and "children")."""

    def __init__(self) -> None:
        from memgrove.tree.whoosh_engine import analyzer

        self.analyze = analyzer()
        self.memo: dict[str, tuple[str, ...]] = {}

    def forms(self, text: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for w in WORD.findall(text.lower()):
            if w not in self.memo:
                self.memo[w] = tuple(t.text for t in self.analyze(w))
            for t in self.memo[w]:
                out[t].add(w)
        return out

    def pairs(self, question: dict[str, set[str]], text: str) -> list[str]:
        """"question word → text word" for each shared term that only words differing by more than an
        inflection carry (no word of the text is the question's word or an inflection of it)."""
        mine = self.forms(text)
        return sorted(f"{min(question[t])} → {min(mine[t])}" for t in question.keys() & mine.keys()
                      if not any(inflection(a, b) for a in question[t] for b in mine[t]))


def score(q: Question, items: Sequence[rm.Item], roles: dict[str, str], sessions: dict[str, str] | None = None,
          conflation: Conflation | None = None) -> dict[str, Any]:
    """``rm.score_items`` plus where the words and the evidence are by role, recall of the evidence's
    sessions, and (with ``conflation``) the top-5 items' matches made only by the analyzer."""
    out = rm.score_items(items, q.evidence, None, KS, BUDGETS)
    if q.evidence and sessions is not None:   # the issue's session-level view: are the evidence sessions in the top k?
        wanted = {sessions[e] for e in q.evidence}
        for k in KS:
            got = {sessions[i] for it in items[:k] for i in it.ids if i in sessions}
            out[f"S@{k}"] = len(wanted & got) / len(wanted)
            out[f"S@{k}-all"] = float(wanted <= got)
    for b in BUDGETS:
        cut = rm.within_budget(items, b)
        out[f"assistant_words@{b}w"] = sum(s.words for s in cut.segments if roles.get(s.id) == "assistant")
        out[f"words@{b}w"] = cut.words
        # the message that stopped the walk: a long first hit that does not fit spends the whole budget
        blocker = None if cut.exhausted else [s for it in items for s in it.segments][len(cut.segments)]
        out[f"blocked_by@{b}w"] = None if blocker is None else roles.get(blocker.id, "unknown")
        if q.evidence:   # evidence ids found / wanted, by the role of the message holding them
            out[f"found@{b}w"] = {r: [sum(1 for e in q.evidence if roles[e] == r and e in cut.ids),
                                      sum(1 for e in q.evidence if roles[e] == r)] for r in ROLES}
    if q.evidence:
        ev = set(q.evidence)
        out["wrong_top5"] = dict(Counter(item_role(it, roles) for it in items[:5] if not ev & set(it.ids)))
        out["top1_role"] = item_role(items[0], roles) if items else None
        out["top1_evidence"] = bool(items) and bool(ev & set(items[0].ids))
        if conflation is not None:
            qf = conflation.forms(q.question)
            out["conflated_top5"] = [{"evidence": bool(ev & set(it.ids)), "pairs": conflation.pairs(qf, it.text)}
                                     for it in items[:5]]
    return out


def reweigh(items: Sequence[rm.Item], scores: Sequence[float], roles: dict[str, str], w: float) -> list[rm.Item]:
    """``items`` re-sorted by their score, an assistant message's scaled by ``w``; ties keep the order."""
    keyed = [((sc or 0.0) * (w if item_role(it, roles) == "assistant" else 1.0), -i, it)
             for i, (it, sc) in enumerate(zip(items, scores))]
    return [it for _, _, it in sorted(keyed, key=lambda x: (x[0], x[1]), reverse=True)]


def aggregate(records: list[dict[str, Any]], system: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict]] = {t: [r for r in records if r["qtype"] == t] for t in TYPES}
    groups[OVERALL] = [r for r in records if r["qtype"] in POOLED]
    out = {}
    for g, recs in groups.items():
        s = [r["systems"][system] for r in recs]
        with_ev = [x for x in s if "R@5" in x]
        row: dict[str, Any] = {"questions": len(s), "with_evidence": len(with_ev)}
        for key in RECALL_KEYS + ["R@all"] + SESSION_KEYS:
            row[key] = rm.mean(x[key] for x in with_ev if key in x)
        for b in BUDGETS:   # words-weighted: of all the words the budget bought, how many were the assistant's
            words = sum(x[f"words@{b}w"] for x in s)
            row[f"assistant_share@{b}w"] = sum(x[f"assistant_words@{b}w"] for x in s) / words if words else None
            row[f"used@{b}w"] = rm.mean(x[f"words@{b}w"] / b for x in s)
            row[f"empty@{b}w"] = rm.mean(float(x[f"words@{b}w"] == 0) for x in s)
            row[f"blocked_by_assistant@{b}w"] = rm.mean(float(x[f"blocked_by@{b}w"] == "assistant") for x in s)
        row["items_mean"] = rm.mean(x["n_items"] for x in s)
        row["filled_1000w"] = rm.mean(float(x["filled"]) for x in s)
        out[g] = row
    return out


def by_role(records: list[dict[str, Any]], system: str) -> dict[str, dict[str, Any]]:
    """Recall of evidence ids (pooled over ids, not questions) by the role of their message."""
    out: dict[str, dict[str, Any]] = {}
    pooled = [r["systems"][system] for r in records if r["qtype"] in POOLED and r["evidence"]]
    for role in ROLES:
        row: dict[str, Any] = {"ids": sum(x[f"found@{BUDGETS[0]}w"][role][1] for x in pooled)}
        for b in BUDGETS:
            found = sum(x[f"found@{b}w"][role][0] for x in pooled)
            row[f"R@{b}w"] = found / row["ids"] if row["ids"] else None
        out[role] = row
    wrong: Counter = Counter()
    top1: Counter = Counter()
    for x in pooled:
        wrong.update(x["wrong_top5"])
        if x["top1_role"] is not None and not x["top1_evidence"]:
            top1[x["top1_role"]] += 1
    if any("conflated_top5" in x for x in pooled):
        conf: dict[str, Any] = {}
        for label, is_ev in (("evidence", True), ("wrong", False)):
            hits = [h for x in pooled for h in x.get("conflated_top5", []) if h["evidence"] == is_ev]
            pairs = Counter(p for h in hits for p in h["pairs"])
            conf[label] = {"items": len(hits), "with_conflated_match": sum(1 for h in hits if h["pairs"]),
                           "top_pairs": dict(pairs.most_common(15))}
        out["conflated_top5"] = conf
    out["wrong_top5_roles"] = dict(sorted(wrong.items()))
    out["wrong_top1_roles"] = dict(sorted(top1.items()))
    return out


def paired(records: list[dict[str, Any]], a: str, b: str) -> dict[str, dict[str, Any]]:
    """Per-question differences a − b over the pooled questions with evidence."""
    out = {}
    rows = [r["systems"] for r in records if r["qtype"] in POOLED and r["evidence"]]
    for k in PAIRED_KEYS:
        d = [x[a][k] - x[b][k] for x in rows]
        out[k] = {"n": len(d), "mean_diff": rm.mean(d), "wins": sum(1 for v in d if v > 0),
                  "losses": sum(1 for v in d if v < 0), "ties": sum(1 for v in d if v == 0)}
    return out


# -- the run -----------------------------------------------------------------------------------

def run(chats: list[Chat], *, variant: locomo.Variant, prefetch_limit: int,
        keep_questions: bool = True) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    tiers: Counter = Counter()
    chat_rows, dropped = [], []
    entry_words: list[int] = []
    conflation = Conflation()
    for chat in chats:
        roles = {m.id: m.role for m in chat.messages}
        sessions = {m.id: m.session for m in chat.messages}
        for q in chat.questions:
            dropped += [{"chat": chat.id, "question": q.index, "id": x} for x in q.dropped]
        log(f"{chat.id}: {len(chat.messages)} messages, {len(chat.questions)} questions; curating ({variant.name}) ...")
        mg = locomo.memgrove_system(to_conversation(chat.id, chat.messages), window=variant.window,
                                    curator=variant.curator, prefetch_limit=prefetch_limit,
                                    query_overrides=variant.query, tree_overrides=variant.tree,
                                    fresh_signals=variant.fresh_signals, dream=variant.dream)
        systems: dict[str, Callable[[str], locomo.Retrieved]] = {
            "memgrove": mg, "bm25-turns": bm25_turns(chat.messages),
            "bm25-user-turns": bm25_turns(chat.messages, ("user",)), "bm25-sessions": bm25_sessions(chat.messages)}
        t0 = time.perf_counter()
        try:
            with locomo.env_without("MEMGROVE_MODEL"):   # retrieval only: the graph answers without an LLM
                for q in chat.questions:
                    rec = {"chat": chat.id, "index": q.index, "qtype": q.qtype, "evidence": q.evidence,
                           "systems": {}}
                    for name, retr in systems.items():
                        r = retr(q.question)
                        latencies[name].append(r.latency_ms)
                        rec["systems"][name] = score(q, r.items, roles, sessions,
                                                     conflation if name == "memgrove" else None)
                        if name == "memgrove":
                            tiers[str(r.info.get("tier"))] += 1
                            for w, sim in zip(ROLE_PRIORS, SIMULATED):
                                rec["systems"][sim] = score(q, reweigh(r.items, r.info["scores"], roles, w), roles,
                                                           sessions)
                    records.append(rec)
        finally:
            entry_words += [sum(s.words for s in segs) for segs, _how in mg.bodies.values()]
            mg.close()
        words = {r: sum(rm.word_count(m.text) for m in chat.messages if m.role == r) for r in ROLES}
        chat_rows.append({"chat": chat.id, "file": chat.path.name, "sessions": len({m.session for m in chat.messages}),
                          "messages": len(chat.messages), "user_words": words["user"],
                          "assistant_words": words["assistant"], "questions": len(chat.questions),
                          "query_seconds": round(time.perf_counter() - t0, 1),
                          **{k: mg.curation[k] for k in ("seconds", "ops", "entries")}})
        log(f"  curated in {mg.curation['seconds']:.1f} s ({mg.curation['entries']} entries); "
            f"{len(chat.questions)} questions x {len(systems)} systems in {time.perf_counter() - t0:.1f} s")

    by_system = {s: aggregate(records, s) for s in SYSTEMS + SIMULATED}
    best = {g: {k: max((by_system[b][g][k] for b in BASELINES if by_system[b][g][k] is not None), default=None)
                for k in RECALL_KEYS} for g in by_system["memgrove"]}
    message_best = {g: {k: max((by_system[b][g][k] for b in ("bm25-turns", "bm25-user-turns")
                                if by_system[b][g][k] is not None), default=None) for k in RECALL_KEYS}
                    for g in by_system["memgrove"]}
    ratio_message = {g: {k: (by_system["memgrove"][g][k] / message_best[g][k] if by_system["memgrove"][g][k]
                             is not None and message_best[g][k] else None) for k in RECALL_KEYS} for g in best}
    ratio_best = {g: {k: (by_system["memgrove"][g][k] / best[g][k] if by_system["memgrove"][g][k] is not None
                          and best[g][k] else None) for k in RECALL_KEYS} for g in best}
    role_of = {c.id: {m.id: m.role for m in c.messages} for c in chats}
    ev_roles = Counter(role_of[r["chat"]][e] for r in records if r["qtype"] in POOLED for e in r["evidence"])
    report: dict[str, Any] = {
        "systems": by_system,
        "best_baseline": best,
        "ratio_to_best_baseline": ratio_best,
        "ratio_to_best_message_baseline": ratio_message,
        "by_role": {s: by_role(records, s) for s in SYSTEMS + SIMULATED},
        "paired": {b: paired(records, "memgrove", b) for b in BASELINES},
        "paired_simulated": {s: {b: paired(records, s, b) for b in ("memgrove", "bm25-user-turns")} for s in SIMULATED},
        "latency_ms": {s: rm.latency_summary(v) for s, v in latencies.items()},
        "memgrove": {"tiers": dict(sorted(tiers.items())),
                     "curation_seconds_total": round(sum(c["seconds"] for c in chat_rows), 2),
                     "entries_total": sum(c["entries"] for c in chat_rows),
                     "retrieved_entry_words_mean": round(rm.mean(entry_words), 1) if entry_words else None,
                     "distinct_entries_retrieved": len(entry_words)},
        "data": {"chats": chat_rows, "messages": sum(c["messages"] for c in chat_rows),
                 "questions": len(records),
                 "by_type": {t: sum(1 for r in records if r["qtype"] == t) for t in TYPES},
                 "without_evidence": dict(Counter(r["qtype"] for r in records if not r["evidence"])),
                 "evidence_roles": dict(ev_roles), "evidence_dropped": dropped},
    }
    if keep_questions:
        report["questions"] = [
            {"chat": r["chat"], "index": r["index"], "qtype": r["qtype"], "evidence": r["evidence"],
             **{s: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r["systems"][s].items()
                    if k in RECALL_KEYS or k in ("R@all", "top1_role")} for s in SYSTEMS}} for r in records]
    return report


# search-time settings only: these are read when a chat is curated or indexed, so an arm cannot change them
CURATION_SETTINGS = ("content_cap", "part_words", "engine", "index_procs", "max_input_bytes")
ARM_SYSTEMS = ("bm25-user-turns", "bm25-turns")   # references run once beside the arms


def parse_arm(text: str) -> tuple[str, dict[str, Any]]:
    """``"key=value,key=value"`` (``""``: the variant's settings as they are) as ``(name, overrides)``."""
    overrides = locomo.with_tree_overrides(locomo.Variant("arm", ""), [kv for kv in text.split(",") if kv]).tree
    late = sorted(k for k in overrides if k in CURATION_SETTINGS)
    if late:
        raise SystemExit(f"--compare: {', '.join(late)} is read when a chat is curated; run beam.py --tree for it")
    return (text or "as is"), overrides


def compare(chats: list[Chat], *, variant: locomo.Variant, prefetch_limit: int,
            arms: list[tuple[str, dict[str, Any]]], keep_questions: bool = True,
            embed: bool = False) -> dict[str, Any]:
    """Search-time settings side by side: each chat is curated once, then every question goes
    through the query graph once per arm, with the arm's [tree] settings, the query cache cleared
    and the importance its questions' answers recorded forgotten before the next arm (the verbatim
    curator leaves no signals, so every arm starts from the same memory). About as many searches as
    one ``run`` per arm, but one curation: a 500K sweep of four arms in a fraction of four runs.
    ``embed``: after curating, every entry's vector is computed (``memgrove reindex``'s warm-up, with
    the first arm that ranks by meaning), timed, so that arm's latencies are those of a warm tree."""
    from memgrove.tree.cache import QueryCache
    from memgrove.tree.errors import MemgroveError
    from memgrove.tree.settings import TreeSettings
    names = [n for n, _ in arms]
    if len(set(names)) != len(names):
        raise SystemExit("--compare: the same arm twice")
    for name, kw in arms:
        unknown = sorted(set(kw) - set(TreeSettings.__dataclass_fields__))
        if unknown:
            raise SystemExit(f"--compare: unknown [tree] setting {', '.join(unknown)}")
        try:   # before the first chat is curated, not after
            TreeSettings().replace(**kw)
        except (MemgroveError, TypeError) as exc:
            raise SystemExit(f"--compare {name}: {exc}") from None
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {n: [] for n in names}
    embedded = {"entries": 0, "seconds": 0.0}
    for chat in chats:
        roles = {m.id: m.role for m in chat.messages}
        sessions = {m.id: m.session for m in chat.messages}
        log(f"{chat.id}: {len(chat.messages)} messages, {len(chat.questions)} questions; curating ({variant.name}) ...")
        mg = locomo.memgrove_system(to_conversation(chat.id, chat.messages), window=variant.window,
                                    curator=variant.curator, prefetch_limit=prefetch_limit,
                                    query_overrides=variant.query, tree_overrides=variant.tree,
                                    fresh_signals=variant.fresh_signals, dream=variant.dream)
        tree = mg.mem.tree
        base = tree.settings
        refs = {"bm25-user-turns": bm25_turns(chat.messages, ("user",)), "bm25-turns": bm25_turns(chat.messages)}
        recs = [{"chat": chat.id, "index": q.index, "qtype": q.qtype, "evidence": q.evidence,
                 "systems": {n: score(q, r(q.question).items, roles, sessions) for n, r in refs.items()}}
                for q in chat.questions]
        try:
            meaning = next((kw for _n, kw in arms if base.replace(**kw).semantic_weight > 0), None)
            if embed and meaning is not None:
                tree.settings = base.replace(**meaning)
                t0 = time.perf_counter()
                embedded["entries"] += tree.embed()[0]
                embedded["seconds"] += time.perf_counter() - t0
                log(f"  embedded the chat's entries in {time.perf_counter() - t0:.1f} s")
            with locomo.env_without("MEMGROVE_MODEL"):
                for name, kw in arms:
                    tree.settings = base.replace(**kw)
                    QueryCache(tree.home / "cache").clear()
                    delivered: set[str] = set()
                    t0 = time.perf_counter()
                    for q, rec in zip(chat.questions, recs):
                        r = mg(q.question)
                        latencies[name].append(r.latency_ms)
                        delivered.update(it.key for it in r.items)
                        rec["systems"][name] = score(q, r.items, roles, sessions)
                    tree.signals.forget(sorted(delivered))
                    log(f"  {name}: {len(chat.questions)} questions in {time.perf_counter() - t0:.1f} s")
        finally:
            tree.settings = base
            mg.close()
        records += recs
    systems = names + list(ARM_SYSTEMS)
    report: dict[str, Any] = {
        "arms": {n: kw for n, kw in arms},
        "systems": {s: aggregate(records, s) for s in systems},
        "paired": {n: paired(records, n, names[0]) for n in names[1:]},
        "latency_ms": {n: rm.latency_summary(v) for n, v in latencies.items()},
        "data": {"questions": len(records), "by_type": {t: sum(1 for r in records if r["qtype"] == t) for t in TYPES}},
    }
    if embedded["entries"]:
        report["embedded"] = {"entries": embedded["entries"], "seconds": round(embedded["seconds"], 1),
                              "ms_per_entry": round(1000 * embedded["seconds"] / embedded["entries"], 1)}
    if keep_questions:
        report["questions"] = [
            {"chat": r["chat"], "index": r["index"], "qtype": r["qtype"],
             **{s: {k: round(v, 4) for k, v in r["systems"][s].items() if k in RECALL_KEYS} for s in systems}}
            for r in records]
    return report


def render_compare(report: dict[str, Any]) -> str:
    c, syst = report["config"], report["systems"]
    names = list(report["arms"])
    L = [f"# memgrove BEAM {c['tier']}: search settings side by side", "",
         f"`{report['command']}` — {len(c['chats'])} chats, {report['data']['questions']} questions, "
         f"variant `{c['variant']['name']}`; each chat curated once, each arm's questions with a cleared cache "
         "and the same signals. Recall pooled over the types with evidence (abstention left out).", "",
         "| arm | " + " | ".join(RECALL_KEYS) + " | p50 ms |", "|---|" + "---|" * (len(RECALL_KEYS) + 1)]
    for s in names + list(ARM_SYSTEMS):
        lat = report["latency_ms"].get(s)
        L.append(f"| {s} | " + " | ".join(_pct(syst[s][OVERALL][k]) for k in RECALL_KEYS)
                 + (f" | {lat['p50']:.1f} |" if lat else " | |"))
    if report.get("embedded"):
        e = report["embedded"]
        L += ["", f"Every entry's vector computed after curating (`--embed`, as `memgrove reindex` does): "
              f"{e['entries']:,} entries in {e['seconds']:,.1f} s, {e['ms_per_entry']} ms each; the arms' "
              "latencies are warm searches."]
    if len(names) > 1:
        L += ["", f"Paired against `{names[0]}` (mean difference in points, questions won / lost):", "",
              "| arm | " + " | ".join(PAIRED_KEYS) + " |", "|---|" + "---|" * len(PAIRED_KEYS)]
        for n in names[1:]:
            p = report["paired"][n]
            L.append(f"| {n} | " + " | ".join(f"{100 * p[k]['mean_diff']:+.1f} ({p[k]['wins']}/{p[k]['losses']})"
                                              for k in PAIRED_KEYS) + " |")
    for k in ("R@10", "R@200w", "R@500w"):
        L += ["", f"{k} by question type:", "", "| arm | " + " | ".join(POOLED) + " |", "|---|" + "---|" * len(POOLED)]
        for s in names + list(ARM_SYSTEMS):
            L.append(f"| {s} | " + " | ".join(_pct(syst[s][t][k]) for t in POOLED) + " |")
    return "\n".join(L)


# -- the report --------------------------------------------------------------------------------

_pct, _x = locomo._pct, locomo._x


def _recall_table(report: dict[str, Any], group: str) -> list[str]:
    syst, ratio, rmsg = report["systems"], report["ratio_to_best_baseline"], report["ratio_to_best_message_baseline"]
    L = ["| metric | " + " | ".join(SYSTEMS) + " | memgrove ÷ best baseline | ÷ best message baseline |",
         "|---|" + "---|" * (len(SYSTEMS) + 2)]
    for k in RECALL_KEYS:
        L.append(f"| {k} | " + " | ".join(_pct(syst[s][group][k]) for s in SYSTEMS)
                 + f" | {_x(ratio[group][k])} | {_x(rmsg[group][k])} |")
    for k in SESSION_KEYS:
        L.append(f"| sessions {k} | " + " | ".join(_pct(syst[s][group][k]) for s in SYSTEMS) + " | | |")
    return L


def render_markdown(report: dict[str, Any]) -> str:
    c, syst, data = report["config"], report["systems"], report["data"]
    L = ["# memgrove BEAM retrieval benchmark", "", locomo.machine_line(report), ""]
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s · data `{c['data']}` tier "
             f"{c['tier']} ({len(data['chats'])} chats, {data['messages']:,} messages, {data['questions']:,} "
             f"questions; files {', '.join(sorted({r['file'] for r in data['chats']}))})")
    L.append("")
    v = c["variant"]
    L.append(f"**memgrove** = variant `{v['name']}` ({v['description']}): verbatim curator, window {v['window']}, "
             f"roles kept (speaker = role), query graph `prefetch_limit={c['prefetch_limit']}`, all other settings "
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
    L.append("| type | n | " + " | ".join(f"{s} R@10 / @200w / @500w" for s in SYSTEMS) + " |")
    L.append("|---|---|" + "---|" * len(SYSTEMS))
    for t in POOLED:
        L.append(f"| {t} | {syst['memgrove'][t]['with_evidence']} | " + " | ".join(
            " / ".join(_pct(syst[s][t][k]) for k in ("R@10", "R@200w", "R@500w")) for s in SYSTEMS) + " |")
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
    L.append("| system | " + " | ".join(f"assistant share @{b}w" for b in BUDGETS) + " | "
             + " | ".join(f"user ev. @{b}w" for b in (200, 1000)) + " | "
             + " | ".join(f"assistant ev. @{b}w" for b in (200, 1000)) + " | wrong top-5 items (roles) | wrong top-1 (roles) |")
    L.append("|---|" + "---|" * (len(BUDGETS) + 6))
    for s in SYSTEMS:
        row, br = syst[s][OVERALL], report["by_role"][s]
        L.append(f"| {s} | " + " | ".join(_pct(row[f"assistant_share@{b}w"]) for b in BUDGETS) + " | "
                 + " | ".join(_pct(br["user"][f"R@{b}w"]) for b in (200, 1000)) + " | "
                 + " | ".join(_pct(br["assistant"][f"R@{b}w"]) for b in (200, 1000)) + " | "
                 + ", ".join(f"{k} {n}" for k, n in br["wrong_top5_roles"].items()) + " | "
                 + ", ".join(f"{k} {n}" for k, n in br["wrong_top1_roles"].items()) + " |")
    L.append("")
    L.append("| system | " + " | ".join(f"used / empty / stopped by an assistant message @{b}w" for b in BUDGETS) + " |")
    L.append("|---|" + "---|" * len(BUDGETS))
    for s in SYSTEMS:
        row = syst[s][OVERALL]
        L.append(f"| {s} | " + " | ".join(f"{_pct(row[f'used@{b}w'])} / {_pct(row[f'empty@{b}w'])} / "
                                          f"{_pct(row[f'blocked_by_assistant@{b}w'])}" for b in BUDGETS) + " |")
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
    L.append("| baseline | " + " | ".join(f"{k} mean diff (wins/losses/ties)" for k in PAIRED_KEYS) + " |")
    L.append("|---|" + "---|" * len(PAIRED_KEYS))
    for b, d in report["paired"].items():
        L.append(f"| {b} | " + " | ".join(
            f"{d[k]['mean_diff'] * 100:+.1f} ({d[k]['wins']}/{d[k]['losses']}/{d[k]['ties']})"
            if d[k]["mean_diff"] is not None else "—" for k in PAIRED_KEYS) + " |")
    L.append("")
    L.append("## A role prior, simulated on memgrove's own hits (no ranking code changed)")
    L.append("")
    L.append("memgrove's 50 hits per question re-sorted with each assistant message's score × w (w = 0: every user "
             "hit first, the assistant's after, in their order). Overall, percent:")
    L.append("")
    rows = ("memgrove", *SIMULATED, "bm25-user-turns")
    L.append("| system | " + " | ".join(RECALL_KEYS) + " | user ev. @1000w | assistant ev. @1000w | "
             "assistant share @500w |")
    L.append("|---|" + "---|" * (len(RECALL_KEYS) + 3))
    for s in rows:
        row, br = syst[s][OVERALL], report["by_role"][s]
        L.append(f"| {s} | " + " | ".join(_pct(row[k]) for k in RECALL_KEYS) + f" | {_pct(br['user']['R@1000w'])} | "
                 f"{_pct(br['assistant']['R@1000w'])} | {_pct(row['assistant_share@500w'])} |")
    L.append("")
    L.append("| simulated | vs | " + " | ".join(f"{k} mean diff (wins/losses/ties)" for k in PAIRED_KEYS) + " |")
    L.append("|---|---|" + "---|" * len(PAIRED_KEYS))
    for s, d in report["paired_simulated"].items():
        for b, x in d.items():
            L.append(f"| {s} | {b} | " + " | ".join(
                f"{x[k]['mean_diff'] * 100:+.1f} ({x[k]['wins']}/{x[k]['losses']}/{x[k]['ties']})"
                if x[k]["mean_diff"] is not None else "—" for k in PAIRED_KEYS) + " |")
    L.append("")
    L.append("Per type at 500 words (memgrove → " + " → ".join(SIMULATED) + "): " + "; ".join(
        f"{t} " + " → ".join(_pct(syst[s][t]["R@500w"]) for s in ("memgrove", *SIMULATED)) for t in POOLED) + ".")
    L.append("")
    L.append("## Latency and curation")
    L.append("")
    L.extend(locomo.latency_table(report["latency_ms"], SYSTEMS))
    L.append("")
    mg = report["memgrove"]
    L.append(f"Tier distribution: " + ", ".join(f"tier {t}: {n}" for t, n in mg["tiers"].items())
             + f". Retrieved entries average {mg['retrieved_entry_words_mean']} words "
             f"({mg['distinct_entries_retrieved']:,} distinct).")
    L.append("")
    L.append("| chat | file | sessions | messages | user words | assistant words | questions | curation s | entries "
             "| query phase s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in data["chats"]:
        L.append(f"| {r['chat']} | {r['file']} | {r['sessions']} | {r['messages']} | {r['user_words']:,} | "
                 f"{r['assistant_words']:,} | {r['questions']} | {r['seconds']:.1f} | {r['entries']} | "
                 f"{r['query_seconds']} |")
    L.append("")
    L.append(f"Data: questions without evidence by type: {data['without_evidence'] or 'none'}; evidence ids not in "
             f"the chat file read (dropped): {len(data['evidence_dropped'])}.")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None,
                    help="the BEAM directory (default: $BEAM_PATH or ../shared/datasets/beam from the repo)")
    ap.add_argument("--tier", default=DEFAULT_TIER, help=f"100K or 500K (default {DEFAULT_TIER})")
    ap.add_argument("--chats", type=int, default=None, help="only the first N chats of the tier")
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"),
                    help="the fixed half of the tier's chats (benchmarks/splits.json; default all)")
    ap.add_argument("--full-chats", action="store_true",
                    help=f"read chat.json even where BEAM ships {TRUNCATED} (which its answer generation uses)")
    ap.add_argument("--variant", default=locomo.DEFAULT_VARIANT, choices=sorted(locomo.VARIANTS),
                    help="memgrove variant (benchmarks/locomo.py VARIANTS)")
    ap.add_argument("--tree", action="append", default=[], metavar="KEY=VALUE",
                    help="override a [tree] setting for an ablation, e.g. --tree keywords_boost=0 (repeatable)")
    ap.add_argument("--prefetch-limit", type=int, default=locomo.DEFAULT_PREFETCH,
                    help=f"query graph prefetch_limit (default {locomo.DEFAULT_PREFETCH})")
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for beam*.json/.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-questions", action="store_true", help="leave the per-question records out of the JSON")
    ap.add_argument("--compare", action="append", default=None, metavar="KEY=VALUE[,KEY=VALUE]",
                    help="search-time [tree] settings side by side, one arm per use (\"\" for the settings as "
                         "they are; the first arm is the reference): each chat curated once, every question "
                         "once per arm; writes beam[_tier]_compare.json/.md")
    ap.add_argument("--embed", action="store_true",
                    help="with --compare: compute every entry's vector after curating (memgrove reindex's "
                         "warm-up, timed), so an arm with semantic_weight searches a warm tree")
    a = ap.parse_args(argv)
    if a.chats is not None and a.chats < 1:
        raise SystemExit("--chats must be at least 1")

    root = (a.data or default_data()).resolve()
    import splits   # benchmarks/splits.py: the fixed dev/test halves
    dirs = [d for d in chat_dirs(root, a.tier) if splits.in_split("beam", d.name, a.split, a.tier)]
    chosen = dirs[:a.chats] if a.chats else dirs
    chats = [load_chat(d, a.tier, a.full_chats) for d in chosen]
    digest = hashlib.sha256()
    for ch in chats:
        digest.update(ch.path.read_bytes())
    variant = locomo.with_tree_overrides(locomo.VARIANTS[a.variant], a.tree)
    command = "python benchmarks/beam.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(0)
    machine["uncommitted"] = locomo.uncommitted_files()
    log(f"memgrove BEAM benchmark: tier {a.tier}, {len(chats)} chats, variant {variant.name}, "
        f"prefetch_limit {a.prefetch_limit}, load avg {machine['loadavg']}")
    arms = [parse_arm(x) for x in a.compare] if a.compare is not None else None
    t0 = time.perf_counter()
    if arms is not None:
        body = compare(chats, variant=variant, prefetch_limit=a.prefetch_limit, arms=arms,
                       keep_questions=not a.no_questions, embed=a.embed)
    else:
        body = run(chats, variant=variant, prefetch_limit=a.prefetch_limit, keep_questions=not a.no_questions)
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "benchmark": "beam",
        "machine": machine,
        "versions": locomo.report_versions(),
        "command": command.strip(),
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(root), "tier": a.tier, "chats_sha256": digest.hexdigest(),
                   "chats": [c.id for c in chats], "full_chats": a.full_chats, "variant": asdict(variant),
                   "prefetch_limit": a.prefetch_limit, "ks": list(KS), "budgets": list(BUDGETS),
                   "words": "whitespace-separated tokens", "pooled_types": list(POOLED)},
        **body,
    }
    md = render_markdown(report) if arms is None else render_compare(report)
    print(md)
    if not a.no_write:
        a.out.mkdir(parents=True, exist_ok=True)
        stem = "beam" + ("" if a.tier == DEFAULT_TIER else f"_{a.tier.lower()}") \
            + ("" if a.variant == locomo.DEFAULT_VARIANT else f"_{a.variant}") \
            + "".join(f"_{kv.replace('=', '')}" for kv in a.tree) \
            + (f"_c{len(chats)}" if len(chats) < len(dirs) else "") + ("_full" if a.full_chats else "") \
            + ("" if a.split == "all" else f"_{a.split}") + ("_compare" if arms is not None else "") + ("_embed" if arms is not None and a.embed else "")
        (a.out / f"{stem}.json").write_text(locomo.dump_json(report), encoding="utf-8")
        (a.out / f"{stem}.md").write_text(md + "\n", encoding="utf-8")
        log(f"wrote {a.out / stem}.json and .md")
    return report


if __name__ == "__main__":
    main()

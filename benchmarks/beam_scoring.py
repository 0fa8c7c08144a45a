"""BEAM's scoring beyond recall: which role an item holds, session recall, inflection-aware matching of
memgrove's entries to BEAM's message ids (``Conflation``) and the
means per question type, per role and paired between two systems."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Sequence

from harness import metrics as rm
from harness.datasets.beam import (BUDGETS, KS, OVERALL, PAIRED_KEYS, POOLED, RECALL_KEYS, ROLES, SESSION_KEYS, TYPES,
                                   Question)


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
        from memgrove.tree.index.whoosh_engine import analyzer

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
    if q.evidence and sessions is not None:   # the session-level view: are the evidence sessions in the top k?
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

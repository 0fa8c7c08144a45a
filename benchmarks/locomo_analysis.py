"""LoCoMo's analyses beside recall: where evidence was lost, recall by the quarter of the question list
(ranking drift), how much evidence a lexical retriever can reach at all, and the LLM answer + judge of
``--llm``."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from harness import metrics as rm
from harness.datasets.locomo import OVERALL, POOLED, SYSTEMS, Question, Turn
from harness.tokens import message_text

PROMPTS = Path(__file__).resolve().parent / "prompts"


def order_effect(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall (categories 1-4) by the quarter of the conversation's question list a question is in: a
    ranking that learns from retrievals (the product profile's access bonus) drifts as questions are asked;
    the baselines show how hard each quarter's questions are."""
    out: dict[str, Any] = {}
    for s in SYSTEMS:
        out[s] = {}
        for quarter in range(4):
            xs = [r["systems"][s] for r in records
                  if r["category"] in POOLED and r["quarter"] == quarter and "R@10" in r["systems"][s]]
            out[s][str(quarter + 1)] = {"n": len(xs), "R@10": rm.mean(x["R@10"] for x in xs),
                                        "R@1000w": rm.mean(x["R@1000w"] for x in xs)}
    return out


def lost_evidence(records: list[dict[str, Any]], system: str) -> dict[str, int]:
    """Where ``system`` left the evidence ids of categories 1-4 at 1,000 words (``harness.metrics.where_lost``)."""
    return rm.where_lost(rec["systems"][system] for rec in records if rec["category"] in POOLED)


def lexical_reach(sample: dict[str, Any], turns: list[Turn], qs: list[Question]) -> dict[int, list[tuple[float, float]]]:
    """How much of each question's evidence a lexical retriever can find by its words at all.

    Per question with evidence: the share of its evidence turns that share an analyzed term
    (memgrove's analyzer: stop words out, Porter2 stems; the two speakers' names not counted,
    since every turn is somebody's) with the question, (1) in the turn's own words and (2) also
    counting the words of the question the turn answers (the verbatim curator's reply keywords).
    The rest can only be reached through links, folders or the speaker: a ceiling, not a score.
    """
    from memgrove.tree.text.questions import question_words
    from memgrove.tree.index.whoosh_engine import analyzer

    ana = analyzer()

    def terms(text: str) -> set[str]:
        return {t.text for t in ana(text)}

    conv = sample["conversation"]
    names = terms(f"{conv.get('speaker_a', '')} {conv.get('speaker_b', '')}")
    asked = {b.id: a.text for a, b in zip(turns, turns[1:]) if a.session == b.session and a.speaker != b.speaker}
    by_id = {t.id: t for t in turns}
    out: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for q in qs:
        if not q.evidence:
            continue
        wanted = terms(q.question) - names
        own = [bool(wanted & terms(by_id[e].text)) for e in q.evidence]
        keyed = [o or bool(wanted & terms(" ".join(question_words(asked.get(e, ""))))) for e, o in
                 zip(q.evidence, own)]
        out[q.category].append((sum(own) / len(own), sum(keyed) / len(keyed)))
    return out


def reach_summary(reach: dict[int, list[tuple[float, float]]]) -> dict[str, dict[str, Any]]:
    groups = {str(c): v for c, v in sorted(reach.items())}
    groups[OVERALL] = [x for c in POOLED for x in reach.get(c, [])]
    return {g: {"questions": len(v), "own_words": round(sum(a for a, _ in v) / len(v), 4) if v else None,
                "with_reply_keywords": round(sum(b for _, b in v) / len(v), 4) if v else None}
            for g, v in groups.items()}


def lost_vs(records: list[dict[str, Any]], system: str, other: str) -> dict[str, int]:
    """Evidence ids ``other`` has within 1,000 words and ``system`` does not: where ``system`` has them."""
    c: Counter = Counter()
    for rec in records:
        if rec["category"] not in POOLED:
            continue
        a, b = rec["systems"][system].get("lost", {}), rec["systems"][other].get("lost", {})
        for e, where in b.items():
            if where == "in_budget" and a.get(e) != "in_budget":
                c[a.get(e, "not_retrieved")] += 1
    return dict(c)


# -- the LLM part (--llm) --------------------------------------------------------------------

ANSWER_PROMPT = """You answer a question about a long-running conversation between {speaker_a} and {speaker_b}, \
using only the memory excerpts below (retrieved from that conversation; they may be incomplete or irrelevant).

Excerpts:
{context}

Question: {question}

Answer with a short phrase, in the conversation's own words where possible. If the question asks when \
something happened, answer with a date or period, using the dates of the messages (a relative reference \
such as "yesterday" or "last week" is relative to the date of the message it occurs in). If the excerpts \
do not contain the answer, say "not mentioned".
Answer:"""


def judge_prompt() -> str:
    """benchmarks/prompts/locomo_judge.md without its leading HTML comment (attribution)."""
    text = (PROMPTS / "locomo_judge.md").read_text(encoding="utf-8")
    return re.sub(r"\A\s*<!--.*?-->\s*", "", text, flags=re.S)


def parse_label(text: str) -> str | None:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        m = re.search(r"\{.*\}", text, re.S)
        if m:
            label = str(json.loads(m.group(0)).get("label", "")).strip().upper()
            if label in ("CORRECT", "WRONG"):
                return label
    found = re.findall(r"\b(CORRECT|WRONG)\b", text.upper())
    return found[-1] if found else None


def llm_answer_and_judge(model: Any, q: Question, context: str, speakers: tuple[str, str]) -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    t0 = time.perf_counter()
    answer = message_text(model.invoke([HumanMessage(ANSWER_PROMPT.format(
        speaker_a=speakers[0], speaker_b=speakers[1], context=context or "(nothing retrieved)",
        question=q.question))])).strip()
    verdict = message_text(model.invoke([HumanMessage(judge_prompt().format(
        question=q.question, gold_answer=q.raw_answer, generated_answer=answer))])).strip()
    label = parse_label(verdict)
    return {"answer": answer, "judge": verdict[-300:], "label": label, "correct": label == "CORRECT",
            "seconds": round(time.perf_counter() - t0, 2)}


def llm_summary(rows: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    out: dict[str, Any] = {"context_budget_words": budget, "by_system": {}}
    for s in sorted({r["system"] for r in rows}):
        mine = [r for r in rows if r["system"] == s]
        cats = {}
        for c in POOLED:
            rs = [r for r in mine if r["category"] == c]
            cats[str(c)] = {"n": len(rs), "accuracy": rm.mean(float(r["correct"]) for r in rs)}
        cats[OVERALL] = {"n": len(mine), "accuracy": rm.mean(float(r["correct"]) for r in mine)}
        out["by_system"][s] = {"by_category": cats, "unparsed_labels": sum(1 for r in mine if r["label"] is None)}
    return out

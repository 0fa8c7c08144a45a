"""The consolidation prompt: the model's decision about one dream candidate.

    candidate ─ neighbours (BM25) ─ dream_v1 prompt ─ model ─ parse_decision ─ Decision | None

ByteRover's four actions, mapped onto memgrove's operations: MERGE (fold the others into the
entry kept), TEMPORAL_UPDATE -> SUPERSEDE (the old entries closed, kept as history),
CROSS_REFERENCE -> links both ways, SKIP. The model's answer is untrusted: it is parsed
defensively (JSON in a fence, else the first ``{`` to the last ``}``), every path it names must
be one of the candidate's, and anything else is no decision (the candidate is queued).
``model_decider`` is what ``Memory.dream`` passes to ``tree.dream.dream``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memgrove.tree.hygiene.dream import Decision
from memgrove.tree.hygiene.findings import Candidate

from .llm import describe_error, prompt

ACTIONS = {"MERGE": "MERGE", "TEMPORAL_UPDATE": "SUPERSEDE", "CROSS_REFERENCE": "LINK", "SKIP": "SKIP"}
ENTRY_CHARS = 4000        # of each entry of the group shown in full
NEIGHBOURS = 5
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def neighbours(tree: Any, c: Candidate, limit: int = NEIGHBOURS) -> list[dict[str, str]]:
    """The entries most like the group (BM25 over its titles and first words), outside it."""
    words: list[str] = []
    for p in c.paths:
        try:
            e = tree.read(p)
        except Exception:  # noqa: BLE001 - an entry gone or unreadable adds no words
            continue
        words += (e.title + " " + e.body).split()[:60]
    query = " ".join(w.strip(".,:;!?()[]\"'") for w in words if len(w) > 2)[:2000]
    if not query.strip():
        return []
    hits = tree.search(query, limit + len(c.paths), record_access=False)
    return [{"path": h.path, "title": h.title, "summary": h.summary or h.excerpt[:200]}
            for h in hits if h.path not in c.paths and h.kind == "entry"][:limit]


def dream_prompt(tree: Any, c: Candidate, near: list[dict[str, str]]) -> str:
    """The user turn for one candidate group."""
    parts = [f"Kind of finding: {c.kind} (proposed action {c.action}, scan confidence {c.confidence:.2f})",
             f"Why it was found: {c.reason}"]
    if c.evidence:
        parts.append("Evidence: " + json.dumps(c.evidence, ensure_ascii=False, default=str)[:2000])
    parts.append("The group (only these paths may be named):")
    for p in c.paths:
        try:
            text = tree.read_text(p)
        except Exception:  # noqa: BLE001
            text = "(missing)"
        parts.append(f"=== {p}\n{text[:ENTRY_CHARS]}")
    if near:
        parts.append("Neighbours, context only:\n" + "\n".join(f"- {n['path']}: {n['title']}. {n['summary']}"
                                                            for n in near))
    return "\n\n".join(parts)


def _json_of(text: str) -> dict[str, Any] | None:
    tries = [m.group(1) for m in _FENCE.finditer(text)]
    if "{" in text and "}" in text:
        tries.append(text[text.index("{"):text.rindex("}") + 1])
    for raw in tries:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            return data
    return None


def parse_decision(text: Any, c: Candidate) -> Decision | None:
    """The model's answer as a ``Decision`` over the candidate's paths, or None when it is not one
    (no JSON, an unknown action, a path outside the group)."""
    data = _json_of(text if isinstance(text, str) else str(text))
    if data is None:
        return None
    action = ACTIONS.get(str(data.get("action", "")).strip().upper())
    if action is None:
        return None
    try:
        confidence = min(1.0, max(0.0, float(data.get("confidence", 0.5))))
    except (TypeError, ValueError):
        confidence = 0.5
    reason = " ".join(str(data.get("reason") or f"the model chose {action}").split())[:500]
    group = list(c.paths)
    files = data.get("files") or group
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    files = list(dict.fromkeys(files))
    if any(f not in group for f in files):
        return None                       # a path outside the group: untrusted, no decision
    if action == "SKIP":
        return Decision("SKIP", (), confidence, reason)
    if len(files) < 2:
        return None
    if action == "MERGE":
        keep = data.get("keep") or files[0]
        if keep not in files:
            return None
        ops = tuple({"op": "MERGE", "path": f, "merge_into": keep, "reason": reason} for f in files if f != keep)
    elif action == "SUPERSEDE":
        current = data.get("current") or files[0]
        if current not in files:
            return None
        since = str(data.get("since") or "")
        extra = {"since": since[:10]} if _DATE.match(since) else {}
        ops = tuple({"op": "SUPERSEDE", "path": f, "by": current, "reason": reason, **extra}
                    for f in files if f != current)
    else:
        ops = tuple({"op": "UPDATE", "path": f, "related": [g for g in files if g != f], "reason": reason}
                    for f in files)
    return Decision(action, ops, confidence, reason)


def model_decider(tree: Any, model: Any = None, *, timeout: float = 120.0, retries: int = 2,
                  errors: list[str] | None = None):
    """A ``decide`` for ``tree.dream.dream``: one model call per candidate. A failed call or an
    answer that is no decision gives None (the candidate is queued); ``errors`` collects why."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from .llm import resolve_model

    chat = resolve_model(model, timeout=timeout, retries=retries)
    system = prompt("dream_v1")

    def decide(c: Candidate) -> Decision | None:
        try:
            reply = chat.invoke([SystemMessage(system), HumanMessage(dream_prompt(tree, c, neighbours(tree, c)))])
        except Exception as exc:  # noqa: BLE001 - a model failure queues the candidate
            if errors is not None:
                errors.append(f"{', '.join(c.paths)}: {describe_error(exc)}")
            return None
        decision = parse_decision(getattr(reply, "content", reply), c)
        if decision is None and errors is not None:
            errors.append(f"{', '.join(c.paths)}: the model's answer was not a decision over the group")
        return decision

    return decide

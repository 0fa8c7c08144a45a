"""Writes the changed-facts set from its hand-written sources (``source_*.py``) and checks it.

Each source is one conversation: its messages (id, time, speaker, text) and the facts that change
in it, each with its values in order and the messages stating each value. Written:

- ``conversations/<id>.json``: the conversation in memgrove's shape (``memgrove curate
  --conversation`` reads it; ``Memory.ingest(conversation=...)``);
- ``questions.jsonl``: per fact a "now" question (the current value) and a "before" question (an
  earlier value: the one before the current, unless the source says which);
- ``supersessions.jsonl``: the gold of ``dream``: every message stating a value -> the first
  message stating the next value of the same fact.

Checked: every value stands in every message said to state it, every message id exists, and
messages are in time order.

    python benchmarks/data/changed_facts/build.py
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def holds(text: str, value: str) -> bool:
    """``value`` stands in ``text`` as a whole token run ("6" not inside "16")."""
    plural = "s?" if value[-1:].isalpha() else ""     # "Tuesday" stands in "on Tuesdays"
    return re.search(r"(?<![\w.,])" + re.escape(value.lower()) + plural + r"(?![\w]|[.,]\d)", text.lower()) is not None


def build() -> dict:
    convs, questions, gold = [], [], []
    errors: list[str] = []
    for path in sorted(HERE.glob("source_*.py")):
        src = load(path)
        roles = getattr(src, "ROLES", {})
        texts = {}
        last = ""
        messages = []
        for mid, at, speaker, text in src.MESSAGES:
            if mid in texts:
                errors.append(f"{src.ID}: {mid} twice")
            if at < last:
                errors.append(f"{src.ID}: {mid} out of time order")
            last = at
            texts[mid] = text
            m = {"id": mid, "speaker": speaker, "text": text, "time": at + ":00Z", "session": at[:10]}
            if speaker in roles:
                m["role"] = roles[speaker]
            messages.append(m)
        convs.append({"id": src.ID, "title": src.TITLE, "messages": messages})
        times = {mid: at for mid, at, _, _ in src.MESSAGES}
        for fact in src.FACTS:
            values = fact["values"]
            for value, mids in values:
                for mid in mids:
                    if mid not in texts:
                        errors.append(f"{fact['id']}: no message {mid}")
                    elif not holds(texts[mid], value):
                        errors.append(f"{fact['id']}: {value!r} not in {mid}")
            for (v0, m0), (v1, m1) in zip(values, values[1:]):
                first_new = min(m1, key=lambda m: times[m])
                for old in m0:
                    if times[old] < times[first_new]:
                        gold.append({"fact_id": fact["id"], "conversation": src.ID, "split": src.SPLIT,
                                     "older": old, "newer": first_new, "old_value": v0, "new_value": v1})
            cur = len(values) - 1
            before = fact.get("before_value", cur - 1)
            history = [{"value": v, "messages": m} for v, m in values]
            for kind, q, i in (("now", fact["now"], cur), ("before", fact["before"], before)):
                questions.append({
                    "qid": f"{fact['id']}:{kind}", "fact_id": fact["id"], "conversation": src.ID,
                    "split": src.SPLIT, "kind": kind, "question": q, "answer": values[i][0],
                    "wrong": [v for j, (v, _) in enumerate(values) if j != i],
                    "old_value": values[before][0], "new_value": values[cur][0],
                    "answer_messages": values[i][1], "subject": fact["subject"], "history": history})
    if errors:
        sys.exit("\n".join(errors))
    out = HERE / "conversations"
    out.mkdir(exist_ok=True)
    for c in convs:
        (out / f"{c['id']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (HERE / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                                        encoding="utf-8")
    (HERE / "supersessions.jsonl").write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in gold),
                                            encoding="utf-8")
    facts = [q for q in questions if q["kind"] == "now"]
    return {"conversations": len(convs), "messages": sum(len(c["messages"]) for c in convs),
            "facts": len(facts), "changed_twice": sum(1 for q in facts if len(q["history"]) > 2),
            "questions": len(questions), "supersessions": len(gold),
            "by_split": {s: sum(1 for q in facts if q["split"] == s) for s in ("dev", "test")}}


if __name__ == "__main__":
    print(json.dumps(build(), indent=1))

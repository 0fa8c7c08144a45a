"""Retrieval metrics shared by the conversational-memory benchmarks (LoCoMo, LongMemEval, BEAM).

No dependencies beyond the standard library. The one rule every system is
scored by, whatever it retrieves:

* A retrieved **item** (an entry, a turn, a whole session, ...) is a sequence
  of **segments**, one per dialogue turn it holds, in order; each segment has
  the turn's id, its word count and its text. An entry that holds 3 turns is
  3 segments; a whole session is all its turns.
* **At k items**: the ids of every segment of the first k items count as
  retrieved (the item's provenance).
* **At a budget of B words**: walk the items in rank order and their segments
  in order, adding up words; a segment counts as retrieved only if it fits
  entirely within B words; the walk stops at the first segment that does not
  fit (nothing after it is looked at, so a short later segment cannot sneak in).
* **Evidence recall** of one question = |gold ids ∩ retrieved ids| / |gold ids|
  (gold ids as a set); averaged over questions.
* **Answer in context** = the normalized gold answer occurs, on word
  boundaries, in the normalized text of the retrieved segments.

Words are whitespace-separated tokens (``len(text.split())``).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from harness import stats


# -- items and segments ---------------------------------------------------------

def word_count(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class Segment:
    """One dialogue turn's share of a retrieved item."""

    id: str
    words: int
    text: str = ""


@dataclass(frozen=True)
class Item:
    """One retrieved unit, in rank order; ``ids`` is its provenance (defaults to its segments' ids)."""

    segments: tuple[Segment, ...]
    key: str = ""                       # what the system calls it (path, turn id, session name)
    extra_ids: tuple[str, ...] = field(default=())   # provenance without a segment (rare)

    @property
    def ids(self) -> list[str]:
        return list(dict.fromkeys([s.id for s in self.segments] + list(self.extra_ids)))

    @property
    def words(self) -> int:
        return sum(s.words for s in self.segments)

    @property
    def text(self) -> str:
        return "\n".join(s.text for s in self.segments)


def segments_from_texts(pairs: Iterable[tuple[str, str]]) -> tuple[Segment, ...]:
    """``[(id, text)]`` -> segments with their word counts."""
    return tuple(Segment(i, word_count(t), t) for i, t in pairs)


def even_segments(ids: Sequence[str], text: str) -> tuple[Segment, ...]:
    """Split ``text``'s words as evenly as possible over ``ids`` (in order; earlier ids get the
    remainder). For an item whose text cannot be split per turn."""
    words = text.split()
    n = len(ids)
    if n == 0:
        return ()
    base, extra = divmod(len(words), n)
    out, pos = [], 0
    for j, i in enumerate(ids):
        take = base + (1 if j < extra else 0)
        out.append(Segment(i, take, " ".join(words[pos:pos + take])))
        pos += take
    return tuple(out)


# -- what counts as retrieved ---------------------------------------------------------

def ids_at_k(items: Sequence[Item], k: int) -> set[str]:
    out: set[str] = set()
    for it in items[:k]:
        out.update(it.ids)
    return out


@dataclass(frozen=True)
class BudgetCut:
    ids: set[str]
    texts: list[str]
    words: int               # words actually taken (<= budget)
    items_touched: int       # items with at least one segment taken
    exhausted: bool          # True if the items ran out before the budget stopped the walk
    segments: tuple[Segment, ...] = ()   # the segments taken, in order (whose words the budget bought)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def within_budget(items: Sequence[Item], budget: int) -> BudgetCut:
    """The budget rule (module docstring): whole segments only, in rank order, stop at the first misfit."""
    used, ids, texts, touched, taken = 0, set(), [], 0, []
    for it in items:
        took = False
        for seg in it.segments:
            if used + seg.words > budget:
                return BudgetCut(ids, texts, used, touched + (1 if took else 0), False, tuple(taken))
            used += seg.words
            ids.add(seg.id)
            texts.append(seg.text)
            taken.append(seg)
            took = True
        touched += 1 if took else 0
    return BudgetCut(ids, texts, used, touched, True, tuple(taken))


def recall(gold: Iterable[str], retrieved: set[str]) -> float:
    g = set(gold)
    if not g:
        raise ValueError("recall of a question without gold ids is undefined; exclude it")
    return len(g & retrieved) / len(g)


def score_items(items: Sequence[Item], evidence: Sequence[str], answer: str | None, ks: Sequence[int],
                budgets: Sequence[int]) -> dict[str, Any]:
    """One question's scores for one system's ranked ``items``: recall at each k and then over everything
    returned (``R@all``, with ``ks`` only), and at each word budget; answer-in-context per budget when there is
    an ``answer``; whether the largest budget was filled; and where each evidence id is at the largest
    budget (``lost``: in_budget / beyond_budget / not_retrieved). Recall keys only with evidence."""
    out: dict[str, Any] = {"n_items": len(items), "words_available": sum(it.words for it in items)}
    ev = set(evidence)
    all_ids = ids_at_k(items, len(items))
    if ev and ks:
        for k in ks:
            out[f"R@{k}"] = recall(ev, ids_at_k(items, k))
        out["R@all"] = recall(ev, all_ids)
    for b in budgets:
        cut = within_budget(items, b)
        if ev:
            out[f"R@{b}w"] = recall(ev, cut.ids)
        if answer is not None:
            out[f"AIC@{b}w"] = answer_in_text(answer, cut.text)
        if b == max(budgets):
            out["filled"] = not cut.exhausted
    if ev:
        cut = within_budget(items, max(budgets))
        out["lost"] = {e: ("in_budget" if e in cut.ids else "beyond_budget" if e in all_ids else "not_retrieved")
                       for e in evidence}
    return out


# -- answers in context ---------------------------------------------------------------

_PUNCT = set(string.punctuation)


def normalize_text(text: str) -> str:
    """Lower-case, punctuation (ASCII and Unicode P*) removed, whitespace collapsed."""
    out = []
    for ch in str(text).lower():
        if ch in _PUNCT or unicodedata.category(ch).startswith("P"):
            continue
        out.append(ch)
    return " ".join("".join(out).split())


def answer_in_text(answer: str, text: str) -> bool:
    a = normalize_text(answer)
    if not a:
        return False
    return f" {a} " in f" {normalize_text(text)} "


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = {m: i + 1 for i, m in enumerate(_MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(_MONTHS)}
_DMY = re.compile(r"^(\d{1,2}) ([a-z]+) (\d{4})$")
_MDY = re.compile(r"^([a-z]+) (\d{1,2}) (\d{4})$")


def day_of(answer: str) -> tuple[int, int, int] | None:
    """(year, month, day) when the whole (normalised) answer is one day written "7 May 2023" or
    "May 7, 2023" (month names in full or three letters); else None."""
    a = normalize_text(answer)
    m = _DMY.match(a)
    if m and m.group(2) in _MONTH:
        return int(m.group(3)), _MONTH[m.group(2)], int(m.group(1))
    m = _MDY.match(a)
    if m and m.group(1) in _MONTH:
        return int(m.group(3)), _MONTH[m.group(1)], int(m.group(2))
    return None


def answer_or_its_day_in_text(answer: str, text: str) -> bool:
    """``answer_in_text``, or, when the answer is a day, that day written in the other order
    ("1 May 2023" for "May 1, 2023"): the same answer in another format."""
    if answer_in_text(answer, text):
        return True
    day = day_of(answer)
    if day is None:
        return False
    year, month, d = day
    name = _MONTHS[month - 1]
    return any(answer_in_text(form, text) for form in (f"{d} {name} {year}", f"{name} {d} {year}",
                                                       f"{d} {name[:3]} {year}", f"{name[:3]} {d} {year}"))


# -- LongMemEval's retrieval metrics (src/retrieval/eval_utils.py of xiaowu0162/LongMemEval) ----
# rankings: indices into corpus_ids, best first; correct_docs: gold ids.

def dcg(relevances: Sequence[float], k: int) -> float:
    r = list(relevances)[:k]
    if not r:
        return 0.0
    return r[0] + sum(r[i] / math.log2(i + 1) for i in range(1, len(r)))


def ndcg(rankings: Sequence[int], correct_docs: Iterable[str], corpus_ids: Sequence[str], k: int = 10) -> float:
    correct = set(correct_docs)
    relevances = [1 if d in correct else 0 for d in corpus_ids]
    actual = dcg([relevances[i] for i in rankings[:k]], k)
    ideal = dcg(sorted(relevances, reverse=True), k)
    return actual / ideal if ideal else 0.0


def evaluate_retrieval(rankings: Sequence[int], correct_docs: Sequence[str], corpus_ids: Sequence[str],
                       k: int = 10) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg) at k, as the official code defines them
    (empty gold: recall_any 0, recall_all 1, ndcg 0)."""
    recalled = {corpus_ids[i] for i in rankings[:k]}
    return (float(any(d in recalled for d in correct_docs)), float(all(d in recalled for d in correct_docs)),
            ndcg(rankings, correct_docs, corpus_ids, k))


# -- aggregation ------------------------------------------------------------------------

def mean(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def pct(xs: Sequence[float], q: float) -> float | None:
    """Percentile with linear interpolation (q in 0..100, ``harness.stats.pct``); None for no data."""
    return stats.pct(list(xs), q) if xs else None


def where_lost(scores: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Evidence ids per place (in_budget, beyond_budget, not_retrieved) over :func:`score_items`' ``lost`` maps."""
    return dict(sorted(Counter(w for s in scores for w in s.get("lost", {}).values()).items()))


def latency_summary(ms: Sequence[float]) -> dict[str, Any]:
    return {"n": len(ms), "p50": _r(pct(ms, 50)), "p95": _r(pct(ms, 95)), "p99": _r(pct(ms, 99)),
            "mean": _r(mean(ms)), "max": _r(max(ms) if ms else None)}


def _r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(x, nd)


_WORD = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens (the BM25 baselines' tokenizer: no stemming, no stopwords)."""
    return _WORD.findall(str(text).lower())

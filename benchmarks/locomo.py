#!/usr/bin/env python
"""LoCoMo retrieval benchmark: evidence recall of memgrove vs flat BM25 baselines, same run, same metric code.

    python benchmarks/locomo.py                         # all 10 conversations, variant verbatim-w1
    python benchmarks/locomo.py --conversations 2       # smoke run
    python benchmarks/locomo.py --variant verbatim-w3   # another memgrove variant (see VARIANTS)
    python benchmarks/locomo.py --llm                   # + answers and LLM-judge accuracy (needs a model)

Data: ``locomo10.json`` (snap-research/locomo), by default
``../shared/datasets/locomo/locomo10.json`` relative to the repository root, or
``$LOCOMO_PATH``, or ``--data``.

For every conversation:

1. **memgrove**: the conversation is converted to memgrove's conversation format
   (id = sample_id; per turn: id = dia_id, speaker, session = "session_N",
   time = that session's date_time string, text = the turn text plus
   " [shares a photo: <blip_caption>]" for image turns) and curated into a fresh
   temp memory with the verbatim curator (``Memory.ingest(conversation=conv,
   window=W)``; ``--llm`` and ``--llm-curator``: ``Memory.learn``). Every question then goes
   through the query graph, ``mem.graph("query", settings=...)`` with
   ``prefetch_limit`` raised (``--prefetch-limit``, default 50; the product
   default of 10 cannot fill a 1,000-word budget) and every other setting at its
   default. Retrieved = the graph state's ``hits`` of kind "entry", in order;
   an entry's provenance = its ``sources`` (``<conv id>#<dia_id>``); its text =
   the entry file without the YAML frontmatter (``mem.tree.read_text``), i.e.
   its title heading and sections, as a reader sees it.
2. **bm25-turns**: flat BM25 (``bm25s``, its defaults: Lucene BM25, k1 1.5,
   b 0.75) over single turns, each "<Speaker>: <text>" (with the photo caption),
   lower-cased ``\\w+`` tokens, no stemming, no stopwords. Item = one turn.
3. **bm25-sessions**: the same over whole sessions (all the session's turns,
   speaker-prefixed, one per line). Item = the session, i.e. all its turns.

Metrics (``benchmarks/retrieval_metrics.py``, the same code for every system):
evidence recall at k = 5 and 10 items and at budgets of 100 / 200 / 500 / 1,000
words of retrieved text (whole turns only, in rank order, stop at the first turn
that does not fit); answer-in-context rate per budget; per category and
overall for categories 1–4 (category 5 = adversarial is reported, not pooled).
Evidence ids are split on ``[;, ]`` and normalised ("D:11:26" -> "D11:26",
"D30:05" -> "D30:5"); ids that are malformed or not in the conversation are
dropped and counted; questions left without evidence are excluded from recall
and counted. Gold answers are lower-cased with punctuation removed; category 3
uses the text before ';'. Recall is against the raw LoCoMo evidence (not the
audit's corrections).

memgrove entries are split into per-turn segments: an entry of one message is
one segment (all its words); for a window of several messages the verbatim
curator writes one "**Speaker**: text" paragraph per message in the Narrative
section, in the order of ``sources``; the words before the Narrative (the
title heading) go to the first message's segment, anything after it to the last.
When the paragraphs do not match the sources one to one (e.g. LLM-curated
entries) the entry's words are split evenly across its sources (counted in the
report as ``segmenting.even``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
PROMPTS = HERE / "prompts"
if str(HERE) not in sys.path:  # `import scale`, `import retrieval_metrics` however this file is run
    sys.path.insert(0, str(HERE))

import retrieval_metrics as rm  # noqa: E402
from scale import machine_info, versions  # noqa: E402  (benchmarks/scale.py: machine/seed/date header)

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
POOLED = (1, 2, 3, 4)
OVERALL = "1-4"
KS = (5, 10)
BUDGETS = (100, 200, 500, 1000)
AIC_TABLE_BUDGETS = (200, 500)
SYSTEMS = ("memgrove", "bm25-turns", "bm25-sessions")
BASELINES = ("bm25-turns", "bm25-sessions")
DEFAULT_VARIANT = "verbatim-w1"
DEFAULT_PREFETCH = 50
# Issue: flat BM25 over speaker-prefixed LoCoMo turns (bm25s, lower-cased), categories 1-4, by budget.
EXPECTED_BM25_TURNS = {100: 0.364, 200: 0.468, 500: 0.579, 1000: 0.643}
SESSION_KEY = re.compile(r"^session_(\d+)$")
EVIDENCE_ID = re.compile(r"^D:?(\d+):(\d+)$")


def default_data() -> Path:
    env = os.environ.get("LOCOMO_PATH", "").strip()
    return Path(env) if env else REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- the data ---------------------------------------------------------------------------

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
    """A LoCoMo sample in memgrove's conversation format (tree/curator.py ``check_conversation``)."""
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


# -- retrievers ---------------------------------------------------------------------------

@dataclass
class Retrieved:
    items: list[rm.Item]
    latency_ms: float
    info: dict[str, Any] = field(default_factory=dict)


class BM25Retriever:
    """Flat BM25 (bm25s defaults) over ``items``, each indexed by its text; ranked best first, ties by corpus
    order, zero-score items not returned."""

    def __init__(self, items: list[rm.Item], texts: list[str]):
        import bm25s

        self.items = items
        self.bm25 = bm25s.BM25()
        self.bm25.index([rm.word_tokens(t) for t in texts], show_progress=False)
        self.vocab = self.bm25.vocab_dict

    def __call__(self, question: str) -> Retrieved:
        t0 = time.perf_counter()
        q = [t for t in rm.word_tokens(question) if t in self.vocab]
        ranked: list[rm.Item] = []
        if q:
            scores = self.bm25.get_scores(q)
            order = sorted((i for i in range(len(self.items)) if scores[i] > 0), key=lambda i: (-float(scores[i]), i))
            ranked = [self.items[i] for i in order]
        return Retrieved(ranked, (time.perf_counter() - t0) * 1000)

    def close(self) -> None:
        pass


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


# -- memgrove ---------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_NARRATIVE = re.compile(r"^## Narrative[ \t]*\n", re.M)
_NEXT_SECTION = re.compile(r"^## ", re.M)
_TITLE = re.compile(r"\A# [^\n]*\n+|\A")
_MESSAGE = re.compile(r"^\*\*[^*\n]+\*\*")


def entry_body(text: str) -> str:
    """An entry file's text without its YAML frontmatter."""
    return _FRONTMATTER.sub("", text, count=1).strip("\n")


def source_ids(sources: Sequence[dict[str, Any]], conv_id: str) -> list[str]:
    out = []
    for s in sources or []:
        ref = str(s.get("ref", "")) if isinstance(s, dict) else str(s)
        cid, sep, mid = ref.rpartition("#")
        if sep and cid == conv_id and mid and mid not in out:
            out.append(mid)
    return out


def entry_segments(body: str, ids: list[str]) -> tuple[tuple[rm.Segment, ...], str]:
    """Per-turn segments of an entry body and how they were made: "split" (one Narrative paragraph per
    source, header words on the first, trailer on the last), "even" (words split evenly) or "none"."""
    if not ids:
        return (rm.Segment("", rm.word_count(body), body),), "none"
    if len(ids) == 1:  # one message: the whole entry is its segment
        return (rm.Segment(ids[0], rm.word_count(body), body),), "split"
    m = _NARRATIVE.search(body) or (None if _NEXT_SECTION.search(body) else _TITLE.match(body))
    if m:  # the Narrative section, or a body of prose alone (written without its heading)
        start = m.end()
        nxt = _NEXT_SECTION.search(body, start)
        end = nxt.start() if nxt else len(body)
        paras: list[str] = []
        for p in re.split(r"\n\s*\n", body[start:end].strip("\n")):
            if not p.strip():
                continue
            if _MESSAGE.match(p) or not paras:
                paras.append(p)
            else:  # a message's own blank line: still the same message
                paras[-1] += "\n\n" + p
        if len(paras) == len(ids) and all(_MESSAGE.match(p) for p in paras):
            texts = list(paras)
            texts[0] = body[:start] + texts[0]
            texts[-1] = texts[-1] + ("\n\n" + body[end:] if body[end:].strip() else "")
            return rm.segments_from_texts(zip(ids, texts)), "split"
    return rm.even_segments(ids, body), "even"


@dataclass(frozen=True)
class Variant:
    """A way to build the memgrove system, chosen by name with ``--variant``."""

    name: str
    description: str
    window: int = 1
    curator: str = "verbatim"                       # "verbatim" (Memory.ingest) or "llm" (Memory.learn)
    query: dict[str, Any] = field(default_factory=dict)   # QuerySettings overrides (besides prefetch_limit)
    tree: dict[str, Any] = field(default_factory=dict)    # TreeSettings overrides (Memory.open)
    fresh_signals: bool = False                     # forget the signals each question's retrieval recorded
    dream: bool = False                             # memgrove dream (no model) + approve the queue after curating


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("verbatim-w1", "verbatim curator, one entry per message; product settings"),
    Variant("verbatim-w3", "verbatim curator, one entry per 3 consecutive messages of a session", window=3),
    *[Variant(f"verbatim-w1-links{int(w * 100)}", f"verbatim-w1 with link_weight {w}: a hit lends {w} of its "
              "score to the previous and next message", tree={"link_weight": w}) for w in (0.1, 0.2, 0.3, 0.5)],
    Variant("verbatim-w1-benchmark-profile", "verbatim-w1 with the tree's ranking profile 'benchmark' (pure BM25F "
            "relevance, no importance/recency, no access bonus: query order cannot change rankings)",
            tree={"profile": "benchmark"}),
    Variant("verbatim-w1-fresh-signals", "verbatim-w1 (product profile), but after each question the harness "
            "forgets the importance signals that question's retrieval recorded (`mem.tree.signals.forget`), so "
            "every question is ranked as the first one was: the product ranking without its drift",
            fresh_signals=True),
    Variant("verbatim-w1-dream", "verbatim-w1, then `memgrove dream` without a model and every queued change "
            "approved (duplicates merged, links added, superseded facts closed): is any evidence lost?", dream=True),
    Variant("verbatim-w3-fresh-signals", "verbatim-w3 with fresh signals per question (see verbatim-w1-fresh-signals)",
            window=3, fresh_signals=True),
)}


class MemgroveRetriever:
    """A memgrove memory over one conversation, queried through the query graph."""

    def __init__(self, mem: Any, graph: Any, conv_id: str, workdir: Path | None, curation: dict[str, Any],
                 fresh_signals: bool = False, settings: Any = None):
        self.mem, self.graph, self.conv_id, self.workdir = mem, graph, conv_id, workdir
        self.settings = settings          # the query graph's QuerySettings (for the tier-3 context)
        self.count_tokens: Any = None     # curate_cost.TokenCounter, made at the first question
        self.fresh_signals = fresh_signals
        self.curation = curation
        self.bodies: dict[str, tuple[tuple[rm.Segment, ...], str]] = {}
        self.segmenting: Counter = Counter()

    def item(self, hit: dict[str, Any]) -> rm.Item:
        path = hit["path"]
        if path not in self.bodies:
            body = entry_body(self.mem.tree.read_text(path))
            self.bodies[path] = entry_segments(body, source_ids(hit.get("sources", []), self.conv_id))
            self.segmenting[self.bodies[path][1]] += 1
        return rm.Item(self.bodies[path][0], key=path)

    def __call__(self, question: str) -> Retrieved:
        t0 = time.perf_counter()
        # the graph's public output is its answer; the harness also reads the search hits it ranked
        state = self.graph.invoke({"question": question}, output_keys=["answer", "hits"])
        ms = (time.perf_counter() - t0) * 1000
        hits = state.get("hits") or []
        if self.fresh_signals:  # untimed: undo its +3 importance (the verbatim curator leaves no signals)
            self.mem.tree.signals.forget([h["path"] for h in hits])
        entries = [h for h in hits if h.get("kind", "entry") == "entry"]
        ans = state.get("answer") or {}
        return Retrieved([self.item(h) for h in entries], ms,
                         {"tier": ans.get("tier"), "reported_ms": ans.get("latency_ms"), "cached": ans.get("cached"),
                          "hits": len(hits), "entries": len(entries), "scores": [h.get("score") for h in entries],
                          **self.llm_context_tokens(hits)})

    def llm_context_tokens(self, hits: list[dict[str, Any]]) -> dict[str, int]:
        """Untimed: the size of the entries tier 3 would send an LLM for these hits (``context_block``,
        each entry's reader view), and of the same entries as whole files (what it sent before)."""
        if self.settings is None or not hits:
            return {}
        from curate_cost import TokenCounter
        from memgrove.graphs.llm_tiers import context_block
        from memgrove.tree.search import hit_from_dict
        self.count_tokens = self.count_tokens or TokenCounter()
        sent, used = context_block(self.mem.tree, [hit_from_dict(h) for h in hits], self.settings)
        files = "\n\n".join(f"=== {p} ===\n{self.mem.tree.read_text(p)[: self.settings.direct_max_chars]}"
                             for p in used)
        return {"context_tokens": self.count_tokens(sent), "context_tokens_files": self.count_tokens(files),
                "token_method": self.count_tokens.method}

    def close(self) -> None:
        self.mem.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def with_tree_overrides(variant: Variant, pairs: Sequence[str]) -> Variant:
    """``variant`` with ``KEY=VALUE`` [tree] overrides (``--tree``, for ablations) added and named."""
    if not pairs:
        return variant
    extra: dict[str, Any] = {}
    for kv in pairs:
        key, _, value = kv.partition("=")
        try:  # a number, true/false, a list or a quoted string; else the word itself (engine=tantivy)
            extra[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            extra[key.strip()] = value
    return dataclasses.replace(variant, tree={**(variant.tree or {}), **extra},
                               name=variant.name + "".join(f"+{k}={v}" for k, v in extra.items()))


def memgrove_system(conv: dict[str, Any], *, window: int = 1, curator: str = "verbatim",
                    prefetch_limit: int = DEFAULT_PREFETCH, query_overrides: dict[str, Any] | None = None,
                    tree_overrides: dict[str, Any] | None = None, model: Any = None,
                    workdir: Path | None = None, fresh_signals: bool = False,
                    dream: bool = False) -> MemgroveRetriever:
    """Curate ``conv`` (memgrove conversation format) into a fresh temp memory and return its retriever.

    ``curator``: "verbatim" = ``Memory.ingest(conversation=conv, window=window)``; "llm" = ``Memory.learn``
    with ``model``. The query graph gets ``prefetch_limit`` and ``query_overrides`` on top of the defaults
    (``load_query_settings``); no model (tiers 3-4 answer extractively). ``tree_overrides`` go to
    ``Memory.open`` (the harness always passes ``durable=False``: no fsync per write). ``fresh_signals``:
    after each question, forget the importance signals its retrieval recorded (a diagnostic, see VARIANTS).
    ``dream``: after curating, ``Memory.dream`` without a model and the whole review queue approved.
    """
    from memgrove import Memory
    from memgrove.graphs.settings import load_query_settings

    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="memgrove-locomo-")) if own else workdir
    mem = Memory.open(workdir, create=True, **{"durable": False, **(tree_overrides or {})})
    try:
        t0 = time.perf_counter()
        if curator == "verbatim":
            ops = len(mem.ingest(conversation=conv, window=window))
            extra: dict[str, Any] = {}
        elif curator == "llm":
            if model is None:
                raise ValueError("the LLM curator needs a model")
            report = mem.learn(conversation=conv, model=model)
            ops = len(getattr(report, "applied", []) or [])
            extra = {"curator_reported": getattr(report, "curator", None)}
        else:
            raise ValueError(f"unknown curator {curator!r}")
        seconds = time.perf_counter() - t0
        if dream:
            entries_before = mem.tree.entry_count()
            run = mem.dream(use_model=False)
            approved = mem.review_approve(all=True)
            extra["dream"] = {"entries_before": entries_before, "applied": sum(c["status"] == "applied"
                                                                              for c in run["candidates"]),
                              "queued_then_approved": len(approved["applied"])}
        settings = load_query_settings(mem.tree.home, prefetch_limit=prefetch_limit, **(query_overrides or {}))
        graph = mem.graph("query", model=None, settings=settings)
    except BaseException:
        mem.close()
        if own:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    curation = {"seconds": round(seconds, 3), "ops": ops, "entries": mem.tree.entry_count(), **extra}
    return MemgroveRetriever(mem, graph, str(conv["id"]), workdir if own else None, curation, fresh_signals, settings)


@contextlib.contextmanager
def env_without(*names: str) -> Iterator[None]:
    saved = {n: os.environ.pop(n) for n in names if n in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


# -- scoring one question -------------------------------------------------------------------

def score(q: Question, r: Retrieved) -> dict[str, Any]:
    return rm.score_items(r.items, q.evidence, q.answer, KS, BUDGETS)


RECALL_KEYS = [f"R@{k}" for k in KS] + [f"R@{b}w" for b in BUDGETS]
AIC_KEYS = [f"AIC@{b}w" for b in BUDGETS]


def aggregate(records: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Means per category and pooled over categories 1-4, for one system."""
    groups: dict[str, list[dict]] = {str(c): [] for c in CATEGORIES}
    for rec in records:
        groups[str(rec["category"])].append(rec)
    groups[OVERALL] = [rec for rec in records if rec["category"] in POOLED]
    out = {}
    for g, recs in groups.items():
        s = [rec["systems"][system] for rec in recs]
        with_ev = [x for x in s if "R@5" in x]
        with_ans = [x for x in s if "AIC@100w" in x]
        row: dict[str, Any] = {"questions": len(s), "with_evidence": len(with_ev), "with_answer": len(with_ans)}
        for key in RECALL_KEYS + ["R@all"]:
            row[key] = rm.mean(x[key] for x in with_ev)
        for key in AIC_KEYS:
            row[key] = rm.mean(float(x[key]) for x in with_ans)
        row["items_mean"] = rm.mean(x["n_items"] for x in s)
        row["filled_1000w"] = rm.mean(float(x["filled"]) for x in s)
        out[g] = row
    return out


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
    c: Counter = Counter()
    for rec in records:
        if rec["category"] in POOLED:
            c.update(rec["systems"][system].get("lost", {}).values())
    return dict(c)


def lexical_reach(sample: dict[str, Any], turns: list[Turn], qs: list[Question]) -> dict[int, list[tuple[float, float]]]:
    """How much of each question's evidence a lexical retriever can find by its words at all.

    Per question with evidence: the share of its evidence turns that share an analyzed term
    (memgrove's analyzer: stop words out, Porter2 stems; the two speakers' names not counted,
    since every turn is somebody's) with the question, (1) in the turn's own words and (2) also
    counting the words of the question the turn answers (the verbatim curator's reply keywords).
    The rest can only be reached through links, folders or the speaker: a ceiling, not a score.
    """
    from memgrove.tree.questions import question_words
    from memgrove.tree.whoosh_engine import analyzer

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


def _content(msg: Any) -> str:
    c = getattr(msg, "content", msg)
    if isinstance(c, list):
        c = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return str(c).strip()


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
    answer = _content(model.invoke([HumanMessage(ANSWER_PROMPT.format(
        speaker_a=speakers[0], speaker_b=speakers[1], context=context or "(nothing retrieved)",
        question=q.question))]))
    verdict = _content(model.invoke([HumanMessage(judge_prompt().format(
        question=q.question, gold_answer=q.raw_answer, generated_answer=answer))]))
    label = parse_label(verdict)
    return {"answer": answer, "judge": verdict[-300:], "label": label, "correct": label == "CORRECT",
            "seconds": round(time.perf_counter() - t0, 2)}


# -- the run -----------------------------------------------------------------------------------

def run(samples: list[dict[str, Any]], *, variant: Variant, prefetch_limit: int, model: Any = None,
        llm_systems: Sequence[str] = (), llm_budget: int = 1000, keep_questions: bool = True) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    tiers: Counter = Counter()
    tiers_by_cat: dict[int, Counter] = defaultdict(Counter)
    reported_ms: list[float] = []
    context_tokens: dict[str, list[int]] = {"sent": [], "files": []}
    context_entries, token_method = None, None
    curation, conv_rows = [], []
    segmenting: Counter = Counter()
    body_words, n_bodies, n_segs = 0, 0, 0
    hits_hist: Counter = Counter()
    reach: dict[int, list[tuple[float, float]]] = defaultdict(list)
    dropped = {"malformed": [], "unknown": []}
    llm_rows: list[dict[str, Any]] = []
    for sample in samples:
        cid = str(sample["sample_id"])
        turns = turns_of(sample)
        qs = questions_of(sample, turns)
        for q in qs:
            for kind in ("malformed", "unknown"):
                dropped[kind] += [{"conv": cid, "question": q.index, "id": x} for x in q.dropped[kind]]
        for c, v in lexical_reach(sample, turns, qs).items():
            reach[c] += v
        conv = to_conversation(sample)
        log(f"{cid}: {len(turns)} turns, {len(qs)} questions; curating ({variant.name}) ...")
        mg = memgrove_system(conv, window=variant.window, curator=variant.curator, prefetch_limit=prefetch_limit,
                             query_overrides=variant.query, tree_overrides=variant.tree, model=model,
                             fresh_signals=variant.fresh_signals, dream=variant.dream)
        curation.append({"conv": cid, **mg.curation})
        context_entries = mg.settings.direct_max_entries
        systems: dict[str, Callable[[str], Retrieved]] = {"memgrove": mg, "bm25-turns": bm25_turns(turns),
                                                          "bm25-sessions": bm25_sessions(turns)}
        speakers = (str(sample["conversation"].get("speaker_a", "A")), str(sample["conversation"].get("speaker_b", "B")))
        t0 = time.perf_counter()
        try:
            with env_without("MEMGROVE_MODEL"):   # the query graph answers without an LLM (retrieval only)
                for q in qs:
                    rec = {"conv": cid, "index": q.index, "category": q.category, "evidence": q.evidence,
                           "quarter": min(3, 4 * q.index // max(1, len(qs))), "systems": {}}
                    for name, retr in systems.items():
                        r = retr(q.question)
                        latencies[name].append(r.latency_ms)
                        rec["systems"][name] = score(q, r)
                        if name == "memgrove":
                            tiers[str(r.info["tier"])] += 1
                            tiers_by_cat[q.category][str(r.info["tier"])] += 1
                            if r.info.get("reported_ms") is not None:
                                reported_ms.append(float(r.info["reported_ms"]))
                            if "context_tokens" in r.info:
                                context_tokens["sent"].append(r.info["context_tokens"])
                                context_tokens["files"].append(r.info["context_tokens_files"])
                                token_method = r.info["token_method"]
                            rec["tier"] = r.info["tier"]
                            hits_hist[r.info["entries"]] += 1
                        if model is not None and name in llm_systems and q.category in POOLED and q.raw_answer is not None:
                            ctx = rm.within_budget(r.items, llm_budget).text
                            res = llm_answer_and_judge(model, q, ctx, speakers)
                            llm_rows.append({"conv": cid, "index": q.index, "category": q.category, "system": name,
                                             **res})
                    records.append(rec)
        finally:
            for segs, _how in mg.bodies.values():
                body_words += sum(s.words for s in segs)
                n_bodies += 1
                n_segs += len(segs)
            segmenting.update(mg.segmenting)
            mg.close()
        conv_rows.append({"conv": cid, "turns": len(turns), "turn_words": sum(rm.word_count(t.prefixed) for t in turns),
                          "sessions": len({t.session for t in turns}), "questions": len(qs),
                          "query_seconds": round(time.perf_counter() - t0, 1), **{k: mg.curation[k] for k in
                                                                                  ("seconds", "ops", "entries")}})
        log(f"  curated in {mg.curation['seconds']:.1f} s ({mg.curation['entries']} entries); "
            f"{len(qs)} questions x {len(systems)} systems in {time.perf_counter() - t0:.1f} s")

    by_system = {s: aggregate(records, s) for s in SYSTEMS}
    ratios = {}
    for b in BASELINES:
        ratios[b] = {g: {k: (by_system["memgrove"][g][k] / by_system[b][g][k]
                             if by_system["memgrove"][g][k] is not None and by_system[b][g][k] else None)
                         for k in RECALL_KEYS + AIC_KEYS} for g in by_system["memgrove"]}
    n_turns = sum(c["turns"] for c in conv_rows)
    turn_words = sum(c["turn_words"] for c in conv_rows)
    excluded = Counter(str(r["category"]) for r in records if not r["evidence"])
    report: dict[str, Any] = {
        "systems": by_system,
        "ratios": ratios,
        "latency_ms": {s: rm.latency_summary(v) for s, v in latencies.items()},
        "memgrove": {
            "tiers": dict(sorted(tiers.items())),
            "tiers_by_category": {str(c): dict(sorted(v.items())) for c, v in sorted(tiers_by_cat.items())},
            "reported_latency_ms": rm.latency_summary(reported_ms),
            "llm_context_tokens": {"direct_max_entries": context_entries, "token_method": token_method,
                                   **{k: rm.latency_summary(v) for k, v in context_tokens.items()}},
            "curation": curation,
            "curation_seconds_total": round(sum(c["seconds"] for c in curation), 2),
            "entries_total": sum(c["entries"] for c in curation),
            "entries_hist": {str(k): v for k, v in sorted(hits_hist.items())},
            "segmenting": dict(segmenting),
            "retrieved_entry_words_mean": round(body_words / n_bodies, 1) if n_bodies else None,
            "retrieved_segment_words_mean": round(body_words / n_segs, 1) if n_segs else None,
            "distinct_entries_retrieved": n_bodies,
            "lost_evidence_1000w": {s: lost_evidence(records, s) for s in SYSTEMS},
            "lost_vs_bm25_turns_1000w": lost_vs(records, "memgrove", "bm25-turns"),
        },
        "order_effect": order_effect(records),
        "lexical_reach": reach_summary(reach),
        "data": {
            "conversations": conv_rows,
            "turns": n_turns,
            "turn_words_mean": round(turn_words / n_turns, 1) if n_turns else None,
            "questions": len(records),
            "by_category": {str(c): sum(1 for r in records if r["category"] == c) for c in CATEGORIES},
            "excluded_no_evidence": dict(sorted(excluded.items())),
            "evidence_dropped": dropped,
        },
        "baseline_check": {str(b): {"expected": EXPECTED_BM25_TURNS[b],
                                     "measured": by_system["bm25-turns"][OVERALL][f"R@{b}w"]} for b in BUDGETS},
    }
    if model is not None and llm_systems:
        report["llm"] = llm_summary(llm_rows, llm_budget)
    if keep_questions:
        report["questions"] = [
            {"conv": r["conv"], "index": r["index"], "category": r["category"], "tier": r.get("tier"),
             **{s: {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r["systems"][s].items()
                    if k != "lost"} for s in SYSTEMS}} for r in records]
        if llm_rows:
            report["llm_answers"] = llm_rows
    return report


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


# -- the report --------------------------------------------------------------------------------

METRIC_LABELS = {**{f"R@{k}": f"R@{k}" for k in KS}, **{f"R@{b}w": f"R@{b}w" for b in BUDGETS},
                 **{f"AIC@{b}w": f"answer-in-context @{b}w" for b in BUDGETS}}
TABLE_METRICS = RECALL_KEYS + [f"AIC@{b}w" for b in AIC_TABLE_BUDGETS]


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}"


def _x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def uncommitted_files() -> list[str] | None:
    """Tracked files changed since the last commit (the report says so), or None without git.
    Earlier reports in ``benchmarks/results/`` do not count: they are what a run rewrites."""
    try:
        return [ln[3:] for ln in subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE, capture_output=True, text=True,
            timeout=5).stdout.splitlines() if ln.strip() and not ln[3:].startswith("benchmarks/results/")]
    except (OSError, subprocess.SubprocessError):
        return None


def latency_table(latency_ms: dict[str, dict[str, Any]], systems: Sequence[str]) -> list[str]:
    """The report's latency table, one row per system (shared with longmemeval.py)."""
    rows = ["| latency (ms) | n | p50 | p95 | p99 | mean | max |", "|---|---|---|---|---|---|---|"]
    for s in systems:
        lat = latency_ms[s]
        label = "memgrove `graph.invoke` (wall, harness)" if s == "memgrove" else f"{s} (bm25s scoring + sort)"
        rows.append(f"| {label} | {lat['n']} | {lat['p50']} | {lat['p95']} | {lat['p99']} | {lat['mean']} | {lat['max']} |")
    return rows


def machine_line(report: dict[str, Any]) -> str:
    """The report header's machine, versions, commit and load (shared with longmemeval.py)."""
    m = report["machine"]
    return (f"{m['date']} · seed {m['seed']} (deterministic: no sampling) · {m['cores']} cores ({m['cpu']}) · "
            f"{m['ram_gb']} GB RAM · Python {m['python']} · whoosh-reloaded {m['whoosh']} · "
            f"bm25s {report['versions'].get('bm25s')} · langgraph {report['versions'].get('langgraph')} · "
            f"memgrove {m['memgrove']} @ {m['commit']}"
            + (f" + uncommitted changes to {', '.join(m['uncommitted'])}" if m.get("uncommitted") else "")
            + f" · load average at start {m['loadavg']}, at the end {m.get('loadavg_end')}")


def render_markdown(report: dict[str, Any]) -> str:
    c = report["config"]
    syst, ratios, mg, data = report["systems"], report["ratios"], report["memgrove"], report["data"]
    L = ["# memgrove LoCoMo retrieval benchmark", "", machine_line(report), ""]
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s · data `{c['data']}` "
             f"(sha256 {c['data_sha256'][:12]}…, {len(data['conversations'])} conversations, {data['turns']:,} turns, "
             f"{data['questions']:,} questions)")
    L.append("")
    v = c["variant"]
    L.append(f"**memgrove** = variant `{v['name']}` ({v['description']}): curator {v['curator']}, window "
             f"{v['window']}, query graph `prefetch_limit={c['prefetch_limit']}` (product default 10)"
             + (f", query overrides {v['query']}" if v["query"] else "")
             + (f", tree overrides {v['tree']}" if v["tree"] else "")
             + ", all other settings default, no LLM in the query graph; `Memory.open(..., durable=False)`. "
             "Retrieved = the graph's entry hits in order; text = the entry file without frontmatter (its title "
             "heading and sections, as a reader sees it). **bm25-turns** / **bm25-sessions** = `bm25s` defaults over "
             "speaker-prefixed turns / whole sessions, lower-cased `\\w+` tokens. Recall: fraction of a question's "
             "evidence dia_ids (raw LoCoMo evidence, normalised) among the retrieved items' provenance; at k items, "
             "and at a word budget (whole turns only, in rank order, stop at the first that does not fit). "
             "Answer-in-context: the normalised gold answer (category 3: before ';') occurs in the text within the "
             "budget. Percent; ratio = memgrove ÷ baseline.")
    L.append("")
    L.append("## Overall, categories 1–4")
    L.append("")
    L.extend(_compare_table(syst, ratios, OVERALL))
    L.append("")
    bc = report["baseline_check"]
    L.append("Baseline check (bm25-turns, categories 1–4, expected from the issue): " + ", ".join(
        f"@{b}w {_pct(x['measured'])} vs {x['expected'] * 100:.1f}" for b, x in bc.items()) + ".")
    L.append("")
    lr = report.get("lexical_reach", {}).get(OVERALL)
    if lr and lr["own_words"] is not None:
        L.append(f"Lexical reach (categories 1–4): {_pct(lr['own_words'])}% of a question's evidence turns (mean per "
                 f"question) share a word with it (memgrove's analyzer, the speakers' names not counted), "
                 f"{_pct(lr['with_reply_keywords'])}% counting the question each turn answers; the rest only links, "
                 "folders or the speaker can reach. Per category in the JSON (`lexical_reach`).")
        L.append("")
    L.append("## Per category")
    L.append("")
    for cat in [str(k) for k in CATEGORIES]:
        row = syst["memgrove"][cat]
        L.append(f"### {cat} {CATEGORIES[int(cat)]} ({row['questions']} questions, {row['with_evidence']} with "
                 f"evidence, {row['with_answer']} with an answer to look for)")
        L.append("")
        L.extend(_compare_table(syst, ratios, cat))
        L.append("")
    L.append("## Per system, all metrics by category")
    L.append("")
    groups = [str(k) for k in CATEGORIES] + [OVERALL]
    for s in SYSTEMS:
        L.append(f"**{s}**")
        L.append("")
        keys = RECALL_KEYS + ["R@all"] + AIC_KEYS
        L.append("| category | n (evidence) | " + " | ".join(METRIC_LABELS.get(k, k) for k in keys)
                 + " | items returned (mean) | 1,000 w filled |")
        L.append("|---|---|" + "---|" * (len(keys) + 2))
        for g in groups:
            r = syst[s][g]
            name = OVERALL if g == OVERALL else f"{g} {CATEGORIES[int(g)]}"
            L.append(f"| {name} | {r['with_evidence']} | " + " | ".join(_pct(r[k]) for k in keys)
                     + f" | {r['items_mean']:.1f} | {_pct(r['filled_1000w'])}% |")
        L.append("")
    L.append("R@all = recall over every item the system returned (memgrove: all entry hits of the graph, at most "
             f"`prefetch_limit` = {c['prefetch_limit']}; baselines: every item with a positive score).")
    L.append("")
    L.append("## memgrove: tiers, latency, curation")
    L.append("")
    total_q = sum(mg["tiers"].values())
    L.append("Tier distribution (answer[\"tier\"]): " + ", ".join(
        f"tier {t}: {n} ({n / total_q * 100:.1f}%)" for t, n in mg["tiers"].items()) + ". By category: " + "; ".join(
        f"{cat}: " + ", ".join(f"t{t} {n}" for t, n in d.items()) for cat, d in mg["tiers_by_category"].items()) + ".")
    L.append("")
    L.extend(latency_table(report["latency_ms"], SYSTEMS))
    lat = mg["reported_latency_ms"]
    L.append(f"| memgrove answer[\"latency_ms\"] (self-reported) | {lat['n']} | {lat['p50']} | {lat['p95']} | "
             f"{lat['p99']} | {lat['mean']} | {lat['max']} |")
    L.append("")
    L.append(f"Latency is with `prefetch_limit={c['prefetch_limit']}` (each search parses that many entries), on a "
             "shared 2-core machine with the baselines' queries interleaved.")
    L.append("")
    ctx = mg.get("llm_context_tokens") or {}
    if ctx.get("sent", {}).get("n"):
        sent, files = ctx["sent"], ctx["files"]
        L.append(f"LLM context: the entries tier 3 would send a model for each question (its best "
                 f"{ctx['direct_max_entries']} hits plus one hop of their links, each as its reader view: title, "
                 f"sources, updated, body) are {sent['p50']:.0f} tokens p50, {sent['p95']:.0f} p95 "
                 f"({ctx['token_method']}); the "
                 f"same entries as whole files with their frontmatter would be {files['p50']:.0f} / {files['p95']:.0f} "
                 f"({files['p50'] / sent['p50']:.2f}× at p50). No model ran.")
        L.append("")
    L.append("| conversation | sessions | turns | words | questions | curation s | ops | entries | query phase s |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for r in data["conversations"]:
        L.append(f"| {r['conv']} | {r['sessions']} | {r['turns']} | {r['turn_words']:,} | {r['questions']} | "
                 f"{r['seconds']:.2f} | {r['ops']} | {r['entries']} | {r['query_seconds']} |")
    L.append(f"| **total** | | {data['turns']:,} | | {data['questions']:,} | {mg['curation_seconds_total']:.2f} | | "
             f"{mg['entries_total']:,} | |")
    L.append("")
    L.append(f"Entry size: retrieved entries average {mg['retrieved_entry_words_mean']} words of text "
             f"({mg['retrieved_segment_words_mean']} per turn they hold; {mg['distinct_entries_retrieved']:,} distinct "
             f"entries) vs {data['turn_words_mean']} words per speaker-prefixed turn for the baselines. "
             f"Segmenting: {mg['segmenting']}.")
    L.append("")
    hist = mg["entries_hist"]
    L.append("Entry hits per question (count of questions): " + ", ".join(f"{k}: {n}" for k, n in hist.items()) + ".")
    L.append("")
    lost = mg["lost_evidence_1000w"]
    L.append("Where the evidence is at 1,000 words (categories 1–4, evidence ids): " + "; ".join(
        f"{s}: " + ", ".join(f"{k} {n}" for k, n in sorted(d.items())) for s, d in lost.items()) + ".")
    lv = mg["lost_vs_bm25_turns_1000w"]
    L.append(f"Evidence bm25-turns has within 1,000 words but memgrove does not: {sum(lv.values())} ids; memgrove "
             + ", ".join(f"{k} {n}" for k, n in sorted(lv.items())) + ".")
    L.append("")
    oe = report["order_effect"]
    L.append("Recall by position in the conversation's question list (categories 1–4; quarter 1 = asked first, "
             "each conversation queried in file order through one memory):")
    L.append("")
    L.append("| system | " + " | ".join(f"Q{k} R@10 | Q{k} R@1000w" for k in range(1, 5)) + " |")
    L.append("|---|" + "---|---|" * 4)
    for s in SYSTEMS:
        L.append(f"| {s} | " + " | ".join(f"{_pct(oe[s][str(k)]['R@10'])} | {_pct(oe[s][str(k)]['R@1000w'])}"
                                          for k in range(1, 5)) + " |")
    L.append("")
    L.append(f"Data: questions without valid evidence (excluded from recall) by category: "
             f"{data['excluded_no_evidence'] or 'none'}; evidence ids dropped: "
             f"{len(data['evidence_dropped']['malformed'])} malformed "
             f"({', '.join(repr(x['id']) for x in data['evidence_dropped']['malformed']) or '-'}), "
             f"{len(data['evidence_dropped']['unknown'])} not in the conversation "
             f"({', '.join(x['conv'] + ' ' + x['id'] for x in data['evidence_dropped']['unknown']) or '-'}).")
    L.append("")
    if report.get("llm"):
        llm = report["llm"]
        L.append(f"## LLM answers (model `{c.get('model')}`, context = the first {llm['context_budget_words']} words "
                 "of retrieved text, graded by the Mem0 CORRECT/WRONG judge prompt, categories 1–4)")
        L.append("")
        L.append("| system | " + " | ".join(f"{k} {CATEGORIES[k]}" for k in POOLED) + " | overall 1–4 | unparsed |")
        L.append("|---|" + "---|" * (len(POOLED) + 2))
        for s, d in llm["by_system"].items():
            cats = d["by_category"]
            L.append(f"| {s} | " + " | ".join(f"{_pct(cats[str(k)]['accuracy'])} (n={cats[str(k)]['n']})" for k in POOLED)
                     + f" | {_pct(cats[OVERALL]['accuracy'])} (n={cats[OVERALL]['n']}) | {d['unparsed_labels']} |")
        L.append("")
    else:
        L.append("No LLM ran: no answer accuracy is reported.")
        L.append("")
    return "\n".join(L)


def _compare_table(syst: dict, ratios: dict, group: str) -> list[str]:
    L = ["| metric | memgrove | bm25-turns | bm25-sessions | memgrove ÷ turns | memgrove ÷ sessions |",
         "|---|---|---|---|---|---|"]
    for k in TABLE_METRICS:
        L.append(f"| {METRIC_LABELS[k]} | " + " | ".join(_pct(syst[s][group][k]) for s in SYSTEMS) + " | "
                 + " | ".join(_x(ratios[b][group][k]) for b in BASELINES) + " |")
    return L


def report_versions() -> dict[str, str | None]:
    """The versions the LoCoMo and LongMemEval reports record."""
    return versions("bm25s", "langgraph", "langchain-core", "numpy")


def dump_json(report: dict[str, Any]) -> str:
    """Indented JSON, with the long per-question lists one compact record per line."""
    long = {k: report[k] for k in ("questions", "llm_answers") if k in report}
    text = json.dumps({**report, **{k: f"@@{k}@@" for k in long}}, indent=1, default=str)
    for k, rows in long.items():
        lines = ",\n".join("  " + json.dumps(r, separators=(",", ":"), default=str) for r in rows)
        text = text.replace(f'"@@{k}@@"', "[\n" + lines + "\n ]" if rows else "[]")
    return text + "\n"


def output_stem(variant: str, n: int | None, total: int, llm: bool, llm_curator: bool,
                prefetch_limit: int = DEFAULT_PREFETCH, tree: Sequence[str] = ()) -> str:
    stem = "locomo"
    if variant != DEFAULT_VARIANT:
        stem += f"_{variant}"
    for kv in tree:  # --tree overrides (an ablation, or the engine) name their own files
        key, _, value = kv.partition("=")
        stem += f"_{key.strip()}-{value.strip()}"
    if prefetch_limit != DEFAULT_PREFETCH:
        stem += f"_p{prefetch_limit}"
    if llm_curator:
        stem += "_llmcurator"
    if n is not None and n < total:
        stem += f"_c{n}"
    if llm:
        stem += "_llm"
    return stem


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None,
                    help="locomo10.json (default: $LOCOMO_PATH or ../shared/datasets/locomo/locomo10.json from the repo)")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"),
                    help="the fixed half of the conversations (benchmarks/splits.json; default all)")
    ap.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(VARIANTS), help="memgrove variant")
    ap.add_argument("--window", type=int, default=None, help="override the variant's curation window")
    ap.add_argument("--tree", action="append", default=[], metavar="KEY=VALUE",
                    help="override a [tree] setting for an ablation, e.g. --tree link_weight=0 (repeatable)")
    ap.add_argument("--prefetch-limit", type=int, default=DEFAULT_PREFETCH,
                    help=f"query graph prefetch_limit (hits per question; default {DEFAULT_PREFETCH})")
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for locomo*.json/.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-questions", action="store_true", help="leave the per-question records out of the JSON")
    ap.add_argument("--llm", action="store_true",
                    help="LLM mode: curate with the LLM curator (Memory.learn), answer every question from the "
                         "retrieved context with the model and grade it with the LLM judge")
    ap.add_argument("--verbatim", action="store_true",
                    help="with --llm: keep the verbatim curator (answers and judge only)")
    ap.add_argument("--llm-curator", action="store_true",
                    help="curate with the LLM curator only (recall, no answers or judge)")
    ap.add_argument("--llm-systems", default="memgrove",
                    help="comma-separated systems to answer with --llm (default: memgrove)")
    ap.add_argument("--llm-budget", type=int, default=1000, help="words of retrieved context given to the model")
    ap.add_argument("--seed", type=int, default=0, help="recorded only: nothing here is random")
    a = ap.parse_args(argv)
    if a.verbatim and not a.llm:
        raise SystemExit("--verbatim goes with --llm (without it the verbatim curator is the default)")

    model = None
    if a.llm or a.llm_curator:
        from memgrove.graphs.llm import ModelUnavailable, model_configured, resolve_model

        if not model_configured():
            raise SystemExit("--llm/--llm-curator need a model: set MEMGROVE_MODEL and OPENAI_API_KEY (or "
                             "OPENAI_BASE_URL for a local server). Nothing was run; no accuracy is reported.")
        try:
            model = resolve_model(timeout=120.0, retries=2)
        except ModelUnavailable as exc:
            raise SystemExit(f"--llm/--llm-curator: {exc}. Nothing was run; no accuracy is reported.")
    llm_systems = [s.strip() for s in a.llm_systems.split(",") if s.strip()] if a.llm else []
    unknown = [s for s in llm_systems if s not in SYSTEMS]
    if unknown:
        raise SystemExit(f"--llm-systems: unknown {unknown}; choose from {', '.join(SYSTEMS)}")

    data_path = (a.data or default_data()).resolve()
    if not data_path.exists():
        raise SystemExit(f"LoCoMo data not found at {data_path} (give --data or set LOCOMO_PATH)")
    raw = data_path.read_bytes()
    samples = load_samples(data_path)
    import splits   # benchmarks/splits.py: the fixed dev/test halves
    samples = [s for s in samples if splits.in_split("locomo", s["sample_id"], a.split)]
    chosen = samples[:a.conversations] if a.conversations else samples
    variant = VARIANTS[a.variant]
    variant = with_tree_overrides(variant, a.tree)
    if a.window is not None:
        variant = dataclasses.replace(variant, window=a.window, name=f"{variant.name}@window{a.window}")
    llm_curator = a.llm_curator or (a.llm and not a.verbatim)
    if llm_curator:
        variant = dataclasses.replace(variant, curator="llm", name=f"{variant.name}+llm-curator")

    command = "python benchmarks/locomo.py " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(a.seed)
    machine["uncommitted"] = uncommitted_files()
    log(f"memgrove LoCoMo benchmark: {len(chosen)} conversations, variant {variant.name}, "
        f"prefetch_limit {a.prefetch_limit}, load avg {machine['loadavg']}")
    t0 = time.perf_counter()
    body = run(chosen, variant=variant, prefetch_limit=a.prefetch_limit, model=model, llm_systems=llm_systems,
               llm_budget=a.llm_budget, keep_questions=not a.no_questions)
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "benchmark": "locomo",
        "machine": machine,
        "versions": report_versions(),
        "command": command.strip(),
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(data_path), "data_sha256": hashlib.sha256(raw).hexdigest(),
                   "conversations": [s["sample_id"] for s in chosen], "variant": dataclasses.asdict(variant),
                   "prefetch_limit": a.prefetch_limit, "ks": list(KS), "budgets": list(BUDGETS),
                   "model": os.environ.get("MEMGROVE_MODEL") if model is not None else None,
                   "llm_systems": llm_systems, "words": "whitespace-separated tokens",
                   "evidence": "raw LoCoMo evidence, normalised; not the audit's corrections"},
        **body,
    }
    md = render_markdown(report)
    print(md)
    if not a.no_write:
        a.out.mkdir(parents=True, exist_ok=True)
        stem = output_stem(a.variant if a.window is None else f"{a.variant}-w{a.window}", len(chosen), len(samples),
                           bool(llm_systems), llm_curator, a.prefetch_limit, a.tree) \
            + ("" if a.split == "all" else f"_{a.split}")
        (a.out / f"{stem}.json").write_text(dump_json(report), encoding="utf-8")
        (a.out / f"{stem}.md").write_text(md + "\n", encoding="utf-8")
        log(f"wrote {a.out / stem}.json and .md")
    return report


if __name__ == "__main__":
    main()

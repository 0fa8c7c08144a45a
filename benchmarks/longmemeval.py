#!/usr/bin/env python
"""LongMemEval retrieval benchmark: memgrove vs flat BM25, LongMemEval's own retrieval metrics, same run.

    python benchmarks/longmemeval.py data/longmemeval_s.json               # every question (~500)
    python benchmarks/longmemeval.py data/longmemeval_s.json --limit 20    # smoke run
    python benchmarks/longmemeval.py data/longmemeval_s.json --types multi-session knowledge-update
    python benchmarks/longmemeval.py tests/data/longmemeval_tiny.json --out /tmp/lme   # the test file

Data: a LongMemEval file (xiaowu0162/LongMemEval: ``longmemeval_s.json``,
``longmemeval_oracle.json``, ``longmemeval_m.json`` or their ``_cleaned``
versions), not shipped here. A JSON list of questions with ``question_id``
(``_abs`` at the end = abstention), ``question_type``, ``question``, ``answer``,
``question_date``, ``haystack_session_ids`` / ``haystack_dates`` /
``haystack_sessions`` (parallel lists; a session is a list of turns
``{"role": "user"|"assistant", "content": ..., "has_answer": true}`` on
evidence turns) and ``answer_session_ids``.

Per question (abstention questions are not run: the official code leaves them
out of every retrieval average, they have no evidence location):

1. **memgrove**: a fresh memory (``Memory.open(tmp, create=True, durable=False)``)
   holding that question's haystack only, curated with the verbatim curator
   (``Memory.ingest(conversation=conv, window=1)``: one entry per message). The
   conversation: id = question_id; one message per turn with non-empty content,
   id ``s<session index>t<turn index>`` (0-based positions in the haystack, so
   an entry's provenance ``<question_id>#s3t4`` maps back to session 3, turn 4),
   speaker = role, text = content, time = the session's haystack date,
   session = the session id. The question text (only; no question date, as in
   the official retrieval) goes through the query graph
   ``mem.graph("query", settings=load_query_settings(home, prefetch_limit=N))``
   (default N = 50, every other setting default, no LLM); ranked retrieval =
   the graph's entry hits in order (``benchmarks/locomo.py``'s
   ``MemgroveRetriever``: an entry's text is its file without frontmatter).
2. **bm25-turns**: flat BM25 (``bm25s`` defaults, lower-cased ``\\w+`` tokens,
   no stemming, no stopwords; ``locomo.BM25Retriever``) over the official
   turn-level corpus: every *user* turn's content. Item = that turn.
3. **bm25-sessions**: the same over the official session-level corpus: per
   session, its *user* turns' contents joined by spaces (``process_item_flat_index``
   in ``src/retrieval/run_retrieval.py`` indexes user turns only). Item = the
   whole session, all its turns (what the official reader is given for a
   retrieved session with ``useronly=false``, the recommended setting).

Metrics. **LongMemEval's** (``src/retrieval/eval_utils.py``, reimplemented and
checked in ``benchmarks/retrieval_metrics.py``): recall_any@k, recall_all@k,
ndcg_any@k for k = 1, 3, 5, 10, at session and turn level. The corpora and gold
follow ``run_retrieval.py`` exactly: session documents have the session id,
except that an id containing "answer" whose user turns have no ``has_answer``
becomes "noans"; turn documents are user turns only, id
``<session id>_<turn index, 1-based over all turns>``, with "answer" -> "noans"
in sessions containing "answer" for turns without ``has_answer``; gold = the
document ids containing "answer". Averages skip abstention questions and (as
the current official code does) questions with no ``has_answer`` user turn in
the haystack (mostly single-session-assistant, whose evidence is an assistant
turn). Rankings: for memgrove, session level = sessions in order of first
appearance among the ranked entries' provenance (deduplicated); turn level =
user turns in order of first appearance, so entries holding an assistant turn
contribute nothing at turn level (verbatim window 1: an entry is one message).
bm25-turns is also scored at session level the same way (sessions of its ranked
turns, deduplicated; the official ``evaluate_retrieval_turn2session`` would
instead extend k over turns until k sessions are covered, which gives the same
recalls but a different NDCG). A system's ranking holds only what it returned
(memgrove: at most ``prefetch_limit`` entries; BM25: positive scores), never
padded. **Evidence recall at 1,000 / 2,000 / 4,000 words** (LoCoMo's budget rule,
``retrieval_metrics.within_budget``: whole turns, in rank order, stop at the first
turn that does not fit): evidence = turns with ``has_answer`` true (user or
assistant); a question without any falls back to all turns of its answer
sessions (counted). All non-abstention questions with evidence count. Ratios =
memgrove ÷ baseline.

Cache: a question's curated memory is kept under ``--cache`` (default
``$XDG_CACHE_HOME/memgrove-bench/longmemeval``, i.e. ``~/.cache/...``), keyed by
the question id and a sha256 of its haystack (ids, dates, sessions), the curator
(sha256 of ``tree/curator.py`` and ``tree/verbatim_*.py`` + memgrove version + the tree's ``INDEX_FORMAT``),
the window and tree overrides (a change to how entries are written or indexed
that bumps none of these needs ``--no-cache``). A run copies the cached memory to a temp dir and queries the copy, so
the cache stays as curated (the query graph records signals, a query log and its
answer cache). ``--no-cache`` re-curates every question and replaces its cache
entry. About 7-9 MB of disk per longmemeval_s-sized question (~3.5-4.5 GB for the file; the
journal is not kept): delete the directory to reclaim it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
if str(HERE) not in sys.path:  # `import locomo`, `import retrieval_metrics` however this file is run
    sys.path.insert(0, str(HERE))

import locomo  # noqa: E402  (benchmarks/locomo.py: BM25 baseline, MemgroveRetriever, variants)
import retrieval_metrics as rm  # noqa: E402
from scale import machine_info  # noqa: E402

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
# enough entries to fill the largest budget: 4,000 words is ~150 message entries (LoCoMo-like turns of
# ~25 words); with 50, memgrove ran out at ~1,750 words while the BM25 baselines return every match,
# so its R@2000w and R@4000w measured the hit limit, not the ranking (seen on a LoCoMo-built haystack)
DEFAULT_PREFETCH = 200
DEFAULT_VARIANT = locomo.DEFAULT_VARIANT
CACHE_FORMAT = 1
REQUIRED = ("question_id", "question_type", "question", "haystack_session_ids", "haystack_dates",
            "haystack_sessions", "answer_session_ids")
TURN_KEY = re.compile(r"^s(\d+)t(\d+)$")
# what the harness keeps of a curated memory (under .memgrove/): not the journal (undo only; ~1/8 of the size),
# the query cache or the query log (a fresh memory has neither worth keeping)
_CACHE_SKIP = {"journal", "cache", "query-log.jsonl"}

log = locomo.log


# -- the data ---------------------------------------------------------------------------

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


# -- rankings and scores ------------------------------------------------------------------

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
    out: dict[str, Any] = {"n_items": len(items), "words_available": sum(it.words for it in items)}
    gold = hay.gold
    for level in (levels if hay.scored else ()):   # the official averages skip it: no metric to compute
        rank = ranking(items, hay, level)
        out[level] = {"returned": len(rank), **official_metrics(rank, gold[level], hay.corpus(level))}
    ev = set(hay.evidence)
    if ev:
        for b in BUDGETS:
            out[f"R@{b}w"] = rm.recall(ev, rm.within_budget(items, b).ids)
        cut = rm.within_budget(items, max(BUDGETS))
        out["filled"] = not cut.exhausted
        everything = rm.ids_at_k(items, len(items))
        out["lost"] = {e: ("in_budget" if e in cut.ids else "beyond_budget" if e in everything else "not_retrieved")
                       for e in hay.evidence}
    return out


# -- baselines ---------------------------------------------------------------------------

def bm25_turns(hay: Haystack) -> locomo.BM25Retriever:
    """The official turn corpus: user turns, indexed by their content; item = the turn."""
    users = [hay.by_key[k] for k in hay.turn_doc_keys]
    items = [rm.Item(rm.segments_from_texts([(t.key, t.text)]), key=doc) for t, doc in zip(users, hay.turn_docs)]
    return locomo.BM25Retriever(items, [t.content for t in users])


def bm25_sessions(hay: Haystack) -> locomo.BM25Retriever:
    """The official session corpus: a session's user turns joined by spaces; item = the whole session."""
    items, texts = [], []
    for si, doc in enumerate(hay.session_docs):
        ts = [t for t in hay.turns if t.si == si]
        items.append(rm.Item(rm.segments_from_texts([(t.key, t.text) for t in ts]), key=doc))
        texts.append(" ".join(t.content for t in ts if t.role == "user"))
    return locomo.BM25Retriever(items, texts)


# -- memgrove, curated once per haystack ------------------------------------------------------

CURATIONS = Counter()   # "curated": Memory.ingest calls made by this process (tests read it)


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "memgrove-bench" / "longmemeval"


def curator_version() -> str:
    """sha256 of the verbatim curator's source, memgrove's version and the tree's index format: a change to
    any of them re-curates (a memory whose index format is stale would be reindexed on every open)."""
    import memgrove
    from memgrove.tree import curator, store

    h = hashlib.sha256(Path(curator.__file__).read_bytes())
    for part in sorted(Path(curator.__file__).parent.glob("verbatim_*.py")):  # the curator's code since its split
        h.update(part.read_bytes())
    h.update(str(memgrove.__version__).encode())
    h.update(str(getattr(store, "INDEX_FORMAT", "")).encode())
    return h.hexdigest()[:12]


def haystack_sha(q: dict[str, Any]) -> str:
    keep = {k: q[k] for k in ("question_id", "haystack_session_ids", "haystack_dates", "haystack_sessions")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def cache_key(q: dict[str, Any], variant: locomo.Variant, curator: str) -> str:
    spec = json.dumps({"format": CACHE_FORMAT, "haystack": haystack_sha(q), "curator": curator,
                       "window": variant.window, "tree": variant.tree}, sort_keys=True)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(q["question_id"]))[:60] or "q"
    return f"{slug}-{hashlib.sha256(spec.encode()).hexdigest()[:16]}"


def curate_memory(conv: dict[str, Any], workdir: Path, variant: locomo.Variant) -> dict[str, Any]:
    """A fresh memory in ``workdir`` holding ``conv``, curated verbatim; closed when this returns."""
    from memgrove import Memory

    CURATIONS["curated"] += 1
    mem = Memory.open(workdir, create=True, **{"durable": False, **variant.tree})
    try:
        t0 = time.perf_counter()
        ops = len(mem.ingest(conversation=conv, window=variant.window))
        seconds = time.perf_counter() - t0
        entries = mem.tree.entry_count()
    finally:
        mem.close()
    return {"seconds": round(seconds, 3), "ops": ops, "entries": entries}


def _skip_in_home(directory: str, names: list[str]) -> set[str]:
    return _CACHE_SKIP & set(names) if Path(directory).name == ".memgrove" else set()


def prepare_memory(q: dict[str, Any], conv: dict[str, Any], variant: locomo.Variant, cache_root: Path | None,
                   use_cache: bool, curator: str) -> tuple[Path, dict[str, Any], bool]:
    """A temp dir holding the question's curated memory (copied from the cache, or curated now and stored
    there); the caller queries it and removes it. Returns (dir, curation info, came from the cache)."""
    workdir = Path(tempfile.mkdtemp(prefix="memgrove-lme-"))
    entry = cache_root / cache_key(q, variant, curator) if cache_root is not None else None
    try:
        if entry is not None and use_cache and (entry / "meta.json").exists():
            t0 = time.perf_counter()
            shutil.copytree(entry / "memory", workdir, dirs_exist_ok=True)
            meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
            return workdir, {**meta["curation"], "load_seconds": round(time.perf_counter() - t0, 3)}, True
        curation = curate_memory(conv, workdir, variant)
        if entry is not None:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.parent / f".tmp-{entry.name}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(workdir, tmp / "memory", ignore=_skip_in_home)
            meta = {"question_id": q["question_id"], "curator": curator, "window": variant.window,
                    "tree": variant.tree, "haystack_sha256": haystack_sha(q), "curation": curation,
                    "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)
            try:
                os.replace(tmp, entry)
            except OSError:   # another run stored it meanwhile: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
        return workdir, curation, False
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def open_retriever(workdir: Path, conv_id: str, variant: locomo.Variant, prefetch_limit: int,
                   curation: dict[str, Any]) -> locomo.MemgroveRetriever:
    """The query graph over the memory in ``workdir`` (removed when the retriever closes)."""
    from memgrove import Memory
    from memgrove.graphs.settings import load_query_settings

    mem = Memory.open(workdir, **{"durable": False, **variant.tree})
    try:
        settings = load_query_settings(mem.tree.home, prefetch_limit=prefetch_limit, **variant.query)
        graph = mem.graph("query", model=None, settings=settings)
    except BaseException:
        mem.close()
        raise
    return locomo.MemgroveRetriever(mem, graph, conv_id, workdir, curation)


# -- the run -----------------------------------------------------------------------------------

def select(questions: list[dict[str, Any]], types: Sequence[str] | None, limit: int | None
           ) -> tuple[list[dict[str, Any]], int]:
    """(questions to run, abstention questions left out), after the type filter, before the limit."""
    chosen = [q for q in questions if not types or q["question_type"] in types]
    runnable = [q for q in chosen if not is_abstention(q)]
    return (runnable[:limit] if limit is not None else runnable), len(chosen) - len(runnable)


def run(questions: list[dict[str, Any]], *, variant: locomo.Variant = locomo.VARIANTS[DEFAULT_VARIANT],
        prefetch_limit: int = DEFAULT_PREFETCH, cache_root: Path | None = None, use_cache: bool = True,
        keep_questions: bool = True) -> dict[str, Any]:
    curator = curator_version()
    records: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    reported_ms: list[float] = []
    tiers: Counter = Counter()
    segmenting: Counter = Counter()
    hits_hist: Counter = Counter()
    cache = {"hits": 0, "curated": 0, "curation_seconds": 0.0, "load_seconds": 0.0, "open_seconds": 0.0}
    skipped_turns = 0
    for n, q in enumerate(questions, 1):
        qid = str(q["question_id"])
        hay = haystack_of(q)
        conv, skipped = to_conversation(hay)
        skipped_turns += skipped
        workdir, curation, cached = prepare_memory(q, conv, variant, cache_root, use_cache, curator)
        if cached:
            cache["hits"] += 1
            cache["load_seconds"] += curation["load_seconds"]
        else:
            cache["curated"] += 1
            cache["curation_seconds"] += curation["seconds"]
        t0 = time.perf_counter()
        try:
            mg = open_retriever(workdir, qid, variant, prefetch_limit, curation)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        cache["open_seconds"] += time.perf_counter() - t0
        systems: dict[str, tuple[Callable[[str], locomo.Retrieved], Sequence[str]]] = {
            "memgrove": (mg, LEVELS), "bm25-turns": (bm25_turns(hay), LEVELS),
            "bm25-sessions": (bm25_sessions(hay), ("session",))}
        rec: dict[str, Any] = {"question_id": qid, "type": q["question_type"], "scored": hay.scored,
                               "evidence": len(hay.evidence), "evidence_source": hay.evidence_source,
                               "sessions": len(hay.sessions), "turns": len(hay.turns), "words": hay.words(),
                               "cached": cached, "curation_s": curation["seconds"], "entries": curation["entries"],
                               "systems": {}}
        try:
            with locomo.env_without("MEMGROVE_MODEL"):   # retrieval only: the graph answers without an LLM
                for name, (retr, levels) in systems.items():
                    r = retr(str(q["question"]))
                    latencies[name].append(r.latency_ms)
                    rec["systems"][name] = score(hay, r.items, levels)
                    if name == "memgrove":
                        tiers[str(r.info["tier"])] += 1
                        rec["tier"] = r.info["tier"]
                        hits_hist[r.info["entries"]] += 1
                        if r.info.get("reported_ms") is not None:
                            reported_ms.append(float(r.info["reported_ms"]))
        finally:
            segmenting.update(mg.segmenting)
            mg.close()
        records.append(rec)
        log(f"[{n}/{len(questions)}] {qid} ({q['question_type']}): {len(hay.sessions)} sessions, "
            f"{hay.words():,} words, "
            + (f"cached ({curation['load_seconds']:.2f} s)" if cached else f"curated in {curation['seconds']:.2f} s")
            + (f"; memgrove session R_any@5 {rec['systems']['memgrove']['session']['recall_any@5']:.0f}"
               if hay.scored else "; not scored (no has_answer user turn)"))
    cache = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in cache.items()}
    by_system = {s: aggregate(records, s) for s in SYSTEMS}
    report: dict[str, Any] = {
        "systems": by_system,
        "ratios": ratios(by_system),
        "latency_ms": {s: rm.latency_summary(v) for s, v in latencies.items()},
        "memgrove": {
            "cache": {**cache, "dir": str(cache_root) if cache_root is not None else None, "curator_version": curator},
            "tiers": dict(sorted(tiers.items())),
            "reported_latency_ms": rm.latency_summary(reported_ms),
            "entries_mean": rm.mean(r["entries"] for r in records),
            "entries_hist": {str(k): v for k, v in sorted(hits_hist.items())},
            "segmenting": dict(segmenting),
            "empty_turns_not_curated": skipped_turns,
            "lost_evidence_4000w": {s: lost_evidence(records, s) for s in SYSTEMS},
        },
        "data": data_summary(records),
    }
    if keep_questions:
        report["questions"] = [
            {k: v for k, v in r.items() if k != "systems"}
            | {s: _rounded({k: v for k, v in r["systems"][s].items() if k != "lost"}) for s in SYSTEMS}
            for r in records]
    return report


def _rounded(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (_rounded(v) if isinstance(v, dict) else round(v, 4) if isinstance(v, float) else v)
            for k, v in d.items()}


def groups_of(records: list[dict[str, Any]]) -> list[str]:
    seen = {r["type"] for r in records}
    return [t for t in QUESTION_TYPES if t in seen] + sorted(seen - set(QUESTION_TYPES)) + [OVERALL]


def aggregate(records: list[dict[str, Any]], system: str) -> dict[str, Any]:
    """Means per question type and overall (micro: every question counts once, as the official average)."""
    out: dict[str, Any] = {level: {} for level in LEVELS if level in LEVEL_SYSTEMS and system in LEVEL_SYSTEMS[level]}
    out["budget"] = {}
    for g in groups_of(records):
        recs = [r for r in records if g == OVERALL or r["type"] == g]
        for level in out:
            if level == "budget":
                continue
            xs = [r["systems"][system][level] for r in recs if r["scored"]]
            row: dict[str, Any] = {"n": len(xs)}
            for m in METRICS:
                row[m] = rm.mean(x[m] for x in xs)
            row["returned_mean"] = rm.mean(x["returned"] for x in xs)
            out[level][g] = row
        xs = [r["systems"][system] for r in recs if "R@1000w" in r["systems"][system]]
        row = {"n": len(xs)}
        for k in BUDGET_KEYS:
            row[k] = rm.mean(x[k] for x in xs)
        row["filled_4000w"] = rm.mean(float(x["filled"]) for x in xs)
        row["items_mean"] = rm.mean(r["systems"][system]["n_items"] for r in recs)
        out["budget"][g] = row
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def ratios(by_system: dict[str, Any]) -> dict[str, Any]:
    """memgrove ÷ baseline, per level (and budget), baseline, group, metric."""
    mg = by_system["memgrove"]
    out: dict[str, Any] = {}
    for level, bases in list(LEVEL_BASELINES.items()) + [("budget", BUDGET_BASELINES)]:
        keys = BUDGET_KEYS if level == "budget" else METRICS
        out[level] = {b: {g: {k: _ratio(mg[level][g][k], by_system[b][level][g][k]) for k in keys}
                          for g in mg[level]} for b in bases}
    return out


def lost_evidence(records: list[dict[str, Any]], system: str) -> dict[str, int]:
    c: Counter = Counter()
    for r in records:
        c.update(r["systems"][system].get("lost", {}).values())
    return dict(sorted(c.items()))


def data_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    return {
        "questions": n,
        "by_type": {g: sum(1 for r in records if r["type"] == g) for g in groups_of(records) if g != OVERALL},
        "scored": sum(1 for r in records if r["scored"]),
        "not_scored_no_user_evidence": dict(Counter(r["type"] for r in records if not r["scored"])),
        "evidence_source": dict(Counter(r["evidence_source"] for r in records)),
        "evidence_fallback_to_answer_sessions": [r["question_id"] for r in records
                                                 if r["evidence_source"] == "answer_sessions"],
        "no_evidence": [r["question_id"] for r in records if r["evidence_source"] == "none"],
        "sessions_mean": rm.mean(r["sessions"] for r in records),
        "turns_mean": rm.mean(r["turns"] for r in records),
        "words_mean": rm.mean(r["words"] for r in records),
        "evidence_turns_mean": rm.mean(r["evidence"] for r in records),
    }


def gold_check(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Scored questions whose official session gold (ids containing "answer") is not their answer_session_ids
    (unscored ones always differ: their answer sessions became "noans")."""
    out = []
    for q in questions:
        hay = haystack_of(q)
        if not hay.scored:
            continue
        official = {hay.sessions[i] for i, d in enumerate(hay.session_docs) if "answer" in d}
        declared = {str(s) for s in q.get("answer_session_ids") or []} & set(hay.sessions)
        if official != declared:
            out.append({"question_id": q["question_id"], "official": sorted(official),
                        "answer_session_ids": sorted(declared)})
    return {"mismatches": len(out), "examples": out[:10]}


# -- the report --------------------------------------------------------------------------------

def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}"


def _x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def _short(m: str) -> str:
    return m.replace("recall_any", "R_any").replace("recall_all", "R_all").replace("ndcg_any", "NDCG")


def _level_table(report: dict[str, Any], level: str, group: str) -> list[str]:
    syst, rat = report["systems"], report["ratios"][level]
    names = LEVEL_SYSTEMS[level]
    bases = LEVEL_BASELINES[level]
    L = ["| metric | " + " | ".join(names) + " | " + " | ".join(f"memgrove ÷ {b}" for b in bases) + " |",
         "|---|" + "---|" * (len(names) + len(bases))]
    for m in METRICS:
        L.append(f"| {_short(m)} | " + " | ".join(_pct(syst[s][level][group][m]) for s in names) + " | "
                 + " | ".join(_x(rat[b][group][m]) for b in bases) + " |")
    L.append(f"| {'sessions' if level == 'session' else 'user turns'} returned (mean) | "
             + " | ".join(f"{syst[s][level][group]['returned_mean']:.1f}" if syst[s][level][group]["returned_mean"]
                          is not None else "—" for s in names) + " |" + " |" * len(bases))
    return L


def _budget_table(report: dict[str, Any], group: str) -> list[str]:
    syst, rat = report["systems"], report["ratios"]["budget"]
    L = ["| budget | " + " | ".join(SYSTEMS) + " | " + " | ".join(f"memgrove ÷ {b}" for b in BUDGET_BASELINES) + " |",
         "|---|" + "---|" * (len(SYSTEMS) + len(BUDGET_BASELINES))]
    for k in BUDGET_KEYS:
        L.append(f"| {k} | " + " | ".join(_pct(syst[s]["budget"][group][k]) for s in SYSTEMS) + " | "
                 + " | ".join(_x(rat[b][group][k]) for b in BUDGET_BASELINES) + " |")
    return L


def render_markdown(report: dict[str, Any]) -> str:
    c, d, mg = report["config"], report["data"], report["memgrove"]
    syst = report["systems"]
    L = ["# memgrove LongMemEval retrieval benchmark", "", locomo.machine_line(report), ""]
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s · data `{c['data']}` "
             f"(sha256 {c['data_sha256'][:12]}…, {c['file_questions']} questions in the file; run: {d['questions']} "
             f"questions"
             + (f" of types {', '.join(c['types'])}" if c["types"] else "")
             + (f", the first {c['limit']}" if c["limit"] is not None else "")
             + f"; {c['abstention_excluded']} abstention questions left out)")
    L.append("")
    v = c["variant"]
    cache = mg["cache"]
    L.append(f"**memgrove** = one fresh memory per question holding its haystack, curated by the verbatim curator "
             f"(variant `{v['name']}`: window {v['window']}"
             + (f", tree overrides {v['tree']}" if v["tree"] else "")
             + (f", query overrides {v['query']}" if v["query"] else "")
             + f"), queried with the question text through the query graph, `prefetch_limit={c['prefetch_limit']}` "
             "(product default 10), every other setting default, no LLM; ranked = the graph's entry hits. "
             "**bm25-turns** / **bm25-sessions** = `bm25s` defaults, lower-cased `\\w+` tokens, over LongMemEval's "
             "official retrieval corpora: user turns / sessions as their user turns joined (the official code "
             "indexes user turns only); a retrieved session brings all its turns. Percent; ratio = memgrove ÷ baseline.")
    L.append("")
    L.append(f"Official metrics (LongMemEval `eval_utils.py`: recall_any@k, recall_all@k, NDCG@k; gold = corpus ids "
             f"containing \"answer\") over {d['scored']} questions: abstention questions and questions without a "
             f"`has_answer` user turn (not scored: {d['not_scored_no_user_evidence'] or 'none'}) are skipped, as the "
             "official code does. Session ranking = sessions by first appearance among the ranked items' turns; turn "
             "ranking = user turns by first appearance (memgrove entries holding an assistant turn contribute nothing "
             "at turn level). Rankings are what a system returned, not padded.")
    L.append("")
    L.append("## Overall")
    L.append("")
    for level in LEVELS:
        L.append(f"**{level.capitalize()} level** ({syst['memgrove'][level][OVERALL]['n']} questions)")
        L.append("")
        L.extend(_level_table(report, level, OVERALL))
        L.append("")
    b = syst["memgrove"]["budget"][OVERALL]
    L.append(f"**Evidence recall within a word budget** ({b['n']} questions; evidence = turns with `has_answer`, "
             f"user or assistant; fallback to the answer sessions' turns for "
             f"{len(d['evidence_fallback_to_answer_sessions'])}; budget rule of `retrieval_metrics.py`: whole turns "
             f"in rank order, stop at the first that does not fit; a haystack averages {d['words_mean'] or 0:,.0f} "
             "words)")
    L.append("")
    L.extend(_budget_table(report, OVERALL))
    L.append("")
    L.append("Budget filled at 4,000 words (the system returned at least that much text): "
             + ", ".join(f"{s} {_pct(syst[s]['budget'][OVERALL]['filled_4000w'])}%" for s in SYSTEMS)
             + f"; memgrove returns at most `prefetch_limit` = {c['prefetch_limit']} entries.")
    L.append("")
    L.append("bm25-turns returns user turns only, so evidence in assistant turns (single-session-assistant) is out "
             "of its reach at any budget; memgrove and bm25-sessions return assistant turns too.")
    L.append("")
    L.append("## Per question type")
    L.append("")
    groups = [g for g in syst["memgrove"]["budget"] if g != OVERALL]
    for level in LEVELS:
        L.append(f"**{level.capitalize()} level** (k = {', '.join(map(str, KS))})")
        L.append("")
        cols = [f"{_short(m)}" for m in METRICS]
        L.append("| type | n | system | " + " | ".join(cols) + " |")
        L.append("|---|---|---|" + "---|" * len(cols))
        for g in groups:
            for s in LEVEL_SYSTEMS[level]:
                row = syst[s][level][g]
                if not row["n"]:
                    continue
                L.append(f"| {g} | {row['n']} | {s} | " + " | ".join(_pct(row[k]) for k in METRICS) + " |")
        L.append("")
    L.append("**Evidence recall within a budget**")
    L.append("")
    L.append("| type | n | " + " | ".join(f"{s} {k}" for k in BUDGET_KEYS for s in SYSTEMS) + " |")
    L.append("|---|---|" + "---|" * (len(BUDGET_KEYS) * len(SYSTEMS)))
    for g in groups:
        L.append(f"| {g} | {syst['memgrove']['budget'][g]['n']} | "
                 + " | ".join(_pct(syst[s]["budget"][g][k]) for k in BUDGET_KEYS for s in SYSTEMS) + " |")
    L.append("")
    L.append("## memgrove: curation, cache, tiers, latency")
    L.append("")
    L.append(f"Curation: {cache['curated']} questions curated now ({cache['curation_seconds']:.1f} s of "
             f"`Memory.ingest`), {cache['hits']} copied from the cache ({cache['load_seconds']:.1f} s); opening the "
             f"memories and building the graphs took {cache['open_seconds']:.1f} s. Cache `{cache['dir']}` (curator "
             f"{cache['curator_version']}). Entries per memory (mean): {mg['entries_mean'] or 0:.0f}; empty turns not "
             f"curated: {mg['empty_turns_not_curated']}; entry segmenting: {mg['segmenting']}.")
    L.append("")
    total_q = sum(mg["tiers"].values()) or 1
    L.append("Tier distribution (answer[\"tier\"]): " + ", ".join(
        f"tier {t}: {n} ({n / total_q * 100:.1f}%)" for t, n in mg["tiers"].items()) + ". Entry hits per question: "
             + ", ".join(f"{k}: {n}" for k, n in mg["entries_hist"].items()) + ".")
    L.append("")
    L.extend(locomo.latency_table(report["latency_ms"], SYSTEMS))
    L.append("")
    L.append("Where the evidence is at 4,000 words (evidence turns): " + "; ".join(
        f"{s}: " + ", ".join(f"{k} {n}" for k, n in dd.items()) for s, dd in mg["lost_evidence_4000w"].items()) + ".")
    L.append("")
    gc = report["gold_check"]
    L.append(f"Data: {d['questions']} questions, {d['sessions_mean'] or 0:.1f} sessions / {d['turns_mean'] or 0:.1f} "
             f"turns / {d['words_mean'] or 0:,.0f} words per haystack (mean), {d['evidence_turns_mean'] or 0:.1f} "
             f"evidence turns per question; evidence from `has_answer` for {d['evidence_source'].get('has_answer', 0)}, "
             f"from the answer sessions for {len(d['evidence_fallback_to_answer_sessions'])}, none for "
             f"{len(d['no_evidence'])}. Official session gold (ids containing \"answer\") differs from "
             f"`answer_session_ids` for {gc['mismatches']} of the {d['scored']} scored questions.")
    L.append("")
    return "\n".join(L)


def output_stem(data_path: Path, variant: str, prefetch_limit: int, types: Sequence[str] | None,
                limit: int | None, total: int) -> str:
    """``longmemeval`` for longmemeval_s(_cleaned).json with the defaults; suffixes otherwise."""
    stem = "longmemeval"
    m = re.match(r"^longmemeval_(.+)$", data_path.stem.lower())
    tag = m.group(1) if m else re.sub(r"[^a-z0-9]+", "_", data_path.stem.lower()).strip("_")
    if tag not in ("s", "s_cleaned"):
        stem += f"_{tag}"
    if variant != DEFAULT_VARIANT:
        stem += f"_{variant}"
    if prefetch_limit != DEFAULT_PREFETCH:
        stem += f"_p{prefetch_limit}"
    if types:
        stem += "_" + "-".join(TYPE_ABBREV.get(t, t) for t in types)
    if limit is not None and limit < total:
        stem += f"_n{limit}"
    return stem


def _is_fixture(path: Path) -> bool:
    try:
        path.resolve().relative_to((REPO / "tests").resolve())
        return True
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="a LongMemEval JSON file (longmemeval_s / _oracle / _m format)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N (non-abstention) questions")
    ap.add_argument("--types", nargs="+", default=None,
                    help="question types to run (space- or comma-separated): " + ", ".join(QUESTION_TYPES))
    ap.add_argument("--cache", type=Path, default=None,
                    help=f"cache dir of curated memories (default {default_cache()})")
    ap.add_argument("--no-cache", action="store_true", help="re-curate every question (and replace its cache entry)")
    ap.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(locomo.VARIANTS),
                    help="memgrove variant (benchmarks/locomo.py VARIANTS; fresh-signals changes nothing here: "
                         "one question per memory)")
    ap.add_argument("--prefetch-limit", type=int, default=DEFAULT_PREFETCH,
                    help=f"query graph prefetch_limit (entry hits per question; default {DEFAULT_PREFETCH})")
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for longmemeval*.json/.md")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-questions", action="store_true", help="leave the per-question records out of the JSON")
    ap.add_argument("--seed", type=int, default=0, help="recorded only: nothing here is random")
    a = ap.parse_args(argv)

    data_path = a.data.resolve()
    if not data_path.exists():
        raise SystemExit(f"{data_path}: no such file (LongMemEval is not shipped here: download longmemeval_s.json "
                         "from xiaowu0162/LongMemEval and give its path)")
    if not a.no_write and a.out.resolve() == RESULTS.resolve() and _is_fixture(data_path):
        raise SystemExit(f"{data_path} is a test fixture, not LongMemEval: its results do not belong in "
                         f"{RESULTS}; give --out (e.g. /tmp/lme) or --no-write")
    types = None
    if a.types:
        types = [t.strip() for x in a.types for t in x.split(",") if t.strip()]
        unknown = [t for t in types if t not in QUESTION_TYPES]
        if unknown:
            raise SystemExit(f"--types: unknown {unknown}; choose from {', '.join(QUESTION_TYPES)}")
    raw = data_path.read_bytes()
    questions = load_questions(data_path)
    chosen, abstention = select(questions, types, a.limit)
    if not chosen:
        raise SystemExit("no question to run (all abstention, or none of the given types)")
    variant = locomo.VARIANTS[a.variant]
    cache_root = (a.cache or default_cache()).expanduser().resolve()

    command = "python benchmarks/longmemeval.py " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(a.seed)
    machine["uncommitted"] = locomo.uncommitted_files()
    log(f"memgrove LongMemEval benchmark: {len(chosen)} questions ({abstention} abstention left out), variant "
        f"{variant.name}, prefetch_limit {a.prefetch_limit}, cache {cache_root}"
        + (" (not read: --no-cache)" if a.no_cache else "") + f", load avg {machine['loadavg']}")
    t0 = time.perf_counter()
    body = run(chosen, variant=variant, prefetch_limit=a.prefetch_limit, cache_root=cache_root,
               use_cache=not a.no_cache, keep_questions=not a.no_questions)
    machine["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    report = {
        "benchmark": "longmemeval",
        "machine": machine,
        "versions": locomo.report_versions(),
        "command": command.strip(),
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(data_path), "data_sha256": hashlib.sha256(raw).hexdigest(),
                   "file_questions": len(questions), "types": types, "limit": a.limit,
                   "abstention_excluded": abstention, "variant": dataclasses.asdict(variant),
                   "prefetch_limit": a.prefetch_limit, "ks": list(KS), "budgets": list(BUDGETS),
                   "cache": str(cache_root), "no_cache": a.no_cache, "words": "whitespace-separated tokens",
                   "metrics": "LongMemEval src/retrieval/eval_utils.py (recall_any, recall_all, ndcg_any), "
                              "corpora and gold of src/retrieval/run_retrieval.py"},
        "gold_check": gold_check(chosen),
        **body,
    }
    md = render_markdown(report)
    print(md)
    if not a.no_write:
        a.out.mkdir(parents=True, exist_ok=True)
        stem = output_stem(data_path, a.variant, a.prefetch_limit, types, a.limit,
                           len(select(questions, types, None)[0]))
        (a.out / f"{stem}.json").write_text(locomo.dump_json(report), encoding="utf-8")
        (a.out / f"{stem}.md").write_text(md + "\n", encoding="utf-8")
        log(f"wrote {a.out / stem}.json and .md")
    return report


if __name__ == "__main__":
    main()

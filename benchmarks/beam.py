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
   graph exactly as in ``benchmarks/locomo.py`` (``memgrove_system``: ``prefetch_limit``
   raised to fill a 1,000-word budget, every other setting at its default, no LLM).
2. **bm25-turns**: flat BM25 (``bm25s`` defaults) over every message, each "<Role>: <text>".
3. **bm25-user-turns**: the same over the user's messages only (a retriever that never returns
   the assistant's words).
4. **bm25-sessions**: the same over whole sessions (an item is every message of the session).

Metrics: ``benchmarks/harness/metrics.py``, the code LoCoMo is scored by (``score_items``):
evidence recall at k = 5, 10 items and at 100 / 200 / 500 / 1,000 words (whole messages only, in
rank order, stop at the first that does not fit), per question type and pooled over the nine types
with evidence (abstention has none by design and is left out). Evidence = the question's
``source_chat_ids`` (a list, or a dict of lists such as original_info / updated_info, flattened);
ids not in the chat are dropped and counted. Also, per system: the share of each budget's words
that is assistant text, recall of user and of assistant evidence separately, the roles of the
top-5 items that hold no evidence, paired per-question differences memgrove − baseline, latency.
No answers are generated or judged: BEAM's answers need an LLM judge and none is reachable.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
if str(HERE) not in sys.path:  # `import harness` however this file is run
    sys.path.insert(0, str(HERE))

from beam_report import ARM_SYSTEMS, render_compare, render_markdown  # noqa: E402
from beam_scoring import Conflation, aggregate, by_role, inflection, paired, score  # noqa: E402,F401
from harness import cli  # noqa: E402
from harness import metrics as rm  # noqa: E402
from harness.datasets.beam import (  # noqa: E402,F401  (names the tests read here)
    BASELINES, BUDGETS, DEFAULT_TIER, KS, POOLED, RECALL_KEYS, ROLES, SYSTEMS, TRUNCATED, TYPES,
    Chat, Question, bm25_sessions, bm25_turns, chat_dirs, default_data, evidence_ids, load_chat, readable_anchor,
    to_conversation)
from harness.report import conversation_versions, log, meaning  # noqa: E402
from harness.retrievers import (  # noqa: E402
    DEFAULT_PREFETCH, DEFAULT_VARIANT, VARIANTS, Retrieved, Variant, env_without, memgrove_system, with_tree_overrides)

# -- the run -----------------------------------------------------------------------------------

def run(chats: list[Chat], *, variant: Variant, prefetch_limit: int,
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
        mg = memgrove_system(to_conversation(chat.id, chat.messages), window=variant.window,
                                    curator=variant.curator, prefetch_limit=prefetch_limit,
                                    query_overrides=variant.query, tree_overrides=variant.tree,
                                    fresh_signals=variant.fresh_signals, dream=variant.dream)
        systems: dict[str, Callable[[str], Retrieved]] = {
            "memgrove": mg, "bm25-turns": bm25_turns(chat.messages),
            "bm25-user-turns": bm25_turns(chat.messages, ("user",)), "bm25-sessions": bm25_sessions(chat.messages)}
        t0 = time.perf_counter()
        try:
            with env_without("MEMGROVE_MODEL"):   # retrieval only: the graph answers without an LLM
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

    by_system = {s: aggregate(records, s) for s in SYSTEMS}
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
        "by_role": {s: by_role(records, s) for s in SYSTEMS},
        "paired": {b: paired(records, "memgrove", b) for b in BASELINES},
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


def parse_arm(text: str) -> tuple[str, dict[str, Any]]:
    """``"key=value,key=value"`` (``""``: the variant's settings as they are) as ``(name, overrides)``."""
    overrides = with_tree_overrides(Variant("arm", ""), [kv for kv in text.split(",") if kv]).tree
    late = sorted(k for k in overrides if k in CURATION_SETTINGS)
    if late:
        raise SystemExit(f"--compare: {', '.join(late)} is read when a chat is curated; run beam.py --tree for it")
    return (text or "as is"), overrides


def compare(chats: list[Chat], *, variant: Variant, prefetch_limit: int,
            arms: list[tuple[str, dict[str, Any]]], keep_questions: bool = True,
            embed: bool = False) -> dict[str, Any]:
    """Search-time settings side by side: each chat is curated once, then every question goes
    through the query graph once per arm, with the arm's [tree] settings, the query cache cleared
    and the importance its questions' answers recorded forgotten before the next arm (the verbatim
    curator leaves no signals, so every arm starts from the same memory). About as many searches as
    one ``run`` per arm, but one curation: a 500K sweep of four arms in a fraction of four runs.
    ``embed``: after curating, every entry's vector is computed (``memgrove reindex``'s warm-up, with
    the first arm that ranks by meaning), timed, so that arm's latencies are those of a warm tree."""
    from memgrove.tree.index.cache import QueryCache
    from memgrove.tree.base.errors import MemgroveError
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
        mg = memgrove_system(to_conversation(chat.id, chat.messages), window=variant.window,
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
            with env_without("MEMGROVE_MODEL"):
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


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = cli.parser(__doc__)
    ap.add_argument("--data", type=Path, default=None,
                    help="the BEAM directory (default: $BEAM_PATH or ../shared/datasets/beam from the repo)")
    ap.add_argument("--tier", default=DEFAULT_TIER, help=f"100K or 500K (default {DEFAULT_TIER})")
    ap.add_argument("--chats", type=int, default=None, help="only the first N chats of the tier")
    ap.add_argument("--split", default="all", choices=("dev", "test", "all"),
                    help="the fixed half of the tier's chats (benchmarks/splits.json; default all)")
    ap.add_argument("--full-chats", action="store_true",
                    help=f"read chat.json even where BEAM ships {TRUNCATED} (which its answer generation uses)")
    cli.memgrove_options(ap, out=RESULTS, prefetch=DEFAULT_PREFETCH)
    ap.add_argument("--compare", action="append", default=None, metavar="KEY=VALUE[,KEY=VALUE]",
                    help="search-time [tree] settings side by side, one arm per use (\"\" for the settings as "
                         "they are; the first arm is the reference): each chat curated once, every question "
                         "once per arm; writes beam[_tier]_compare.json/.md")
    ap.add_argument("--embed", action="store_true",
                    help="with --compare: compute every entry's vector after curating (memgrove reindex's "
                         "warm-up, timed), so an arm with semantic_weight searches a warm tree")
    ap.add_argument("--name", default=None,
                    help="the report's file name without .md/.json (default: from the tier, variant, --tree ...)")
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
    variant = with_tree_overrides(VARIANTS[a.variant], a.tree)
    command, machine = cli.start("beam.py", argv, quote=True)
    log(f"memgrove BEAM benchmark: tier {a.tier}, {len(chats)} chats, variant {variant.name}, "
        f"prefetch_limit {a.prefetch_limit}, load avg {machine['loadavg']}")
    arms = [parse_arm(x) for x in a.compare] if a.compare is not None else None
    t0 = time.perf_counter()
    if arms is not None:
        body = compare(chats, variant=variant, prefetch_limit=a.prefetch_limit, arms=arms,
                       keep_questions=not a.no_questions, embed=a.embed)
    else:
        body = run(chats, variant=variant, prefetch_limit=a.prefetch_limit, keep_questions=not a.no_questions)
    cli.load_end(machine)
    report = {
        "benchmark": "beam",
        "machine": machine,
        "versions": conversation_versions(),
        "command": command,
        "wall_s": round(time.perf_counter() - t0, 1),
        "config": {"data": str(root), "tier": a.tier, "chats_sha256": digest.hexdigest(),
                   "chats": [c.id for c in chats], "full_chats": a.full_chats, "variant": asdict(variant),
                   "meaning": meaning(variant.tree), "prefetch_limit": a.prefetch_limit, "ks": list(KS),
                   "budgets": list(BUDGETS),
                   "words": "whitespace-separated tokens", "pooled_types": list(POOLED)},
        **body,
    }
    md = render_markdown(report) if arms is None else render_compare(report)
    stem = "beam" + ("" if a.tier == DEFAULT_TIER else f"_{a.tier.lower()}") \
        + ("" if a.variant == DEFAULT_VARIANT else f"_{a.variant}") \
        + "".join(f"_{kv.replace('=', '')}" for kv in a.tree) \
        + (f"_c{len(chats)}" if len(chats) < len(dirs) else "") + ("_full" if a.full_chats else "") \
        + ("" if a.split == "all" else f"_{a.split}") + ("_compare" if arms is not None else "") + ("_embed" if arms is not None and a.embed else "")
    cli.finish(report, md, a.out, a.name or stem, not a.no_write)
    return report


if __name__ == "__main__":
    main()

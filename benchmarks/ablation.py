#!/usr/bin/env python
"""Ablation of memgrove's ranking steps on one half of LoCoMo or BEAM, paired question by question.

    python benchmarks/ablation.py locomo --split test                # every arm of ARMS
    python benchmarks/ablation.py beam --tier 100K --split dev --arms default,link_weight=0
    python benchmarks/ablation.py beam --split test --base semantic_weight=0.5   # every arm, ranking by meaning

Each arm switches one ranking step off alone. ``ARMS`` is read from the pipeline's own list
(``memgrove.tree.ranking.pipeline.STEPS``): each step's settings that switch it off (``Step.off``),
or for a step without a setting the pipeline without it (``<step>=off``: ``tree.ranking_steps``
without that step), then the two curation arms (message parts, stem exceptions: a stand-in patched
into ``memgrove.tree``). A step that is off by default has no arm in ``ARMS``, and ``--arms`` takes
any ``<step>=off``. The first arm is the reference (``default``: the settings as they are, plus
``--base``). Each conversation (chat) is curated once
per curation setting (``part_words`` and the stem exceptions are read when entries are written and
indexed; every other arm shares one curation), then every question goes through the query graph
once per arm with the arm's settings, the query cache cleared and the importance the arm's answers
recorded forgotten before the next arm, exactly as ``beam.py --compare`` does; in each arm the
questions run in file order, so the product profile's signals drift as in a plain run
(``beam.py`` gives the default arm's numbers to the question; LoCoMo's adversarial questions, which
have no evidence, are left out unless ``--with-adversarial``, so its drift differs slightly from
``locomo.py``'s).

When an arm ranks by meaning (``semantic_weight``), every entry's vector is computed right after
each curation (``warm``: ``tree.embed()``, as ``beam.py --compare --embed``), timed and reported, so
no search waits for the encoder; a vector is keyed by its text, so a conversation's later
curations encode only their new texts (``--vectors``: reuse a kept ``vectors.db``). With meaning on
in ``--base``, every arm of ARMS is joined by ``semantic_weight=0`` (meaning off), so the pair is
in the same run.

Scored by the benchmarks' own code (``locomo.score`` / ``beam.score``); flat BM25 references run
once beside the arms. Per arm: the pooled means (LoCoMo categories 1-4; BEAM the nine types with
evidence) and, against the reference, the questions gained and lost at R@10, R@200w and R@500w,
pooled and per category / type. Writes ``benchmarks/runs/ablation_<set>[_<tier>]_<split>[_<base>].json``
(runs/ is not committed; ``benchmarks/results/heldout.*`` cites the numbers).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import beam  # noqa: E402
import locomo  # noqa: E402
from harness import metrics as rm  # noqa: E402
import splits  # noqa: E402
from harness.machine import machine_info, uncommitted  # noqa: E402
from memgrove.tree.ranking.pipeline import STEPS, WITHOUT, Step, step_named, without  # noqa: E402
from memgrove.tree.settings import TreeSettings  # noqa: E402

RUNS = HERE / "runs"
KEYS = ("R@5", "R@10", "R@100w", "R@200w", "R@500w", "R@1000w")
PAIRED = ("R@10", "R@200w", "R@500w")
CURATION = ("part_words", "content_cap")     # [tree] settings read when entries are written


@dataclass(frozen=True)
class Arm:
    name: str
    step: str                               # the ranking step or setting it switches off
    tree: dict[str, Any] = field(default_factory=dict)
    patch: str = ""                         # a name in PATCHES: a stand-in for something not a step
    without: str = ""                       # ranking steps left out of the pipeline ("+"-separated)


def _no_stem_exceptions() -> Iterator[None]:
    """word_forms' tables (irregular forms, informal spellings, STEMS) out of the analyzer: for
    curating and searching alike (the patch is on while the arm's chat is curated)."""
    from memgrove.tree.text import analysis
    saved = analysis.BASE_OF, analysis.STEMS
    analysis.BASE_OF, analysis.STEMS = {}, {}
    analysis._term.cache_clear()
    try:
        yield
    finally:
        analysis.BASE_OF, analysis.STEMS = saved
        analysis._term.cache_clear()


def _constant(module: str, name: str, value: Any) -> Callable[[], Iterator[None]]:
    """A stand-in for one of a step's constants (``tree/ranking/coverage.py``'s pool, head, session share)."""
    def patch() -> Iterator[None]:
        import importlib
        mod = importlib.import_module(f"memgrove.tree.{module}")
        saved = getattr(mod, name)
        setattr(mod, name, value)
        try:
            yield
        finally:
            setattr(mod, name, saved)
    return patch


PATCHES: dict[str, Callable[[], Iterator[None]]] = {
    "stem_exceptions": _no_stem_exceptions,
    "cover_session=0": _constant("ranking.coverage", "SESSION_SHARE", 0.0),
    "cover_session=0.5": _constant("ranking.coverage", "SESSION_SHARE", 0.5),
    "cover_session=1.0": _constant("ranking.coverage", "SESSION_SHARE", 1.0),
    "cover_head=10": _constant("ranking.coverage", "COVER_HEAD", 10),
    "cover_head=25": _constant("ranking.coverage", "COVER_HEAD", 25),
    "cover_pool=50": _constant("ranking.coverage", "COVER_POOL", 50),
    "cover_any_term": _constant("ranking.coverage", "SESSION_NEEDS_NEW_TERM", False),
    "cover_several": _constant("ranking.coverage", "ONLY_ASKING_SEVERAL", True)}
CURATION_PATCHES = ("stem_exceptions",)
# ranking steps ablated in runs of their own: meaning (each memory's vectors take minutes per half
# here; ``--base semantic_weight=0.5`` ranks every arm by meaning and pairs it with ``NO_MEANING``)
OWN_RUNS = ("meaning",)


def _value(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def step_arms(step: Step) -> list[Arm]:
    """The arms that switch ``step`` off: one per setting of ``Step.off``, or the pipeline without it."""
    return [Arm(f"{step.name}=off", step.name, without=step.name) if off is WITHOUT else
            Arm(",".join(f"{k}={_value(v)}" for k, v in off.items()), step.name, dict(off)) for off in step.off]


def _on_by_default(arm: Arm) -> bool:
    """Whether the arm switches off something the defaults have on (an arm equal to them measures nothing)."""
    fields = TreeSettings.__dataclass_fields__
    return not arm.tree or any(fields[k].default != v for k, v in arm.tree.items())


ARMS: list[Arm] = [Arm("default", "the settings as they are")] + [
    arm for step in STEPS if step.name not in OWN_RUNS for arm in step_arms(step) if _on_by_default(arm)] + [
    # curation, not ranking: read when entries are written and indexed
    Arm("part_words=100000", "message parts: a long message curated whole", {"part_words": 100000}),
    Arm("stem_exceptions=off", "stem exceptions (irregular forms, informal spellings, STEMS)",
        patch="stem_exceptions"),
]
# ranking by meaning: its own arm (each entry's vector is computed once per memory, minutes per half here)
MEANING = Arm("semantic_weight=0.5", "meaning (0 by default)", {"semantic_weight": 0.5})
# ... and off, an arm of every run whose --base turns meaning on (so the pair is in the same run)
NO_MEANING = step_arms(step_named("meaning"))[0]


def parse_arm(text: str) -> Arm:
    """A name of ARMS, ``<step>=off`` (the pipeline without that step), or ``key=value[,key=value]``
    of [tree] settings, with stand-ins of PATCHES and ``<step>=off`` among them ("+" or ",")."""
    known = {a.name: a for a in ARMS + [MEANING, NO_MEANING]}
    if text in known:
        return known[text]
    parts = [x for x in text.replace("+", ",").split(",") if x]
    names = {s.name for s in STEPS}
    patch = [x for x in parts if x in PATCHES]
    off = [x[:-len("=off")] for x in parts if x.endswith("=off") and x[:-len("=off")] in names]
    rest = [x for x in parts if x not in PATCHES and not (x.endswith("=off") and x[:-len("=off")] in names)]
    tree = locomo.with_tree_overrides(locomo.Variant("arm", ""), rest).tree
    unknown = sorted(set(tree) - set(TreeSettings.__dataclass_fields__))
    if unknown:
        raise SystemExit(f"--arms {text}: unknown [tree] setting, stand-in or step {', '.join(unknown)}")
    return Arm(text, text, tree, patch="+".join(patch), without="+".join(off))


@contextlib.contextmanager
def pipeline_without(tree: Any, names: str) -> Iterator[None]:
    """``tree`` searching with the ranking pipeline less the steps ``names`` ("+"-separated)."""
    if not names:
        yield
        return
    steps = tree.ranking_steps
    for name in names.split("+"):
        steps = without(name, steps)
    tree.ranking_steps = steps
    try:
        yield
    finally:
        vars(tree).pop("ranking_steps", None)     # the class's: the whole pipeline


@contextlib.contextmanager
def patched(name: str) -> Iterator[None]:
    if not name:
        yield
        return
    with contextlib.ExitStack() as stack:
        for one in name.split("+"):
            stack.enter_context(contextlib.contextmanager(PATCHES[one])())
        yield


def curation_key(arm: Arm) -> tuple:
    return (tuple(sorted((k, v) for k, v in arm.tree.items() if k in CURATION)),
            arm.patch if arm.patch in CURATION_PATCHES else "")


# -- the data, as (id, conversation, questions, scorer, references) per conversation ---------------

@dataclass
class Unit:
    id: str
    conversation: dict[str, Any]
    questions: list[Any]                           # each with .question, .index and a group
    group: Callable[[Any], str]
    score: Callable[[Any, list], dict[str, Any]]
    references: dict[str, Callable[[str], Any]]


def locomo_units(split: str, adversarial: bool = False) -> list[Unit]:
    samples = [s for s in locomo.load_samples(locomo.default_data())
               if splits.in_split("locomo", s["sample_id"], split)]
    out = []
    for s in samples:
        turns = locomo.turns_of(s)
        qs = [q for q in locomo.questions_of(s, turns) if adversarial or q.category != 5]
        refs = {"bm25-turns": locomo.bm25_turns(turns), "bm25-sessions": locomo.bm25_sessions(turns)}
        out.append(Unit(s["sample_id"], locomo.to_conversation(s), qs, lambda q: str(q.category),
                        lambda q, items: locomo.score(q, locomo.Retrieved(items, 0.0)), refs))
    return out


def beam_units(split: str, tier: str) -> list[Unit]:
    root = beam.default_data()
    out = []
    for d in beam.chat_dirs(root, tier):
        if not splits.in_split("beam", d.name, split, tier):
            continue
        chat = beam.load_chat(d, tier)
        roles = {m.id: m.role for m in chat.messages}
        refs = {"bm25-turns": beam.bm25_turns(chat.messages),
                "bm25-user-turns": beam.bm25_turns(chat.messages, ("user",)),
                "bm25-sessions": beam.bm25_sessions(chat.messages)}
        out.append(Unit(chat.id, beam.to_conversation(chat.id, chat.messages), chat.questions, lambda q: q.qtype,
                        lambda q, items, roles=roles: rm.score_items(items, q.evidence, None, beam.KS, beam.BUDGETS),
                        refs))
    return out


def pooled(dataset: str, group: str) -> bool:
    return group in ("1", "2", "3", "4") if dataset == "locomo" else group != "abstention"


# -- the run ---------------------------------------------------------------------------------

def warm(tree: Any, group: list[Arm], embedded: dict[str, float], cache: dict[str, bytes]) -> None:
    """Every entry's vector computed after curating, when an arm of ``group`` ranks by meaning
    (``memgrove reindex``'s warm-up, as ``beam.py --compare --embed``): no arm's search waits for
    the encoder. A vector is keyed by its text, so the ones an earlier curation of the conversation
    computed (``cache``) are stored first and only new texts are encoded. Adds the entries encoded
    and the seconds to ``embedded``."""
    from memgrove.tree.meaning.vectors import key_of
    start = tree.settings
    meaning = next((a.tree for a in group if start.replace(**{k: v for k, v in a.tree.items()
                                                                 if k not in CURATION}).semantic_weight > 0), None)
    if meaning is None:
        return
    try:
        tree.settings = start.replace(**{k: v for k, v in meaning.items() if k not in CURATION})
        name = tree.meaning_encoder().name
        keys = sorted({key_of(name, t) for t in tree._meaning_texts(sorted(tree.catalog.files())).values()})
        reuse = [(k, cache[k]) for k in keys if k in cache]
        tree.vectors.put_many(reuse)
        t0 = time.perf_counter()
        n = tree.embed()[0]
        took = time.perf_counter() - t0
        cache.update(tree.vectors.get_many(keys))
    finally:
        tree.settings = start
    embedded["entries"] += len(keys) - len(reuse)
    embedded["seconds"] += took
    new = len(keys) - len(reuse)
    locomo.log(f"  {n} entries with a vector: {new} texts encoded in {took:.1f} s"
               + (f" ({1000 * took / new:.1f} ms each)" if new else "") + f", {len(reuse)} reused")


def run(units: list[Unit], arms: list[Arm], base: dict[str, Any], prefetch_limit: int,
        embedded: dict[str, float] | None = None, partial: Path | None = None,
        cache: dict[str, bytes] | None = None) -> list[dict[str, Any]]:
    """``embedded``: filled with the entries the warm-ups embedded and their seconds. ``partial``:
    the records so far written there after each conversation (a long run stopped keeps them).
    ``cache``: vectors by key (model and text), reused by every warm-up and filled by them."""
    from memgrove.tree.index.cache import QueryCache
    embedded = {"entries": 0, "seconds": 0.0} if embedded is None else embedded
    cache = {} if cache is None else cache
    groups: dict[tuple, list[Arm]] = {}
    for arm in arms:
        groups.setdefault(curation_key(arm), []).append(arm)
    records: list[dict[str, Any]] = []
    for u in units:
        recs = [{"conv": u.id, "index": q.index, "group": u.group(q), "arms": {}} for q in u.questions]
        for name, r in u.references.items():
            for q, rec in zip(u.questions, recs):
                rec["arms"][name] = _keep(u.score(q, r(q.question).items))
        for (cur, cpatch), group in groups.items():
            t0 = time.perf_counter()
            with patched(cpatch):
                mg = locomo.memgrove_system(u.conversation, prefetch_limit=prefetch_limit,
                                            tree_overrides={**base, **dict(cur)})
            mg.settings = None      # no tier-3 context sizes: not measured here
            locomo.log(f"{u.id}: curated {mg.curation['entries']} entries in {time.perf_counter() - t0:.1f} s "
                       f"({dict(cur) or 'default'}{' ' + cpatch if cpatch else ''})")
            tree = mg.mem.tree
            start = tree.settings
            try:
                with patched(cpatch):       # the texts the arms' searches embed
                    warm(tree, group, embedded, cache)
                with locomo.env_without("MEMGROVE_MODEL"):
                    for arm in group:
                        tree.settings = start.replace(**{k: v for k, v in arm.tree.items() if k not in CURATION})
                        QueryCache(tree.home / "cache").clear()
                        delivered: set[str] = set()
                        t0 = time.perf_counter()
                        with patched(arm.patch), pipeline_without(tree, arm.without):
                            for q, rec in zip(u.questions, recs):
                                r = mg(q.question)
                                delivered.update(it.key for it in r.items)
                                rec["arms"][arm.name] = _keep(u.score(q, r.items))
                        tree.signals.forget(sorted(delivered))
                        locomo.log(f"  {arm.name}: {len(u.questions)} questions in {time.perf_counter() - t0:.1f} s")
            finally:
                tree.settings = start
                mg.close()
        records += recs
        if partial is not None:
            partial.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps({"embedded": embedded, "questions": records}) + "\n", encoding="utf-8")
    return records


def _keep(scores: dict[str, Any]) -> dict[str, float]:
    return {k: round(scores[k], 4) for k in KEYS if k in scores}


# -- the summary -----------------------------------------------------------------------------------

def summarize(dataset: str, records: list[dict[str, Any]], arms: list[str], systems: list[str]) -> dict[str, Any]:
    """Per arm and reference system: means per group and pooled; per arm against the first, the
    questions gained and lost per paired key, pooled and per group."""
    rows = [r for r in records if pooled(dataset, r["group"]) and "R@5" in r["arms"][arms[0]]]
    groups = sorted({r["group"] for r in rows})
    means: dict[str, dict[str, dict[str, float]]] = {}
    for s in arms + systems:
        means[s] = {}
        for g in ["overall"] + groups:
            sel = [r["arms"][s] for r in rows if g == "overall" or r["group"] == g]
            means[s][g] = {k: round(sum(x[k] for x in sel) / len(sel), 4) for k in KEYS} | {"n": len(sel)}
    pairs: dict[str, dict[str, dict[str, Any]]] = {}
    ref = arms[0]
    for a in arms[1:]:
        pairs[a] = {}
        for g in ["overall"] + groups:
            sel = [r["arms"] for r in rows if g == "overall" or r["group"] == g]
            pairs[a][g] = {k: {"gained": sum(x[a][k] > x[ref][k] for x in sel),
                               "lost": sum(x[a][k] < x[ref][k] for x in sel),
                               "diff": round(sum(x[a][k] - x[ref][k] for x in sel) / len(sel), 4)} for k in KEYS}
    return {"means": means, "paired": pairs, "groups": groups}


def markdown(report: dict[str, Any]) -> str:
    s, arms = report["summary"], report["arms"]
    ref = arms[0]["name"]
    L = [f"# Ablation: {report['dataset']} {report.get('tier') or ''} {report['split']} half "
         f"(base {report['base'] or 'default'})", "",
         "| arm | step | " + " | ".join(KEYS) + " | " + " | ".join(f"{k} +/−" for k in PAIRED) + " |",
         "|---|---|" + "---|" * (len(KEYS) + len(PAIRED))]
    for a in arms:
        m = s["means"][a["name"]]["overall"]
        p = s["paired"].get(a["name"], {}).get("overall")
        L.append(f"| {a['name']} | {a['step']} | " + " | ".join(f"{m[k] * 100:.1f}" for k in KEYS) + " | "
                 + " | ".join(f"+{p[k]['gained']}/−{p[k]['lost']}" if p else "ref" for k in PAIRED) + " |")
    for sys_ in report["references"]:
        m = s["means"][sys_]["overall"]
        L.append(f"| {sys_} | flat BM25 | " + " | ".join(f"{m[k] * 100:.1f}" for k in KEYS) + " |" + " |" * len(PAIRED))
    L += ["", f"Per group, R@10 / R@200w / R@500w of each arm minus `{ref}` (points):", "",
          "| arm | " + " | ".join(f"{g} (n={s['means'][ref][g]['n']})" for g in s["groups"]) + " |",
          "|---|" + "---|" * len(s["groups"])]
    for a in arms[1:]:
        L.append(f"| {a['name']} | " + " | ".join(
            " / ".join(f"{s['paired'][a['name']][g][k]['diff'] * 100:+.1f}" for k in PAIRED) for g in s["groups"]) + " |")
    e = report.get("embedded") or {}
    if e.get("entries"):
        L += ["", f"Warm-up (every entry's vector after each curation): {e['entries']:,} entries in "
                  f"{e['seconds']:.0f} s, {e['ms_per_entry']:.1f} ms each."]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset", choices=("locomo", "beam"))
    ap.add_argument("--split", default="test", choices=splits.SPLITS)
    ap.add_argument("--tier", default="100K", help="BEAM tier (100K or 500K)")
    ap.add_argument("--arms", default="", help="names of ARMS or key=value[+key=value] arms, comma-separated "
                                                "(';'-separated when an arm has commas); default: every arm of ARMS")
    ap.add_argument("--base", default="", help="key=value[,key=value] [tree] settings every arm starts from")
    ap.add_argument("--conversations", type=int, default=None, help="only the first N of the half")
    ap.add_argument("--with-adversarial", action="store_true",
                    help="LoCoMo: ask the category-5 questions too (no evidence, not scored; by default left "
                         "out, a fifth of the time; their answers' signals then do not drift the others')")
    ap.add_argument("--prefetch-limit", type=int, default=locomo.DEFAULT_PREFETCH)
    ap.add_argument("--vectors", type=Path, action="append", default=[],
                    help="a vectors.db whose vectors (keyed by model and text) the warm-ups reuse (repeatable)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    base = locomo.with_tree_overrides(locomo.Variant("base", ""), [kv for kv in a.base.split(",") if kv]).tree
    every = [x.name for x in ARMS] + ([NO_MEANING.name] if base.get("semantic_weight") else [])
    names = [x for x in (a.arms.split(";") if ";" in a.arms else a.arms.split(",")) if x] or every
    arms = [parse_arm(x) for x in names]
    if arms[0].name != "default":
        arms.insert(0, ARMS[0])
    units = locomo_units(a.split, a.with_adversarial) if a.dataset == "locomo" else beam_units(a.split, a.tier)
    units = units[:a.conversations] if a.conversations else units
    machine = machine_info(0)
    t0 = time.perf_counter()
    embedded = {"entries": 0, "seconds": 0.0}
    out = a.out or RUNS / ("ablation_" + a.dataset + (f"_{a.tier.lower()}" if a.dataset == "beam" else "")
                           + f"_{a.split}" + "".join(f"_{k}{v}" for k, v in base.items()) + ".json")
    cache: dict[str, bytes] = {}
    for db in a.vectors:
        import sqlite3
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            cache.update(con.execute("SELECT key, vec FROM vectors").fetchall())
    records = run(units, arms, base, a.prefetch_limit, embedded, out.with_suffix(".partial.json"), cache)
    systems = list(units[0].references) if units else []
    report = {"benchmark": "ablation", "dataset": a.dataset, "tier": a.tier if a.dataset == "beam" else None,
              "split": a.split, "conversations": [u.id for u in units], "base": base,
              "command": "python benchmarks/ablation.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "machine": machine, "wall_s": round(time.perf_counter() - t0, 1),
              "uncommitted": uncommitted(),
              "arms": [{"name": x.name, "step": x.step, "tree": x.tree, "patch": x.patch, "without": x.without}
                       for x in arms],
              "references": systems,
              "embedded": {**embedded, "seconds": round(embedded["seconds"], 1),
                           "ms_per_entry": round(1000 * embedded["seconds"] / max(embedded["entries"], 1), 1)},
              "summary": summarize(a.dataset, records, [x.name for x in arms], systems),
              "questions": records}
    md = markdown(report)
    print(md)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(md + "\n", encoding="utf-8")
    out.with_suffix(".partial.json").unlink(missing_ok=True)
    locomo.log(f"wrote {out} and .md ({os.path.getsize(out):,} bytes)")
    return report


if __name__ == "__main__":
    main()

"""The ranking pipeline of ``ContextTree.search``: ``STEPS``, the one list of what happens to the
engine's candidates, in order, and ``rank``, which runs it.

``rank`` first lets each leg of the list (``Step.leg``: the dense leg, dense.py) join its candidates
to the engine's, so that every step weighs them alike, then gathers the table once (gather.py),
then runs each step of the list over it: a plain
function of the table and the tree's settings, returning the new table. A step reads nothing but
the table; the one read between steps, meaning's cosines for the best of the order so far, is
declared on its step (``Step.reads``). Adding, removing or reordering a step is one line of
``STEPS``; ``benchmarks/ablation.py`` switches each one off from the same list (``Step.off``), and
``docs/ranking.md`` shows it (``python -m memgrove.tree.ranking.docs``).

The steps before ``one_scale`` change the candidates' scores on BM25's scale (``Table.rows``); from
``one_scale`` on, they reorder the final order (``Table.order``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable

from ..entries.lifecycle import RankingProfile as Profile
from ..settings import TreeSettings
from . import by_meaning, by_signals, coverage, dense, lifts, own, rules
from .gather import RankingInputs, gather
from .table import Candidates, Table

HELDOUT = "benchmarks/results/heldout.md"       # the ablation of every step on the test halves
HISTORY = "benchmarks/HISTORY.md"               # each ranking change as it was measured
# an arm that is the pipeline without the step (a step with no setting): ``Step.off``
WITHOUT: Mapping[str, Any] = {}


@dataclass(frozen=True)
class Step:
    """One ranking step: ``run(table, settings) -> table``, what it does and why it is there."""
    name: str
    run: Callable[[Table, TreeSettings], Table]
    does: str                                  # one sentence, for the docs' table
    why: str                                   # its measured reason, in short
    measured: str                              # where the numbers are (a path in the repository)
    # the settings that switch it off, an ablation arm each (``WITHOUT``: the pipeline without it);
    # () : no arm of its own (part of another step's, or measured in runs of its own: see ``why``)
    off: tuple[Mapping[str, Any], ...] = ()
    # a read that depends on the order so far, done just before the step (I/O: not the step's)
    reads: Callable[[Table, TreeSettings, RankingInputs], Table] | None = None
    # a leg: candidates it joins to the engine's before the gather, so every step weighs them alike
    # (its ``run`` then has nothing left to do: ``joined``)
    leg: Callable[[str, Candidates, TreeSettings, RankingInputs], Candidates] | None = None


def joined(t: Table, st: TreeSettings) -> Table:
    """A leg's step: its candidates joined the engine's before the gather (``Step.leg``)."""
    return t


STEPS: tuple[Step, ...] = (
    Step("dense_leg", joined,
         "The `dense_k` entries closest in meaning to the question, from every entry's vector, join the "
         "engine's candidates before the gather (`dense_fusion`: those the words missed at `dense_weight` × the "
         "top score × the cosine; or that added to every candidate's score; or rank fusion).",
         "Off (`dense_k` 0): insert at 0.5, LoCoMo test +0.6 / +0.1 / +0.3, BEAM 100K test (4 chats) unmoved; "
         "no half reaches issue 43's targets.",
         "benchmarks/results/evidence/dense_leg.md", ({"dense_k": 0},), leg=dense.with_dense),
    Step("role_weights", own.weigh_roles,
         "An AI assistant's entry keeps `assistant_weight` of its score (and of every later lift), unless "
         "the question asks what the assistant said.",
         "Without it (`assistant_weight=1`), BEAM 100K test R@10 / R@200w / R@500w −11.9 / −16.3 / −11.1 "
         "(49 questions lost at R@10, 5 gained); LoCoMo has no roles.",
         HELDOUT, ({"assistant_weight": 1.0},)),
    Step("gap_filter", own.mark_gap,
         "Marks the candidates whose own match is below `gap_ratio` of the best to leave at `gap_cut`.",
         "Moves nothing measurable (BEAM 100K test ±0.1, LoCoMo test ±0.0); kept because it bounds what "
         "a search reads.",
         HELDOUT, ({"gap_ratio": 0.0},)),
    Step("standing_lift", own.lift_standing,
         "An entry stating the user's standing instruction or preference passes the gap filter and gains "
         "`standing_weight` × its coverage of the question.",
         "BEAM 100K preference following −10 points at R@200w without it; pooled −0.1 / −0.1 / +0.4.",
         HELDOUT, ({"standing_weight": 0.0},)),
    Step("neighbourhood", lifts.lift_neighbourhood,
         "A candidate gains `near_weight` × the top score × the coverage of the question by the entries "
         "within `near_hops` links of it.",
         "Without it, LoCoMo test −1.5 / +0.1 / −1.9; BEAM 100K test mixed (+0.1 / −0.6 / +1.1).",
         HELDOUT, ({"near_weight": 0.0},)),
    Step("dates_and_when", lifts.lift_dates,
         "Closeness to a date the question names (`date_weight`) and, for a question asking when, a text "
         "that says when (`when_weight`): one lift.",
         "Without dates, LoCoMo test temporal −1.8 / −2.7 / −1.8; without 'when', −1.5 / −0.4 / −0.6; "
         "BEAM unmoved.",
         HELDOUT, ({"date_weight": 0.0}, {"when_weight": 0.0})),
    Step("ask_penalty", lifts.weigh_asking,
         "An entry that mostly asks keeps `1 - ask_penalty` of its score, unless it is the user's question "
         "to an AI assistant.",
         "Without it, LoCoMo test −0.5 / −0.4 / −0.4; BEAM unmoved.",
         HELDOUT, ({"ask_penalty": 0.0},)),
    Step("gap_cut", lifts.cut_gap,
         "The candidates the gap filter marked leave; the lifts above weighed every candidate, the ones "
         "below only reorder what passed.",
         "Part of the gap filter (its arm is `gap_ratio=0`).",
         HELDOUT),
    Step("proximity", lifts.lift_proximity,
         "A candidate gains `proximity_weight` × the top score × the share of the question's neighbouring "
         "word pairs that stand close together in its text.",
         "Off by default: BEAM 500K R@10 +0.8, R@500w +1.3 at 0.6, but LoCoMo R@200w −0.4 and a read "
         "of the hits.",
         HISTORY, ({"proximity_weight": 0.0},)),
    Step("links", lifts.lend_links,
         "The best `limit` hits lend `link_weight` of their score to the entries they link to or from.",
         "Without it, LoCoMo test −0.5 / +0.7 / −0.9, BEAM 100K test −1.7 / −0.2 / +0.3: R@10 on both.",
         HELDOUT, ({"link_weight": 0.0},)),
    Step("folder_coverage", lifts.lift_folders,
         "A candidate gains `folder_weight` × the top score × its folder's coverage of the question (its "
         "best `FOLDER_BEST` candidates').",
         "Without it, BEAM 100K test −0.5 / −3.2 / −0.1, LoCoMo test −0.7 / −0.1 / −1.4.",
         HELDOUT, ({"folder_weight": 0.0},)),
    Step("signals", by_signals.weigh_signals,
         "The profile's importance, recency and maturity scale each candidate's own relevance "
         "(not its folder's lift).",
         "Without them (`profile=benchmark`), LoCoMo test −0.3 / +0.9 / −0.2, BEAM 100K +0.0 / +0.1 / +0.4; "
         "kept: importance also drives archiving and dream.",
         HELDOUT, ({"profile": "benchmark"},)),
    Step("one_scale", by_signals.one_scale,
         "The final order: own relevance (relative to the best match) plus the lift, divided back to 0..1.",
         "One linear scale for every profile: on s/(1+s) a cosine outweighed the words (LoCoMo conv-30 "
         "with meaning, R@5 76.5 → 50.6).",
         HISTORY),
    Step("meaning", by_meaning.by_meaning,
         "The best `MEANING_POOL` re-sorted by score + `semantic_weight` × the top score × the cosine of "
         "the question's and the entry's meaning.",
         "At 0.5, LoCoMo 77.8 / 70.1 / 80.1 → 78.3 / 71.4 / 80.7, BEAM 100K 62.5 / 50.4 / 63.9 → "
         "63.5 / 51.4 / 66.0; ablated in runs of its own (`--base semantic_weight=0.5`).",
         HISTORY, ({"semantic_weight": 0.0},), reads=by_meaning.read_cosines),
    Step("one_per_source", coverage.place_sources,
         "A source's later entries (the other parts of a long message) move after every source's first.",
         "Without it, BEAM 100K test −1.5 / −0.6 / −1.6 (none gained); LoCoMo test −0.0.",
         HELDOUT, (WITHOUT,)),
    Step("coverage", coverage.cover,
         "The best `COVER_POOL` re-picked one place at a time for what each adds to the question's "
         "coverage (`cover_weight`).",
         "Off by default: no variant helped a held-out half (BEAM 100K test at 0.5 −0.5 / −1.7 / +0.0, "
         "LoCoMo ±0.0).",
         HELDOUT, ({"cover_weight": 0.0},)),
    Step("validity", rules.place_closed,
         "An entry a newer one superseded goes right below the entry that replaced it, unless the "
         "question asks about the past.",
         "Not ablated: verbatim curation makes no superseded entry, so the halves cannot measure it; an "
         "order without one is ranked as before.",
         "docs/validity.md"),
    Step("rules", rules.place_rules,
         "The user's standing rules follow the best `RULES_AFTER` hits, while they are at most "
         "`standing_rules`.",
         "Without them (`standing_rules=0`), BEAM 100K test −2.5 / −2.0 / −4.8 (instruction following "
         "−49 at R@10); LoCoMo unmoved.",
         HELDOUT, ({"standing_rules": 0},)),
)


def step_named(name: str, steps: tuple[Step, ...] = STEPS) -> Step:
    return next(s for s in steps if s.name == name)


def without(name: str, steps: tuple[Step, ...] = STEPS) -> tuple[Step, ...]:
    """``steps`` without the step called ``name`` (KeyError for a name not among them)."""
    if not any(s.name == name for s in steps):
        raise KeyError(f"no ranking step {name!r}; the steps: {', '.join(s.name for s in steps)}")
    return tuple(s for s in steps if s.name != name)


def rank(query: str, raw: Candidates, idf: dict[str, float], limit: int, prof: Profile,
         inputs: RankingInputs, steps: tuple[Step, ...] = STEPS) -> Table:
    """``steps`` in order over the table of the engine's candidates ``raw``; the table they leave
    (``order``: path and final score, best first; ``lifted``: path -> score after the lifts and
    matched terms, for every path of the order)."""
    st = inputs.settings
    for step in steps:
        if step.leg is not None:
            raw = step.leg(query, raw, st, inputs)
    t = gather(query, raw, idf, limit, prof, inputs)
    for step in steps:
        if step.reads is not None:
            t = step.reads(t, st, inputs)
        t = step.run(t, st)
    if t.order is None:
        raise ValueError("a ranking pipeline without one_scale has no order")
    # a rule or a current entry placed without a match of its own has no score of its own
    lifted = dict(t.lifted)
    for p, _ in t.order:
        lifted.setdefault(p, (0.0, frozenset()))
    return replace(t, lifted=lifted)

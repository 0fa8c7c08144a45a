"""The sentence that answers: an extractive pick over the chosen entries' sentences (no LLM).

Tiers without a model used to lead with the top entry's first sentence, which
misses the answer as often as not: "What is the minimum payout per job?" was
answered with the sentence about per-km pay, and the 3.50 EUR was the next one.
Here every sentence of the chosen entries (answer_sentences.py: a document's rows,
list items and commands too) is scored by the question's analyzed terms it contains,
each weighted by its idf (a rare word that the question and a sentence share says
more than a common one), and by whether it holds the kind of value the question asks
for (answer_type.py: "How long was tally-api down?" is answered by "down for 47
minutes", not by "Connection and timeout settings for tally-api", which shares more
words). The entry's rank is a prior: the best entry's sentence leads unless another
answers where it does not or scores ``PRIOR_MARGIN`` more (the search ranked that
entry first for a reason; a sentence of the third that shares one more word is no
reason to quote it instead). A sentence that asks never leads unless nothing else
matches: "How much do we pay per job?" shares every word with the question and holds
none of the answer; the statement after it does. Nor does a sentence that only
repeats the question's words. When the best sentence does not answer (no value of
the kind asked, too little of the question), the answer says so before quoting it as
the closest: "No entry states the default timeout of an HTTPS request; the closest:
...". A table row is quoted with its header: "fetch-retries — Default: 2".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from memgrove.tree.text.dates import day_of
from memgrove.tree.hygiene.scan_corpus import CHAT_WORDS

from . import answer_time, answer_type
from .answer_sentences import CODE, NOT_STATED, ROW, TEXT, mentions, not_stated, quotable, word_count

# A later entry's sentence must match this much more of the question (in idf-weighted share)
# per rank to lead over an earlier entry's: the rank breaks ties and near-ties only.
RANK_STEP = 0.02
# The entry's rank as a prior: a sentence of any entry but the best leads only when it answers
# where the best entry's best sentence does not (``answers_enough``), or scores this much more
# (1.0 is every content word of the question in the sentence, 1.0 more in it and its context, 1.5
# more holding the kind asked). Dev halves, gold in the first sentence at prior 0 / 0.1 / 0.2 / 0.25
# / 0.35 / 0.5: LoCoMo 21.2 / 21.4 / 21.8 / 22.0 / 21.6 / 21.8%, docs 51.5 / 51.5 / 52.5 / 52.5 /
# 51.5 / 49.5%; node's API pages 66.7% up to 0.25, 61.1% from 0.5.
PRIOR_MARGIN = 0.25
# The least idf-weighted share of the question's content words a sentence must hold to be quoted
# as the answer to a question that names no kind of value; below it the answer says no entry
# states it. Chosen on dev halves: on LoCoMo 0.3 flags 37 of 788 picks, of which 1 held the gold
# (0.2: 12 flagged, 1 held it; 0.4: 86, 2); on the documentation set it flags the unanswerable
# question it should and no answer.
MIN_SHARE = 0.3
# A sentence this short seldom holds its answer alone ("I booked my trip to Lisbon!", "Access
# token: a JWT signed with RS256."): the next sentence of its paragraph is shown with it.
SHORT_WORDS = 12
# A sentence that holds a value of the kind the question asks for ("47 minutes" for "how long")
# scores this much more: more than matching every word of the question once, less than twice
# (in the sentence and in its entry's title): 1.0 answered 80% of benchmarks/answer_types.py,
# 1.5 86%, LoCoMo the same within 0.2 points.
TYPE_WEIGHT = 1.5
# A sentence of the message before a chosen one (what a reply answers) or after it (its reply)
# ranks this much lower.
BEFORE_STEP = 0.1
# The statement that follows a matching question (its answer) scores this share of the question's match.
ANSWERED = 0.8


@dataclass(frozen=True)
class Candidate:
    text: str        # what is shown: a sentence, or a table's header and one of its rows
    scored: str      # what is matched against the question
    rank: int        # the entry's rank among the chosen ones (0 = best)
    order: int       # the sentence's position in its entry
    asks: bool       # a question, which never leads unless nothing else matched
    para: int = 0    # the paragraph (or table) it belongs to, within its entry
    row: bool = False
    side: int = 0    # -1: of the message before a chosen one (what it replies to), 1: after it (its reply)
    about: str = ""  # what it is about beyond its words: a table row's header, its list's introduction
    code: bool = False  # a line of a code block (a command, a setting)
    heading: str = ""   # the heading it is under in its entry: part of what it is about, as the title


def sentences(text: str) -> list[tuple[str, str, int]]:
    """The sentences of an entry's body as (shown, scored, paragraph) triples, in order
    (``answer_sentences.quotable`` without the table rows' headers)."""
    return [(q.shown, q.scored, q.block) for q in quotable(text) if q.kind != CODE]


def _of(body: str, rank: int, side: int) -> list[Candidate]:
    out = []
    for order, (shown_text, scored, para, about, kind, heading) in enumerate(quotable(body)):
        plain = scored.rstrip(" \"')]*_`")
        # a question, or a sentence that introduces what follows ("The following binaries are provided:"):
        # what follows it answers
        asks = kind == TEXT and plain.endswith(("?", "？", ":"))
        if about:
            # a row is read with its header, an item with what introduced its list, a command with
            # the sentence before it (``judged`` matches its words too): "Provides the
            # platform-specific path delimiter: `;` for Windows" is the statement; a row already
            # shows its header
            shown_text = shown_text if kind == ROW or kind == CODE and not about.endswith(":") \
                else f"{about} {shown_text}"
        out.append(Candidate(shown_text, scored, rank, order, asks=asks, para=abs(para), row=para < 0, side=side,
                             about=about, code=kind == CODE, heading=heading))
    return out


def candidates(bodies: Sequence[str], before: Sequence[str] = (), after: Sequence[str] = ()) -> list[Candidate]:
    """Every sentence of ``bodies`` (the chosen entries' texts, best first), then of ``before``
    (per body, the message it replies to, or "") and of ``after`` (per body, the reply to it, or "")."""
    out = [c for rank, body in enumerate(bodies) for c in _of(body, rank, 0)]
    out += [c for rank, body in enumerate(before) if body for c in _of(body, rank, -1)]
    return out + [c for rank, body in enumerate(after) if body for c in _of(body, rank, 1)]


Positions = dict[tuple[int, bool, int], Candidate]


def positions(pool: Sequence[Candidate]) -> Positions:
    """Each candidate by where it is: (rank, side, order)."""
    return {(c.rank, c.side, c.order): c for c in pool}


def _next(c: Candidate, at: Positions) -> Candidate | None:
    return at.get((c.rank, c.side, c.order + 1))


def shown(best: Candidate, pool: Sequence[Candidate], at: Positions | None = None) -> str:
    """``best``'s text, with the next sentence of its paragraph when it is short."""
    if best.row or word_count(best.text) >= SHORT_WORDS:
        return best.text
    nxt = _next(best, positions(pool) if at is None else at)
    return f"{best.text} {nxt.text}" if nxt and nxt.para == best.para and not nxt.row else best.text


def speaker_of(said: str) -> str:
    """Who said a message, from its label ("Ana, 2 March 2026" -> "Ana")."""
    return said.split(",", 1)[0].strip() if said else ""


@dataclass(frozen=True)
class Picked:
    """The pick and how well it answers: ``own``, the idf-weighted share of the question's content
    words the sentence holds itself; ``typed``, whether it holds a value of the kind asked (None
    when the question names no kind); ``answers``, whether that is enough to quote it as the
    answer (``answers_enough``)."""
    candidate: Candidate
    own: float
    typed: bool | None
    answers: bool
    lead: Candidate | None = None   # its paragraph's first sentence, shown before it (``judged``)
    text: str = ""                  # what is quoted: the sentence (``shown``), after its lead


def answers_enough(own: float, typed: bool | None, *, min_share: float = MIN_SHARE) -> bool:
    """Does a sentence answer? When the question names a kind of value, it holds one (``typed``) and
    a word of what is asked about (``own``: in it, or but for a message, which names everything it
    tells, in its entry's title, path, heading): "Default: 15" of maxsockets does not answer "What
    is the default cache folder?"; else ``min_share`` of the question's content words (idf-weighted)."""
    if typed is not None:
        return typed and own > 0
    return own >= min_share


def pick(question_terms: Sequence[str], idf: dict[str, float], bodies: Sequence[str],
         terms: Callable[[str], list[str]], contexts: Sequence[str] = (), *, question: str = "",
         said: Sequence[str] = (), before: Sequence[str] = (), after: Sequence[str] = (),
         margin: float | None = None) -> Candidate | None:
    """The sentence of ``bodies`` that best answers a question with the analyzed terms ``question_terms``
    (``judged``'s pick)."""
    found = judged(question_terms, idf, bodies, terms, contexts, question=question, said=said, before=before,
                   after=after, margin=margin)
    return found.candidate if found else None


def judged(question_terms: Sequence[str], idf: dict[str, float], bodies: Sequence[str],
           terms: Callable[[str], list[str]], contexts: Sequence[str] = (), *, question: str = "",
           said: Sequence[str] = (), before: Sequence[str] = (), after: Sequence[str] = (),
           margin: float | None = None, min_share: float | None = None) -> Picked | None:
    """The sentence of ``bodies`` that best answers a question with the analyzed terms ``question_terms``,
    and whether it answers (``Picked``).

    ``terms`` analyzes a sentence as the index does (``engine.terms``); ``idf`` weighs the
    question's terms (``engine.idf``); ``contexts`` (one per body: its title and path) name what
    an entry's sentences are about without repeating it ("Current settings" of
    ``postgres_tuning`` for the row "pool_size | 8"); ``question``: its words, for the kind of
    value it asks for (``answer_type.asked``); ``said``: per body, who said it and when (a
    conversation message's label); ``before``: per body, the message it replies to, or "";
    ``after``: per body, the reply to it, or "".

    Score: the idf-weighted share of the question's terms the sentence contains (the words that
    ask for the kind, "long" of "how long", left out but for a sentence that asks), plus the share
    it and its context contain between them (a table row's context is its header too); plus
    ``TYPE_WEIGHT`` when it (with the next sentence, when it is shown with it) holds a value of the
    kind asked that the question does not name ("47 minutes" for "how long"), and then its
    paragraph counts as its context too ("It listens on 9102." after "The metrics endpoint ...");
    less ``RANK_STEP`` per rank of its entry (``BEFORE_STEP`` more for the message before or after
    one). The entry's rank is a prior: the best entry's best sentence leads unless another answers
    where it does not (``answers_enough``) or scores ``margin`` (``PRIOR_MARGIN``) more; within an
    entry, a sentence that does not answer leads over one that does only by as much.
    ``min_share`` (``MIN_SHARE``): what a sentence must hold of a question naming no kind to
    answer it. The statement after a matching
    question, in its entry or in the message after it, scores at least ``ANSWERED`` of the
    question's share. A sentence that only repeats the question's words never leads while
    another matching one adds something; when none that matches holds the kind asked, the best
    that holds one leads. A question never leads while the entries state anything: when only a
    question matches, the statement after it in its entry leads (its answer, in a conversation
    or a FAQ), else the best entry's first statement.
    """
    prior = PRIOR_MARGIN if margin is None else margin
    pool = candidates(bodies, before, after)
    if not pool:
        return None
    at = positions(pool)
    kind = answer_type.asked(question) if question else None
    if kind in answer_type.IN_CODE and not any("`" in c.text for c in pool):
        kind = None    # "What class is Sam taking?" asked of a chat: no setting, no command
    kind_words = {x for w in answer_type.asking_words(kind) for x in terms(w)}
    # a question in the entries is matched by all of them ("Which version?" asks what we ask)
    every = {t: max(idf.get(t, 0.0), 0.0) or 1e-6 for t in question_terms}
    content = {t: w for t, w in every.items() if t not in kind_words} or every
    asked = set(question_terms)
    proper = answer_type.names_in([question, *bodies, *before, *after]) if kind in (answer_type.NAME, answer_type.PERSON) \
        else frozenset()

    # what an entry's sentence is about beyond its own words: the entry's title and path, a table
    # row's header, and the rest of its paragraph ("It listens on 9102." after "The metrics endpoint ...")
    around = [set(terms(c)) for c in contexts]
    headings: dict[str, set[str]] = {}

    def entry_context(c: Candidate) -> set[str]:
        """What a sentence's entry says it is about: its title and path, and the heading it is under."""
        got = around[c.rank] if c.rank < len(around) else set()
        if c.heading:
            if c.heading not in headings:
                headings[c.heading] = words_of(c.heading)
            got = got | headings[c.heading]
        return got
    analyzed: dict[str, set[str]] = {}
    sieve = mentions(frozenset(question_terms))

    def words_of(text: str, every_word: bool = False) -> set[str]:
        """``text``'s terms; a text that cannot hold a question's term is not analyzed (its words
        are only ever looked up for the question's) unless ``every_word`` is asked."""
        if text not in analyzed:
            if not every_word and sieve is not None and text.isascii() and not sieve.search(text.lower()):
                return set()
            analyzed[text] = set(terms(text))
        return analyzed[text]

    abouts = {c.about: words_of(c.about) for c in pool if c.about}
    words = {id(c): words_of(c.scored) | abouts.get(c.about, set()) for c in pool}
    paragraph: dict[tuple[int, bool, int], set[str]] = defaultdict(set)
    for c in pool:
        if not c.row:
            paragraph[(c.rank, c.side, c.para)].update(words[id(c)])

    @lru_cache(maxsize=None)
    def typed(c: Candidate) -> bool:
        speaker = "" if c.side or c.rank >= len(said) else speaker_of(said[c.rank])
        # a message's short sentence is read with the next ("I booked it! It's on 3 May."); a
        # document's sentence holds its value itself, and the one that does is read with what
        # precedes it ("**Default:** `30`." after "`historySize` ...": ``held``, ``lead``)
        text = shown(c, pool, at) if message(c) else c.text
        return answer_type.holds(kind, text, question, speaker=speaker, proper=proper)

    def near(c: Candidate, whole: bool = True) -> set[str]:
        """A sentence's words with its paragraph's (``whole``; else only the sentences before it)
        and what it is about (a row's header, its list's introduction): what a sentence that holds
        the value asked is read with ("It listens on 9102." after "The metrics endpoint ...",
        "**Default:** `30`." in the item of `historySize`)."""
        got = words[id(c)] | abouts.get(c.about, set())
        if whole:
            return got | paragraph.get((c.rank, c.side, c.para), set())
        for p in pool:
            if (p.rank, p.side, p.para) == (c.rank, c.side, c.para) and p.order < c.order and not p.row:
                got = got | words[id(p)]
        return got

    def message(c: Candidate) -> bool:
        return bool(c.side) or c.rank < len(said) and bool(said[c.rank])

    def held(c: Candidate, weights: dict[str, float]) -> float:
        """The share of ``weights`` a sentence holds itself."""
        total = sum(weights.values())
        return sum(w for t, w in weights.items() if t in words[id(c)]) / total if total else 0.0

    def share(c: Candidate) -> float:
        """What a sentence holds of the question itself, plus what it and its context hold: its
        entry's title and path, what it is about, and for one that holds the value asked, its
        paragraph. A document's sentence that holds the value asked matches by its context alone
        ("**Default:** `30`." in the item of `historySize`, "**Default**: `0`" under
        installer.max-retries); a message's sentences speak for themselves (one message tells of
        several things)."""
        weights = every if c.asks else content
        mine = held(c, weights)
        if not mine and (message(c) or not typed(c)):
            return 0.0
        if not mine:
            # what it says is said of what precedes it in its paragraph, or its list's subject
            total = sum(weights.values())
            mine = sum(w for t, w in weights.items() if t in near(c, whole=False)) / total if total else 0.0
        ctx = words[id(c)] | entry_context(c) | abouts.get(c.about, set())
        if typed(c):
            ctx = ctx | near(c)
        return mine + sum(w for t, w in weights.items() if t in ctx) / sum(weights.values())

    def added(c: Candidate) -> int:
        got = words_of(c.scored, every_word=True) | abouts.get(c.about, set())
        return len({t for t in got if t not in asked and t not in CHAT_WORDS})

    def score(c: Candidate, s: float) -> float:
        return s + TYPE_WEIGHT * typed(c) - RANK_STEP * c.rank - BEFORE_STEP * bool(c.side)

    scored = [(share(c), c) for c in pool]
    # a question's answer is what follows it: the next statement of its entry, or for its last
    # sentence, the first statement of the message after it (the chosen one after the message
    # before it, the reply after a chosen one)
    follows: dict[int, float] = {}
    for s, c in scored:
        if not (c.asks and s):
            continue
        nxt = _next(c, at)
        if nxt is None and c.side < 1:
            nxt = next((n for n in pool if n.rank == c.rank and n.side == c.side + 1 and not n.asks), None)
        while nxt is not None and nxt.asks:
            nxt = _next(nxt, at)
        if nxt is not None:
            follows[id(nxt)] = max(follows.get(id(nxt), 0.0), ANSWERED * s)
    scored = [(max(s, follows.get(id(c), 0.0)), c) for s, c in scored]

    def key(item: tuple[float, Candidate]) -> tuple[float, int, int, int]:
        s, c = item
        return (-score(c, s) if s else 1.0, abs(c.side), c.rank, c.order)

    def judge(c: Candidate) -> Picked:
        # the words it holds itself, or (for the answer after a question) the question's match it inherits
        mine = max(held(c, content), follows.get(id(c), 0.0) / 2)
        is_typed = typed(c) if kind else None
        if (mine or is_typed and not message(c)) and not c.side:
            # what its entry is about counts for what it states: a document's title and path
            # ("`SCHED_RR` is the default" in cluster.schedulingPolicy), a message's speaker once
            # it holds a word of the question itself
            total = sum(content.values())
            mine = max(mine, sum(w for t, w in content.items() if t in near(c, whole=False) | entry_context(c)) / total)
        first = lead(c) if is_typed else None
        mine = max(mine, held(first, content)) if first else mine   # "`historySize` ... Default: 30"
        enough = answers_enough(mine, is_typed, min_share=MIN_SHARE if min_share is None else min_share)
        text = shown(c, pool, at)
        if first:
            text = f"{first.text} … {text}"
        elif is_typed and c.heading and not message(c) and word_count(c.text) < SHORT_WORDS \
                and any(t in headings.get(c.heading, ()) and t not in words[id(c)] for t in content):
            text = f"{c.heading} — {text}"   # "Default: 2" under "fetch-retries": "fetch-retries — Default: 2"
        return Picked(c, mine, is_typed, enough, first, text)

    def lead(c: Candidate) -> Candidate | None:
        """A short sentence that holds the value asked while its paragraph's first sentence names
        what it is about ("`historySize` {number} Maximum number of history lines retained." before
        "**Default:** `30`."): that first sentence, to be shown before it."""
        if c.row or message(c) or word_count(c.text) >= SHORT_WORDS:
            return None
        first = next((p for p in pool if (p.rank, p.side, p.para) == (c.rank, c.side, c.para) and not p.row), c)
        if first is c or first.order >= c.order:
            return None
        weights = content
        mine = {t for t in weights if t in words[id(c)]}
        theirs = {t for t in weights if t in words[id(first)]}
        return first if theirs - mine else None

    def best(group: list[tuple[float, Candidate]]) -> Picked:
        """The best of ``group``: the top entry's best sentence, unless another is clearly better:
        it answers where that one does not, or it scores ``prior`` more. Within an entry too, a
        sentence that does not answer leads over one that does only when it scores ``prior`` more
        ("The scheduling policy, either `SCHED_RR` or ..." over "`SCHED_RR` is the default")."""

        def answering(items: list[tuple[float, Candidate]]) -> tuple[float, Candidate]:
            found = min(items, key=key)
            if judge(found[1]).answers:
                return found
            near_best = [item for item in items if key(item)[0] - key(found)[0] < prior and item is not found]
            return min((item for item in near_best if judge(item[1]).answers), key=key, default=found)

        found = answering(group)
        top = [item for item in group if item[1].rank == 0 and not item[1].side]
        if found[1].rank == 0 and not found[1].side or not top:
            return judge(found[1])
        first = answering(top)
        there, here = judge(found[1]), judge(first[1])
        if there.answers != here.answers:
            return there if there.answers else here
        gain = key(first)[0] - key(found)[0]   # how much more the other scores
        return there if gain >= prior else here

    statements = [item for item in scored if not item[1].asks]
    matching = [item for item in statements if item[0] > 0]
    adding = [item for item in matching if added(item[1])]
    if kind and not any(typed(c) for _, c in adding or matching):
        # nothing that matches the question's words holds what it asks for: the best sentence that does
        holding = [(max(s, 1e-6), c) for s, c in statements if typed(c)]
        if holding:
            return best(holding)
    if adding or matching:
        return best(adding or matching)
    asking = [item for item in scored if item[1].asks and item[0] > 0]
    if asking and statements:
        # only a question matches: what follows it in its entry is its answer, if anything does
        q = min(asking, key=key)[1]
        then = [c for _, c in statements if c.rank == q.rank and c.side == q.side and c.order > q.order]
        if then:
            return judge(then[0])
    if statements:
        # nothing that states matches a word of the question: the best entry's first statement
        return best(statements)
    return judge(min(asking or scored, key=key)[1])


def answer_text(question: str, question_terms: Sequence[str], idf: dict[str, float], bodies: Sequence[str],
                terms: Callable[[str], list[str]], contexts: Sequence[str] = (), said: Sequence[str] = (),
                labels: Sequence[str] = (), before: Sequence[tuple[str, str]] = (),
                after: Sequence[tuple[str, str]] = (), *, margin: float | None = None,
                min_share: float | None = None) -> str:
    """The answer as shown: the picked sentence (``judged``), with the next one when it is short,
    then who said it and when (``said``; for a question asking when, what a relative time in it
    names: "yesterday" said on 8 May 2023 is 7 May 2023), then a closed fact's label
    (``labels``). ``before``: per body, the message it replies to and its label, or ``("", "")``;
    ``after``: per body, the reply to it and its label. When the pick does not answer
    (``Picked.answers``), the answer says so first and quotes it as the closest
    (``not_stated``): "No entry states the default timeout; the closest: ..."."""
    pool_before, pool_after = [b for b, _ in before], [b for b, _ in after]
    verdict = judged(question_terms, idf, bodies, terms, contexts, question=question, said=said,
                     before=pool_before, after=pool_after, margin=margin, min_share=min_share)
    if verdict is None:
        return ""
    found, text = verdict.candidate, verdict.text
    labels_of = [s for _, s in (after if found.side > 0 else before)] if found.side else list(said)
    who = labels_of[found.rank] if found.rank < len(labels_of) else ""
    if who and answer_type.asked(question) == answer_type.TIME:
        day = day_of(who)
        meant = answer_time.resolved(text, day) if day else []
        who = "; ".join([who, *meant])
    text = f"{text} ({who})" if who and who not in text else text
    closed = labels[found.rank] if found.rank < len(labels) and not found.side else ""
    text = f"{text} {closed}" if closed else text
    return text if verdict.answers else f"{not_stated(question)}; the closest: {text}"


__all__ = ["ANSWERED", "BEFORE_STEP", "Candidate", "MIN_SHARE", "NOT_STATED", "PRIOR_MARGIN", "Picked", "RANK_STEP",
           "SHORT_WORDS", "TYPE_WEIGHT", "answer_text", "answers_enough", "candidates", "judged", "not_stated", "pick",
           "positions", "sentences", "shown", "speaker_of", "word_count"]

"""The current value first: of statements giving one subject different values, the newest answers.

"Which port does staging listen on?" over a March message "The staging database listens on
5432" and a May one that says, among four other things, "staging now listens on 6543": both are
statements (sentences or clauses, ``statement_values.statements``) about one subject with one
value replaced by another, so the older one is no answer to a question about now, whether or
not ``memgrove dream`` ever recorded a supersession. The picker (answer_pick.py) then chooses
among the statements that hold; the entry holding the newest goes where the first of its
subject's entries stood. A question about the past ("before", "originally", "in March", "used
to") gets the value that held then instead, quoted with what replaced it: "(until 2 May 2026;
since then: 6543)".

Two statements are about the same subject (``same_subject``; each rule chosen on the dev half
of benchmarks/changed_facts.py) when each holds half the question's words, they share a word of
it and two subject words (a value both give counting as one; or one subject: "Priya is on call" /
"Tom is on call from this week"), most of what either says of the question (or most of the
shorter one's subject), no single word swapped for another rarer one ("the production auth
proxy" / "the preview auth proxy") unless the newer says it changed, and exactly one value
changed ("5432" -> "6543"; "Alice's phone 555-1234" / "Bob's phone 555-9876" changes two; values
side by side are one: "Thursdays at 16:00" -> "Tuesdays at 15:00"; a date beside the value asked
is when it holds). Two statements in the first person by two speakers are each their own fact.
Times come from the entries (``when.time_of``): statements of one time are not ordered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache

from memgrove.tree.entries import validity
from memgrove.tree.hygiene.statement_values import (CHANGE_VERBS, CHANGE_WORDS, Statement, proper_words,
                                                      replaced_values, sentences, statement)
from memgrove.tree.text.analysis import analyze

from .. import answer_type
from .when import ORIGINAL, asked_time, asks_past, asks_state

# the share of the question's words both statements say where either says one ("Lily's piano lesson":
# 0.5 kept the restatements that drop a word; 1.0 lost "the bank raised our pre-approval" for "mortgage")
SUBJECT_SHARE = 0.5
# the share of the question's words (less those asking for the kind of value, or saying it changed) a
# statement holds to be about what it asks: without it, "what is the analytics database called?" paired
# two on-call statements ("called"); dev half 82.6 / 87.0% -> 87.0 / 91.3% (now / before)
ABOUT = 0.5
# the most characters of an entry read for statements (the picker reads PICK_CHARS of it too)
READ_CHARS = 8_000

_WORD = re.compile(r"[^\W_]+(?:[.:/,-][^\W_]+)*")
# "before Noor", "after 2.4.0": the value a question asks against names no subject
_AGAINST = re.compile(r"\b(?:before|after|since|until|than|instead of|replaced by|other than)\s+(?:[A-Z0-9][\w.:-]*\s*)+")
_ASKS = re.compile(r"^\W*(?:is|are|am|was|were|do|does|did|can|could|should|would|will|have|has|how|what|which|who|"
                   r"whom|whose|where|when|why)\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)


@dataclass(frozen=True)
class Dated:
    """A statement of a chosen entry, with the entry's index and time."""

    body: int
    statement: Statement
    at: datetime | None
    speaker: str = ""
    sentence: str = ""    # the sentence the statement is a clause of (what is left out when it no longer answers)
    value: str = ""       # within a group of one subject's statements, the value it gives the subject


@dataclass
class Plan:
    """What the rule does to the chosen entries: ``order`` (indices, the entry with the statement
    that answers first among its subject's), ``bodies`` (each with the statements that do not
    answer left out), ``labels`` (per entry, what replaced the value it is quoted for)."""

    order: list[int]
    bodies: list[str]
    labels: list[str]
    changed: bool = False
    groups: list[list[Dated]] = field(default_factory=list)
    masked: list[str] = field(default_factory=list)   # the statements left out, for the messages around too
    answers: list[Dated] = field(default_factory=list)   # per group, the statement that answers
    # a statement dream recorded as replaced -> its label, added when the answer quotes it
    quoted_labels: dict[str, str] = field(default_factory=dict)

    def lead(self, question: str, shown: str) -> Dated | None:
        """The statement that answers (of the group whose answer holds most of the question's words),
        when the answer ``shown`` holds none of the groups' statements: the picker chose a sentence
        about something else ("Personal news: I'm starting a new job ..." for "when was the sync before
        Felix's new job?"). Only when the picked sentence held no more of the question's words than
        it: dev half 87.0 / 87.0% (now / before); always: 87.0 / 91.3%."""
        if not self.answers or any((d.sentence or d.statement.sentence) in shown for g in self.groups for d in g):
            return None
        asked = set(analyze(question))
        return max(self.answers, key=lambda d: len(asked & set(analyze(d.sentence or d.statement.sentence))))

    def without(self, text: str) -> str:
        """``text`` (a message around a chosen one) with the statements that do not answer left out."""
        for sentence in self.masked:
            if sentence in text:
                text = text.replace(sentence, " ")
        return text




# -- statements and their subjects -----------------------------------------------------

_LOWER = re.compile(r"(?<![\w'])[a-z][^\W_]*")


@lru_cache(maxsize=256)
def _mentions(question_terms: frozenset[str]) -> re.Pattern[str]:
    """A word starting like one of the question's terms: a cheap sieve before a sentence is analyzed
    (a stem is a word's start but for its last letters: "stage" of "staging", "happi" of "happy")."""
    starts = sorted({t[:max(3, len(t) - 2)] if len(t) > 3 else t for t in question_terms}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, starts)) + ")", re.I)


# a sentence states several things at once: "The dentist appointment is on March 14 at 9:00, and Lily's
# piano lesson is on Wednesdays"; each clause is a statement (its own subject and values). Coarser than
# dream's ``statement_values.clauses`` (which also splits at "because", a colon, "and" before a name):
# a question's subject must keep two words its restatement shares ("rent will be $1,975 a month from
# March" lost "lease renewal", "the sync moves to Tuesdays" lost "link"); with dream's clauses the
# changed-facts dev half fell from 91.3 / 95.7% (now / before) to 87.0 / 87.0%
_CLAUSE = re.compile(r",\s+(?=(?:and|but|so|while|whereas|although|though|plus)\b)|;\s+|\s+[–—]\s+")


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, split where a comma and a conjunction or a semicolon start another."""
    return [c.strip(" ,;") for c in _CLAUSE.split(sentence) if c.strip(" ,;")]


def mentions(question: str, text: str) -> bool:
    """``text`` may hold a statement about what the question asks (the sieves of ``dated_statements``)."""
    terms = frozenset(analyze(question))
    return bool(terms) and bool(_mentions(terms).search(text)) and \
        _may_be_about(text, wanted(terms, answer_type.asked(question)))


def dated_statements(bodies: Sequence[str], times: Sequence[datetime | None], said: Sequence[str],
                     question_terms: frozenset[str], want: frozenset[str] = frozenset()) -> list[Dated]:
    """The statements (clauses) of ``bodies`` that give a value, hold a word of the question and
    ``ABOUT`` of the words ``want``ed (``wanted``), with their times. Only the sentences with words
    like the question's are analyzed: a statement costs about 0.15 ms, and eight thousand characters
    of five entries hold hundreds of sentences."""
    sieve = _mentions(question_terms)
    texts = [b[:READ_CHARS] if i < len(times) and times[i] else "" for i, b in enumerate(bodies)]
    kept = [[x for x in sentences(t) if sieve.search(x)] if sieve.search(t) else [] for t in texts]
    # a name is told from a capitalized first word by the rest of what was said ("Big news: ..."):
    # a word capitalized in these sentences and written in lowercase anywhere is none
    lower = set(_LOWER.findall(" ".join(texts)))
    proper = frozenset(w for w in proper_words(x for xs in kept for x in xs) if w.lower() not in lower or w[1:].isupper())
    speakers = [s.split(",", 1)[0].strip() for s in said] + [""] * (len(bodies) - len(said))
    # the speakers' names: a speaker addressed ("Marco, the port ...") is no value, one the statement is
    # of is ("Marco is primary on-call starting today", said by Dana) (``statement_values.statement``)
    people = frozenset(t for sp in speakers if sp for t in analyze(sp))
    out = []
    for i, xs in enumerate(kept):
        for x in xs:
            if x.rstrip().endswith("?") and _ASKS.match(x):
                continue     # a question states nothing ("is staging still on 5432?"); "I've added 52 sources, how ...?" does
            for c in clauses(x):
                if not _may_be_about(c, want):
                    continue
                st = statement(c, proper, people)
                if st.values and st.subject & question_terms and _about(st, want):
                    out.append(Dated(i, st, times[i], speakers[i], x))
    return out


def _same_units(values: tuple[tuple[str, str], ...], other: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """``values`` with a number's unit dropped where the other statement's number counts the same
    ("48,200 miles" / "51,900 miles") or names nothing ("124 points" / "my highest score is 132
    now"): ``replaced_values`` compares numbers of one kind; "606 minutes" and "819 boxes" stay two."""
    kinds = {k for _, k in other}
    return [(v, "number" if k.startswith("number:") and (k in kinds or "number" in kinds) else k) for v, k in values]


def _replaced(old: Statement, new: Statement) -> list[tuple[str, str, str]]:
    got = replaced_values(_same_units(old.values, new.values), _same_units(new.values, old.values))
    if got or not new.was:
        return got
    was = {v for v, _ in new.was}
    return [(k, v, f) for v, k in old.values if v in was for f, fk in new.values[:1] if fk == k][:1]


_JOINS = re.compile(r"^[\s,]*(?:at|on|from|by|until|@)?[\s,]*$", re.I)


def _one_value(sentence: str, values: list[str]) -> bool:
    """The values stand side by side in the sentence, joined by at most "at", "on" or a comma."""
    low = sentence.casefold()
    spans = sorted((low.find(v), low.find(v) + len(v)) for v in values)
    return all(a >= 0 for a, _ in spans) and all(_JOINS.match(low[e:b]) for (_, e), (b, _) in zip(spans, spans[1:]))


@lru_cache(maxsize=256)
def wanted(question_terms: frozenset[str], asked: str | None) -> frozenset[str]:
    """The question's words a statement about what it asks holds: less those asking for the kind of
    value ("called" of "what is the database called?" is no "on-call") and those saying it changed
    ("new", "latest")."""
    kind_words = {t for w in answer_type.asking_words(asked) for t in analyze(w)}
    return frozenset(t for t in question_terms if t not in kind_words and t not in CHANGE_WORDS)


def _about(s: Statement, want: frozenset[str]) -> bool:
    """The statement holds at least ``ABOUT`` of the words wanted (its subject's or its values')."""
    if not want:
        return True
    got = s.subject | {t for v in s.value_set() for t in analyze(v)}
    return len(got & want) >= ABOUT * len(want)


def _may_be_about(text: str, want: frozenset[str]) -> bool:
    """A cheap sieve before ``_about``: enough of the wanted words' starts stand in ``text``."""
    low = text.lower()
    return sum(t[:max(3, len(t) - 2)] in low for t in want) >= ABOUT * len(want)


def _says_changed(s: Statement) -> bool:
    """The statement says its value changed ("now", "moved", "switched", "from ... to")."""
    return bool(set(re.findall(r"[a-z]+", s.sentence.lower())) & CHANGE_VERBS) or bool(s.was)


# the statement kinds of value that answer a kind of question (answer_type.asked)
# the kinds of statement value that answer each kind of question (answer_type.asked)
_KINDS = {answer_type.NUMBER: ("number", "mixed"), answer_type.DURATION: ("number", "mixed"),
          answer_type.FREQUENCY: ("number", "mixed", "date"), answer_type.VERSION: ("number", "mixed"),
          answer_type.TIME: ("date", "number", "mixed"), answer_type.PERSON: ("name", "mixed"),
          answer_type.NAME: ("name", "mixed"), answer_type.PLACE: ("name", "mixed"),
          answer_type.TITLE: ("name", "mixed")}


def same_subject(a: Dated, b: Dated, question_terms: frozenset[str], weight: Callable[[str], float],
                 asked: str | None = None, named: frozenset[str] = frozenset()) -> tuple[str, str, str] | None:
    """``(kind, a's value, b's value)`` when ``a`` and ``b`` give one subject two values, else None.
    ``asked``: the kind of value the question asks for (answer_type.asked): for a question asking no
    time, a date changed beside the value is when it holds ("How much is our rent?" over "$1,850
    until August" / "$1,975 from March"); ``named``: values the question names ("Alice's phone"): a statement giving one the other
    does not is about something else."""
    sa, sb = a.statement, b.statement
    shared = sa.subject & sb.subject
    both = sa.value_set() & sb.value_set()
    if question_terms and not shared & question_terms:
        return None
    # two subject words at least ("staging database"), or one that is all either says ("Priya is on
    # call" / "Tom is on call from this week")
    if len(shared) + len(both) < 2 and sa.subject != sb.subject:
        return None
    # most of what either says of the question is said by both (a value the question names counts as a
    # subject word: "Lily" of "Lily's piano lesson"), or most of the shorter one's subject
    of_question = len(shared & question_terms) + len(named & both) >= \
        SUBJECT_SHARE * (len((sa.subject | sb.subject) & question_terms) + len(named & (sa.value_set() | sb.value_set())))
    if not (of_question or len(shared) >= SUBJECT_SHARE * min(len(sa.subject), len(sb.subject))):
        return None
    # one word swapped for another in one template: "the production auth proxy listens on 5581" / "the
    # preview auth proxy listens on 4767" are two proxies (a restatement says more words of its own),
    # unless the newer says it changed ("Lily's piano lesson is on Wednesdays" / "her piano teacher
    # switched her to Mondays"). Dream's rule (each has a word of its own rarer than the rarest shared)
    # refused restatements: on the dev half, when measured, 47.8 / 52.2% (now / before) with it, 60.9 /
    # 65.2% with none; this one as none there, and it keeps the two proxies apart
    own_a, own_b = sa.subject - shared, sb.subject - shared
    if len(own_a) == 1 and len(own_b) == 1 and min(weight(t) for t in own_a | own_b) > min(weight(t) for t in shared) \
            and not _says_changed(sb):
        return None
    if a.speaker != b.speaker and _FIRST_PERSON.search(sa.sentence) and _FIRST_PERSON.search(sb.sentence):
        return None
    if named and (named & sa.value_set()) != (named & sb.value_set()):
        return None
    got = _replaced(sa, sb)
    if len(got) > 1 and _one_value(sa.sentence, [g[1] for g in got]) and _one_value(sb.sentence, [g[2] for g in got]):
        # values side by side are one: "Thursdays at 16:00 UTC" -> "Tuesdays at 15:00 UTC"
        return got[0]
    if len(got) > 1 and asked in _KINDS and asked != answer_type.TIME:
        # a date changed beside the value asked says when it holds ("$1,850 until August" / "$1,975 from
        # March"); a name changed beside it is whose it is ("Alice's phone" / "Bob's phone"): two facts
        got = [g for g in got if g[0] != "date"]
    if len(got) != 1:
        return None
    # the value changed is of the kind asked ("how many sources": a number, not "Given" -> "Organizing")
    if asked in _KINDS and got[0][0].split(":")[0] not in _KINDS[asked]:
        return None
    return got[0]


def groups(said: list[Dated], question_terms: frozenset[str], weight: Callable[[str], float],
           asked: str | None = None, named: frozenset[str] = frozenset()) -> list[list[Dated]]:
    """The statements linked by a changed value, grouped (each group oldest first, each statement
    with its ``value`` of the subject); a statement without another of its subject is in none."""
    parent = list(range(len(said)))
    value: dict[int, str] = {}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(said):
        for j in range(i + 1, len(said)):
            b = said[j]
            if a.body == b.body or a.at == b.at:
                continue
            old, new = (a, b) if a.at < b.at else (b, a)
            got = same_subject(old, new, question_terms, weight, asked, named)
            if got:
                parent[root(i)] = root(j)
                value.setdefault(id(old), got[1])
                value.setdefault(id(new), got[2])
    out: dict[int, list[Dated]] = {}
    for i, d in enumerate(said):
        out.setdefault(root(i), []).append(d)
    return [[replace(d, value=value.get(id(d), "")) for d in sorted(g, key=lambda d: d.at)]
            for g in out.values() if len({d.at for d in g}) > 1]


# -- the plan -------------------------------------------------------------------

def value_as_written(value: str, sentence: str) -> str:
    """A casefolded value as the sentence writes it ("ben" -> "Ben")."""
    i = sentence.casefold().find(value)
    return sentence[i:i + len(value)] if i >= 0 else value


def since_label(old: Statement, new: Dated) -> str:
    """``(until 2 May 2026; since then: 6543)``: when the newer statement was made and its value."""
    got = _replaced(old, new.statement)
    what = value_as_written(got[0][2], new.statement.sentence) if len(got) == 1 else new.statement.sentence
    return validity.label(new.at.date() if new.at else None, what)


QUOTE_WORDS = 40
_LEADING = re.compile(r"^(?:and|but|so|while|whereas|although|though|plus)\s+", re.I)


def quotable(d: Dated) -> str:
    """What a statement that answers is quoted as: its sentence, or its clause when the sentence is long."""
    whole = d.sentence or d.statement.sentence
    if len(whole.split()) <= QUOTE_WORDS:
        return whole
    clause = _LEADING.sub("", d.statement.sentence.strip())
    return clause[:1].upper() + clause[1:]


def _answering(group: list[Dated], past: bool, until: datetime | None) -> Dated | None:
    """The statement of a group that answers: the newest; for the past, the one said last before the
    time asked (None when all came later: the group tells nothing of then), else the last before
    the newest value."""
    if not past:
        return group[-1]
    if until is not None:
        held = [d for d in group if d.at < until]
        return held[-1] if held else None
    # "before" asks for the value before the current one; the statements that repeat the newest value do not count
    older = [d for d in group if d.value != group[-1].value] or group[:-1]
    return older[-1]


def plan(question: str, bodies: Sequence[str], times: Sequence[datetime | None], said: Sequence[str] = (),
         labels: Sequence[str] = (), weight: Callable[[str], float] | None = None, optional: int = 0,
         echoes: Sequence[bool] = ()) -> Plan:
    """How the chosen entries (``bodies``, best first, with ``times``) are answered from: see the module.
    The last ``optional`` bodies are entries found beyond the chosen ones: one is in ``order`` only
    when it holds the statement that answers (the newer value of a chosen entry's subject, or for the
    past the older one). ``echoes``: per body, whether an AI assistant said it: an assistant restates
    the user's values (BEAM's "Given that you have 45 sources in your Zotero library", a stale count,
    after the user's "I've added 52 sources"), it does not change them; its statements are no value
    of a subject. The messages before and after chosen ones, which the picker reads too, are no
    statements here: read as said just before and after them, they made BEAM's dev knowledge-update
    answers worse (47.1% -> 41.2%), the stale restatements around a message leading."""
    n = len(bodies)
    out = Plan(list(range(n - optional)), list(bodies), [labels[i] if i < len(labels) else "" for i in range(n)])
    qterms = frozenset(analyze(question))
    if len(bodies) < 2 or not (asks_state(question) or asks_past(question)) or not qterms \
            or sum(t is not None for t in times) < 2:
        return out
    asked = answer_type.asked(question)
    times = [None if i < len(echoes) and echoes[i] else t for i, t in enumerate(times)]
    found = dated_statements(bodies, times, said, qterms, wanted(qterms, asked))
    if len(found) < 2:
        return out
    # a value the question names is what it is about ("Alice's phone"), but for the value it is asked
    # against ("who maintained the parser before Noor?")
    low = " " + " ".join(_WORD.findall(_AGAINST.sub(" ", question).casefold())) + " "
    named = frozenset(v for d in found for v in d.statement.value_set() if f" {v} " in low)
    gs = groups(found, qterms, weight or (lambda t: 1.0), asked, named)
    if not gs:
        return out
    past = asks_past(question)
    latest = max(t for t in times if t is not None)
    until = asked_time(question, latest) if past else None
    if ORIGINAL.search(question):
        until = None
    masked: dict[int, str] = {}
    gs = [g for g in gs if any(d.body < n - optional for d in g)]   # about a chosen entry's subject
    answering = [(g, g[0] if past and ORIGINAL.search(question) else _answering(g, past, until)) for g in gs]
    gs = [g for g, a in answering if a is not None]
    for g, answer in answering:
        if answer is None:
            continue
        out.answers.append(answer)
        if answer.body not in out.order:
            out.order.append(answer.body)
        for d in g:
            if d.body != answer.body and d.value != answer.value:
                whole = d.sentence or d.statement.sentence
                out.masked.append(whole)
                text = masked.get(d.body, out.bodies[d.body])
                if whole in text:
                    masked[d.body] = text.replace(whole, " ", 1)
        newer = [d for d in g if d.at > answer.at and d.value != answer.value]
        if newer:
            out.labels[answer.body] = since_label(answer.statement, newer[0])
        # the entry with the answer goes above those with other values (one restating the answer's value
        # keeps its place: BEAM's "the first sprint ends on March 29" ranked first, said again later)
        others = [out.order.index(d.body) for d in g if d.body in out.order and d.value != answer.value]
        if not others:
            continue
        first = min(others)
        at = out.order.index(answer.body)
        if at > first:
            out.order.insert(first, out.order.pop(at))
    for i, text in masked.items():
        out.bodies[i] = text
    out.changed = bool(gs)
    out.groups = gs
    return out


__all__ = ["Dated", "Plan", "clauses", "dated_statements", "groups", "mentions", "plan", "quotable", "same_subject",
           "since_label", "value_as_written", "wanted"]

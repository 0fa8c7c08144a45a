"""Superseded facts: a later entry gives the same subject a different value.

Compared statement by statement: a message's clauses (``statement_values.clauses``), so that a long
message restating one thing among five ("... so backups run at 04:30 from tonight and the rebuild
keeps its 03:00 slot") is found beside the short one-liners. "The staging database listens on 5432"
(March) then "the staging database is on 6543 since the network change" (May): the statements'
cores (the subject words next to their values, ``Statement.core``) share two words at least (a value
both give counting as one, "the Onyx launch"; a sum of money or a count of the same thing, "$1,850" /
"$1,975", counting as one; a single shared word when the newer says it changed), their overlap
weighed by rarity reaches ``dream_supersede_overlap``, and one value of one kind (a number counting
the same thing, a version, a date or time, a name, a place) is replaced by another. Not superseded:

- two subjects: each statement has a word of its own rarer than the commonest word they share
  ("the production auth proxy ..." / "the preview auth proxy ..."), or one has a word of its own
  wedged between two subject words the other says side by side ("the support *east* team
  office" / "the support team office");
- two values changed at once ("Alice's phone is 555-1234" / "Bob's phone is 555-9876"): two
  facts sharing a template, not one fact changed (a day beside a changed value in a statement
  saying it changed is when: "goes to 1,200 this Thursday");
- two days without a word of change: two events ("the floor plan by June" / "... on Thursday");
- a first-person statement by another speaker ("my desk is on floor 3" / "my desk is on floor
  5"): each speaker's own fact;
- an episode ("I walked 142 steps today"), a question ("is staging still on 5432?"), and
  statements without a time to order them by.

"We moved staging from 5432 to 6543", "Lakeside instead of Westbrook", "takes over on-call from Ben"
replace the value they name beside the new one. Each older statement is superseded by the earliest
later statement that changes it (a value changed twice is two candidates, old -> middle -> new);
one candidate per (older, newer) entry pair holds every statement of the older the newer replaces.
``paths`` are (newer, older). Approving one:

- closes the older entry (SUPERSEDE from the newer's day: search ranks it below the newer) when
  those statements are all it states -- a one-line message, or every fact of a longer one;
- else records them on the older entry (a SUPERSEDE with the ``statement``, its ``value`` and
  ``new_value``: ``supersededStatements`` on it, tree/writes/validity_ops.py) and leaves it open, its
  ``updatedAt`` and signals unchanged (an UPDATE would make the old message look fresh): closing "the backup runs at
  03:00" would also hide the ports, the deploy window and who is on call said beside it. The record is
  what an answer can read to put the new value first and to quote a replaced statement with its value.

An entry already closed (``supersededBy``) or a statement already recorded is not proposed again.
Known limit: a name is a value wherever it stands, so "the Comet launch" and "the Kestrel launch"
planned for the same day differ only by a name, as an owner changed would; two wordings of one
subject with no word in common ("the new address is ..." / "we went with a bigger house: ...") are
not found.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

from .findings import Candidate
from ..entries.paths import natural_key
from .scan_corpus import Corpus, ScanItem, each_has_its_own
from ..settings import TreeSettings
from ..text.analysis import analyze
from .statement_values import CHANGE_VERBS, CHANGE_WORDS, Statement, proper_words, replaced_values, statements

KEYS = 4        # rarest subject words a statement is filed under
MOST = 80       # a subject word more statements share than this files nothing
MIN_SHARED = 2
SAME_WORDS = 0.6    # overlap at which a name or a day replaced needs no word of change


def _subject_statements(it: ScanItem, proper: frozenset[str], names: frozenset[str]) -> list[Statement]:
    return [s for s in statements(it.text, proper, names, by_clause=True)
            if s.values and s.subject and not s.sentence.rstrip().endswith("?") and not _asks(s.sentence)
            and not _heading(s.sentence)]


def _heading(clause: str) -> bool:
    """A heading or a label ("### Running the Application", "**Run Gunicorn with HTTPS**"): its capitals
    are a style, not names."""
    words = [w for w in re.findall(r"[^\W\d_]+", clause)[1:] if len(w) > 3]
    bare = clause.strip()
    return bare.startswith("#") or (bare.startswith("**") and bare.rstrip(":").endswith("**")) or \
        (len(words) >= 2 and sum(w[0].isupper() for w in words) >= 0.6 * len(words))


def _asks(clause: str) -> bool:
    """A clause of a question ("is staging still on 5432, or did it move?"): split off its "?"."""
    return bool(_QUESTION.match(clause))


_QUESTION = re.compile(r"(?:is|are|was|were|do|does|did|can|could|should|will|would|has|have)\s+\w+.*\?$|"
                       r"(?:what|which|who|when|where|why|how)\b.*\?$", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
# the phrases that say a value changed, beside the single words of ``CHANGE_VERBS``
_CHANGE_PHRASE = re.compile(r"\b(?:take[sn]?|took|taking) over\b|\bgoes to\b|\bwent to\b|\bbump(?:ed)?\b|"
                            r"\brais(?:e|ed|es)\b|\bextended\b|\bslip(?:s|ped)?\b|\bbecomes?\b|\bback to\b|"
                            r"\b(?:from|starting|as of) (?:today|tonight|now|monday|tuesday|wednesday|thursday|friday|"
                            r"saturday|sunday|next|this|january|february|march|april|may|june|july|august|september|"
                            r"october|november|december)\b|\bis at \d|\b(?:is|are) out\b|\breleased\b|"
                            r"\bso far\b|\bsince (?:the|last|this|\w+day|\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)", re.I)
_REFERS = re.compile(r"\b(?:it|them)\b", re.I)
_EPISODE = re.compile(r"(?<!from )(?<!since )(?<!as of )(?<!starting )\b(?:today|tonight|yesterday|"
                      r"this (?:morning|afternoon|evening)|last (?:night|weekend)|"
                      r"(?:this|last) (?:week|month)(?:end)?)\b", re.I)
_CHANGE_SINCE = re.compile(r"\b(?:from|since|as of|starting(?: from)?)\s+(?:today|tonight|yesterday|this|last)\b", re.I)


def episodic(s: Statement) -> bool:
    """The sentence tells what happened at a time ("I ran 5 km this morning"), not what holds:
    a later count is another event, not a new value. "From today the port is 6543" and "the office
    moved this week" are changes."""
    return bool(_EPISODE.search(s.sentence)) and not _CHANGE_SINCE.search(s.sentence) and not _changes(s)


def _changes(s: Statement) -> bool:
    """The statement says its value changed ("now", "moved", "from ... to")."""
    return bool(set(re.findall(r"[a-z]+", s.sentence.lower())) & CHANGE_VERBS) or bool(s.was) or \
        bool(_CHANGE_PHRASE.search(s.sentence))


def _replaced(old: Statement, new: Statement) -> list[tuple[str, str, str]]:
    got = replaced_values(old.values, new.values)
    if got or not new.was:
        return got
    # "moved from 5432 to 6543" beside "listens on 5432": the new statement names the old value it replaces
    was = {v for v, _ in new.was}
    return [(k, v, f) for v, k in old.values if v in was for f, fk in new.values[:1] if fk == k][:1]


def _terms_in_order(sentence: str) -> list[str]:
    """The sentence's words as terms, in order ("" for a stop word: it keeps its place)."""
    return [(analyze(w) or [""])[0] for w in re.findall(r"[^\W_]+", sentence)]


def _wedged(a: Statement, b: Statement, shared: frozenset[str]) -> bool:
    """A word of one statement's own wedged between two shared words the other says side by side:
    "the support *east* team office" against "the support team office" is another office (where "you
    can find the office", a word said before the subject, is not)."""
    def pairs(seq: list[str]) -> set[tuple[str, str]]:
        return {(x, y) for x, y in zip(seq, seq[1:]) if x in shared and y in shared}

    ta, tb = _terms_in_order(a.sentence), _terms_in_order(b.sentence)
    for one, other in ((ta, tb), (tb, ta)):
        side_by_side = pairs(other)
        for x, w, y in zip(one, one[1:], one[2:]):
            if (x, y) in side_by_side and w and w not in shared and w not in CHANGE_WORDS:
                return True
    return False


def find_superseded(corpus: Corpus, settings: TreeSettings, skip: frozenset[str] = frozenset()) -> list[Candidate]:
    """``skip``: entries to leave out (exact duplicates merged into their group's kept entry)."""
    items = [it for it in corpus.items if it.moment and it.path not in skip]
    proper = proper_words(it.text for it in corpus.items)
    said: list[tuple[ScanItem, Statement]] = []
    for it in items:
        said += [(it, s) for s in _subject_statements(it, proper, corpus.names)]
    sdf: Counter = Counter(t for _, s in said for t in s.subject)
    weight = {t: math.log(1 + len(said) / d) for t, d in sdf.items()}
    # filed under their rarest subject words, and under the values they give or say were replaced: "the
    # Onyx launch" is found by "Onyx", "moved from 5432 to 6543" by "5432"
    keys = [s.subject | {"=" + v for v, _ in s.values + s.was} for _, s in said]
    kdf: Counter = Counter(k for ks in keys for k in ks)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, ks in enumerate(keys):
        for _, k in sorted((kdf[k], k) for k in ks if 2 <= kdf[k] <= MOST)[:KEYS]:
            postings[k].append(i)
    pairs = {(x, y) for ids in postings.values() for n, x in enumerate(ids) for y in ids[n + 1:]}
    best: dict[tuple[str, str], tuple] = {}   # (older path, older statement) -> (sort key, the pair)
    top = max(weight.values(), default=1.0)
    for x, y in sorted(pairs):
        (a, sa), (b, sb) = said[x], said[y]
        if a.path == b.path or a.moment == b.moment or (a.messages & b.messages):
            continue
        if a.moment > b.moment:
            (a, sa), (b, sb) = (b, sb), (a, sa)
        if a.closed or a.path in b.supersedes or sa.sentence in a.superseded_statements:
            continue
        got = judge(a, sa, b, sb, weight, top, settings)
        if isinstance(got, str):
            continue
        shared, overlap, kind, old_value, new_value = got
        key = (b.moment, -overlap, natural_key(b.path))
        if (a.path, sa.sentence) in best and best[a.path, sa.sentence][0] <= key:
            continue
        best[a.path, sa.sentence] = (key, (a, b, sa, sb, shared, overlap, kind, old_value, new_value))
    # one candidate per (older, newer) entry pair, with every statement of the older the newer replaces
    grouped: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for _, found in sorted(best.values(), key=lambda kv: kv[0]):
        grouped[found[0].path, found[1].path].append(found)
    return [_candidate(changes, _subject_statements(changes[0][0], proper, corpus.names))
            for _, changes in sorted(grouped.items())]


def judge(a: ScanItem, sa: Statement, b: ScanItem, sb: Statement, weight: dict[str, float], top: float,
          settings: TreeSettings) -> tuple | str:
    """Whether ``sb`` (of the newer ``b``) replaces the value ``sa`` (of the older ``a``) gives: ``(shared
    subject terms, overlap, kind, old value, new value)``, or why not (a word: what a diagnosis prints)."""
    # a value both give ("the Onyx launch") names what they are about
    named = frozenset(sa.value_set() & sb.value_set())
    # compared by their cores (``Statement.core``): "My highest score is 132 now, mostly thanks to picking
    # up the 10-pin spares" is about a score, not about spares
    ca, cb = sa.core or sa.subject, sb.core or sb.subject
    shared = ca & cb
    replaced = _replaced(sa, sb)
    # a sum of money replaced by another ("rent is $1,850" / "rent will be $1,975"), or a count of the same
    # thing ("86 contributors" / "112 contributors"), says what it is once more
    money = int(any(k.startswith("number:") for k, _, _ in replaced))
    changes = _changes(sb)
    if len(shared) + len(named) + money < MIN_SHARED and not (
            shared and changes and min(weight.get(t, top) for t in shared) >= top / 2
            and not _REFERS.search(sa.sentence) and not _REFERS.search(sb.sentence)):
        # one word in common is enough only when it is rare and the newer says it changed ("Patch release
        # 2.4.2 is out" after "the latest release is 2.3.1"; not "Leona now owns ..." after "Marta owns it":
        # "it" is said elsewhere)
        return "few shared"
    if episodic(sa):
        return "episode"
    # weighed by rarity: "the loyalty backend runs release 2.1" and "the fraud backend runs release 3.0"
    # share four words of six, but not the one that names what runs
    overlap = (sum(weight.get(t, top) for t in shared) + top * (len(named) + money)) / \
        (sum(weight.get(t, top) for t in ca | cb) + top * (len(named) + money))
    if overlap < settings.dream_supersede_overlap:
        return f"overlap {overlap:.2f}"
    if each_has_its_own(ca, cb, {t: weight.get(t, top) for t in ca | cb}):
        return "each its own"
    if not changes and each_has_its_own(sa.subject, sb.subject, {t: weight.get(t, top) for t in sa.subject | sb.subject}):
        # without a word of change, what each says beyond the core tells two events apart ("paid 205 euros
        # for a secondhand canoe" / "paid 397 euros for a solar-powered kayak")
        return "each its own (said)"
    if _wedged(sa, sb, shared):
        return "wedged"
    # a first-person statement is its speaker's own fact ("my desk is on floor 3" / "... floor 5")
    if (_FIRST_PERSON.search(sa.sentence) or _FIRST_PERSON.search(sb.sentence)) and a.speakers != b.speakers:
        return "first person"
    if len(replaced) == 2 and _changes(sb) and sorted(k.split(":")[0] for k, _, _ in replaced) == ["date", "number"]:
        # "the limit goes to 1,200 this Thursday" after "1,000 from Monday": the day says when it changed (a
        # name and a day changed at once are two things: "the Comet launch ... 26 August" / "the Beacon launch
        # moved to 6 October")
        replaced = [r for r in replaced if r[0] != "date"]
    if len(replaced) != 1:
        return f"replaced {replaced}"
    if replaced[0][0] in ("date", "name", "mixed") and not _changes(sb) and \
            _weighted_overlap(sa.subject, sb.subject, weight, top) < SAME_WORDS:
        # two days without a word of change are two events ("the floor plan by June" / "... on Thursday"),
        # two names two things ("the models for your Flask app" / "the Transaction model"), unless said in
        # nearly the same words ("the offsite is planned in Porto" / "... in Madrid"): a number stands for
        # the same thing more surely (a port, a price, a count)
        return "no change said"
    return (shared, overlap, *replaced[0])


def _weighted_overlap(a: frozenset[str], b: frozenset[str], weight: dict[str, float], top: float) -> float:
    union = sum(weight.get(t, top) for t in a | b)
    return sum(weight.get(t, top) for t in a & b) / union if union else 0.0


def subject_words(sentence: str, terms: frozenset[str]) -> list[str]:
    """The words of ``sentence`` whose terms are in ``terms``, as written ("staging database", not "stage databas")."""
    out = [w for w in re.findall(r"[^\W_]+", sentence) if set(analyze(w)) & terms]
    return list(dict.fromkeys(w.lower() for w in out))


def _candidate(changes: list[tuple], stated: list[Statement]) -> Candidate:
    """The older entry's statements the newer replaces, as one candidate: closing the older entry when
    they are all it states, else recording each on it (see the module's docstring)."""
    a, b, sa, sb, shared, overlap, kind, old_value, new_value = changes[0]
    words = subject_words(sb.sentence, shared)
    subject = " ".join(words)
    reason = (f"{b.path} ({b.day}) gives {subject} the {kind.split(':')[0]} {new_value!r} where {a.path} ({a.day}) "
              f"said {old_value!r}")
    if len(changes) > 1:
        reason += f", and {len(changes) - 1} more of its statements"
    replaced = {c[2].sentence for c in changes} | a.superseded_statements
    # a clause giving only the replaced values again is the same fact ("Ping Rafael about the reporting
    # rota, Rafael owns it")
    old_values = " ".join(f" {c[7]} " for c in changes)
    whole = all(s.sentence in replaced or all(f" {v} " in old_values for v in s.value_set()) for s in stated)
    if whole:
        ops = [{"op": "SUPERSEDE", "path": a.path, "by": b.path, "reason": reason}]
    else:
        # one SUPERSEDE per statement: recorded on the older entry, which stays current for the rest
        ops = [{"op": "SUPERSEDE", "path": a.path, "by": b.path, "reason": reason, "statement": c[2].sentence,
                "value": c[7], "new_value": c[8]} for c in changes]
    if b.day:
        ops = [{**op, "since": b.day} for op in ops]
    # a statement saying its value changed ("now", "moved to", "from ... to") is the surer sign; without
    # one, two statements with a name each may just tell two stories ("Laura wrote us" / "Cindy wrote it")
    confidence = min(1.0, (0.7 if _changes(sb) else 0.4) + 0.3 * overlap)
    return Candidate(kind="superseded", paths=(b.path, a.path), action="SUPERSEDE", ops=tuple(ops), reason=reason,
                     confidence=round(confidence, 3),
                     evidence={"subject": words, "value_kind": kind.split(":")[0], "old_value": old_value,
                               "new_value": new_value, "old_date": a.moment, "new_date": b.moment,
                               "old_statement": sa.sentence[:300], "new_statement": sb.sentence[:300],
                               "whole_entry": whole,
                               "statements": [{"old_statement": c[2].sentence[:300], "new_statement": c[3].sentence[:300],
                                               "old_value": c[7], "new_value": c[8], "value_kind": c[6].split(":")[0]}
                                              for c in changes]})

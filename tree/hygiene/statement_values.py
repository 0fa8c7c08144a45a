"""What a sentence states: a subject and the values it gives it.

"The staging database now listens on 6543" -> subject {stage, databas, listen}, values ["6543"];
"The office moved to 12 Oak Road" -> values ["12 Oak Road"] (a run of numbers and names is one
value). A value is a number, a version, a date or a proper name (a capitalized word that is not
only capitalized for starting a sentence). The superseded finding compares statements whose
subjects match and whose values differ; the near-duplicate finding refuses pairs whose values
differ (one fact changed is not the same fact said twice).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..text.analysis import STOP_WORDS, analyze
from ..text.dates import MONTHS
from .scan_corpus import CHAT_WORDS

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_TOKEN = re.compile(r"[^\W_]+(?:[.:/,_-][^\W_]+)*")
_DIGIT = re.compile(r"\d")
# "from 5432 to 6543": a few words between (not "from June the deploy window is Wednesday 09:00 to"),
# and not a range of times ("from 14:00 to 16:00")
_FROM_TO = re.compile(r"\bfrom\s+((?!\d{1,2}:\d\d\b)(?:(?!is\b|are\b|was\b)\S+\s+){0,3}?\S+)\s+to\b", re.I)
# other ways a statement names the value it replaces: "Lakeside instead of Westbrook", "takes over
# on-call from Ben", "replacing Millbrook"
_WAS = (_FROM_TO,
        re.compile(r"\b(?:instead of|rather than|replacing|replaces|in place of|no longer)\s+(\S+(?:\s+[A-Z0-9]\S*)*)"),
        re.compile(r"\b(?:take[sn]?|took|taking)\s+over\b.*?\bfrom\s+(\S+(?:\s+[A-Z0-9]\S*)*)", re.I))
_CLOCK = re.compile(r"^\d{1,2}:\d{2}$")
# where a sentence holds two statements: "..., and the production database on 5433", "... this quarter
# and Priya is secondary", "...: the staging database is on 6543", "..., Priya goes back to feature work"
_CLAUSE = re.compile(r"\s*[,;]?\s+because\s+|\s*[,;]\s+(?:and|but|so|while|whereas|which|though|although)\s+"
                     r"|\s+(?:and|but|while|whereas)\s+(?=(?:the|our|my|your|their|his|her|its|we|they|he|she|it)\b|[A-Z])"
                     r"|,\s+(?=[A-Z][\w'-]*\s+[a-z])")
_COLON = re.compile(r"(?<=[\w*])\*{0,2}:\s+")
# a list of values ("sourdough $7.50, croissants $3.75, baguettes $4.20"): split where both sides give a number
_LIST = re.compile(r",\s+(?:and\s+)?|\s+and\s+")
_MONEY = "$€£¥"
_PAUSES = ",;:()"
_PHRASE_ENDS = frozenset("after before since until because when while with from by as if so but and which that "
                         "who where for".split())
CORE_AFTER = 2      # content words after a value that still say what it is ("6 nodes", "45 minutes per job")
_VOCATIVE_BEFORE = frozenset("thanks thank hi hey hello dear congrats ping cheers bye morning".split())

# words that say a value changed, not what it belongs to: left out of the subject ("now" is a stop word:
# the analyzer drops it, so the raw words are kept too)
_CHANGE_TEXT = """
now new newly change changed changes moved move moving switched switch switching updated update anymore longer
instead currently current actually since recently migrated migrate became become replaced replace renamed rename
used previously earlier old older latest still today yesterday week month year officially finally going upgraded
upgrade downgraded moved no heads fyi reminder starting raised raise bumped bump extended slipped far stay stays stayed
"""
CHANGE_RAW = frozenset(_CHANGE_TEXT.split())
# the words that say a value changed ("since we talked" says nothing of the kind)
CHANGE_VERBS = frozenset("""
now moved changed switched updated upgraded downgraded migrated replaced renamed anymore instead longer
moves switches changes replaces
""".split())
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_WEEKDAYS |= {d + "s" for d in _WEEKDAYS}        # "on Tuesdays" names the day too
CHANGE_WORDS = frozenset(analyze(_CHANGE_TEXT))

# capitalized words that name nothing: interjections, small talk, words announcing a change ("Heads up", "FYI")
_NOT_NAMES = STOP_WORDS | CHANGE_RAW | {"i", "im", "ive", "id", "ill", "ok", "okay", "yes", "no", "hey", "hi", "oh", "noted", "ping",
                                        "thanks", "fyi", "btw", "heads", "wow", "omg", "lol", "ps", "hmm", "yeah"}


def names_nothing(word: str) -> bool:
    """A capitalized word that is no name: an interjection, small talk, a stop or chat word."""
    low = word.lower()
    return low in _NOT_NAMES or (bool(analyze(low)) and set(analyze(low)) <= CHAT_WORDS)


@dataclass(frozen=True)
class Statement:
    """One sentence of an entry: its subject terms and its values (casefolded), with their kinds."""

    sentence: str
    subject: frozenset[str]
    values: tuple[tuple[str, str], ...]   # (value, kind): kind "number", "date", "name" or "mixed"
    was: tuple[tuple[str, str], ...] = ()  # values it says were replaced ("from 5432 to 6543": 5432)
    core: frozenset[str] = frozenset()     # the subject terms next to its values (``statement``)

    def value_set(self) -> frozenset[str]:
        return frozenset(v for v, _ in self.values)


_EMOTICON = re.compile(r"<3+|[:;]-?[()DPp]\B")


# code is not a statement of fact: a fenced block (closed, or open to the end of a message's part),
# markup tags, and a sentence with code's punctuation are left out; inline code keeps its words
# (`6543`). On three BEAM chats (an assistant answering with code), 347 "superseded" pairs were
# code ("button type class btn primary: 'save'") and closing them lost evidence
_FENCED = re.compile(r"(```|~~~)[\s\S]*?(?:\1|\Z)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
_CODE_SIGNS = re.compile(r"[{}]|=>|==|[\w\])]\s*=\s*\S|\w\(|</|/>")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that are prose (code and markup left out)."""
    text = _TAG.sub(" ", _FENCED.sub("\n", text)).replace("`", "")
    return [s.strip() for s in _SENTENCE.split(_EMOTICON.sub(" ", text))
            if s and s.strip() and not _CODE_SIGNS.search(s)]


def proper_words(texts: Iterable[str]) -> frozenset[str]:
    """The capitalized words of ``texts`` that are names: written capitalized in the middle of a
    sentence, or never written in lowercase ("Priya owns billing now", "Carla's phone is ...");
    a capitalized first word that is also written lowercase ("The", "Heads up") is no name."""
    capital: set[str] = set()
    lower: set[str] = set()
    for text in texts:
        for s in sentences(text):
            toks = _TOKEN.findall(s)
            capital.update(t for t in toks[1:] if t[:1].isupper())
            lower.update(t for t in toks if t[:1].islower())
            if toks and toks[0][:1].isupper():
                capital.add(toks[0])
    return frozenset(t for t in capital if not names_nothing(t) and
                     (t.lower() not in lower or t[1:].isupper()))


def _kind(tok: str, first: bool, proper: frozenset[str]) -> str | None:
    if _CLOCK.match(tok):
        return "date"       # a time of day says when, with the day beside it ("Wednesday 09:00")
    if "_" in tok:
        return "name"       # an identifier ("lakehouse_main", "analytics_2026")
    if _DIGIT.search(tok):
        return "number"
    if (tok.lower() in MONTHS and (len(tok) > 3 or (tok[:1].isupper() and not first))) or tok.lower() in _WEEKDAYS:
        return "date"
    if tok[:1].isupper() and not names_nothing(tok) and (not first or tok in proper):
        return "name"
    return None


def _unit(word: str) -> str:
    """What a number counts, from the word after it ("606 minutes" -> ":minut"), so that "606 minutes"
    and "819 music boxes" are not one value replaced by another; "" when no word says (a port's
    number ends its sentence, "port 5432 now")."""
    terms = [t for t in analyze(word) if t not in CHANGE_WORDS] if word[:1].islower() else []
    return f":{terms[0]}" if terms else ""


def _vocative(sentence: str, m: re.Match, i: int, toks: list[str]) -> bool:
    """A name the speaker addresses ("Caroline, glad you ...", "Thanks Dana.", "..., Priya."), not one
    the sentence says something of ("Ben is the primary on-call")."""
    after = sentence[m.end():].lstrip()
    if i == 0 and after.startswith(","):
        return True
    if i > 0 and toks[i - 1].lower() in _VOCATIVE_BEFORE:
        return True
    return i == len(toks) - 1 and sentence[:m.start()].rstrip().endswith(",")


def statement(sentence: str, proper: frozenset[str], leave_out: frozenset[str] = frozenset()) -> Statement:
    """The subject terms and values of one sentence; ``leave_out``: terms that are no subject
    (the speakers' names) where the speaker addresses them; a speaker named as what the sentence
    says something of ("Ben is on call") is a value. The ``core`` of the subject: the words before
    its first value and the first ``CORE_AFTER`` after each ("the staging cluster has 6 nodes, all on
    the older instance type" -> stage, cluster, node, instanc), or all after a value the clause opens
    with: what a long clause says the value is of, without the rest it goes on to say."""
    matches = list(_TOKEN.finditer(sentence))
    toks = [m.group() for m in matches]
    values: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    plain: list[str] = []
    core: list[str] = []
    after = -1          # content words still taken into the core after a value (-1: before any value)

    def close(after_word: str, money: bool) -> None:
        if not run:
            return
        kinds = {k for _, k in run}
        if "date" in kinds:
            # a date is its day, month and year: a name beside it ("Mark 22 November") is a value of its own
            for t, k in run:
                if k == "name":
                    values.append((t.casefold(), "name"))
            kept = [t.casefold() for t, k in run if k != "name"]
            # "on Tuesdays" and "the Tuesday window" name one day
            kept = [t[:-1] if t in _WEEKDAYS and t.endswith("s") else t for t in kept]
            values.append((" ".join(kept), "date"))
        else:
            kind = kinds.pop() if len(kinds) == 1 else "mixed"
            if kind == "number":
                kind += ":$" if money else _unit(after_word)
            values.append((" ".join(t for t, _ in run).casefold(), kind))
        run.clear()

    money = False
    for i, (m, tok) in enumerate(zip(matches, toks)):
        terms = set(analyze(tok)) if tok[:1].isupper() and leave_out else set()
        if terms and terms <= leave_out:
            if _vocative(sentence, m, i, toks):
                continue   # a speaker addressed ("Caroline, glad you found ...") is neither subject nor value
            k = "name"
        else:
            k = _kind(tok, i == 0, proper)
        if k is None:
            # "2.3.1, shipped on ...": a word after a pause says nothing of what the number counts
            close("" if i and any(c in _PAUSES for c in sentence[matches[i - 1].end():m.start()]) else tok, money)
            plain.append(tok)
            content = [t for t in analyze(tok) if t not in CHANGE_WORDS and t not in CHAT_WORDS]
            if after > 0 and (tok.lower() in _PHRASE_ENDS or any(c in _PAUSES for c in sentence[matches[i - 1].end():m.start()])):
                after = 0       # "$400,000 after my bonus came through": what follows is about something else
            if after < 0:
                core += content
            elif after > 0 and content:
                core += content
                after -= 1
        else:
            if not run:
                money = m.start() > 0 and sentence[m.start() - 1] in _MONEY and k == "number"
            run.append((tok, k))
            # a value the clause opens with ("Leona now owns the onboarding service on-call rota"): what
            # follows it, to the clause's end or a pause, says what it is of
            after = CORE_AFTER if core or after >= 0 else len(toks)
    close("", money)
    subject = frozenset(t for t in analyze(" ".join(plain)) if t not in CHANGE_WORDS and t not in CHAT_WORDS)
    values = list(dict.fromkeys(values))
    old = " ".join(" ".join(_TOKEN.findall(m.group(1))).casefold() for p in _WAS for m in [p.search(sentence)] if m)
    was = [(v, k) for v, k in values if old and f" {v} " in f" {old} "]
    return Statement(sentence, subject, tuple(x for x in values if x not in was), tuple(was), frozenset(core))


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence that each state something: "The staging database listens on 5432 and
    the production database on 5433" is two statements, and a long message restating one thing among
    five restates it in one of them. A colon ends an introduction ("Small thing but it bites people:
    the staging ...") unless fewer than four words follow it ("Meditation streak: 26 days")."""
    out: list[str] = []
    pieces = _COLON.split(sentence, maxsplit=1)
    if len(pieces) == 2 and (len(pieces[1].split()) < 4 or pieces[1][:1] in _MONEY or pieces[1][:1].isdigit()):
        pieces = [sentence]     # "Registrations so far: 180, ...": the value after the colon is the subject's
    for piece in pieces:
        for clause in _CLAUSE.split(piece):
            out += _list_items(clause)
    return [c.strip(" ,;:") for c in out if c and c.strip(" ,;:")]


def _list_items(clause: str) -> list[str]:
    """A clause listing values, split into its items when each has a number of its own
    ("sourdough $7.50, croissants $3.75"); any other clause whole ("6 nodes, all on the older type")."""
    items = _LIST.split(clause)
    if len(items) > 1 and all(_DIGIT.search(i) for i in items):
        return items
    return [clause]


def statements(text: str, proper: frozenset[str], leave_out: frozenset[str] = frozenset(), *,
               by_clause: bool = False) -> list[Statement]:
    """The statements of ``text``: one per sentence, or per clause (``by_clause``)."""
    said = [c for s in sentences(text) for c in (clauses(s) if by_clause else [s])]
    return [statement(s, proper, leave_out) for s in said]


def replaced_values(a: Iterable[tuple[str, str]], b: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The values ``a`` gives that ``b`` replaces, as ``(kind, a's value, b's value)``, one per kind
    both give a value of that the other lacks: "on 5432" vs "on 6543" -> [("number", "5432", "6543")].
    A number's kind carries what it counts ("number:minut"): 606 minutes do not replace 819 boxes.
    Two kinds replaced at once ("Drift launch on 12 May" / "Falcon launch on 3 June") are two facts."""
    a, b = list(a), list(b)
    # a value written inside another ("Elm Road" in "12 Elm Road") is that value
    shared = {v for v, _ in a for w, _ in b if v == w or f" {v} " in f" {w} " or f" {w} " in f" {v} "}
    shared |= {w for w, _ in b for v, _ in a if v == w or f" {v} " in f" {w} " or f" {w} " in f" {v} "}
    only_a = [(v, k) for v, k in a if v not in shared]
    only_b = [(v, k) for v, k in b if v not in shared]
    out = []
    kinds = [k for k in dict.fromkeys(k for _, k in only_a) if k in {k for _, k in only_b}]
    for kind in sorted(kinds, key=lambda k: ("number", "name", "date", "mixed").index(k.split(":")[0])):
        va = [v for v, k in only_a if k == kind]
        vb = [v for v, k in only_b if k == kind]
        if va and vb:
            out.append((kind, va[0], vb[0]))
    if not out:
        # an address ("12 Oak Road") may become a name ("Elm House"): a mixed value meets a number or a name
        va = [v for v, k in only_a if k in ("mixed", "name", "number")]
        vb = [v for v, k in only_b if k in ("mixed", "name", "number")]
        if va and vb and "mixed" in {k for _, k in only_a + only_b}:
            out.append(("mixed", va[0], vb[0]))
    return out

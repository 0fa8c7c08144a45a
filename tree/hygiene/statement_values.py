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
_TOKEN = re.compile(r"[^\W_]+(?:[.:/,-][^\W_]+)*")
_DIGIT = re.compile(r"\d")
_FROM_TO = re.compile(r"\bfrom\s+(.+?)\s+to\b", re.I)

# words that say a value changed, not what it belongs to: left out of the subject ("now" is a stop word:
# the analyzer drops it, so the raw words are kept too)
_CHANGE_TEXT = """
now new newly change changed changes moved move moving switched switch switching updated update anymore longer
instead currently current actually since recently migrated migrate became become replaced replace renamed rename
used previously earlier old older latest still today yesterday week month year officially finally going upgraded
upgrade downgraded moved no heads fyi reminder starting
"""
CHANGE_RAW = frozenset(_CHANGE_TEXT.split())
# the words that say a value changed ("since we talked" says nothing of the kind)
CHANGE_VERBS = frozenset("""
now moved changed switched updated upgraded downgraded migrated replaced renamed anymore instead longer
""".split())
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
CHANGE_WORDS = frozenset(analyze(_CHANGE_TEXT))

# capitalized words that name nothing: interjections, small talk, words announcing a change ("Heads up", "FYI")
_NOT_NAMES = STOP_WORDS | CHANGE_RAW | {"i", "im", "ive", "id", "ill", "ok", "okay", "yes", "no", "hey", "hi", "oh",
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


def statement(sentence: str, proper: frozenset[str], leave_out: frozenset[str] = frozenset()) -> Statement:
    """The subject terms and values of one sentence; ``leave_out``: terms that are no subject
    (the speakers' names)."""
    toks = _TOKEN.findall(sentence)
    values: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []
    plain: list[str] = []

    def close(after: str) -> None:
        if not run:
            return
        kinds = {k for _, k in run}
        if "date" in kinds:
            # a date is its day, month and year: a name beside it ("Mark 22 November") is a value of its own
            for t, k in run:
                if k == "name":
                    values.append((t.casefold(), "name"))
            kept = [(t, k) for t, k in run if k != "name"]
            values.append((" ".join(t for t, _ in kept).casefold(), "date"))
        else:
            kind = kinds.pop() if len(kinds) == 1 else "mixed"
            if kind == "number":
                kind += _unit(after)
            values.append((" ".join(t for t, _ in run).casefold(), kind))
        run.clear()

    for i, tok in enumerate(toks):
        if tok[:1].isupper() and leave_out and set(analyze(tok)) <= leave_out:
            continue   # a speaker's name ("Caroline, glad you found ...") is neither subject nor value
        k = _kind(tok, i == 0, proper)
        if k is None:
            close(tok)
            plain.append(tok)
        else:
            run.append((tok, k))
    close("")
    subject = frozenset(t for t in analyze(" ".join(plain)) if t not in CHANGE_WORDS and t not in CHAT_WORDS)
    values = list(dict.fromkeys(values))
    m = _FROM_TO.search(sentence)
    old = " ".join(_TOKEN.findall(m.group(1))).casefold() if m else ""
    was = [(v, k) for v, k in values if old and v in old]
    return Statement(sentence, subject, tuple(x for x in values if x not in was), tuple(was))


def statements(text: str, proper: frozenset[str], leave_out: frozenset[str] = frozenset()) -> list[Statement]:
    return [statement(s, proper, leave_out) for s in sentences(text)]


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
    for kind in ("number", "name", "date", "mixed"):
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

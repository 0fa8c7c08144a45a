"""The tree as a scan reads it: every entry parsed once, with the words the findings compare.

``read_corpus(tree, now)`` reads each entry file once (no lock, nothing written) into a
``ScanItem``: its text, that text normalized for an exact comparison, its content terms, who
said it, when, its links, its signals and whether the user asked to keep it. Each kind of
finding (``find_duplicates``, ``find_superseded``, ``find_links``, ``find_archive``) is a plain
function over the ``Corpus``.

Content terms are the analyzer's terms (``analysis.analyze``) less what says nothing about the
subject in a chat: the names of the people speaking or spoken to (every message of a
conversation carries them, so they relate everything), and the small talk every chat is made of
("thanks", "sounds good", "awesome").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from ..text import dates
from ..text.analysis import analyze, words
from ..entries import validity
from ..entries.entry import Entry, parse, see_also
from ..base.errors import InvalidEntry, InvalidPath
from ..entries.lifecycle import decayed_importance
from ..text.searchable import searchable
from ..ranking.signals import Signal

# small talk, as analyzed terms: words that make up most chat messages and name no subject
CHAT_WORDS = frozenset(analyze("""
thanks thank sounds sound good great awesome amazing cool nice glad happy happiness wow yeah yes yep sure okay ok
haha lol hey hi hello bye goodbye see later care take really so wonderful fun excited exciting love like lovely
totally definitely absolutely agree agreed right well oh ah hmm appreciate appreciated true pretty super
keep going hope hopefully enjoy enjoyed enjoying day time things thing lot much way feel feeling think going get
got gonna want wanna know sure congrats congratulations proud incredible fantastic beautiful good luck
anything else something everything nothing need needs talk talking talked since moment moments life strong sorry
hear heard glad help helps helped worry worries make makes made go goes went new lately week weekend today
tomorrow tonight morning night soon ago last next one two see share shares photo picture pic look looks looked
mean means tell told say said ask asked stuff bit kind sort always never ever still just even maybe probably
hard tough inspiring inspire inspired interesting cute sweet lucky wish wishes believe try tried trying
"""))

# a message said in the first person is about its speaker: the same words from another speaker are another fact
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
_NON_WORD = re.compile(r"[\W_]+")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\s*([ap]\.?m\.?)?", re.I)


@dataclass(frozen=True)
class ScanItem:
    """One entry as the findings see it."""

    path: str
    entry: Entry
    text: str                  # the words compared: a message's words, else title and body
    norm: str                  # ``text`` casefolded, punctuation and spacing dropped
    terms: tuple[str, ...]     # content terms of ``text``, in order (names and small talk left out)
    speakers: frozenset[str]   # who said it (a conversation message's speaker), casefolded
    messages: frozenset[str]   # the conversation messages it holds (``conv#id``), if any
    moment: str                # when it was said or written, sortable ("2023-05-08T13:56", "2023-05-08", "")
    age_days: float            # days since the entry last changed in the tree
    signal: Signal
    links: frozenset[str]      # paths it links to (``related``, body links and ``seeAlso``)
    keep: bool                 # the user marked it ``keep: true``
    closed: bool               # a SUPERSEDE closed it (``supersededBy``)
    supersedes: frozenset[str]
    # statements of it a later entry replaced, recorded when the entry says more than they do
    # (``supersededStatements``): not proposed again
    superseded_statements: frozenset[str] = frozenset()

    @property
    def term_set(self) -> frozenset[str]:
        return frozenset(self.terms)

    @property
    def first_person(self) -> bool:
        return bool(_FIRST_PERSON.search(self.text))

    @property
    def day(self) -> str:
        return self.moment[:10]


@dataclass
class Corpus:
    """Every readable entry of a tree, sorted by path, and what the findings share."""

    items: list[ScanItem]
    by_path: dict[str, ScanItem]
    df: Counter                # content term -> entries holding it
    names: frozenset[str]      # speakers' names as analyzed terms
    backlinks: Counter         # path -> entries linking to it
    unreadable: list[str]      # entry files that could not be parsed (doctor reports them)
    now: datetime

    def linked(self, a: str, b: str) -> bool:
        return b in self.by_path[a].links or a in self.by_path[b].links


def normalized(text: str) -> str:
    """Text as an exact comparison sees it: "Staging DB -> port 6543!" and "staging db port 6543"
    are one text."""
    return " ".join(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def moment_of(at: str) -> str:
    """A sortable moment of a source's or entry's time: ISO 8601 to the minute in UTC, else the day
    it names with the clock time it gives ("1:56 pm on 8 May, 2023" -> "2023-05-08T13:56"), else ""."""
    at = at.strip()
    if not at:
        return ""
    try:
        dt = datetime.fromisoformat(at[:-1] + "+00:00" if at.endswith(("Z", "z")) else at)
        if dt.tzinfo is not None:
            dt = dt.astimezone(timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M") if len(at) > 10 else dt.strftime("%Y-%m-%d")
    except ValueError:
        pass
    d = dates.day_of(at)
    if d is None:
        return ""
    m = _CLOCK.search(at)
    if not m:
        return d.isoformat()
    h, mi = int(m.group(1)), int(m.group(2))
    if m.group(3):
        h = h % 12 + (12 if m.group(3).lower().startswith("p") else 0)
    return f"{d.isoformat()}T{min(h, 23):02d}:{min(mi, 59):02d}"


def _age_days(e: Entry, now: datetime) -> float:
    stamp = moment_of(e.updated_at or e.created_at)
    if not stamp:
        return 0.0
    when = datetime.fromisoformat(stamp).replace(tzinfo=timezone.utc) if "T" in stamp else \
        datetime.combine(date.fromisoformat(stamp), datetime.min.time(), timezone.utc)
    return max(0.0, (now - when).total_seconds() / 86400)


def _conversation_messages(e: Entry) -> list[dict[str, Any]]:
    return [s for s in e.sources if s.get("kind") == "conversation"]


def _text_of(e: Entry, is_message: bool) -> str:
    # a message entry's title is its speaker and day ("Alice, 8 May 2023"): not what was said
    body = searchable(e.body)
    return body if is_message else (e.title + "\n" + body).strip()


def recorded_statements(e: Entry) -> frozenset[str]:
    """The statements of ``e`` recorded as replaced by a later entry (``supersededStatements``:
    ``[{"statement", "value", "by", "newValue", "since"}]``)."""
    got = e.extra.get(validity.SUPERSEDED_STATEMENTS)
    if not isinstance(got, list):
        return frozenset()
    return frozenset(str(x.get("statement", "")) for x in got if isinstance(x, dict) and x.get("statement"))


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))


def _links_of(v: Any) -> frozenset[str]:
    if isinstance(v, str):
        return frozenset([v]) if v else frozenset()
    if isinstance(v, (list, tuple)):
        return frozenset(str(x) for x in v if x)
    return frozenset()


def read_corpus(tree: Any, now: datetime | None = None) -> Corpus:
    """Read every entry of ``tree`` (a ``ContextTree``) once. Writes nothing."""
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    paths = tree.entry_paths()
    parsed: list[tuple[str, Entry]] = []
    unreadable: list[str] = []
    for p in paths:
        try:
            raw = tree._read_disk(p)
            if raw is None:
                continue
            parsed.append((p, parse(raw, where=p)))
        except (InvalidEntry, InvalidPath, OSError):
            unreadable.append(p)
    speakers_of: dict[str, frozenset[str]] = {}
    names: set[str] = set()
    for p, e in parsed:
        if _conversation_messages(e):
            who = frozenset(t.casefold() for t in e.tags if t)
            speakers_of[p] = who
            for t in e.tags:
                names.update(analyze(t))
    signals = tree.signals.get_many([p for p, _ in parsed])
    items: list[ScanItem] = []
    for p, e in parsed:
        msgs = _conversation_messages(e)
        text = _text_of(e, bool(msgs))
        at = next((str(s.get("at", "")) for s in msgs if s.get("at")), "") or e.created_at
        items.append(ScanItem(
            path=p, entry=e, text=text, norm=normalized(text),
            terms=content_terms(text, names),
            speakers=speakers_of.get(p, frozenset()),
            messages=frozenset(str(s.get("ref", "")) for s in msgs if s.get("ref")),
            moment=moment_of(at), age_days=_age_days(e, now), signal=signals.get(p, Signal(p)),
            links=frozenset(e.links()) | frozenset(see_also(e)), keep=_truthy(e.extra.get("keep")),
            closed=bool(e.extra.get("supersededBy")), supersedes=_links_of(e.extra.get("supersedes")),
            superseded_statements=recorded_statements(e)))
    df: Counter = Counter()
    backlinks: Counter = Counter()
    for it in items:
        df.update(it.term_set)
        backlinks.update(it.links)
    return Corpus(items=items, by_path={it.path: it for it in items}, df=df, names=frozenset(names),
                  backlinks=backlinks, unreadable=unreadable, now=now)


def content_terms(text: str, names: frozenset[str]) -> tuple[str, ...]:
    """The analyzed terms of ``text`` but small talk and the speakers' names where written as names
    (capitalized: "Dev, the dev database ..." keeps the second "dev")."""
    named = {t for w in words(text) if w[:1].isupper() for t in analyze(w) if t in names}
    return tuple(t for t in analyze(text) if t not in CHAT_WORDS and t not in named)


def each_has_its_own(a: frozenset[str], b: frozenset[str], weight: dict[str, float], *,
                     strict: bool = True) -> bool:
    """Each of two term sets has a term of its own rarer (heavier) than the commonest term they share:
    "the production auth proxy listens on 5581" / "the preview auth proxy listens on 4767", "Tariq owns
    the fraud rota" / "Tariq owns the refunds rota" are about two things. One may say more than the
    other ("you can find the office at ..."). ``strict=False``: rarer than the shared terms' mean
    weight, for two wordings of one fact ("FYI the proxy port is 5581" / "port 5581 is where the
    proxy listens": "fyi" and "listens" are their own, but common)."""
    shared = a & b
    if not shared:
        return True
    bar = min(weight[t] for t in shared) if strict else sum(weight[t] for t in shared) / len(shared)
    return any(weight[t] > bar for t in a - shared) and any(weight[t] > bar for t in b - shared)


def importance_now(it: ScanItem) -> float:
    """The entry's importance as ranking sees it today: decayed since it last changed."""
    return decayed_importance(it.signal.importance, it.age_days)


def rare_terms(it: ScanItem, df: Counter, k: int, most: int) -> list[str]:
    """The ``k`` rarest of an item's content terms that at least one other entry holds and at most
    ``most`` do: the keys that block comparisons, so that entries are compared with the few that
    share a rare word, never with all (a term every tenth entry holds relates nothing)."""
    shared = sorted((df[t], t) for t in set(it.terms) if 2 <= df[t] <= most)
    return [t for _, t in shared[:k]]


def blocked_pairs(items: list[ScanItem], df: Counter, k: int = 4, most: int = 60,
                  keep: Any = None) -> set[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of items sharing one of their ``k`` rarest content terms
    (``rare_terms``); ``keep(item)`` chooses the items taking part. The work is bounded by the
    terms' postings (each at most ``most`` long), not by the square of the entries."""
    postings: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        if keep is not None and not keep(it):
            continue
        for t in rare_terms(it, df, k, most):
            postings.setdefault(t, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for ids in postings.values():
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                pairs.add((ids[x], ids[y]))
    return pairs

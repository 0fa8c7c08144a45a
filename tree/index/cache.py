"""The query cache (diskcache under ``.memgrove/cache/``): tiers 0 and 1.

An entry is ``{question, answer, fingerprint}`` under the normalized question.
It is served only while the tree's fingerprint is unchanged, so an answer never
outlives a change to the tree.

The fuzzy tier serves an answer only to a question that asks the same thing in
other words (``question_forms``): once the words that only frame a question are
dropped ("the", "is", "what", "please", "can you tell me") and every word is
reduced to its inflectional base ("tokens" -> "token", "led" -> "lead"), both
must hold the same words in the same order and the same question word (who,
when, where, why, how). Every other word is taken to change the question: a
qualifier ("staging" / "production"), a name, a number, a negation, a pronoun,
a preposition ("from" / "to"). Word order counts because "Ana hired Ben" is not
"Ben hired Ana". Measured on benchmarks/data/fuzzy_pairs.jsonl by
benchmarks/fuzzy_cache.py: a wrong cached answer is worse than a miss.

The cache is pure derived data: a damaged one (garbage in ``cache.db``, a value
that no longer unpickles) is emptied with a notice, and the question is answered
as a miss.
"""

from __future__ import annotations

import re
from pathlib import Path
import functools
import shutil
import sqlite3
from typing import Any, Callable, NamedTuple

from whoosh.lang import porter2

from ..base.sqlite import WAL_LIMIT, WAL_PAGES, is_damage
from ..text.word_forms import BASE_OF

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)
# Words that frame a question without choosing what it asks. Not here, on purpose: question
# words but what/which, pronouns of people (i, we, you, he, she, my, ...), this/that, modal
# verbs (can, should, must: "should we" is not "do we"), prepositions but "of" and "about",
# quantifiers (all, some, no, more, most, first, last) and "or".
FILLER = frozenset("""a an the am is are was were be been being do does did doing done have has had having will
would shall what which whats please of about it its they them their there and so any now currently exactly
actually again just really also ever still anyway""".split())
QUESTION_WORDS = {"who": "who", "whom": "who", "whose": "whose", "when": "when", "where": "where", "why": "why",
                  "how": "how"}
# requests around a question ("can you tell me", "do you know", "I'd like to know")
_FRAME = re.compile(r"\b(?:(?:can|could|would|will) you (?:please )?(?:tell|show|give|remind) me"
                    r"|(?:do|does) (?:you|we|anyone|anybody) (?:happen to )?know(?: about)?"
                    r"|i(?:'d| would) like to know|i (?:want|need) to know|let me know"
                    r"|(?:please )?(?:tell|show|give|remind) me)\b")
_NOT = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}   # can't, won't, shan't, ain't
_INDEX_KEY = "\nfuzzy index 2"   # a normalized question never holds a newline: no clash with one


class QuestionForms(NamedTuple):
    words: tuple[str, ...]          # what it asks about, in order, each in its base form
    asks: frozenset[str]            # its question words: who, when, where, why, how


def normalize_query(q: str) -> str:
    """Lowercase, whitespace collapsed: the exact-cache key."""
    return " ".join(q.lower().split())


def inflection_base(word: str) -> str:
    """``word`` without its inflection: the Porter2 steps for plurals, possessives, -ed, -ing
    and -y, and its final-e step, so "decided" and "decides" meet "decide"; not the
    derivational steps between, which join "production" to "product" and "accountant" to
    "account"."""
    if len(word) <= 2 or any(c.isdigit() for c in word):
        return word
    if word in porter2.exceptional_forms:   # "news" is not "new"
        return porter2.exceptional_forms[word]
    w = porter2.capitalize_consonant_ys(word)
    r1, r2 = porter2.get_r1(w), porter2.get_r2(w)
    w = porter2.step_1a(porter2.step_0(w))
    if w in porter2.exceptional_early_exit_post_1a:
        return w
    w = porter2.step_1c(porter2.step_1b(w, r1))
    return porter2.normalize_ys(porter2.step_5(w, r1, r2))


def _words(q: str) -> list[str]:
    text = _FRAME.sub(" ", q.lower().replace("’", "'"))
    out: list[str] = []
    for token in _WORD.findall(text):
        head, _, tail = token.partition("'")
        if tail == "t" and head.endswith("n"):          # didn't, can't, won't
            out += [_NOT.get(head[:-1], head[:-1]), "not"]
        elif tail in ("s", "re", "ve", "ll", "d", "m"):  # what's, we're, Ana's: the clitic frames
            out.append(head)
        elif token == "cannot":
            out += ["can", "not"]
        else:
            out.append(token)
    return out


def question_forms(q: str) -> QuestionForms:
    """What decides whether two questions ask the same thing (see the module's docstring)."""
    words: list[str] = []
    asks: set[str] = set()
    for w in _words(q):
        if w in FILLER:
            continue
        if w in QUESTION_WORDS:
            asks.add(QUESTION_WORDS[w])
            continue
        words.append(inflection_base(BASE_OF.get(w, w)))
    return QuestionForms(tuple(words), frozenset(asks))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def asks_same(a: QuestionForms, b: QuestionForms, threshold: float = 1.0) -> bool:
    """The same question words, the shared words in the same order, and a Jaccard of the
    word sets of at least ``threshold`` (1.0: every word in one is in the other)."""
    if a.asks != b.asks:
        return False
    shared = set(a.words) & set(b.words)
    if [w for w in a.words if w in shared] != [w for w in b.words if w in shared]:
        return False
    return jaccard(frozenset(a.words), frozenset(b.words)) >= threshold


_RETRY = object()


def _repairing(after_reset: Any = _RETRY) -> Callable:
    """A cache method that survives a damaged cache: it is reset, then the call answers
    ``after_reset`` (a miss) or, by default, runs once more."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def method(self: "QueryCache", *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - unpickling damaged bytes raises almost anything
                if not _damage(exc):
                    raise
                self.reset(f"{type(exc).__name__}: {exc}"[:160])
            return fn(self, *args, **kwargs) if after_reset is _RETRY else after_reset

        return method

    return wrap


def _damage(exc: Exception) -> bool:
    """A damaged cache, not a busy one (diskcache's Timeout, SQLite's "locked")."""
    if isinstance(exc, sqlite3.DatabaseError):
        return is_damage(exc)
    return type(exc).__name__ != "Timeout" and not isinstance(exc, (OSError, MemoryError))


class QueryCache:
    def __init__(self, folder: Path, *, size_limit: int = 64 * 2**20, ttl: float | None = 7 * 86400,
                 fuzzy_entries: int = 2000, notices: list[str] | None = None):
        self.folder = folder
        self.notices = notices if notices is not None else []
        self.size_limit = size_limit
        self.ttl = ttl
        self.fuzzy_entries = fuzzy_entries
        self._cache = None

    def _c(self):
        if self._cache is None:
            # imported here: opening a memory for writing should not pay for diskcache
            from ..base.closable_cache import ClosableCache

            # a plain Cache, not FanoutCache: the latter silently drops writes under contention;
            # its WAL, like the tree's other SQLite files, is truncated once checkpointed (WAL_LIMIT)
            self._cache = ClosableCache(str(self.folder), size_limit=self.size_limit, timeout=5,
                                        sqlite_journal_size_limit=WAL_LIMIT, sqlite_wal_autocheckpoint=WAL_PAGES)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def check(self) -> str | None:
        """Why the cache is damaged, or None (``doctor``)."""
        try:
            c = self._c()
            db = sqlite3.connect(f"file:{self.folder / 'cache.db'}?mode=ro", uri=True, timeout=5)
            try:
                bad = db.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                db.close()
            if bad != "ok":
                return f"integrity check: {bad}"
            for key in c.iterkeys():
                c.get(key)
        except Exception as exc:  # noqa: BLE001 - see _repairing
            if not _damage(exc):
                if isinstance(exc, (OSError, sqlite3.OperationalError)):
                    return None  # unavailable (a full or read-only disk), not damaged
                raise
            self.close()
            return f"{type(exc).__name__}: {exc}"[:160]
        return None

    def reset(self, why: str) -> None:
        """Empty a damaged cache: remove its files (it is derived; nothing is lost but speed)."""
        try:
            self.close()
        except Exception:  # noqa: BLE001 - closing a damaged cache must not stop its reset
            self._cache = None
        shutil.rmtree(self.folder, ignore_errors=True)
        note = f"reset the damaged query cache ({why}); answers are cached again as they are asked"
        if note not in self.notices:
            self.notices.append(note)

    @_repairing(None)
    def get_exact(self, question: str, fingerprint: str) -> dict[str, Any] | None:
        item = self._c().get(normalize_query(question))
        if isinstance(item, dict) and item.get("fingerprint") == fingerprint:
            return item
        return None

    @_repairing(None)
    def get_fuzzy(self, question: str, fingerprint: str, *, threshold: float = 1.0,
                  min_tokens: int = 2) -> tuple[dict[str, Any], float] | None:
        """The cached answer to a question that asks the same as ``question`` (``asks_same``),
        with the Jaccard of their word sets; None for a question of fewer than ``min_tokens`` words."""
        mine = question_forms(question)
        if len(set(mine.words)) < min_tokens:
            return None
        best, best_sim = None, 0.0
        for key, words, asks, fp in self._c().get(_INDEX_KEY, []):
            other = QuestionForms(tuple(words), frozenset(asks))
            if fp != fingerprint or not asks_same(mine, other, threshold):
                continue
            sim = jaccard(frozenset(mine.words), frozenset(other.words))
            if sim > best_sim:
                best, best_sim = key, sim
        if best is None:
            return None
        item = self._c().get(best)
        if not isinstance(item, dict) or item.get("fingerprint") != fingerprint:
            return None
        return item, best_sim

    @_repairing()
    def put(self, question: str, fingerprint: str, answer: dict[str, Any]) -> None:
        key = normalize_query(question)
        forms = question_forms(question)
        c = self._c()
        with c.transact():  # read-modify-write of the fuzzy index must be atomic across processes
            c.set(key, {"question": question, "fingerprint": fingerprint, "answer": answer}, expire=self.ttl)
            index = [row for row in c.get(_INDEX_KEY, []) if row[0] != key and row[3] == fingerprint]
            index.append((key, list(forms.words), sorted(forms.asks), fingerprint))
            c.set(_INDEX_KEY, index[-self.fuzzy_entries:])

    @_repairing()
    def clear(self) -> None:
        self._c().clear()

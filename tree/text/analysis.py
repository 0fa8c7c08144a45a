"""The one analyzer of memgrove: text to the terms an engine indexes and matches.

Both engines index exactly these tokens (Whoosh through a thin Tokenizer over
``analyze``, tantivy as pre-analyzed whitespace-separated text), so a query
matches the same documents, counts the same terms and weighs the same idf on
either. The word-form tables live in word_forms.py and are read here.

Every script is searchable (an ASCII text skips all of this, so English terms are unchanged):

- **Folding** (``fold``): Unicode NFC (a decomposed "é" is the composed one); Cyrillic ё/Ё as
  е/Е (Russian writes both for one letter); Greek without accents or diaeresis, final ς as σ
  (Lucene's GreekLowerCaseFilter); full-width ASCII forms ("ＡＢＣ１２") and the ideographic space
  as ASCII, half-width katakana ("ﾃﾞｰﾀ") as the full-width kana. That is a selected part of
  compatibility folding, not NFKC: NFKC also turns "x²" into "x2", "½" into "1⁄2" and "ﬁ" into
  "fi", which would make words match that do not, and exact ones no longer match.
- **CJK** (``words``): Chinese, Japanese and Korean do not put spaces between words, so a run of
  Han, Hiragana, Katakana or Hangul is indexed as its overlapping bigrams ("データベース" ->
  "デー" "ータ" "タベ" "ベー" "ース"), as Lucene's CJKAnalyzer does; a character alone in its run stays a
  unigram. A word then matches inside a sentence ("佐藤" in "佐藤さんの..."), and a longer word as
  all its bigrams. Letters and digits beside a CJK run ("Python3で") are words of their own.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterator

from whoosh.lang.porter2 import stem as _porter2

from .word_forms import BASE_OF, STEMS

# Whoosh's default stoplist lacks question words ("what", "did", "how"), which
# then match every message that asks something; this is a standard English list,
# with the pieces the tokenizer cuts from contractions and possessives ("Dave's"
# -> "dave" "s", "didn't" -> "didn" "t"): kept, "s" matched every "it's" (LoCoMo
# R@200w +0.5 without it). Not "won" and "don" (won't, don't): a verb and a name.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves tell know please also us let yet may might
s t d ll m re ve didn doesn isn wasn aren weren hasn haven hadn wouldn couldn shouldn
""".split())

# Words split at underscores too, so `pool_size` matches "pool size"; a dotted name is kept whole
# and its named parts added, so "Bunny" finds "Bunny.net".
WORD = re.compile(r"[^\W_]+(?:\.[^\W_]+)*")

# A query is a question, not a document, and its cost must not grow with whatever is
# sent (a whole file pasted into search_knowledge). Fuzzy matching builds a Levenshtein
# automaton the size of the term: one 8,000-character token took 12 s, 100 KB 203 s.
# Beyond these bounds the rest of the query is not searched: no question needs it, and
# every query answers in bounded time.
MAX_QUERY_CHARS = 2000   # characters of a query that are analyzed
MAX_QUERY_TERMS = 64     # distinct analyzed terms searched
MAX_EXPAND_CHARS = 30    # longer terms are matched exactly, never fuzzy or by prefix
MAX_EXPANDED_TERMS = 16  # terms of a query expanded (each walks a field's term list)

# Fuzzy and prefix expansion walk a field's term list: over the content field of
# 25k entries (first letter fixed, prefix on every field) an out-of-domain
# question cost 306 ms p50. Prefix expansion is kept to the short fields, and a
# fuzzy match on content must share the first two letters.
SHORT_FIELDS = ("title", "path_text", "tags")


# Han (with extensions and compatibility ideographs), Hiragana, Katakana (with its phonetic
# extensions and the prolonged sound mark), Hangul syllables and jamo, and 々〆〇
_CJK = ("\u1100-\u11ff\u3005-\u3007\u3041-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff"
        "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff"
        "\U00020000-\U0003134f")
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HALF_KANA = re.compile("[\uff61-\uff9f]+")
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]+")
# full-width ASCII (U+FF01-FF5E) as ASCII, the ideographic space as a space, ё as е
_FOLD = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3000: 0x20, ord("ё"): ord("е"), ord("Ё"): ord("Е")}


def _greek(m: re.Match) -> str:
    plain = "".join(c for c in unicodedata.normalize("NFD", m.group()) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", plain).replace("ς", "σ")


def fold(text: str) -> str:
    """``text`` as it is indexed and searched (module docstring): NFC, ё as е, Greek without
    accents, full-width forms and half-width katakana as their usual forms. ASCII is returned
    as it is. ``fold("Ёжик")`` -> ``"Ежик"``; ``fold("ＤＢ")`` -> ``"DB"``."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text).translate(_FOLD)
    text = _HALF_KANA.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    return _GREEK.sub(_greek, text)


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=50_000)
def _term(word: str) -> str | None:
    """A lowercased word as its indexed term, or None for a stop word."""
    if word in STOP_WORDS:
        return None
    # Not Whoosh's default Porter stemmer: its step 1b tests "ends in a double consonant" with an
    # anchored re.match, so it never undoubles: "running" -> "runn", "planned" -> "plann".
    # Porter2 (the Snowball English stemmer) undoubles, and over-stems less ("generous" and
    # "general" were both "gener"). Word forms first: "went" -> "go", "mom" -> "mother".
    # STEMS keeps apart the families Porter2 joins to unrelated words ("publications" is not "public")
    word = BASE_OF.get(word, word)
    return STEMS.get(word) or _porter2(word)


def words(text: str) -> list[str]:
    """The words of ``text`` (folded) before stop words and stemming: each match, then the parts of
    a dotted name ("Bunny.net", "main.py") that hold a letter; a number ("3.50", "2.4.0") stays
    whole. A run of CJK characters gives its bigrams (module docstring)."""
    return [w for w, _ in _pieces(text)]


def _pieces(text: str) -> Iterator[tuple[str, bool]]:
    """``(word, is CJK)`` for each word of ``text``, in order."""
    for m in WORD.finditer(fold(text)):
        w = m.group()
        if w.isascii() or not _CJK_RUN.search(w):
            yield from _word(w)
            continue
        at = 0          # CJK runs as bigrams, the letters and digits between them as words
        for run in _CJK_RUN.finditer(w):
            for rest in WORD.findall(w[at:run.start()]):
                yield from _word(rest)
            yield from ((b, True) for b in _bigrams(run.group()))
            at = run.end()
        for rest in WORD.findall(w[at:]):
            yield from _word(rest)


def _word(w: str) -> Iterator[tuple[str, bool]]:
    yield w, False
    if "." in w:
        yield from ((p, False) for p in w.split(".") if p and not p.isdigit() and any(c.isalpha() for c in p))


def analyze(text: str) -> list[str]:
    """The terms of ``text`` in document order, duplicates kept: words, lowercased, stop words
    dropped, word forms mapped to one form (word_forms.py), stemmed with Porter2 but for the
    families word_forms.STEMS keeps apart."""
    out = []
    for w, cjk in _pieces(text):
        if cjk:         # a CJK bigram or lone character: no case, stop word or stem
            out.append(w)
            continue
        t = _term(w.lower())
        if t is not None:
            out.append(t)
    return out


# A pair of hiragana is mostly grammar in a Japanese question ("です", "ます", "して"): the question's
# stop words, which matched any Japanese note ("明日の天気はどうですか" found one about an office)
_KANA_PAIR = re.compile("[\u3041-\u309f]{1,2}")


def terms(text: str) -> list[str]:
    """The distinct terms of a query, in order; at most ``MAX_QUERY_TERMS`` of its first
    ``MAX_QUERY_CHARS`` characters. Pairs of hiragana are left out of a question that has other
    terms (a question only in hiragana keeps them); documents index them all."""
    out: dict[str, None] = {}
    for t in analyze(text[:MAX_QUERY_CHARS]):
        out[t] = None
    if not text.isascii():
        kept = [t for t in out if not _KANA_PAIR.fullmatch(t)]
        if kept:
            out = dict.fromkeys(kept)
    return list(out)[:MAX_QUERY_TERMS]

"""The questions in a text: the words they ask about, and whether a text mostly asks.

A conversation answers its questions in the next message, so the verbatim
curator gives a reply the words of the question it answers as keywords, and
search ranks an entry that mostly asks a little lower than what it matches:
"How did the ice cream turn out?" shares every word with "What did Nate
think of the ice cream he made?" and holds none of the answer.
"""

from __future__ import annotations

import re

# One sentence: the text up to and with the next ., ! or ?, or up to the end. Every match
# consumes its whole run, so the scan is linear; a pattern for questions alone
# (``[^.!?]*\?``) is tried again from every character of a run that ends without a "?",
# which is quadratic: 100 KB without punctuation (a base64 image) took 20 s.
_SENTENCE = re.compile(r"[^.!?]*[.!?]?")
_WORD = re.compile(r"[^\W_]+")
# Whether a text asks, and what, is read from its beginning: a message is far shorter, and
# a 10 MB entry body took 2.3 s to scan, under the writer lock, for one flag of the catalog.
SCAN_CHARS = 50_000


def _questions(text: str) -> list[str]:
    """The sentences of ``text`` that end in a question mark (line breaks read as spaces)."""
    return [s for s in _SENTENCE.findall(" ".join(text.split())) if s.endswith("?")]


def question_words(text: str, limit: int = 40) -> list[str]:
    """The words of the questions in ``text`` (lower-cased, once each, in order).

    They become the keywords of the reply: an answer seldom repeats what it
    answers ("My friend got me into it" to "How did you get into watercolor
    painting?"), and a question asked of the memory is worded like the question
    that was asked in the conversation. Keywords are indexed in their own field,
    not shown as the entry's text. On LoCoMo this lifted evidence recall at 200
    words by 2.8 points (benchmarks/HISTORY.md); the whole previous message
    instead of its questions did less (+2.6, and 1.0 more noise at k = 5).
    """
    asked = " ".join(_questions(text[:SCAN_CHARS]))
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(asked) if len(w) > 2))[:limit]


def mostly_asks(text: str) -> bool:
    """More than half of the words of ``text`` (its first ``SCAN_CHARS``) are in questions
    ("Wow! Where was that?")."""
    text = text[:SCAN_CHARS]
    total = len(_WORD.findall(text))
    asked = sum(len(_WORD.findall(q)) for q in _questions(text))
    return total > 0 and asked * 2 > total

"""How long a question or a search query may be, checked wherever one comes in.

10,000 characters is about 1,500 words: four pages, room for a pasted paragraph or stack trace
with a question around it (the query graph asks with a chat's last human message). Ranking uses
far less of it: the encoder reads a question's first 256 tokens (about 1,000 characters), and
BM25 over hundreds of terms matches everything a little. Past that bound a question is not a
question, and each one cost the server tens of seconds of CPU and gigabytes (a 10 MB one took
24-42 s and grew the process from 1 to 3 GB), so it is refused before any work is done.
"""

from __future__ import annotations

from .errors import QuestionTooLong

MAX_QUESTION_CHARS = 10_000
LOGGED_QUESTION_CHARS = 500      # what the query log keeps of a question: it is only statistics


def check_length(text: str, what: str = "question") -> str:
    """``text`` itself, or ``QuestionTooLong`` when it is longer than ``MAX_QUESTION_CHARS``."""
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionTooLong(f"the {what} is {len(text):,} characters long; at most {MAX_QUESTION_CHARS:,} are "
                              f"accepted: ask with the key words, or the sentence that matters")
    return text


def logged(question: str) -> str:
    """The prefix of ``question`` the query log keeps."""
    if len(question) <= LOGGED_QUESTION_CHARS:
        return question
    return question[:LOGGED_QUESTION_CHARS] + "…"

"""Standing instructions and preferences: what the user said to hold from now on.

"Always include version numbers when I ask about libraries", "never push to main", "I prefer
e-books for their portability": a user who says this once expects it to shape every later
answer it bears on, as custom instructions or a project's rules file do. Such a message rarely
shares words with the later question it governs ("which libraries does this project use?"
matches the instruction on one word), so plain relevance leaves it below the messages that
merely discuss the topic. Search therefore keeps a standing statement that the question
matches at all, and lifts it (``standing_weight``, tree/ranking/own.py). A *rule* ("always",
"never", "from now on") is meant for every later request, whatever its words: while the
user has at most ``standing_rules`` of them, all accompany every search, after its best
hits, as custom instructions or a rules file would (beyond, those the search found). A *preference* ("I prefer e-books") bears on its topic
only, and rides on its words alone.

Only the user's messages to an AI assistant (role "user") are read so: such a rule is
addressed to the assistant. An assistant's "always back up your data" is advice, and between
two people "Always here to help!" is a greeting (35 of LoCoMo's 5,882 messages read as rules,
none of them one; flagging them cost LoCoMo 0.1–0.2 points of recall).
"""

from __future__ import annotations

import re

# A sentence that opens with a rule: "Always ...", "Please never ...", "From now on, use ...".
_RULE = re.compile(
    r"(?:^|[.!?;:\n]\s*)(?:(?:please|and|so|also|remember\s+to|from\s+now\s+on,?|going\s+forward,?|in\s+the\s+future,?)"
    r"\s+)*(?:always|never|(?:don't|do\s+not)\s+ever)\b", re.I)
# "from now on" or "going forward" anywhere: "use tabs from now on"
_FROM_NOW = re.compile(r"\b(?:from\s+now\s+on|going\s+forward)\b", re.I)
# the user's own preference: "I prefer", "I'd rather", "my preference is"
_PREFERS = re.compile(r"\b(?:i(?:'d|\s+would)?\s+(?:really\s+|much\s+|generally\s+|usually\s+|strongly\s+|always\s+)?"
                      r"(?:prefer|rather)|my\s+preference)\b", re.I)
# a statement is read from the beginning of a message: rules are said in a sentence or two
SCAN_CHARS = 2_000


NONE, PREFERENCE, RULE = 0, 1, 2


def standing_kind(text: str, role: str) -> int:
    """``RULE`` if ``text``, a message of ``role``, is the user's standing instruction,
    ``PREFERENCE`` if it states the user's preference, else ``NONE``."""
    if role != "user":
        return NONE
    head = text[:SCAN_CHARS].replace("\u2019", "'")
    if _RULE.search(head) or _FROM_NOW.search(head):
        return RULE
    return PREFERENCE if _PREFERS.search(head) else NONE


def states_standing(text: str, role: str) -> bool:
    """Whether ``text``, a message of ``role``, is the user's standing instruction or preference."""
    return standing_kind(text, role) != NONE

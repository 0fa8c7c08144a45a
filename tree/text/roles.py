"""Who said what an entry holds, and a question that asks about the assistant's words.

In a chat between a user and an AI assistant, a memory is asked about the user: what they
said, chose, own, plan. The assistant's replies are long and generic and repeat the user's
words ("recommend", "activity", "your project"), so on words alone they outrank the short
message that holds the fact. Search therefore keeps ``assistant_weight`` of the score of an
entry whose every message is the assistant's — unless the question is about what the
assistant said ("what did you recommend", "your suggestion", "the assistant's plan"); then
every entry keeps its whole score. Entries without roles (two people talking, notes, files)
are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

ASSISTANT = "assistant"
# roles the conversation formats use for the model's side (OpenAI "assistant", LangChain "ai")
_ASSISTANT_ROLES = {"assistant", "ai", "model", "bot"}

# A question about the assistant's words names the assistant, or speaks of what "you" said or
# did before: "what did you recommend", "the movies you suggested", "you'd mentioned". A request
# made now ("can you suggest", "would you recommend") is not: it asks the memory for what the
# user said, as most questions do. "your" is the assistant's only in a question whose asker
# speaks as "I" ("how did you tailor your advice to my ..."); in "how long is your session?"
# the one asked about is the user.
_SAID = ("recommend|suggest|advise|propose|mention|say|tell|explain|describe|outline|give|share|provide|help"
         "|guide|walk|break|show|tailor|point|offer|list|note|write|teach|warn|remind|correct|fix|answer|respond")
_SAID_PAST = ("recommended|suggested|advised|proposed|mentioned|said|told|explained|described|outlined|gave|given"
              "|shared|provided|helped|guided|walked|broke|showed|shown|tailored|pointed|offered|listed|noted|wrote"
              "|written|taught|warned|reminded|corrected|fixed|answered|responded")
_NAMES_ASSISTANT = re.compile(
    rf"\b(?:assistant|chatbot|did\s+you\s+(?:\w+\s+)?(?:{_SAID})|you(?:'ve|'d|\s+had|\s+have)?\s+(?:{_SAID_PAST}))\b",
    re.I)
_YOUR = re.compile(r"\byours?\b", re.I)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd)\b", re.I)


def role_of(sources: Iterable[Mapping[str, Any]]) -> str:
    """``"assistant"`` when every message an entry holds is an AI assistant's, ``"user"`` when
    every one is the user's, ``""`` otherwise (no roles, mixed, or not a conversation)."""
    roles = {str(s.get("role", "")).strip().lower() for s in sources if isinstance(s, Mapping)}
    if not roles or "" in roles:
        return ""
    if roles <= _ASSISTANT_ROLES:
        return ASSISTANT
    return "user" if roles == {"user"} or roles == {"human"} else ""


def source_of(sources: Iterable[Mapping[str, Any]]) -> str:
    """The one source an entry holds (``kind:ref``; the parts of a long message share it), or
    ``""`` when it holds none or several."""
    refs = {f"{s.get('kind', '')}:{s.get('ref', '')}" for s in sources if isinstance(s, Mapping) and s.get("ref")}
    return refs.pop() if len(refs) == 1 else ""


def names_assistant(question: str) -> bool:
    """Whether a question asks about what the assistant said or did before."""
    q = question.replace("\u2019", "'")
    return bool(_NAMES_ASSISTANT.search(q) or (_YOUR.search(q) and _FIRST_PERSON.search(q)))


def mutes(question: str, weight: float) -> bool:
    """Whether the assistant's entries keep only ``weight`` of their score for this question:
    the weight is below 1 and the question does not ask about the assistant's words."""
    return weight < 1.0 and not names_assistant(question)


def role_factors(question: str, roles: Mapping[str, str], weight: float) -> dict[str, float]:
    """``{path: factor}`` for the candidates whose entry is the assistant's: ``weight``, or
    nothing when the question asks about the assistant's words or the weight is 1."""
    if not mutes(question, weight):
        return {}
    return {p: weight for p, r in roles.items() if r == ASSISTANT}

"""Conversations in the shapes people have them, read into memgrove's one shape.

memgrove's own shape is ``{"id", "messages": [{"id", "speaker", "text", "time", "session"}]}``.
Also read, message by message (a list may mix them):

- OpenAI-style chat messages: ``{"role": "user"|"assistant"|"system"|"tool", "content": str |
  [content parts], "name"?}``; text parts (``{"type": "text", "text"}``) are kept, images and
  other parts are not text and are left out;
- LangChain message dicts ``{"type": "human"|"ai"|"system"|"tool", "content"}``, and the
  ``messages_to_dict`` shape ``{"type", "data": {"content", "id", ...}}``;
- LangChain message objects (``HumanMessage`` ...), read by their attributes: this module
  imports no LangChain.

The conversation may be a bare list of messages. What is absent is generated and marked as
generated (``Message.generated``, and the entry's sources say so): a conversation id from a
digest of how it begins (``identity``: its first messages other than system prompts, until
``IDENTITY_CHARS`` characters of words), so the same list curated again after it grew lands in
the same place and adds only its new messages; a message id from its position and a digest of its
words (``m3-1a2b3c``: an edited message is a new entry, never an overwrite of the old one).
Exports of whole chat histories (ChatGPT, Claude) are read by ``chat_exports``.

System prompts (role ``system``) are instructions to a model, not what was said: they are
skipped and counted (``skipped_system``) unless ``normalize(..., system=True)``.

A real export is curated, not refused whole: a message with no text (empty, only whitespace,
a tool call without text) is skipped and counted; a session that appears twice with the same
words, or a message repeated with its id and words, is curated once and counted. A message id
repeated with different words is an error: one of the two would be lost. Anything else that
cannot be read is an ``InvalidInput`` naming the message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..text.dates import readable_time
from ..base.errors import InvalidInput

SHAPE = ('a conversation is one of: an object {"id": ..., "title"?: ..., "messages": [...]}; a list of '
         'messages, each {"speaker", "text", "id"?, "time"?, "session"?}, {"role", "content"} (OpenAI) '
         'or a LangChain message ({"type", "content"} or {"type", "data"}); a list of such conversation '
         'objects; a ChatGPT export (conversations.json: a list of {"title", "mapping", "current_node"}); '
         'or a Claude export (a list of {"uuid", "name", "chat_messages"})')
# characters of words (after the first message, which is always taken) that decide a bare list's identity
IDENTITY_CHARS = 64

# LangChain message types -> the OpenAI role vocabulary, so that one word names a role whatever the input
LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool",
                   "developer": "system", "humanmessagechunk": "user", "aimessagechunk": "assistant",
                   "systemmessagechunk": "system", "toolmessagechunk": "tool"}
OPENAI_ROLES = {"user", "assistant", "system", "tool", "developer", "function"}
_TEXT_PARTS = {"text", "input_text", "output_text"}
_TIME_KEYS = ("time", "timestamp", "created_at", "create_time")


class NoText(InvalidInput):
    """A conversation none of whose messages has any text (an export may hold such chats)."""


@dataclass(frozen=True)
class Conversation:
    """A conversation in memgrove's shape, and what reading it left out."""

    id: str
    messages: list[dict[str, Any]]       # {"id", "speaker", "text"} + "time", "session", "role", "generated"
    id_generated: bool = False
    skipped_empty: list[int] = field(default_factory=list)       # 1-based positions in the input
    skipped_system: list[int] = field(default_factory=list)      # system prompts, when not asked for
    repeated_messages: list[int] = field(default_factory=list)   # same id, same words as an earlier one
    repeated_sessions: list[str] = field(default_factory=list)   # same session id, same messages
    title: str = ""                      # an export's title of the conversation
    started: str = ""                    # when it began and was last written, as the input says
    updated: str = ""

    def as_dict(self) -> dict[str, Any]:
        """memgrove's shape, read back by ``normalize`` to the same messages and marks."""
        out: dict[str, Any] = {"id": self.id, "messages": [dict(m) for m in self.messages]}
        if self.id_generated:
            out["id_generated"] = True
        for key in ("title", "started", "updated"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def digest(text: str, n: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def identity(messages: list[dict[str, Any]]) -> str:
    """A bare list's conversation id: a digest of its first message's speaker and words and of the
    next ones until ``IDENTITY_CHARS`` characters of words are taken. Two chats that both open
    with "hi" are told apart by what follows; a list that grew keeps its id."""
    taken, size = [], 0
    for m in messages:
        if taken and size >= IDENTITY_CHARS:
            break
        taken.append(f"{m.get('speaker')}\x1f{m['text']}")
        size += len(m["text"])
    return f"chat-{digest(chr(10).join(taken), 10)}"


def normalize(conv: Any, *, system: bool = False) -> Conversation:
    """Any accepted shape -> a ``Conversation``; an ``InvalidInput`` naming the message otherwise.
    ``system``: keep system prompts (skipped and counted by default)."""
    if isinstance(conv, Conversation):
        return conv
    given_id: Any = None
    meta: dict[str, str] = {}
    if isinstance(conv, Mapping):
        meta = {k: " ".join(conv[k].split()) for k in ("title", "started", "updated")
                if isinstance(conv.get(k), str) and conv[k].strip()}
        given_id = conv.get("id")
        raw = conv.get("messages")
        label = f"conversation {given_id}" if given_id is not None else "the conversation"
        if given_id is not None and (not isinstance(given_id, (str, int)) or isinstance(given_id, bool)
                                     or not any(ch.isalnum() for ch in str(given_id))):
            # letters of any script: an id in Cyrillic or Han gets a digest-named folder (placement.py)
            raise InvalidInput("the conversation needs an 'id' with letters or digits")
        if "messages" not in conv and given_id is None:
            raise InvalidInput(f"{label} has no 'messages' (keys: {', '.join(repr(k) for k in list(conv)[:6])}); "
                               + SHAPE)
        if not isinstance(raw, list) or not raw:
            raise InvalidInput(f"{label}: 'messages' must be a non-empty list")
    elif isinstance(conv, (list, tuple)):
        raw, label = list(conv), "the conversation"
        if not raw:
            raise InvalidInput("the conversation has no messages")
    else:
        raise InvalidInput(SHAPE)

    read: list[tuple[int, dict[str, Any]]] = []
    empty: list[int] = []
    prompts: list[int] = []
    said: list[dict[str, Any]] = []          # what the identity is read from: never a system prompt
    for i, m in enumerate(raw, 1):
        msg = read_message(m, i, label)
        if msg is None:
            empty.append(i)
            continue
        if msg.get("role") == "system":
            if not system:
                prompts.append(i)
                continue
        else:
            said.append(msg)
        read.append((i, msg))
    if not read:
        raise NoText(f"{label}: no message has any text ({len(empty)} empty message(s)"
                           + (f", {len(prompts)} system prompt(s) skipped" if prompts else "") + ")")

    if given_id is None or (isinstance(conv, Mapping) and conv.get("id_generated") is True):
        given_id = None
        cid, id_generated = identity(said or [m for _, m in read]), True
    else:
        cid, id_generated = str(given_id), False
    label = f"conversation {cid}"

    read, repeated_sessions = _drop_repeated_sessions(read)
    messages: list[dict[str, Any]] = []
    repeated: list[int] = []
    first_at: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, m in read:
        if m.get("id") is None:
            m["id"] = f"m{i}-{digest(str(m['speaker']) + chr(31) + m['text'])}"
            m["generated"] = ["id"]
        key = str(m["id"])
        if key in first_at:
            j, earlier = first_at[key]
            if _words_of(earlier) == _words_of(m):
                repeated.append(i)
                continue
            raise InvalidInput(f"{label}: message id {m['id']!r} appears twice (messages {j} and {i}) with "
                               "different words; give each message its own id")
        first_at[key] = (i, m)
        messages.append(m)
    return Conversation(cid, messages, id_generated, empty, prompts, repeated, repeated_sessions, **meta)


def read_message(m: Any, i: int, label: str) -> dict[str, Any] | None:
    """One message of any accepted shape -> memgrove's shape, or None when it has no text."""
    if isinstance(m, Mapping):
        if isinstance(m.get("data"), Mapping) and "type" in m and "speaker" not in m:
            return _langchain(dict(m["data"], type=m["type"]), i, label)
        if "speaker" in m or ("role" not in m and "type" not in m and "text" in m):
            return _memgrove(m, i, label)
        if "role" not in m and "type" not in m:
            raise InvalidInput(f"{label}: message {i} is in no shape memgrove reads (it has "
                               f"{', '.join(repr(k) for k in list(m)[:6]) or 'no keys'}); {SHAPE}")
        if "role" in m:
            return _openai(m, i, label)
        return _langchain(m, i, label)
    if hasattr(m, "type") and hasattr(m, "content"):           # a LangChain BaseMessage, duck-typed
        fields = {k: getattr(m, k, None) for k in ("type", "content", "id", "name", "tool_calls", "role")}
        kwargs = getattr(m, "additional_kwargs", None) or {}
        fields.update({k: kwargs[k] for k in _TIME_KEYS if k in kwargs})
        return _langchain(fields, i, label)
    raise InvalidInput(f"{label}: message {i} is not an object; {SHAPE}")


def _memgrove(m: Mapping[str, Any], i: int, label: str) -> dict[str, Any] | None:
    for key in ("speaker", "text"):
        if key not in m:
            raise InvalidInput(f"{label}: message {i} has no '{key}'")
    speaker = m["speaker"]
    if not _is_name(speaker):
        raise InvalidInput(f"{label}: message {i} has no 'speaker'")
    text = _text(m["text"], i, label, "text")
    if text is None:
        return None
    out = _common(m, i, label, text, str(speaker))
    if isinstance(m.get("role"), str) and m["role"].strip():
        out["role"] = m["role"].strip()
    generated = m.get("generated")
    if isinstance(generated, list) and generated and all(g in ("id",) for g in generated) and out["id"]:
        out["generated"] = list(generated)       # read back from ``Conversation.as_dict``
    return out


def _openai(m: Mapping[str, Any], i: int, label: str) -> dict[str, Any] | None:
    role = m.get("role")
    if not isinstance(role, str) or role.strip().lower() not in OPENAI_ROLES:
        raise InvalidInput(f"{label}: message {i} has role {role!r}; expected one of "
                           "'user', 'assistant', 'system', 'tool'")
    role = role.strip().lower()
    if "content" not in m and not (m.get("tool_calls") or m.get("function_call")):
        raise InvalidInput(f"{label}: message {i} has no 'content'")
    text = _text(m.get("content"), i, label, "content")
    if text is None:
        return None
    role = {"developer": "system", "function": "tool"}.get(role, role)
    speaker = m.get("name") if _is_name(m.get("name")) else role
    return dict(_common(m, i, label, text, str(speaker).strip()), role=role)


def _langchain(m: Mapping[str, Any], i: int, label: str) -> dict[str, Any] | None:
    kind = m.get("type")
    role = LANGCHAIN_ROLES.get(kind.strip().lower()) if isinstance(kind, str) else None
    if kind == "chat" and isinstance(m.get("role"), str) and m["role"].strip():
        role = m["role"].strip()
    if role is None:
        raise InvalidInput(f"{label}: message {i} has type {kind!r}; expected one of "
                           "'human', 'ai', 'system', 'tool'")
    if "content" not in m:
        raise InvalidInput(f"{label}: message {i} has no 'content'")
    text = _text(m.get("content"), i, label, "content")
    if text is None:
        return None
    speaker = m.get("name") if _is_name(m.get("name")) else role
    return dict(_common(m, i, label, text, str(speaker).strip()), role=role)


def _common(m: Mapping[str, Any], i: int, label: str, text: str, speaker: str) -> dict[str, Any]:
    out: dict[str, Any] = {"id": None, "speaker": speaker, "text": text}
    mid = m.get("id")
    if mid is not None:
        if not _is_name(mid):
            raise InvalidInput(f"{label}: message {i} has an 'id' that is not a name or number ({mid!r})")
        out["id"] = str(mid)
    for key in _TIME_KEYS:
        when = m.get(key)
        if when is None or when == "":
            continue
        readable = readable_time(when)
        if readable is None:
            raise InvalidInput(f"{label}: message {i} has a time that names no date ({key} {when!r}); give "
                               "ISO 8601 such as 2023-05-08T13:56:00Z, a date such as '8 May 2023', or leave it out")
        out["time"] = readable
        break
    session = m.get("session")
    if session is not None and session != "":
        if not _is_name(session):
            raise InvalidInput(f"{label}: message {i} has a 'session' that is not a name or number ({session!r})")
        out["session"] = session if isinstance(session, str) else str(session)
    return out


def _text(content: Any, i: int, label: str, key: str) -> str | None:
    """The words of a message's content; None when it has none (skipped, not refused)."""
    if content is None:
        return None
    if isinstance(content, (int, float)) and not isinstance(content, bool):
        content = str(content)
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, list):
        words = []
        for part in content:
            if isinstance(part, str):
                words.append(part)
            elif isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
                words.append(part["text"])
            elif not isinstance(part, Mapping):
                raise InvalidInput(f"{label}: message {i} has a content part that is not text or an object")
        text = "\n".join(w for w in words if w.strip())
        return text if text.strip() else None
    raise InvalidInput(f"{label}: message {i} has a '{key}' that is a {type(content).__name__}, "
                       "not text or a list of content parts")


def _is_name(v: Any) -> bool:
    return isinstance(v, (str, int)) and not isinstance(v, bool) and bool(str(v).strip())


def _words_of(m: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(m.get(k) for k in ("speaker", "text", "time", "session", "role"))


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a.get("id") == b.get("id") and _words_of(a) == _words_of(b)


def _drop_repeated_sessions(read: list[tuple[int, dict[str, Any]]]
                            ) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """A session (a run of messages with one ``session``) that repeats an earlier run of the same
    session word for word is dropped: exports that append a session twice are common."""
    runs: list[list[tuple[int, dict[str, Any]]]] = []
    for item in read:
        s = item[1].get("session")
        # the session's first message again starts a new run: a session pasted twice in a row
        if runs and s is not None and runs[-1][0][1].get("session") == s and not _same(runs[-1][0][1], item[1]):
            runs[-1].append(item)
        else:
            runs.append([item])
    kept: list[tuple[int, dict[str, Any]]] = []
    seen: dict[str, list[tuple[Any, ...]]] = {}
    repeated: list[str] = []
    for run in runs:
        s = run[0][1].get("session")
        words = [(m.get("id"), *_words_of(m)) for _, m in run]
        if s is not None and seen.get(str(s)) == words:
            repeated.append(str(s))
            continue
        if s is not None:
            seen.setdefault(str(s), words)
        kept += run
    return kept, repeated

"""Chat exports people have, read into conversations ``conversation_formats`` takes.

A file (or value) given as a conversation may hold several (``conversations``):

- a **ChatGPT data export** (``conversations.json``): a list of conversations, each with
  ``title``, ``create_time``, ``update_time`` and a ``mapping`` of nodes ``{id: {"message",
  "parent", "children"}}``; a message has ``author.role``, ``content.parts`` and ``create_time``
  (seconds since 1970). Only the branch that was kept is read: from ``current_node`` back to the
  root (an edited question leaves its earlier branch in the tree);
- a **Claude export**: a list of conversations with ``uuid``, ``name``, ``created_at`` and
  ``chat_messages`` (``sender``, ``text`` or ``content`` parts, ``created_at``, ``uuid``);
- a list of memgrove conversations (``{"id", "messages"}``), or one conversation of any shape
  ``conversation_formats`` reads (a bare list of messages included).

Each exported conversation keeps its id (the export's, so curating a newer export of the same
chats adds only what is new), its title and its messages' ids and times.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from .conversation_formats import Conversation, NoText, normalize
from ..base.errors import InvalidInput

_CHATGPT_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
_CLAUDE_ROLES = {"human": "user", "assistant": "assistant"}


def conversations(data: Any) -> list[Any]:
    """The conversations ``data`` holds, each in a shape ``conversation_formats.normalize`` reads."""
    if isinstance(data, Mapping) and ("mapping" in data or "chat_messages" in data):
        data = [data]
    if isinstance(data, list) and data and all(isinstance(c, Mapping) for c in data):
        if all("mapping" in c for c in data):
            return [_chatgpt(c, i) for i, c in enumerate(data, 1)]
        if all("chat_messages" in c for c in data):
            return [_claude(c, i) for i, c in enumerate(data, 1)]
        if all(isinstance(c.get("messages"), list) for c in data):
            return list(data)
    return [data]


def read(data: Any, *, system: bool = False) -> tuple[list[Conversation], int]:
    """Every conversation ``data`` holds, read (``normalize``), and how many of an export's were
    left out for holding no text; a single conversation without any is an error, as is an
    export with none."""
    found = conversations(data)
    if len(found) == 1:
        return [normalize(found[0], system=system)], 0
    out: list[Conversation] = []
    for c in found:
        if isinstance(c, Mapping) and c.get("messages") == []:
            continue        # a chat opened and left: nothing to curate, not an error in an export
        try:
            out.append(normalize(c, system=system))
        except NoText:
            pass
    if not out:
        raise InvalidInput(f"none of the {len(found)} conversations has any text")
    return out, len(found) - len(out)


def _iso(seconds: Any) -> str | None:
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def _chatgpt(conv: Mapping[str, Any], n: int) -> dict[str, Any]:
    mapping = conv.get("mapping")
    cid = conv.get("conversation_id") or conv.get("id")
    if not isinstance(mapping, Mapping) or not cid:
        raise InvalidInput(f"ChatGPT export: conversation {n} has no 'mapping' of messages or no 'id'")
    messages = []
    for node in _kept_branch(mapping, conv.get("current_node")):
        m = node.get("message") if isinstance(node, Mapping) else None
        if not isinstance(m, Mapping):
            continue
        meta = m.get("metadata") or {}
        if isinstance(meta, Mapping) and meta.get("is_visually_hidden_from_conversation"):
            continue          # the app's own hidden system messages
        role = _CHATGPT_ROLES.get(str((m.get("author") or {}).get("role", "")).lower())
        content = m.get("content") or {}
        parts = content.get("parts") if isinstance(content, Mapping) else None
        if isinstance(content, Mapping) and parts is None and isinstance(content.get("text"), str):
            parts = [content["text"]]          # code and execution output
        text = "\n".join(p for p in parts or [] if isinstance(p, str) and p.strip())
        if role is None:
            continue
        msg = {"role": role, "content": text, "id": m.get("id") or node.get("id")}
        when = _iso(m.get("create_time"))
        if when:
            msg["create_time"] = when
        messages.append(msg)
    return _conversation(cid, conv.get("title"), messages, _iso(conv.get("create_time")),
                         _iso(conv.get("update_time")))


def _kept_branch(mapping: Mapping[str, Any], current: Any) -> list[Mapping[str, Any]]:
    """The nodes from the root to ``current_node`` (without one: to the last child of each node)."""
    if current not in mapping:
        roots = [k for k, v in mapping.items() if isinstance(v, Mapping) and v.get("parent") not in mapping]
        current = roots[0] if roots else None
        while current is not None and (mapping.get(current) or {}).get("children"):
            current = mapping[current]["children"][-1]
    branch, seen = [], set()
    while current is not None and current in mapping and current not in seen:
        seen.add(current)
        branch.append(mapping[current])
        current = mapping[current].get("parent")
    return branch[::-1]


def _claude(conv: Mapping[str, Any], n: int) -> dict[str, Any]:
    cid = conv.get("uuid") or conv.get("id")
    msgs = conv.get("chat_messages")
    if not cid or not isinstance(msgs, list):
        raise InvalidInput(f"Claude export: conversation {n} has no 'uuid' or no 'chat_messages' list")
    messages = []
    for m in msgs:
        if not isinstance(m, Mapping):
            continue
        text = m.get("text")
        if not isinstance(text, str) or not text.strip():
            parts = m.get("content") if isinstance(m.get("content"), list) else []
            text = "\n".join(p["text"] for p in parts if isinstance(p, Mapping) and p.get("type") == "text"
                             and isinstance(p.get("text"), str))
        msg = {"role": _CLAUDE_ROLES.get(str(m.get("sender", "")).lower(), "user"), "content": text,
               "id": m.get("uuid")}
        if m.get("created_at"):
            msg["created_at"] = m["created_at"]
        messages.append(msg)
    return _conversation(cid, conv.get("name"), messages, conv.get("created_at"), conv.get("updated_at"))


def _conversation(cid: Any, title: Any, messages: list[dict[str, Any]], started: Any, updated: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": str(cid), "messages": messages}
    if isinstance(title, str) and title.strip():
        out["title"] = " ".join(title.split())
    for key, when in (("started", started), ("updated", updated)):
        if isinstance(when, str) and when:
            out[key] = when
    return out

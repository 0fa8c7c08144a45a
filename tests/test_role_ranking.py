"""Role-aware ranking: in a chat with an AI assistant, what the user said outweighs the
assistant's reply that repeats the question's words, unless the question asks what the
assistant said; entries without roles rank as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.text import roles
from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.settings import TreeSettings

FOLDER = "conversations/c1/session_2024_03_15"
USER, REPLY = f"{FOLDER}/1.md", f"{FOLDER}/2.md"


def chat(user_role: str | None = "user", assistant_role: str | None = "assistant") -> dict:
    user = {"id": "1", "speaker": "user", "text": "I switched my music service to Tidal last week.",
            "time": "2024-03-15"}
    # a reply that repeats the question's generic words, as assistants do
    reply = {"id": "2", "speaker": "assistant", "time": "2024-03-15",
             "text": "Great choice of music service! A music service like that is a fine service for music: "
                     "a music service with lossless music, and I recommend trying its music service playlists."}
    if user_role:
        user["role"] = user_role
    if assistant_role:
        reply["role"] = assistant_role
    return {"id": "c1", "messages": [user, reply]}


def _order(mem: Memory, question: str) -> list[str]:
    return [h.path for h in mem.tree.search(question) if h.kind == "entry"]


def test_role_of_an_entry_and_questions_that_name_the_assistant() -> None:
    assert roles.role_of([{"ref": "c#1", "role": "assistant"}]) == "assistant"
    assert roles.role_of([{"ref": "c#1", "role": "ai"}, {"ref": "c#2", "role": "assistant"}]) == "assistant"
    assert roles.role_of([{"ref": "c#1", "role": "user"}]) == "user"
    assert roles.role_of([{"ref": "c#1", "role": "user"}, {"ref": "c#2", "role": "assistant"}]) == ""
    assert roles.role_of([{"ref": "c#1"}]) == roles.role_of([]) == ""
    for q in ("What did you recommend for my music service?", "Which playlists you suggested did I like?",
              "How did you help me pick a music service?", "What was the assistant's advice?",
              "Summarize the changes I made and the solutions you'd suggested"):
        assert roles.names_assistant(q), q
    for q in ("Which music service do I use?", "Can you suggest a music service for me?",
              "How would you suggest I organize my day?", "How long is your batch cooking session?",
              "Which AI screening tool did the team pick?"):
        assert not roles.names_assistant(q), q
    assert roles.role_factors("Which music service do I use?", {"a": "assistant", "u": "user", "x": ""}, 0.5) \
        == {"a": 0.5}
    assert roles.role_factors("What did you recommend?", {"a": "assistant"}, 0.5) == {}
    assert roles.role_factors("Which music service do I use?", {"a": "assistant"}, 1.0) == {}


def test_the_users_message_outranks_the_assistants_echo(mem: Memory) -> None:
    mem.ingest(conversation=chat())
    assert mem.tree.catalog.traits_of([USER, REPLY])[REPLY].role == "assistant"
    assert mem.tree.catalog.traits_of([USER, REPLY])[USER].role == "user"
    assert _order(mem, "Which music service do I use?")[0] == USER
    # a question about what the assistant said keeps the assistant's reply whole
    assert _order(mem, "Which music service did you recommend?")[0] == REPLY


def test_weight_one_and_entries_without_roles_rank_as_before(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "a", create=True, durable=False, assistant_weight=1.0) as mem:
        mem.ingest(conversation=chat())
        assert _order(mem, "Which music service do I use?")[0] == REPLY     # the echo wins on words alone
    with Memory.open(tmp_path / "b", create=True, durable=False) as mem:      # two people, no roles
        mem.ingest(conversation=chat(None, None))
        assert mem.tree.catalog.traits_of([REPLY])[REPLY].role == ""
        assert _order(mem, "Which music service do I use?")[0] == REPLY


def test_assistant_weight_is_checked(tmp_path: Path) -> None:
    assert TreeSettings().assistant_weight == 0.5
    with pytest.raises(MemgroveError, match="assistant_weight must be between 0 and 1"):
        Memory.open(tmp_path, create=True, assistant_weight=1.5)

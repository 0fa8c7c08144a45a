"""The verbatim curator curates a long conversation message as linked entries of its paragraphs,
so a reader's context budget buys the part that matched; every word stays searchable and each
part keeps the message's id, role and time, so recall maps back to the message."""

from __future__ import annotations

import pytest

from memgrove import InvalidInput, Memory
from memgrove.tree.inputs import curator

PARA = "The {n} paragraph talks about {topic} and only about {topic}, in some twenty words of plain prose here."
TOPICS = ["espresso grinders", "rock climbing", "tax returns", "sourdough starters", "bicycle gears",
          "garden compost", "piano scales", "sailing knots"]


def long_reply() -> str:
    return "\n\n".join(PARA.format(n=n, topic=t) for n, t in enumerate(TOPICS, 1))


def chat(reply: str) -> dict:
    return {"id": "c1", "messages": [
        {"id": "1", "speaker": "user", "role": "user", "text": "Any tips on my hobbies?", "time": "2024-03-15"},
        {"id": "2", "speaker": "assistant", "role": "assistant", "text": reply, "time": "2024-03-15"},
        {"id": "3", "speaker": "user", "role": "user", "text": "Thanks, I bought the grinder.", "time": "2024-03-15"},
    ]}


def _words(text: str) -> list[str]:
    return [w for w in text.split() if not w.startswith("```")]


def test_message_parts_keep_every_word_in_order_within_the_bound() -> None:
    text = long_reply()
    parts = curator.message_parts(text, 50)
    assert len(parts) > 1
    assert all(len(p.split()) <= 50 for p in parts)
    assert _words("\n\n".join(parts)) == _words(text)
    # cut between paragraphs: each paragraph is whole in one part
    for par in text.split("\n\n"):
        assert any(par in p for p in parts)
    assert curator.message_parts("Short message,\n  kept   whole.", 50) == ["Short message, kept whole."]


def test_run_on_sentence_and_code_block_are_cut_within_the_bound() -> None:
    run_on = " ".join(f"word{i}" for i in range(130))      # no sentence end at all
    parts = curator.message_parts(run_on, 50)
    assert [len(p.split()) for p in parts] == [50, 50, 30]
    code = "```python\n" + "\n".join(f"x{i} = compute({i})  # step {i}" for i in range(40)) + "\n```"
    parts = curator.message_parts("Here is the code:\n\n" + code, 60)
    assert len(parts) > 2 and all(len(p.split()) <= 62 for p in parts)   # + the fence lines a cut adds
    blocks = [p[p.index("```"):] for p in parts if "```" in p]
    assert all(b.startswith("```python") and b.rstrip().endswith("```") for b in blocks)   # each part reads as code
    assert _words("\n".join(parts)) == _words("Here is the code:\n\n" + code)


def test_long_message_becomes_linked_parts_with_the_message_sources(tmp_path) -> None:
    with Memory.open(tmp_path, create=True, durable=False, part_words=50) as mem:
        mem.ingest(conversation=chat(long_reply()))
        folder = "conversations/c1/session_2024_03_15"
        parts = [f"{folder}/2.md"] + [f"{folder}/2_part_{i}.md" for i in range(2, 5)]
        assert mem.tree.entries_under(folder) == sorted([f"{folder}/1.md", *parts, f"{folder}/3.md"])
        entries = [mem.read(p) for p in parts]
        for i, e in enumerate(entries, 1):
            assert e.sources == [{"kind": "conversation", "ref": "c1#2", "at": "2024-03-15", "role": "assistant"}]
            assert e.title == f"assistant, 15 March 2024 (part {i} of 4)"
        assert _words("\n\n".join(e.sections["Narrative"] for e in entries)) == _words(long_reply())
        # the thread runs question -> part 1 -> ... -> part 4 -> next message
        chain = [f"{folder}/1.md", *parts, f"{folder}/3.md"]
        for a, b in zip(chain, chain[1:]):
            assert mem.read(a).related == [b]
        # a budget buys the paragraph that matched: the compost part, not the whole reply
        hit = mem.tree.search("garden compost", limit=1)[0]
        assert hit.path in parts and "compost" in mem.read(hit.path).sections["Narrative"]
        assert len(mem.read(hit.path).sections["Narrative"].split()) <= 50
        # curating the same chat again changes nothing
        assert {r.status for r in mem.ingest(conversation=chat(long_reply()))} == {"unchanged"}


def test_an_assistant_reply_gets_no_keywords_a_persons_reply_does(mem: Memory) -> None:
    mem.ingest(conversation=chat("Try a burr grinder?"))
    # the user's answer to the assistant's question keeps its words
    assert mem.read("conversations/c1/session_2024_03_15/3.md").keywords == ["try", "burr", "grinder"]
    mem.ingest(conversation={"id": "c2", "messages": [
        {"id": "1", "speaker": "Ana", "text": "Which grinder did you buy?", "time": "2024-03-15"},
        {"id": "2", "speaker": "Ben", "text": "The burr one.", "time": "2024-03-15"}]})
    assert mem.read("conversations/c1/session_2024_03_15/2.md").keywords == []
    assert mem.read("conversations/c2/session_2024_03_15/2.md").keywords == ["which", "grinder", "did", "you", "buy"]


def test_part_words_is_checked() -> None:
    with pytest.raises(InvalidInput, match="part_words"):
        curator.ops_from_conversation(chat("x"), part_words=0)

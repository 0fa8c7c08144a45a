"""Chunking long inputs for the LLM curator (tree/inputs/chunks.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgrove.tree.inputs.chunks import conversation_chunks, text_chunks
from memgrove.tree.base.errors import InvalidInput

SAMPLE = Path(__file__).parents[1] / "memgrove" / "data" / "sample" / "conversation.json"
FENCE = "```python\n" + "\n".join(f"x_{i} = {i}  # a line of code" for i in range(60)) + "\n```"


def test_a_fenced_code_block_is_never_split_even_when_larger_than_a_chunk():
    text = "Intro paragraph about the config.\n\n" + FENCE + "\n\nClosing words after the code."
    chunks = text_chunks(text, size=300, overlap=0)
    assert len(FENCE) > 300
    holding = [c for c in chunks if "x_0 = 0" in c.text]
    assert len(holding) == 1 and FENCE in holding[0].text
    assert all(c.text.count("```") % 2 == 0 for c in chunks)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet="abc .!?\n", min_size=1, max_size=400),
                          st.just(FENCE)), min_size=1, max_size=12),
       st.integers(200, 900), st.integers(0, 150))
def test_chunks_keep_every_word_in_order_and_fences_whole(parts, size, overlap):
    text = "\n\n".join(parts)
    if not text.strip():
        return
    chunks = text_chunks(text, size=size, overlap=overlap)
    assert " ".join(" ".join(c.text for c in chunks).split()) == " ".join(text.split())
    for c in chunks:
        assert c.text.count("```") % 2 == 0
        assert len(c.text) <= size or "```" in c.text
        assert len(c.context) <= overlap


def test_text_chunks_carry_provenance_and_overlap():
    paras = [f"Paragraph {i} says the value is {i * 7}." for i in range(40)]
    chunks = text_chunks("\n\n".join(paras), size=400, overlap=80, source="notes.md", kind="file", at="2026-01-01")
    assert len(chunks) > 3
    assert chunks[0].sources == [{"kind": "file", "ref": "notes.md#part1", "at": "2026-01-01"}]
    assert chunks[0].context == "" and chunks[1].context and chunks[1].context in chunks[0].text
    assert chunks[1].label == f"notes.md, part 2 of {len(chunks)}"


def test_conversation_chunks_hold_whole_messages_with_ids_times_and_never_span_sessions():
    conv = json.loads(SAMPLE.read_text())
    chunks = conversation_chunks(conv, size=1200, overlap=300)
    ids = [s["ref"].split("#")[1] for c in chunks for s in c.sources]
    assert ids == [m["id"] for m in conv["messages"]]             # every message once, in order
    by_id = {m["id"]: m for m in conv["messages"]}
    for c in chunks:
        sessions = {by_id[s["ref"].split("#")[1]]["session"] for s in c.sources}
        assert len(sessions) == 1
        first = by_id[c.sources[0]["ref"].split("#")[1]]
        assert c.text.startswith(f"[{first['id']}] ({first['time']}) {first['speaker']}: ")
        assert c.sources[0]["at"] == first["time"]
    # the first chunk of a session repeats nothing from the previous session
    starts = [c for c in chunks if c.sources[0]["ref"].endswith("_m1")]
    assert starts and all(c.context == "" for c in starts)
    assert any(c.context for c in chunks)


def test_bad_sizes_and_empty_input_are_clear_errors():
    with pytest.raises(InvalidInput, match="too small"):
        text_chunks("x", size=10, overlap=0)
    with pytest.raises(InvalidInput, match="smaller than the chunk size"):
        text_chunks("x", size=500, overlap=500)
    with pytest.raises(InvalidInput, match="empty"):
        text_chunks("  \n", size=500, overlap=0)
    with pytest.raises(InvalidInput, match="messages"):
        conversation_chunks({"id": "c", "messages": []}, size=500, overlap=0)


def test_a_table_larger_than_a_chunk_is_cut_between_rows_under_its_header():
    header = "| Setting | Default |\n| --- | --- |"
    rows = [f"| setting-{i} | {i} seconds |" for i in range(60)]
    chunks = text_chunks("The settings:\n" + header + "\n" + "\n".join(rows), size=300, overlap=0)
    assert len(chunks) > 2
    seen = []
    for c in chunks:
        lines = c.text.split("\n")
        held = [ln for ln in lines if ln.startswith("| setting-")]
        if held:
            start = lines.index(held[0])
            assert "\n".join(lines[start - 2:start]) == header     # a row is never read without its header
        seen += held
    assert seen == rows

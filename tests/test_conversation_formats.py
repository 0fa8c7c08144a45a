"""Conversations in the shapes people have them: OpenAI-style message lists, LangChain message
dicts and objects, exports with empty and repeated messages (tree/inputs/conversation_formats.py)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_to_dict

from memgrove import InvalidInput
from memgrove.cli import cli
from memgrove.tree.inputs import conversation_formats as cf
from memgrove.tree.inputs.chunks import conversation_chunks

OPENAI = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Our staging database moved to port 6543."},
    {"role": "assistant", "content": [{"type": "text", "text": "Noted: staging listens on 6543."},
                                      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                                                           "function": {"name": "save", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "saved"},
    {"role": "user", "content": "   "},
]


def test_a_bare_openai_message_list_is_curated_with_roles_and_generated_ids_and_times(mem) -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    results = mem.ingest(conversation=OPENAI)
    assert [r.status for r in results] == ["added"] * 3
    # the tool call without text, the blank message; the system prompt is an instruction, not said
    assert results.skipped == {"empty messages": 2, "system prompts": 1}
    read = [mem.read(r.path) for r in results]
    srcs = [e.sources[0] for e in read]
    assert [s["role"] for s in srcs] == ["user", "assistant", "tool"]
    assert [e.tags for e in read] == [["user"], ["assistant"], ["tool"]]
    cid = srcs[0]["ref"].split("#")[0]
    assert cid.startswith("chat-")
    # positional ids (the message's place in the list) with a digest of its words, marked as generated
    assert [s["ref"].split("#")[1].split("-")[0] for s in srcs] == ["m2", "m3", "m5"]
    assert all(s["generated"] == "conversation id, id, time" for s in srcs)
    assert all(datetime.fromisoformat(s["at"].replace("Z", "+00:00")) >= before for s in srcs)
    # text parts kept, the image left out
    assert read[1].sections["Narrative"] == "Noted: staging listens on 6543."
    # asked for, the system prompt is kept, and the conversation is the same one
    kept = mem.ingest(conversation=OPENAI, system=True)
    assert [r.status for r in kept] == ["added"] + ["unchanged"] * 3
    assert mem.read(kept[0].path).sources[0]["role"] == "system"
    assert mem.search("staging port 6543")[0].path in {r.path for r in results}


def test_the_same_list_again_changes_nothing_and_an_edited_message_overwrites_nothing(mem) -> None:
    first = mem.ingest(conversation=OPENAI)
    again = mem.ingest(conversation=OPENAI)
    assert [r.status for r in again] == ["unchanged"] * 3
    assert [r.path for r in again] == [r.path for r in first]
    # the same chat with an id given, one message edited: the old words stay, the new ones are added
    chat = {"id": "support-42", "messages": OPENAI[:2]}
    [old] = mem.ingest(conversation=chat)
    edited = {"id": "support-42", "messages": [OPENAI[0], {"role": "user", "content": "Staging moved to 7000."}]}
    [new] = mem.ingest(conversation=edited)
    assert new.status == "added" and new.path != old.path
    assert "6543" in mem.read(old.path).sections["Narrative"]
    assert "7000" in mem.read(new.path).sections["Narrative"]


def test_langchain_message_dicts_both_shapes(mem) -> None:
    plain = {"id": "lc", "messages": [{"type": "human", "content": "Deploys freeze on Fridays."},
                                      {"type": "ai", "content": "Understood, no Friday deploys.", "id": "run-1"}]}
    results = mem.ingest(conversation=plain)
    srcs = [mem.read(r.path).sources[0] for r in results]
    assert [(s["role"], s["ref"].split("#")[1][:3]) for s in srcs] == [("user", "m1-"), ("assistant", "run")]
    assert srcs[1]["ref"] == "lc#run-1" and srcs[1]["generated"] == "time"       # its id was given
    dumped = messages_to_dict([HumanMessage("The VPN certificate expires in June 2026."),
                               AIMessage("I will remind you in May.", name="helper")])
    assert dumped[0]["data"]["type"] == "human"                                 # the {"type", "data"} shape
    results = mem.ingest(conversation=dumped)
    read = [mem.read(r.path) for r in results]
    assert [e.sources[0]["role"] for e in read] == ["user", "assistant"]
    assert read[1].tags == ["helper"]                                           # a name is the speaker
    assert read[0].sections["Narrative"] == "The VPN certificate expires in June 2026."


def test_langchain_message_objects_skip_tool_calls_without_text(mem) -> None:
    msgs = [SystemMessage("Be brief."), HumanMessage("Where do the backups go?", id="h1"),
            AIMessage("", tool_calls=[{"name": "search", "args": {"q": "backups"}, "id": "t1"}]),
            ToolMessage("s3://backups/nightly", tool_call_id="t1"),
            AIMessage([{"type": "text", "text": "Nightly backups go to s3://backups/nightly."}])]
    results = mem.ingest(conversation={"id": "agent-run", "messages": msgs})
    assert results.skipped == {"empty messages": 1, "system prompts": 1}
    srcs = [mem.read(r.path).sources[0] for r in results]
    assert [s["role"] for s in srcs] == ["user", "tool", "assistant"]
    assert srcs[0]["ref"] == "agent-run#h1"
    assert mem.read(results[2].path).sections["Narrative"] == "Nightly backups go to s3://backups/nightly."


def test_a_session_twice_is_curated_once_and_counted(mem) -> None:
    s1 = [{"id": f"s1_m{i}", "speaker": "Ana", "text": f"first session line {i}", "time": "2024-03-01",
           "session": "s1"} for i in range(3)]
    s2 = [{"id": "s2_m0", "speaker": "Ben", "text": "second session", "time": "2024-03-02", "session": "s2"}]
    results = mem.ingest(conversation={"id": "export", "messages": s1 + s2 + s1})
    assert len(results) == 4 and all(r.status == "added" for r in results)
    assert results.skipped == {"repeated sessions": 1}
    # a session without ids (positional ids cannot tell) is recognised by its session and words
    bare = [{k: v for k, v in m.items() if k != "id"} for m in s1]
    results = mem.ingest(conversation={"id": "export2", "messages": bare + bare})
    assert len(results) == 3 and results.skipped == {"repeated sessions": 1}


def test_a_message_repeated_is_curated_once_but_an_id_with_other_words_is_refused(mem) -> None:
    m = {"id": "7", "speaker": "Ana", "text": "hello", "time": "2024-01-01T00:00:00Z"}
    results = mem.ingest(conversation={"id": "c", "messages": [m, dict(m, id="8", text="bye"), m]})
    assert len(results) == 2 and results.skipped == {"repeated messages": 1}
    with pytest.raises(InvalidInput, match=r"conversation d: message id '7' appears twice \(messages 1 and 2\) "
                                           "with different words"):
        mem.ingest(conversation={"id": "d", "messages": [m, dict(m, text="changed")]})
    assert not mem.tree.entries_under("conversations/d")


@pytest.mark.parametrize(("conv", "message"), [
    ([{"role": "wizard", "content": "hi"}], "the conversation: message 1 has role 'wizard'; expected one of"),
    ([{"role": "user", "content": "a"}, {"role": "user"}], "the conversation: message 2 has no 'content'"),
    ([{"role": "user", "content": {"text": "a"}}], "message 1 has a 'content' that is a dict, not text"),
    ([{"type": "robot", "content": "x"}], "message 1 has type 'robot'; expected one of 'human', 'ai'"),
    ({"id": "c", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [3]}]},
     "conversation c: message 2 has a content part that is not text"),
    ([{"role": "user", "content": "a", "timestamp": "last Tuesday"}], "message 1 has a time that names no date"),
    ([{"role": "user", "content": ""}, {"type": "ai", "content": None}], "no message has any text (2 empty"),
    ([], "the conversation has no messages"),
    ("not a conversation", "a conversation is one of: an object"),
])
def test_what_cannot_be_read_is_a_clear_error_naming_the_message(conv, message) -> None:
    with pytest.raises(InvalidInput) as info:
        cf.normalize(conv)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("when", "kept"), [
    ("2023-05-08T13:56:00Z", "2023-05-08T13:56:00Z"), ("1:56 pm on 8 May, 2023", "1:56 pm on 8 May, 2023"),
    ("2023/06/01 (Thu) 17:30", "2023/06/01 (Thu) 17:30"), (1700000000, "2023-11-14T22:13:20Z"),
    (1700000000.25, "2023-11-14T22:13:20Z")])
def test_readable_times_are_kept_and_epoch_seconds_become_iso(when, kept) -> None:
    [m] = cf.normalize([{"role": "user", "content": "x", "created_at": when}]).messages
    assert m["time"] == kept


@pytest.mark.parametrize("when", ["yesterday", "8 May", "soon", "2023-02-30", 1700000000000, True])
def test_unreadable_times_are_refused(when) -> None:
    with pytest.raises(InvalidInput, match="names no date"):
        cf.normalize({"id": "c", "messages": [{"id": 1, "speaker": "Ana", "text": "x", "time": when}]})


def test_memgroves_own_shape_reads_back_unchanged() -> None:
    conv = {"id": "conv-26", "messages": [
        {"id": "D1:1", "speaker": "Ana", "text": "I adopted a greyhound.", "time": "1:56 pm on 8 May, 2023",
         "session": "session_1"}]}
    read = cf.normalize(conv)
    assert read.as_dict() == conv and not read.id_generated
    again = cf.normalize(cf.normalize(OPENAI).as_dict())
    assert (again.id, again.messages, again.id_generated) == (cf.normalize(OPENAI).id, cf.normalize(OPENAI).messages, True)


def test_the_llm_curators_chunks_read_the_same_shapes() -> None:
    [chunk] = conversation_chunks(OPENAI, size=1200, overlap=0)
    assert "user: Our staging database moved to port 6543." in chunk.text
    assert [s["role"] for s in chunk.sources] == ["user", "assistant", "tool"]
    assert all("id" in s["generated"] for s in chunk.sources)


def test_cli_curates_an_openai_export_and_shows_what_it_skipped(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chat.json").write_text(json.dumps(OPENAI))
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    out = runner.invoke(cli, ["curate", "--conversation", "chat.json"])
    assert out.exit_code == 0, out.output
    assert "3 added" in out.output and "skipped 2 empty messages, 1 system prompt" in out.output
    out = runner.invoke(cli, ["curate", "--conversation", "chat.json", "--json"])
    assert out.exit_code == 0
    report = json.loads(out.stdout)
    assert [r["status"] for r in report["applied"]] == ["unchanged"] * 3
    assert report["skipped"] == {"empty messages": 2, "system prompts": 1}
    (tmp_path / "bad.json").write_text(json.dumps([{"role": "user", "content": "x", "time": "yesterday"}]))
    out = runner.invoke(cli, ["curate", "--conversation", "bad.json"])
    assert out.exit_code != 0 and "message 1 has a time that names no date" in out.output

"""Chat exports people have (tree/inputs/chat_exports.py), a bare list's stable identity and system
prompts (tree/inputs/conversation_formats.py), through the library, the CLI and the REST ingest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers.memgrove_server import start_server, stop_server
from memgrove import InvalidInput, Memory
from memgrove.cli import cli
from memgrove.tree.inputs import chat_exports
from memgrove.tree.inputs import conversation_formats as cf


def _node(nid, parent, children, role=None, text=None, t=None, hidden=False):
    msg = None
    if role:
        msg = {"id": nid, "author": {"role": role}, "content": {"content_type": "text", "parts": [text]},
               "create_time": t, "metadata": {"is_visually_hidden_from_conversation": hidden}}
    return {"id": nid, "parent": parent, "children": children, "message": msg}


# the user edited their first question: "q1-old" and its reply are a branch that was not kept
CHATGPT = [{
    "title": "Moving the staging database", "create_time": 1714000000.0, "update_time": 1714600000.0,
    "conversation_id": "6f1a-chatgpt-1", "current_node": "a2",
    "mapping": {
        "root": _node("root", None, ["sys"]),
        "sys": _node("sys", "root", ["q1-old", "q1"], "system", "", 1714000000.0, hidden=True),
        "q1-old": _node("q1-old", "sys", ["a1-old"], "user", "Where is staging hosted?", 1714000001.0),
        "a1-old": _node("a1-old", "q1-old", [], "assistant", "I do not know where staging is hosted.", 1714000002.0),
        "q1": _node("q1", "sys", ["a1"], "user", "Staging's database moved to port 6543 on db-stage-2.", 1714000010.0),
        "a1": _node("a1", "q1", ["q2"], "assistant", "Noted: staging Postgres listens on 6543.", 1714000020.0),
        "q2": _node("q2", "a1", ["a2"], "user", "Remind me to rotate the replica password.", 1714600000.0),
        "a2": _node("a2", "q2", [], "assistant", "I will remind you about the replica password.", 1714600010.0),
    }}, {
    "title": "Empty chat", "create_time": 1714000000.0, "conversation_id": "empty-1", "current_node": "r",
    "mapping": {"r": _node("r", None, [])}}]

CLAUDE = [{
    "uuid": "c1a0-claude-1", "name": "Pixel's vet visit", "created_at": "2024-05-02T09:00:00Z",
    "updated_at": "2024-05-03T10:00:00Z",
    "chat_messages": [
        {"uuid": "m-1", "sender": "human", "text": "Pixel the corgi sees the vet on Thursday.", "created_at": "2024-05-02T09:00:00Z"},
        {"uuid": "m-2", "sender": "assistant", "text": "",
         "content": [{"type": "text", "text": "Thursday vet visit for Pixel, noted."}], "created_at": "2024-05-02T09:00:05Z"},
    ]}]


def test_a_chatgpt_export_is_one_conversation_per_item_on_the_kept_branch(mem) -> None:
    [conv, empty] = chat_exports.conversations(CHATGPT)
    assert conv["id"] == "6f1a-chatgpt-1" and conv["title"] == "Moving the staging database"
    assert empty["messages"] == []
    results = mem.ingest(conversation=CHATGPT)
    assert [r.status for r in results] == ["added"] * 4
    assert results.skipped == {"empty conversations": 1}       # the chat opened and left
    texts = [mem.read(r.path).sections["Narrative"] for r in results]
    assert texts[0].startswith("Staging's database moved") and not any("do not know" in t for t in texts)
    srcs = [mem.read(r.path).sources[0] for r in results]
    assert [s["ref"] for s in srcs] == [f"6f1a-chatgpt-1#{i}" for i in ("q1", "a1", "q2", "a2")]
    assert srcs[0]["at"].startswith("2024-04-2") and [s["role"] for s in srcs][:2] == ["user", "assistant"]
    context = mem.read(results[0].path.rsplit("/", 2)[0] + "/context.md")
    assert "Moving the staging database" in context.body and "2024" in context.body
    assert mem.search("replica password")[0].path == results[2].path
    # a newer export of the same chats adds only what is new
    grown = json.loads(json.dumps(CHATGPT))
    grown[0]["mapping"]["a2"]["children"] = ["q3"]
    grown[0]["mapping"]["q3"] = _node("q3", "a2", [], "user", "The password rotation is done.", 1714700000.0)
    grown[0]["current_node"] = "q3"
    again = mem.ingest(conversation=grown)
    assert [r.status for r in again].count("added") == 1 and "unchanged" in [r.status for r in again]


def test_a_claude_export_is_curated_with_its_title(mem, tmp_path) -> None:
    f = tmp_path / "conversations.json"
    f.write_text(json.dumps(CLAUDE), encoding="utf-8")
    results = mem.ingest(conversation=f)
    assert [r.status for r in results] == ["added", "added"]
    assert mem.read(results[1].path).sections["Narrative"] == "Thursday vet visit for Pixel, noted."
    assert mem.read(results[0].path).sources[0]["ref"] == "c1a0-claude-1#m-1"
    assert "Pixel's vet visit" in mem.read(results[0].path.rsplit("/", 2)[0] + "/context.md").body


def test_a_grown_list_adds_only_its_new_messages(mem) -> None:
    chat = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello! How can I help you with the Kestrel project today?"},
            {"role": "user", "content": "Kestrel's release is on 14 March."}]
    first = mem.ingest(conversation=chat)
    grown = chat + [{"role": "assistant", "content": "Noted, Kestrel ships on 14 March."},
                    {"role": "user", "content": "And the beta closes on 1 March."}]
    again = mem.ingest(conversation=grown)
    assert [r.path for r in again][:3] == [r.path for r in first]
    assert [r.status for r in again] == ["unchanged", "unchanged", "updated", "added", "added"]  # the link onward
    assert len(list(mem.tree.entries_under("conversations"))) == 5          # each message once
    # another chat that also opens with "hi" is another conversation
    other = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hi! What shall we plan?"}]
    assert cf.normalize(other).id != cf.normalize(chat).id == cf.normalize(grown).id


def test_a_bare_lists_identity_ignores_system_prompts() -> None:
    said = [{"role": "user", "content": "Our staging database moved to port 6543 on db-stage-2 last week."}]
    a = cf.normalize([{"role": "system", "content": "You are a helpful assistant."}] + said)
    b = cf.normalize([{"role": "system", "content": "You are a terse assistant."}] + said)
    kept = cf.normalize([{"role": "system", "content": "You are a helpful assistant."}] + said, system=True)
    assert a.id == b.id == kept.id == cf.normalize(said).id
    assert a.skipped_system == [1] and [m["role"] for m in kept.messages] == ["system", "user"]


@pytest.mark.parametrize("shape", [
    [{"author": "me", "body": "hello"}],
    [{"from": "Ana", "message": "hi"}],
])
def test_an_unknown_shape_lists_the_accepted_ones(mem, shape) -> None:
    with pytest.raises(InvalidInput) as info:
        mem.ingest(conversation=shape)
    text = str(info.value)
    assert "message 1 is in no shape memgrove reads" in text
    for accepted in ('{"role", "content"}', "ChatGPT export", "Claude export", '"speaker", "text"'):
        assert accepted in text


def test_an_object_without_messages_lists_the_accepted_shapes(mem) -> None:
    with pytest.raises(InvalidInput, match="has no 'messages' .*'conversations'.*ChatGPT export"):
        mem.ingest(conversation={"conversations": [], "version": 2})


def test_cli_curates_an_export_and_counts_what_it_skipped(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    (tmp_path / "conversations.json").write_text(json.dumps(CHATGPT), encoding="utf-8")
    out = runner.invoke(cli, ["curate", "--conversation", "conversations.json", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["status"] for r in json.loads(out.stdout)["applied"]] == ["added"] * 4
    system = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "The VPN expires in June."}]
    (tmp_path / "chat.json").write_text(json.dumps(system), encoding="utf-8")
    out = runner.invoke(cli, ["curate", "--conversation", "chat.json"])
    assert "1 added" in out.output and "skipped 1 system prompt" in out.output
    out = runner.invoke(cli, ["curate", "--conversation", "chat.json", "--system"])
    assert "1 added" in out.output and "1 unchanged" in out.output


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ingest")
    Memory.open(folder, create=True).close()
    srv = start_server(folder)
    try:
        yield srv
    finally:
        assert stop_server(srv) == 0, srv.log_text()


def test_rest_ingest_takes_every_conversation_shape(served) -> None:
    bare = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Deploys freeze on Fridays."}]
    r = served.client.post("/api/ingest", json={"conversation": bare})
    assert r.status_code == 200, r.text
    assert [x["status"] for x in r.json()["results"]] == ["added"] and r.json()["skipped"] == {"system prompts": 1}
    for export, n in ((CHATGPT, 4), (CLAUDE, 2)):
        r = served.client.post("/api/ingest", json={"conversation": export})
        assert r.status_code == 200, r.text
        assert len(r.json()["results"]) == n
    r = served.client.post("/api/ingest", json={"conversation": [{"author": "me", "body": "hi"}]})
    assert r.status_code == 400 and "ChatGPT export" in r.json()["error"]["message"]
    ops = served.client.get("/api/history", params={"limit": 1}).json()["operations"]
    assert set(ops[0]) >= {"id", "op", "path", "reason", "files"}


def test_rest_ingest_reads_folders_inside_the_project_only(served, tmp_path) -> None:
    notes = Path(served.project) / "notes_in"
    (notes / "sub").mkdir(parents=True)
    (notes / "sub" / "kiwi.md").write_text("# Kiwis\n\nProject kiwis ripen in May.\n", encoding="utf-8")
    (notes / "empty.txt").write_text("", encoding="utf-8")
    r = served.client.post("/api/ingest", json={"paths": ["notes_in"]})
    assert r.status_code == 200, r.text
    assert len(r.json()["results"]) == 1 and r.json()["skipped"] == {"empty files": 1}
    r = served.client.post("/api/ingest", json={"paths": [str(tmp_path)]})
    assert r.status_code == 400 and "outside the project" in r.json()["error"]["message"]
    r = served.client.post("/api/ingest", json={"paths": ["../"]})
    assert r.status_code == 400

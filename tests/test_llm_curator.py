"""The LLM curator (graphs/curate.py) with a scripted tool-calling model and the real client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, ToolMessage

from memgrove import Memory
from memgrove.cli import cli
from memgrove.graphs import build_curate_graph
from memgrove.graphs.settings import CurateSettings

SAMPLE = Path(__file__).parents[1] / "memgrove" / "data" / "sample" / "conversation.json"
CONV = {"id": "c7", "messages": [
    {"id": "D1:1", "speaker": "Ana", "time": "2026-03-02T09:15:00Z", "session": "s1",
     "text": "I started as payments lead at Tally last week. We ship v2.4.0 on March 13."},
    {"id": "D1:2", "speaker": "Ben", "time": "2026-03-02T09:20:00Z", "session": "s1",
     "text": "Congrats! I'm moving to Lisbon in May, my flat is near Alfama."},
    {"id": "D2:1", "speaker": "Ana", "time": "2026-03-10T14:02:00Z", "session": "s2",
     "text": "Quick update: v2.4.0 slipped to March 20 because of the key rotation bug."},
]}
SMALL = CurateSettings(chunk_chars=400, chunk_overlap_chars=50)   # one session per chunk here

ANA_ROLE = {"op": "ADD", "path": "people/ana/role.md", "title": "Ana is payments lead at Tally",
            "content": "Ana started as payments lead at Tally the week before 2026-03-02.",
            "sources": [{"kind": "conversation", "ref": "D1:1"}], "reason": "Ana's job",
            "context": {"domain": "People the user talks with.", "topic": "Ana, payments lead at Tally."}}
RELEASE = {"op": "ADD", "path": "projects/tally/release_v2_4_0.md", "title": "Tally v2.4.0 release date",
           "content": "v2.4.0 ships on 2026-03-13.", "sources": [{"kind": "conversation", "ref": "D1:1"}],
           "reason": "release plan", "context": {"domain": "Projects and their plans."}}
BEN_MOVE = {"op": "ADD", "path": "people/ben/move_to_lisbon.md", "title": "Ben moves to Lisbon in May 2026",
            "content": "Ben is moving to Lisbon (near Alfama) in May 2026.",
            "sources": [{"kind": "conversation", "ref": "D1:2"}], "reason": "Ben's plans"}
RELEASE_DUP = {"op": "ADD", "path": "projects/tally/v2_4_0_date.md", "title": "v2.4.0 date",
               "content": "v2.4.0 is planned for 2026-03-13.", "sources": [{"kind": "conversation", "ref": "D1:1"}],
               "reason": "release date"}
SLIP = dict(RELEASE, op="UPSERT", content="v2.4.0 slipped from 2026-03-13 to 2026-03-20 (key rotation bug).",
            sources=[{"kind": "conversation", "ref": "D2:1"}], reason="the release date changed")
MERGE_DUP = {"op": "MERGE", "path": "projects/tally/v2_4_0_date.md", "merge_into": "projects/tally/release_v2_4_0.md",
             "reason": "same release, one entry"}


def curator_model() -> ScriptedChatModel:
    return ScriptedChatModel(replies=[
        # chunk 1 (session s1): four entries in two domains, one of them a near-duplicate
        tool_call("curate", operations=[ANA_ROLE, RELEASE, BEN_MOVE, RELEASE_DUP]),
        # chunk 2 (session s2): looks first, then updates the release and merges the duplicate into it
        tool_call("search_knowledge", query="v2.4.0 release"),
        tool_call("curate", operations=[SLIP, MERGE_DUP]),
    ])


def test_curator_turns_a_conversation_into_entries_across_domains_and_merges_a_duplicate(mem):
    model = curator_model()
    report = mem.learn(conversation=CONV, model=model, settings=SMALL)
    assert model.remaining == 0 and not report.errors and not report.stopped
    # a chunk ends when its curate call has written: no closing call per chunk
    assert (report.curator, report.chunks, report.model_calls) == ("llm", 2, 3)
    assert [(a.op, a.path, a.status) for a in report.applied] == [
        ("ADD", "people/ana/role.md", "added"), ("ADD", "projects/tally/release_v2_4_0.md", "added"),
        ("ADD", "people/ben/move_to_lisbon.md", "added"), ("ADD", "projects/tally/v2_4_0_date.md", "added"),
        ("UPSERT", "projects/tally/release_v2_4_0.md", "updated"),
        ("MERGE", "projects/tally/v2_4_0_date.md", "queued")]
    # a model's MERGE waits in the review queue (setting review_ops); approving applies it
    assert (mem.home / "tree" / "projects/tally/v2_4_0_date.md").exists()
    [item] = mem.review()
    assert item["proposed_by"] == "model" and item["candidate"]["ops"][0]["op"] == "MERGE"
    mem.review_approve(item["id"])
    merged = mem.read("projects/tally/release_v2_4_0.md")
    body = mem.tree.read_text("projects/tally/release_v2_4_0.md")
    assert "2026-03-13" in body and "2026-03-20" in body
    assert not (mem.home / "tree" / "projects/tally/v2_4_0_date.md").exists()
    assert [s["ref"] for s in merged.sources] == ["c7#D1:1", "c7#D2:1"]      # short ids completed
    assert merged.sources[1]["at"] == "2026-03-10T14:02:00Z"
    assert sorted(f["path"] for f in mem.list("")["folders"]) == ["people", "projects"]
    assert mem.list("people")["overview"] == "People the user talks with."          # context filled on first use
    assert mem.list("people/ana")["overview"] == "Ana, payments lead at Tally."
    assert {r.actor for r in mem.history()} == {"llm-curator", "review"}
    assert report.summary.startswith("curated by the LLM curator: 2 chunk(s), 3 model call(s)")
    assert "4 added, 1 updated, 1 queued" in report.summary
    assert "- queued projects/tally/v2_4_0_date.md" in report.summary


def test_a_models_merge_and_delete_wait_but_a_users_curate_never_does(mem):
    """Issue 31: MERGE and DELETE proposed by a model in the LLM curator are queued; the same
    operations from the user (Memory.curate, the CLI's --ops) are applied at once."""
    mem.curate([dict(RELEASE), dict(RELEASE_DUP), dict(BEN_MOVE)])
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[
        dict(SLIP, sources=[{"kind": "conversation", "ref": "D1:1"}]), MERGE_DUP,
        {"op": "DELETE", "path": "people/ben/move_to_lisbon.md", "reason": "not needed"}])])
    report = mem.learn(text="v2.4.0 slipped to March 20.", model=model, settings=SMALL)
    assert [(a.op, a.status) for a in report.applied] == [("UPSERT", "updated"), ("MERGE", "queued"),
                                                         ("DELETE", "queued")]
    assert mem.tree.exists("projects/tally/v2_4_0_date.md") and mem.tree.exists("people/ben/move_to_lisbon.md")
    assert len(mem.review()) == 1        # one item: the batch's held operations together
    mem.review_reject(all=True)
    # the user's own MERGE and DELETE: applied
    done = mem.curate([MERGE_DUP, {"op": "DELETE", "path": "people/ben/move_to_lisbon.md", "reason": "mine"}])
    assert [r.status for r in done] == ["merged", "deleted"] and not mem.review()
    # with review_ops emptied, the model's are applied too
    mem.tree.settings = mem.tree.settings.replace(review_ops="")
    mem.curate([dict(RELEASE_DUP)])
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[MERGE_DUP])])
    report = mem.learn(text="v2.4.0 again.", model=model, settings=SMALL)
    assert [a.status for a in report.applied] == ["merged"]


def test_with_finish_on_curate_off_the_model_closes_each_chunk_itself(mem):
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[ANA_ROLE]), "Wrote Ana's role.",
                                       "Nothing new here."])
    report = mem.learn(conversation=CONV, model=model, settings=SMALL.replace(finish_on_curate=False))
    assert (report.model_calls, report.notes) == (3, ["Wrote Ana's role.", "Nothing new here."])
    assert model.remaining == 0


def test_each_chunk_shows_the_model_what_exists_and_when_each_message_was_said(mem):
    model = curator_model()
    mem.learn(conversation=CONV, model=model, settings=SMALL)
    first, second = model.prompt_text(0), model.prompt_text(1)
    assert "Top-level domains: (none yet" in first
    assert "[D1:1] (2026-03-02T09:15:00Z) Ana: I started as payments lead at Tally last week." in first
    assert "resolve relative" in first.lower() or "Resolve relative" in first           # the versioned prompt
    assert "Top-level domains: people (People), projects (Projects)" in second
    assert "- projects/tally/release_v2_4_0.md: Tally v2.4.0 release date" in second   # it sees what exists,
    assert "- projects/tally/v2_4_0_date.md: v2.4.0 date" in second                      # duplicates included
    assert "[D2:1] (2026-03-10T14:02:00Z)" in second and "D1:1" not in second.split("New material")[1]
    assert sorted(model.bound_tools[0]) == ["curate", "list_tree", "read_entry", "search_knowledge"]


def test_a_bad_curate_call_gets_a_corrective_message_and_the_retry_succeeds(mem, tmp_path):
    escaping = dict(ANA_ROLE, path="../../outside/role.md")
    no_reason = dict(RELEASE, reason=None)
    model = ScriptedChatModel(replies=[
        tool_call("curate", operations=[escaping, no_reason]),
        tool_call("curate", operations=[ANA_ROLE, RELEASE]),
    ])
    report = mem.learn(text="Ana started as payments lead at Tally. v2.4.0 ships on 2026-03-13.", model=model)
    first_reply = next(m for m in model.calls[1] if isinstance(m, ToolMessage))
    assert first_reply.content.startswith("Error: nothing was written. Fix these operations")
    assert "op 1 (ADD ../../outside/role.md)" in first_reply.content
    assert "op 2 (ADD projects/tally/release_v2_4_0.md): 'reason' is required" in first_reply.content
    assert [a.path for a in report.applied] == ["people/ana/role.md", "projects/tally/release_v2_4_0.md"]
    assert not (tmp_path / "outside").exists() and not (tmp_path.parent / "outside").exists()
    # sources the model gave that name no known message are kept as given
    assert mem.read("people/ana/role.md").sources[0]["ref"] == "D1:1"
    assert mem.read("projects/tally/release_v2_4_0.md").sources[0]["kind"] == "conversation"


def test_text_without_sources_gets_the_chunks_provenance(mem):
    op = {k: v for k, v in RELEASE.items() if k != "sources"}
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[op])])
    mem.learn(text="v2.4.0 ships on 2026-03-13.", model=model)
    [src] = mem.read("projects/tally/release_v2_4_0.md").sources
    assert src["kind"] == "text" and src["ref"].startswith("text:") and src["at"]


def test_files_are_chunked_and_code_blocks_reach_the_model_whole(mem, tmp_path):
    code = "```bash\n" + "\n".join(f"echo step {i}" for i in range(80)) + "\n```"
    f = tmp_path / "runbook.md"
    f.write_text("# Deploy\n\nRun the script below.\n\n" + code + "\n\nThen check the health endpoint.\n")
    model = ScriptedChatModel(replies=["nothing to keep"] * 10)
    report = mem.learn(files=[f], model=model, settings=CurateSettings(chunk_chars=300, chunk_overlap_chars=0))
    assert report.chunks == 3 and report.applied == [] and report.model_calls == 3
    assert sum(code in model.prompt_text(i) for i in range(3)) == 1
    assert f"Chunk: {f}, part 2 of 3" in model.prompt_text(1)


def test_a_model_failure_stops_the_run_keeps_what_was_written_and_says_where(mem):
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[ANA_ROLE])],
                              raise_on={1: TimeoutError("the model took longer than 120 s")})
    report = mem.learn(conversation=CONV, model=model, settings=SMALL)
    assert [a.path for a in report.applied] == ["people/ana/role.md"]
    assert report.stopped.startswith("conversation c7, s2, message D2:1: TimeoutError: the model took longer")
    assert "! stopped early: conversation c7, s2" in report.summary
    assert mem.tree.entry_count() == 1


def test_a_model_that_loops_gives_up_on_the_chunk_and_goes_on(mem):
    looping = [tool_call("list_tree", folder="")] * 3
    model = ScriptedChatModel(replies=looping + [tool_call("curate", operations=[RELEASE_DUP])])
    report = mem.learn(conversation=CONV, model=model, settings=SMALL.replace(max_steps=2))
    assert report.errors == ["conversation c7, s1, messages D1:1–D1:2: gave up after 2 model calls"]
    assert [a.path for a in report.applied] == ["projects/tally/v2_4_0_date.md"]


def test_no_model_falls_back_to_the_verbatim_curator_and_says_so(mem):
    report = mem.learn(conversation=CONV)
    assert report.curator == "verbatim" and len(report.applied) == 3
    assert "no model configured (set MEMGROVE_MODEL): used the verbatim curator" in report.summary
    assert {r.actor for r in mem.history()} == {"verbatim-curator"}


def test_cli_curate_without_a_model_uses_the_verbatim_curator_and_says_so(tmp_path):
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(CONV))
    Memory.open(tmp_path, create=True).close()
    out = CliRunner().invoke(cli, ["--root", str(tmp_path), "curate", "--conversation", str(conv)])
    assert out.exit_code == 0, out.output
    assert "no model configured (set MEMGROVE_MODEL): using the verbatim curator" in out.stderr
    assert "curated verbatim (no LLM curator): 3 added" in out.stdout


def test_cli_curate_with_a_model_runs_the_llm_curator_against_an_openai_server(tmp_path, openai_server,
                                                                             monkeypatch):
    from helpers.openai_server import tool_calls

    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    openai_server.queue(tool_calls(("curate", {"operations": [ANA_ROLE, RELEASE, BEN_MOVE]})),
                        tool_calls(("curate", {"operations": [SLIP]})))
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps(CONV))
    runner = CliRunner()
    Memory.open(tmp_path, create=True).close()
    (tmp_path / ".memgrove" / "config.toml").write_text("[curate]\nchunk_chars = 400\nchunk_overlap_chars = 50\n")
    out = runner.invoke(cli, ["--root", str(tmp_path), "curate", "--conversation", str(conv)])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("curated by the LLM curator: 2 chunk(s), 2 model call(s), 20 prompt + 10 "
                                 "completion tokens. 3 added, 1 updated.")
    first = openai_server.requests[0]
    assert sorted(t["function"]["name"] for t in first["tools"]) == ["curate", "list_tree", "read_entry",
                                                                      "search_knowledge"]
    assert first["messages"][0]["role"] == "system" and "Context Tree" in first["messages"][0]["content"]
    with Memory.open(tmp_path) as m:
        assert "2026-03-20" in m.tree.read_text("projects/tally/release_v2_4_0.md")


def test_cli_curate_reports_a_model_failure_and_exits_1(tmp_path, openai_server, monkeypatch):
    from helpers.openai_server import status

    monkeypatch.setenv("MEMGROVE_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.delenv("MEMGROVE_RAISE_ERRORS")
    openai_server.queue(status(401))
    Memory.open(tmp_path, create=True).close()
    out = CliRunner().invoke(cli, ["--root", str(tmp_path), "curate", "Ana leads payments."])
    assert out.exit_code == 1
    assert "the LLM curator stopped early" in out.stderr and "HTTP 401" in out.stderr


def test_graph_runs_from_the_context_without_a_bound_memory(tmp_path):
    home = tmp_path / "proj"
    Memory.open(home, create=True).close()
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[ANA_ROLE])])
    g = build_curate_graph(model=model)
    state = g.invoke({"text": "Ana is payments lead."}, context={"memgrove_home": str(home)})
    assert state["summary"].startswith("curated by the LLM curator: 1 chunk(s), 1 model call(s)")
    with Memory.open(home) as m:
        assert m.read("people/ana/role.md").title == "Ana is payments lead at Tally"
    assert isinstance(model.replied[-1], AIMessage)


def test_bad_input_is_refused_before_the_model_is_called(mem, tmp_path):
    model = ScriptedChatModel(replies=[])
    with pytest.raises(Exception, match="nothing to curate"):
        mem.learn(model=model)
    with pytest.raises(Exception, match="cannot read"):
        mem.learn(files=[tmp_path / "missing.md"], model=model)
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(Exception, match="binary"):
        mem.learn(files=[tmp_path / "bin.dat"], model=model)
    assert model.calls == [] and mem.tree.entry_count() == 0

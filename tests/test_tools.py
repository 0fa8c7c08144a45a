"""The memory tools: schemas, corrective errors, allowed ops, provenance, and the run's context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.scripted_model import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage

from memgrove import Memory
from memgrove.tools import NoMemory, curate_tool, memory_tools

UPSERT = {"op": "UPSERT", "path": "infra/db/port.md", "title": "Staging DB port",
          "content": "The staging database listens on port 6543.", "reason": "told by the user"}


def by_name(tools):
    return {t.name: t for t in tools}


def call(tool, args: dict) -> ToolMessage:
    """Invoke as a model's tool call would (a ToolMessage with content and artifact)."""
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})


def outside_files(tmp_path: Path) -> set[str]:
    """Every file under tmp_path that is not inside the memory's tree."""
    return {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
            if p.is_file() and ".memgrove" not in p.relative_to(tmp_path).parts}


def test_memory_tools_lists_the_four_tools_with_schemas_a_model_can_follow(mem):
    tools = by_name(memory_tools(mem))
    assert sorted(tools) == ["curate", "list_tree", "read_entry", "search_knowledge"]
    assert sorted(by_name(memory_tools(mem, read_only=True))) == ["list_tree", "read_entry", "search_knowledge"]
    schema = tools["curate"].tool_call_schema.model_json_schema()
    op = schema["$defs"]["Operation"]["properties"]
    assert op["op"]["enum"] == ["ADD", "UPDATE", "UPSERT", "MERGE", "DELETE", "SUPERSEDE", "ARCHIVE", "RESTORE"]
    assert "reason" in op and "Required" in op["reason"]["description"]
    # the injected runtime is not shown to the model
    for t in tools.values():
        assert "runtime" not in json.dumps(t.tool_call_schema.model_json_schema())
    assert sorted(by_name(mem.tools())) == sorted(tools)


def tool_replies(tool, *calls: dict) -> list[ToolMessage]:
    """What a model sees back when it makes these calls in a ``create_agent`` loop."""
    model = ScriptedChatModel(replies=[tool_call(tool.name, **args) for args in calls] + ["done"])
    out = create_agent(model, [tool]).invoke({"messages": [("user", "go")]})
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_allowed_ops_narrow_the_schema_and_refuse_the_rest(mem):
    t = curate_tool(mem, allow=("upsert",))
    op_schema = t.tool_call_schema.model_json_schema()["$defs"]["Operation"]["properties"]["op"]
    assert op_schema.get("enum", [op_schema.get("const")]) == ["UPSERT"]
    assert call(t, {"operations": [UPSERT]}).artifact[0]["status"] == "added"
    # a model that sends DELETE anyway is told what is allowed; nothing is deleted
    [out] = tool_replies(t, {"operations": [{"op": "DELETE", "path": "infra/db/port.md", "reason": "x"}]})
    assert out.status == "error" and "Input should be 'UPSERT'" in out.content and "fix" in out.content
    assert mem.read("infra/db/port.md").title == "Staging DB port"
    # the tree enforces it too, for callers that skip the schema
    with pytest.raises(Exception, match="not allowed"):
        mem.curate([{"op": "DELETE", "path": "infra/db/port.md", "reason": "x"}], allowed=("UPSERT",))


def test_configuration_errors_raise(mem):
    with pytest.raises(ValueError, match="allow must name"):
        curate_tool(mem, allow=("ADD", "DROP"))
    with pytest.raises(ValueError, match="allow must name"):
        curate_tool(mem, allow=())
    with pytest.raises(TypeError, match="Memory or ContextTree"):
        memory_tools("not a memory")


def test_a_batch_the_tree_rejects_comes_back_with_how_to_fix_it_and_the_retry_succeeds(mem, snapshot):
    t = curate_tool(mem)
    before = snapshot()
    bad = [dict(UPSERT, reason=""), {"op": "ADD", "path": "../../etc/evil.md", "title": "x", "reason": "r"}]
    out = call(t, {"operations": bad})
    assert out.content.startswith("Error: nothing was written. Fix these operations")
    assert "op 1 (UPSERT infra/db/port.md): 'reason' is required" in out.content
    assert "op 2 (ADD ../../etc/evil.md)" in out.content and out.artifact == []
    assert snapshot() == before
    ok = call(t, {"operations": [UPSERT]})
    assert json.loads(ok.content)["applied"][0] == {"op": "UPSERT", "path": "infra/db/port.md", "status": "added",
                                                    "message": "added infra/db/port.md"}
    assert ok.artifact[0]["id"]
    # ADD on an existing entry says to use UPDATE/UPSERT
    again = call(t, {"operations": [dict(UPSERT, op="ADD")]})
    assert again.content.startswith("Error: nothing was written") and "exists" in again.content


def test_a_schema_mistake_goes_back_to_the_model_and_the_retry_succeeds(mem):
    no_op, empty, fixed = tool_replies(curate_tool(mem), {"operations": [{"path": "a/b/c.md", "reason": "no op"}]},
                                       {"operations": []}, {"operations": [UPSERT]})
    assert no_op.status == "error" and "operations.0.op: Field required" in no_op.content
    assert empty.status == "error" and "at least 1" in empty.content
    assert fixed.status != "error" and mem.read("infra/db/port.md")


HOSTILE_PATHS = ["../x.md", "../../x.md", "/etc/passwd.md", "~/x.md", "a/../../x.md", "a/b/../../../x.md",
                 "a\\..\\..\\x.md", "a/b/c/d/e.md", ".memgrove/x/y.md", "a/b/\x00.md", "a/./b/../../../x.md",
                 "file:///tmp/x.md", "a/b/.."]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
@pytest.mark.parametrize("op", ["ADD", "UPSERT", "DELETE", "MERGE"])
def test_nothing_is_written_outside_the_tree_whatever_the_model_asks(mem, tmp_path, path, op):
    call(curate_tool(mem), {"operations": [UPSERT]})
    before_outside = outside_files(tmp_path)
    before_tree = {p: p.read_bytes() for p in (mem.home / "tree").rglob("*") if p.is_file()}
    args = {"op": op, "path": path, "title": "x", "content": "y", "reason": "r"}
    if op == "MERGE":
        args["merge_into"] = "infra/db/port.md"
    out = call(curate_tool(mem), {"operations": [args, dict(args, path="ok/fine/entry.md", merge_into=path)]})
    assert outside_files(tmp_path) == before_outside
    assert out.content.startswith("Error"), out.content
    assert {p: p.read_bytes() for p in (mem.home / "tree").rglob("*") if p.is_file()} == before_tree


def test_percent_encoded_dots_are_just_a_name_inside_the_tree(mem, tmp_path):
    out = call(curate_tool(mem), {"operations": [dict(UPSERT, path="a/b/%2e%2e/x.md")]})
    assert out.artifact[0]["path"] == "a/b/2e_2e/x.md"
    assert (mem.home / "tree" / "a/b/2e_2e/x.md").is_file() and outside_files(tmp_path) == set()


def test_related_paths_and_merge_targets_cannot_escape_either(mem, tmp_path):
    t = curate_tool(mem)
    out = call(t, {"operations": [dict(UPSERT, related=["../../outside.md"])]})
    assert out.content.startswith("Error: nothing was written") and "op 1 (UPSERT infra/db/port.md)" in out.content
    assert not (tmp_path / "outside.md").exists()


def test_max_ops_per_call(mem):
    t = curate_tool(mem, max_ops=2)
    ops = [dict(UPSERT, path=f"infra/db/e{i}.md") for i in range(3)]
    out = call(t, {"operations": ops})
    assert out.content.startswith("Error: 3 operations in one call; send at most 2")
    assert mem.count() == 0


def test_default_sources_fill_in_and_complete_short_message_ids(mem):
    known = [{"kind": "conversation", "ref": "c1#D1:3", "at": "2023-05-08"},
             {"kind": "conversation", "ref": "c1#D1:4", "at": "2023-05-08"}]
    t = curate_tool(mem, default_sources=known)
    call(t, {"operations": [dict(UPSERT, path="a/b/none.md"),
                            dict(UPSERT, path="a/b/short.md", sources=[{"kind": "conversation", "ref": "D1:4"}]),
                            dict(UPSERT, path="a/b/other.md", sources=[{"kind": "url", "ref": "https://x.org"}])]})
    assert mem.read("a/b/none.md").sources == known
    assert mem.read("a/b/short.md").sources == [known[1]]
    assert mem.read("a/b/other.md").sources == [{"kind": "url", "ref": "https://x.org"}]


def test_read_tools_return_fixable_errors(mem):
    tools = by_name(memory_tools(mem))
    call(tools["curate"], {"operations": [UPSERT]})
    assert tools["read_entry"].invoke({"path": "../../etc/passwd"}).startswith("Error:")
    assert tools["read_entry"].invoke({"path": "infra/db/missing.md"}).startswith("Error:")
    assert "6543" in tools["read_entry"].invoke({"path": "infra/db/port.md"})
    assert tools["list_tree"].invoke({"folder": "nope"}).startswith("Error:")
    assert json.loads(tools["list_tree"].invoke({"folder": "infra"}))["folders"][0]["path"] == "infra/db"
    assert tools["search_knowledge"].invoke({"query": "   "}).startswith("Error:")
    assert tools["search_knowledge"].invoke({"query": "zebra unicorn"}).startswith("No entries match")


def test_search_knowledge_returns_a_cached_answer_once_one_was_given(mem):
    t = by_name(memory_tools(mem))
    call(t["curate"], {"operations": [UPSERT]})
    first = json.loads(t["search_knowledge"].invoke({"query": "staging database port"}))
    assert first["entries"][0]["path"] == "infra/db/port.md" and "cached_answer" not in first
    answer = mem.query("staging database port")
    assert answer.tier == 2
    again = json.loads(t["search_knowledge"].invoke({"query": "staging database port"}))
    assert again["cached_answer"]["tier"] == 0 and again["cached_answer"]["sources"] == ["infra/db/port.md"]
    assert not json.loads(by_name(memory_tools(mem, use_cache=False))["search_knowledge"].invoke(
        {"query": "staging database port"})).get("cached_answer")


def scripted_writer(path: str) -> ScriptedChatModel:
    return ScriptedChatModel(replies=[tool_call("curate", operations=[dict(UPSERT, path=path)]), "saved"])


def test_one_compiled_graph_serves_many_projects_through_the_run_context(tmp_path):
    homes = [tmp_path / "p1", tmp_path / "p2"]
    for h in homes:
        Memory.open(h, create=True).close()
    model = ScriptedChatModel(replies=[tool_call("curate", operations=[UPSERT]), "saved"] * 2)
    agent = create_agent(model, memory_tools())          # no memory given: it comes from the context
    for h in homes:
        agent.invoke({"messages": [("user", "remember the port")]}, context={"memgrove_home": str(h)})
    for h in homes:
        with Memory.open(h) as m:
            assert m.read("infra/db/port.md").title == "Staging DB port"
            assert [r.actor for r in m.history()] == ["agent"]


def test_context_memory_object_and_missing_memory(tmp_path, mem):
    agent = create_agent(scripted_writer("a/b/c.md"), memory_tools())
    agent.invoke({"messages": [("user", "x")]}, context={"memory": mem})
    assert mem.read("a/b/c.md")
    with pytest.raises(NoMemory, match="memgrove_home"):
        create_agent(scripted_writer("a/b/d.md"), memory_tools()).invoke({"messages": [("user", "x")]})


def test_context_naming_a_folder_without_memory_is_a_clear_error(tmp_path):
    agent = create_agent(scripted_writer("a/b/c.md"), memory_tools())
    with pytest.raises(Exception, match="memgrove"):
        agent.invoke({"messages": [("user", "x")]}, context={"memgrove_home": str(tmp_path / "nothing")})

"""Argument names models guess are mapped onto the tool's own, and never over a real one."""

from __future__ import annotations

from memgrove.mcp.arguments import canonical


def test_guessed_names_are_mapped():
    assert canonical({"file_path": "a/b/c.md"}, ["path", "project"]) == {"path": "a/b/c.md"}
    assert canonical({"q": "tokens", "top_k": 3}, ["query", "limit"]) == {"query": "tokens", "limit": 3}
    assert canonical({"path": "auth"}, ["folder"]) == {"folder": "auth"}
    assert canonical({"id": "x"}, ["op_id", "force"]) == {"op_id": "x"}
    assert canonical({"command": "str_replace", "old_string": "a", "new_string": "b"},
                     ["command", "path", "old_str", "new_str"]) == {"command": "str_replace", "old_str": "a",
                                                                    "new_str": "b"}


def test_a_given_canonical_name_or_a_real_parameter_is_never_replaced():
    assert canonical({"path": "x.md", "file_path": "y.md"}, ["path"]) == {"path": "x.md", "file_path": "y.md"}
    # memgrove_history has both 'path' and 'limit': 'path' stays a path, not a folder
    assert canonical({"path": "auth"}, ["limit", "path"]) == {"path": "auth"}
    assert canonical(None, ["query"]) == {}

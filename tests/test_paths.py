"""Path rules: snake_case names, 2-3 folder levels, reserved names, no escapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgrove import BatchRejected, InvalidPath
from memgrove.tree.entries.paths import (
    is_entry_file,
    normalize_any,
    normalize_entry_path,
    normalize_folder,
    parent_folders,
    resolve_inside,
    snake_case,
)


def add(path: str, **extra) -> dict:
    return {"op": "ADD", "path": path, "title": "T", "content": "body text", "reason": "test", **extra}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("JWT Refresh-Token (v2)", "jwt_refresh_token_v2"),
        ("  Leading and trailing  ", "leading_and_trailing"),
        ("already_snake", "already_snake"),
        ("CamelCase", "camelcase"),
        ("a--b__c", "a_b_c"),
        ("Café Crème", "cafe_creme"),
        ("!!!", ""),
        ("", ""),
    ],
)
def test_snake_case(raw: str, expected: str) -> None:
    assert snake_case(raw) == expected


def test_snake_case_is_bounded_and_trimmed() -> None:
    s = snake_case("word " * 60)
    assert len(s) <= 80
    assert not s.startswith("_") and not s.endswith("_")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Auth/JWT Tokens/Refresh Rotation", "auth/jwt_tokens/refresh_rotation.md"),
        ("auth/jwt/rotation.md", "auth/jwt/rotation.md"),
        ("auth/jwt/Rotation.MD", "auth/jwt/rotation.md"),
        ("a/b/c/d.md", "a/b/c/d.md"),
        ("  auth/jwt/x.md  ", "auth/jwt/x.md"),
        ("auth\\jwt\\x.md", "auth/jwt/x.md"),
        ("@auth/jwt/x.md", "auth/jwt/x.md"),
    ],
)
def test_normalize_entry_path(raw: str, expected: str) -> None:
    assert normalize_entry_path(raw) == expected
    assert normalize_entry_path(expected) == expected


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("a/x.md", "1 folder level"),
        ("x.md", "0 folder level"),
        ("a/b/c/d/x.md", "4 folder level"),
        ("a/b/context.md", "reserved"),
        ("a/b/Context", "reserved"),
        ("a/b/CONTEXT.md", "reserved"),
        ("a/_private/x.md", "reserved"),
        ("a/b/_x.md", "reserved"),
        ("a/.hidden/x.md", "reserved"),
        ("a/b/.x.md", "reserved"),
        ("../a/b/x.md", "'..'"),
        ("a/../b/x.md", "'..'"),
        ("a/b/../../../x.md", "'..'"),
        ("a/./b/x.md", "'.'"),
        ("/etc/passwd/x.md", "absolute"),
        ("/a/b/x.md", "absolute"),
        ("~/a/b/x.md", "absolute"),
        ("C:/a/b/x.md", "absolute"),
        ("\\a\\b\\x.md", "absolute"),
        ("a/b\x00c/x.md", "NUL"),
        ("a//b/x.md", "empty segment"),
        ("a/b/x.md/", "empty segment"),
        ("", "empty"),
        ("   ", "empty"),
        ("a/!!!/x.md", "no letters or digits"),
        ("a/b/???.md", "no letters or digits"),
    ],
)
def test_invalid_entry_paths_are_rejected(raw: str, fragment: str) -> None:
    with pytest.raises(InvalidPath) as info:
        normalize_entry_path(raw)
    assert fragment in str(info.value)


def test_non_string_path_is_rejected() -> None:
    with pytest.raises(InvalidPath):
        normalize_entry_path(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("raw", "expected"), [("Auth", "auth"), ("Auth/JWT", "auth/jwt"), ("a/b/c", "a/b/c")])
def test_normalize_folder(raw: str, expected: str) -> None:
    assert normalize_folder(raw) == expected


@pytest.mark.parametrize("raw", ["a/b/c/d", "../a", "/a", "a/_b", "a//b", "~"])
def test_invalid_folders(raw: str) -> None:
    with pytest.raises(InvalidPath):
        normalize_folder(raw)


def test_normalize_any_tells_entries_from_folders() -> None:
    assert normalize_any("Auth/JWT/") == "auth/jwt"
    assert normalize_any("Auth/JWT/Rotation.md") == "auth/jwt/rotation.md"


def test_is_entry_file_and_parent_folders() -> None:
    assert is_entry_file("a/b/x.md")
    assert is_entry_file("a/b/c/x.md")
    assert not is_entry_file("a/b/context.md")
    assert not is_entry_file("a/x.md")
    assert not is_entry_file("a/b/c/d/x.md")
    assert not is_entry_file("a/_b/x.md")
    assert not is_entry_file("a/b/x.txt")
    assert parent_folders("a/b/c/x.md") == ["a", "a/b", "a/b/c"]


def test_resolve_inside_rejects_symlink_escape(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, root / "a" / "b")
    assert resolve_inside(root, "a/x.md") == root / "a" / "x.md"
    with pytest.raises(InvalidPath, match="outside the tree"):
        resolve_inside(root, "a/b/x.md")


def test_curate_rejects_bad_paths_with_one_message_each(mem, snapshot) -> None:
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate([add("../escape/x/y.md"), add("/abs/a/b.md"), add("a/b/context.md"), add("a/x.md")])
    assert len(info.value.errors) == 4
    assert "'..'" in info.value.errors[0]
    assert "absolute" in info.value.errors[1]
    assert "reserved" in info.value.errors[2]
    assert "folder level" in info.value.errors[3]
    assert snapshot() == before
    assert not (mem.home.parent / "escape").exists()


@pytest.mark.parametrize("target", ["auth/evil/x.md", "auth/evil/deeper/x.md", "evil2/topic/x.md"])
def test_curate_into_symlinked_folder_pointing_outside_is_refused(mem, tmp_path, snapshot, target) -> None:
    mem.curate([add("auth/jwt/a.md")])
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, mem.home / "tree" / "auth" / "evil")
    os.symlink(outside, mem.home / "tree" / "evil2")
    before = snapshot()
    with pytest.raises(BatchRejected) as info:
        mem.curate([add(target)])
    # the batch error carries the InvalidPath message of the escape
    assert len(info.value.errors) == 1
    assert "resolves outside the tree" in info.value.errors[0]
    assert list(outside.iterdir()) == []
    assert snapshot() == before
    # and the tree-level check itself raises InvalidPath
    with pytest.raises(InvalidPath, match="outside the tree"):
        resolve_inside(mem.tree.root, normalize_entry_path(target))


def test_update_through_symlinked_file_pointing_outside_is_refused(mem, tmp_path) -> None:
    mem.curate([add("auth/jwt/a.md")])
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nkeep me\n")
    os.symlink(outside, mem.home / "tree" / "auth" / "jwt" / "link.md")
    for kind in ("UPDATE", "UPSERT", "DELETE"):
        with pytest.raises(BatchRejected, match="outside the tree"):
            mem.curate([{"op": kind, "path": "auth/jwt/link.md", "content": "overwrite", "reason": "r"}])
    assert outside.read_text() == "# Secret\n\nkeep me\n"


def test_symlink_outside_is_not_indexed(mem, tmp_path) -> None:
    mem.curate([add("auth/jwt/a.md")])
    outside = tmp_path / "outside"
    (outside / "t").mkdir(parents=True)
    (outside / "t" / "leak.md").write_text("# Leak\n\nzebracorn secret\n")
    os.symlink(outside, mem.home / "tree" / "leaky")
    assert mem.search("zebracorn") == []
    assert any("symlink" in w for w in mem.doctor().warnings)

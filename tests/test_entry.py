"""Entries: YAML frontmatter + markdown sections, parsed tolerantly, written deterministically."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import yaml

from memgrove import Entry, InvalidEntry
from memgrove.tree.entries.entry import FIELD_ORDER, parse, reader_text, sections_from_content, serialize

FULL = """\
---
title: JWT refresh token rotation
summary: Refresh tokens rotate on every use; reuse revokes the family.
tags: [auth, security]
keywords: [jwt, refresh token, rotation]
related: [authentication/sessions/session_store.md]
createdAt: 2026-12-02T10:00:00Z
updatedAt: 2026-12-03T11:30:00Z
sources: [{kind: conversation, ref: "conv-26/D3:4", at: "2023-05-08T13:56:00Z"}]
---
# JWT refresh token rotation

## Raw Concept

**Task:** rotate refresh tokens
**Author:** ana

## Narrative

### Rules

Reuse of a rotated token revokes the whole family.

## Facts

- **rotation**: happens on every use [security]
- **lifetime**: refresh tokens live 30 days [config]
"""

BOMB = """\
---
title: bomb
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
# bomb
"""


def frontmatter_keys(text: str) -> list[str]:
    block = text.split("---\n")[1]
    return list(yaml.safe_load(block))


def test_parse_full_entry() -> None:
    e = parse(FULL)
    assert e.title == "JWT refresh token rotation"
    assert e.summary.startswith("Refresh tokens rotate")
    assert e.tags == ["auth", "security"]
    assert e.keywords == ["jwt", "refresh token", "rotation"]
    assert e.related == ["authentication/sessions/session_store.md"]
    assert e.sources == [{"kind": "conversation", "ref": "conv-26/D3:4", "at": "2023-05-08T13:56:00Z"}]
    assert list(e.sections) == ["Raw Concept", "Narrative", "Facts"]
    assert "**Task:** rotate refresh tokens" in e.sections["Raw Concept"]
    assert "### Rules" in e.sections["Narrative"]
    assert e.facts == ["- **rotation**: happens on every use [security]",
                       "- **lifetime**: refresh tokens live 30 days [config]"]
    assert e.extra == {}


def test_timestamps_stay_strings() -> None:
    e = parse(FULL)
    assert e.created_at == "2026-12-02T10:00:00Z" and isinstance(e.created_at, str)
    assert e.updated_at == "2026-12-03T11:30:00Z"
    e2 = parse("---\ntitle: t\ncreatedAt: 2026-01-02\nupdatedAt: 2026-01-02 10:00:00\n---\n# t\n")
    assert e2.created_at == "2026-01-02"
    assert e2.updated_at == "2026-01-02 10:00:00"
    # a round trip does not change the text of a timestamp
    assert parse(serialize(e2)).created_at == "2026-01-02"
    assert parse(serialize(e2)).updated_at == "2026-01-02 10:00:00"


def test_round_trip_is_stable() -> None:
    e = parse(FULL)
    text = serialize(e)
    assert parse(text) == e
    assert serialize(parse(text)) == text


def test_serialize_fixed_key_order_and_heading() -> None:
    e = Entry(title="Zed", summary="s", tags=["b", "a"], created_at="2026-01-01T00:00:00Z",
              updated_at="2026-01-01T00:00:00Z", sections={"Narrative": "n"}, extra={"zzz": 1, "aaa": 2})
    text = serialize(e)
    assert text.startswith("---\ntitle: Zed\n")
    assert frontmatter_keys(text) == [*FIELD_ORDER, "zzz", "aaa"]
    body = text.split("---\n", 2)[2]
    assert body.startswith("# Zed\n")
    assert "## Narrative\n\nn\n" in serialize(replace(e, sections={"Narrative": "n", "Facts": "- f"}))
    # lists are written in flow style, as in the design
    assert "tags: [b, a]\n" in text


def test_serialize_writes_sections_in_given_order() -> None:
    e = Entry(title="t", sections={"": "intro", "Raw Concept": "**Task:** x", "Narrative": "n", "Facts": "- f"})
    body = serialize(e).split("---\n", 2)[2]
    assert body.index("intro") < body.index("## Raw Concept") < body.index("## Narrative") < body.index("## Facts")


def test_unknown_keys_are_kept_in_order() -> None:
    text = FULL.replace("sources:", "owner: ana\nreview: {by: ben, date: '2026-01-01'}\nsources:")
    e = parse(text)
    assert e.extra == {"owner": "ana", "review": {"by": "ben", "date": "2026-01-01"}}
    out = serialize(e)
    assert frontmatter_keys(out) == [*FIELD_ORDER, "owner", "review"]
    assert parse(out).extra == e.extra


def test_unknown_keys_preserved_when_an_entry_is_updated(mem) -> None:
    path = mem.home / "tree" / "auth" / "jwt" / "rotation.md"
    path.parent.mkdir(parents=True)
    path.write_text(FULL.replace("sources:", "owner: ana\nsources:"))
    mem.curate([{"op": "UPDATE", "path": "auth/jwt/rotation.md", "content": "## Facts\n\n- new fact",
                 "reason": "test"}])
    e = mem.read("auth/jwt/rotation.md")
    assert e.extra == {"owner": "ana"}
    assert "- new fact" in e.facts
    assert "owner: ana\n" in path.read_text()


def test_content_as_markdown_string() -> None:
    secs = sections_from_content("# Title line\n\nJust prose.\n")
    assert secs == {"Narrative": "Just prose."}
    secs = sections_from_content("intro\n\n## Facts\n\n- a\n\n## Custom\n\ntext")
    assert secs == {"": "intro", "Facts": "- a", "Custom": "text"}


def test_content_as_dict_of_sections() -> None:
    secs = sections_from_content({
        "facts": [{"subject": "ttl", "statement": "15 minutes", "category": "config"}, "plain fact"],
        "narrative": {"rules": "Never reuse.", "structure": "Two tokens."},
        "raw_concept": {"task": "Rotate", "author": "ana"},
        "Other Notes": "extra",
    })
    assert list(secs) == ["Raw Concept", "Narrative", "Facts", "Other Notes"]
    assert secs["Raw Concept"] == "**Task:** Rotate\n**Author:** ana"
    # known narrative subsections come in their fixed order
    assert secs["Narrative"] == "### Structure\n\nTwo tokens.\n\n### Rules\n\nNever reuse."
    assert secs["Facts"] == "- **ttl**: 15 minutes [config]\n- plain fact"


@pytest.mark.parametrize("bad", [42, ["a"], {"facts": 5}, {"narrative": 3}])
def test_content_of_wrong_type(bad) -> None:
    with pytest.raises(InvalidEntry):
        sections_from_content(bad)


def test_fenced_code_keeps_hash_lines() -> None:
    text = "---\ntitle: t\n---\n# t\n\n## Narrative\n\n```\n## not a heading\n```\n"
    e = parse(text)
    assert list(e.sections) == ["Narrative"]
    assert "## not a heading" in e.sections["Narrative"]


def test_duplicate_headings_stay_separate() -> None:
    e = parse("# t\n\n## Notes\n\na\n\n## Notes\n\nb\n")
    assert e.sections == {"Notes": "a", "Notes (2)": "b"}


# -- hand-edited files ------------------------------------------------------

def test_no_frontmatter_title_from_heading() -> None:
    e = parse("# Hand written\n\nSome prose.\n\n## Facts\n- a fact\n")
    assert e.title == "Hand written"
    assert e.sections[""] == "Some prose."
    assert e.facts == ["- a fact"]


def test_frontmatter_without_title_uses_heading() -> None:
    e = parse("---\ntags: auth, security\n---\n\n# From heading\n\nbody\n")
    assert e.title == "From heading"
    assert e.tags == ["auth", "security"]  # a comma string is accepted for a list


def test_no_frontmatter_no_heading() -> None:
    e = parse("just some text\n")
    assert e.title == ""
    assert e.sections == {"Narrative": "just some text"}
    # serializing such an entry still produces a heading
    assert "\n# Untitled\n" in serialize(e)


def test_crlf_and_bom_are_tolerated() -> None:
    e = parse("\ufeff---\r\ntitle: t\r\n---\r\n# t\r\n\r\nbody\r\n")
    assert e.title == "t"
    assert e.sections == {"Narrative": "body"}


def test_legacy_body_links_show_up_in_links() -> None:
    e = parse("---\ntitle: t\nrelated: [a/b/c.md]\n---\n# t\n\nSee @auth/jwt/rotation.md and @a/b/c.md.\n")
    assert e.links() == ["a/b/c.md", "auth/jwt/rotation.md"]


def test_legacy_links_are_indexed_as_backlinks(mem) -> None:
    mem.curate([{"op": "ADD", "path": "auth/jwt/rotation.md", "title": "Rotation", "content": "x", "reason": "r"}])
    hand = mem.home / "tree" / "auth" / "jwt" / "hand.md"
    hand.write_text("# Hand\n\nSee @auth/jwt/rotation.md for details.\n")
    forward, back = mem.tree.links("auth/jwt/rotation.md")
    assert back == ["auth/jwt/hand.md"]
    assert mem.show("auth/jwt/hand.md")["links"] == ["auth/jwt/rotation.md"]


# -- malformed files ----------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("---\ntitle: [unclosed\n---\n# x\n", "malformed YAML"),
        ("---\ntitle: x\n# never closed\n", "never closed"),
        ("---\n- a\n- b\n---\n# x\n", "must be a mapping"),
        ("---\ntags: {a: 1}\n---\n# x\n", "'tags' must be a list"),
        ("---\ntags: [[1, 2]]\n---\n# x\n", "'tags' must be a list"),
        ("---\nsources: 5\n---\n# x\n", "'sources' must be a list"),
        ("---\nsources: [5]\n---\n# x\n", "'sources' items"),
        ("---\ntitle: x\n---\n# x\n\0binary", "NUL"),
        ("---\na: &x 1\nb: *x\n---\n# x\n", "not allowed"),
        ("---\n" + "x: " + "[" * 5000 + "\n---\n", "malformed YAML"),
        ("---\nbig: " + "y" * 70_000 + "\n---\n", "larger than"),
    ],
)
def test_malformed_files_raise_invalid_entry(text: str, fragment: str) -> None:
    with pytest.raises(InvalidEntry) as info:
        parse(text, where="a/b/c.md")
    assert fragment in str(info.value)
    assert str(info.value).startswith("a/b/c.md")


def test_alias_bomb_is_refused_quickly() -> None:
    start = time.perf_counter()
    with pytest.raises(InvalidEntry, match="(anchors|aliases) are not allowed"):
        parse(BOMB)
    assert time.perf_counter() - start < 0.5


def test_serialize_never_writes_anchors() -> None:
    shared = ["x", "y"]
    e = Entry(title="t", tags=shared, keywords=shared, extra={"a": {"k": 1}, "b": {"k": 1}})
    text = serialize(e)
    assert "&" not in text and "*" not in text
    assert parse(text).keywords == ["x", "y"]


@pytest.mark.parametrize("text", ["line\u2028separator", "para\u2029graph", "next\x85line", "tab\there", "quote ' \" :"])
def test_odd_characters_survive_a_round_trip(text: str) -> None:
    e = Entry(title=f"T {text}", summary=text, tags=[text], sources=[{"kind": "text", "ref": text}],
              extra={"note": text})
    back = parse(serialize(e))
    assert (back.title, back.summary, back.tags, back.sources, back.extra) == (
        e.title, e.summary, e.tags, e.sources, e.extra)


def test_prose_alone_is_written_without_its_heading_and_read_back_as_the_narrative() -> None:
    e = Entry(title="Ana, 8 May 2023", sections={"Narrative": "I adopted a greyhound.\n\n### Why\n\nShe ran."})
    text = serialize(e)
    assert text.split("---\n", 2)[2] == "# Ana, 8 May 2023\n\nI adopted a greyhound.\n\n### Why\n\nShe ran.\n"
    assert parse(text).sections == e.sections
    # a hand-written body without headings is prose too; with other sections it keeps its heading
    assert parse("# t\n\nJust prose.\n").sections == {"Narrative": "Just prose."}
    both = serialize(replace(e, sections={"Narrative": "n", "Facts": "- f"}))
    assert "## Narrative\n\nn\n\n## Facts\n\n- f" in both
    assert parse(both).sections == {"Narrative": "n", "Facts": "- f"}
    # a fenced "## line" in the prose stays prose
    fenced = replace(e, sections={"Narrative": "```\n## not a heading\n```"})
    assert parse(serialize(fenced)).sections == fenced.sections


def test_reader_text_keeps_what_a_reader_needs() -> None:
    e = Entry(title="Ana, 8 May 2023", summary="I adopted a greyhound.", tags=["Ana"], keywords=["what", "pet"],
              related=["chat/s1/d1_2.md"], created_at="2026-01-01T00:00:00Z", updated_at="2026-01-02T00:00:00Z",
              sources=[{"kind": "conversation", "ref": "c1#D1:1", "at": "1:56 pm on 8 May, 2023"}],
              sections={"Narrative": "I adopted a greyhound. She is three."})
    assert reader_text(e) == ("# Ana, 8 May 2023\nSources: c1#D1:1 (1:56 pm on 8 May, 2023)\n"
                              "Updated: 2026-01-02T00:00:00Z\n\nI adopted a greyhound. She is three.\n")
    # a summary the body does not hold is kept; an entry without sources or body still reads
    e2 = replace(e, summary="Ana has a dog.", sources=[], updated_at="", sections={})
    assert reader_text(e2) == "# Ana, 8 May 2023\nSummary: Ana has a dog.\n"

"""Markdown documents curated as documents: front matter is the page's metadata, every heading
level splits, a section's title says where it stands, and tables stay tables
(tree/inputs/documents.py, tree/inputs/markdown_sections.py, tree/inputs/verbatim_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgrove import Memory
from memgrove.tree.inputs import curator, documents, markdown_sections
from memgrove.tree.inputs.markdown_sections import SECTION_WORDS, TABLE_DELIMITER, TITLE_CHARS

INSTALL = """\
---
title: npm-install
section: 1
description: Adds a package to your project
tags: [cli, install]
keywords: package, dependencies
aliases: [npm-i, /cli/v9/commands/npm-install]
date: 2024-03-01
lastmod: 2024-05-02 10:00:00 +0200
---

### Synopsis

```bash
npm install [<package-spec> ...]
```

### Description

This command installs a package and any packages that it depends on.
"""

CONFIG = """\
---
title: Config
description: About npm configuration
---

### Description

npm gets its configuration values from the command line, the environment and npmrc files.

### Config Settings

#### `fetch-retries`

* Default: 2
* Type: Number

The "retries" config for the `retry` module to use when fetching packages.

#### `fetch-timeout`

* Default: 300000 (5 minutes)
* Type: Number

The maximum amount of time to wait for HTTP requests to complete.
"""


def _file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _ops(name: str, text: str) -> list[dict]:
    return curator.ops_from_document(name, text, ref=name, at="2026-01-01T00:00:00Z")


# -- front matter ---------------------------------------------------------------

def test_front_matter_is_the_pages_metadata_not_its_text(mem: Memory, tmp_path: Path) -> None:
    results = mem.ingest(files=[_file(tmp_path, "npm-install.md", INSTALL)])
    assert [r.path for r in results] == ["files/npm_install/synopsis.md", "files/npm_install/description.md"]
    synopsis, description = (mem.read(r.path) for r in results)
    assert synopsis.title == "npm-install › Synopsis"          # the page's title, not its file's first heading
    assert description.title == "npm-install › Description"
    for e in (synopsis, description):
        assert "title:" not in e.body and "section:" not in e.body and "---" not in e.body
        assert e.tags == ["cli", "install"]
        assert e.keywords == ["package", "dependencies", "npm-i"]      # an old URL is no word to search
        # the date the file states, the newer of the two, is when its words were written
        assert e.sources[0]["at"] == "2024-05-02T08:00:00Z"
    assert synopsis.summary == "Adds a package to your project"     # what the author says the page is about
    assert synopsis.extra["document"] == {"created": "2024-03-01", "updated": "2024-05-02 10:00:00 +0200",
                                          "aliases": ["npm-i", "/cli/v9/commands/npm-install"], "section": 1}
    assert "document" not in description.extra             # kept once, on the page's first entry
    assert mem.search("your project")[0].path == "files/npm_install/synopsis.md"   # the summary is searched


def test_malformed_front_matter_never_stops_curation_and_loses_no_words() -> None:
    # a colon in a plain value is an error to YAML; its author meant key: value lines
    ops = _ops("guide.md", "---\ntitle: npm: the package manager\ntags:\n  - cli\n---\n\n## Use\n\nRun it.\n")
    assert [o["title"] for o in ops] == ["npm: the package manager › Use"]
    assert ops[0]["tags"] == ["cli"] and "title:" not in ops[0]["content"]["narrative"]
    # a block that is no key: value lines stays text: nothing is lost, nothing is guessed
    for block in ("---\ntitle: [unclosed\nnot a key line\n---\n", "---\n- a list\n- not keys\n---\n",
                  "---\n\"just a string\"\n---\n", "---\ntitle: ok\n  : broken\n---\n"):
        ops = _ops("odd.md", block + "\nThe body.\n")
        text = "\n".join(o["content"]["narrative"] for o in ops)
        assert all(line in text for line in block.strip().split("\n")[1:-1]), block
        assert "The body." in text
    # YAML's aliases are refused (an alias bomb); read as lines, "*a" is only text
    ops = _ops("alias.md", "---\ntitle: T\nkey: *a\n---\n\nBody.\n")
    assert ops[0]["title"] == "T" and ops[0]["extra"] == {"document": {"key": "*a"}}
    # an unclosed block is a thematic break and text, not front matter
    ops = _ops("rule.md", "---\ntitle: x\n\nNo closing line.\n")
    assert "title: x" in ops[0]["content"]["narrative"]


def test_front_matter_values_are_bounded_and_inert(mem: Memory, tmp_path: Path) -> None:
    text = ("---\n"
            f"title: \"{'Very long title ' * 300}\\0end\"\n"
            f"tags: [{', '.join(f't{i}' for i in range(500))}]\n"
            "supersededBy: files/other/x.md\n"        # not this entry's validity: a page's own key
            "related: [../../etc/passwd]\n"
            "permalink: ../../outside\n"
            "theme: {colors: {a: 1}}\n"
            + "".join(f"k{i}: [{', '.join(['v' * 150] * 20)}]\n" for i in range(14))   # 42 KB of other keys
            + "---\n\n## Part\n\nWords.\n")
    results = mem.ingest(files=[_file(tmp_path, "p.md", text)])
    assert [r.path for r in results] == ["files/p/part.md"]     # a name from the heading, never a value
    e = mem.read("files/p/part.md")
    assert len(e.title) <= TITLE_CHARS and "\x00" not in e.title
    assert len(e.tags) == documents.MAX_WORDS
    assert e.related == [] and "supersededBy" not in e.extra
    assert e.extra["document"]["supersededBy"] == "files/other/x.md"
    assert e.extra["document"]["permalink"] == "../../outside" and "theme" not in e.extra["document"]
    assert len(str(e.extra["document"])) < 2 * documents.EXTRA_CHARS
    assert mem.search("Words")[0].path == "files/p/part.md"   # searchable and not closed


def test_toml_front_matter_and_a_page_that_is_only_front_matter() -> None:
    ops = _ops("hugo.md", "+++\ntitle = \"Hugo page\"\ntags = [\"a\"]\ndate = 2024-01-02T03:04:05Z\n+++\n\n## One\n\nText.\n")
    assert ops[0]["title"] == "Hugo page › One" and ops[0]["tags"] == ["a"]
    assert ops[0]["sources"][0]["at"] == "2024-01-02T03:04:05Z"
    only = _ops("stub.md", "---\ntitle: Stub\ndescription: Nothing here yet.\n---\n")
    assert [(o["title"], o["summary"]) for o in only] == [("Stub", "Nothing here yet.")]


@pytest.mark.parametrize("stated, iso", [
    ("2024-03-01", "2024-03-01"), ("2024-03-01T10:00:00Z", "2024-03-01T10:00:00Z"),
    ("2024-03-01 10:00:00 +0100", "2024-03-01T09:00:00Z"), ("2024-03-01T9:30+02:00", "2024-03-01T07:30:00Z"),
    ("March 2024", ""), ("2024-13-01", ""), ("", "")])
def test_stated_dates_in_iso(stated: str, iso: str) -> None:
    assert documents.iso_date(stated) == iso


# -- headings ---------------------------------------------------------------------

def test_every_heading_level_splits_and_titles_say_where_a_section_stands(mem: Memory, tmp_path: Path) -> None:
    results = mem.ingest(files=[_file(tmp_path, "config.md", CONFIG)])
    assert [r.path for r in results] == ["files/config/description.md", "files/config/fetch_retries.md",
                                         "files/config/fetch_timeout.md"]
    timeout = mem.read("files/config/fetch_timeout.md")
    assert timeout.title == "Config › Config Settings › fetch-timeout"
    assert timeout.body.startswith("* Default: 300000 (5 minutes)") and "fetch-retries" not in timeout.body
    hit = mem.search("fetch-timeout default")[0]
    assert (hit.path, hit.title) == ("files/config/fetch_timeout.md", "Config › Config Settings › fetch-timeout")


def test_page_title_from_the_only_h1_else_the_file_name() -> None:
    assert [o["title"] for o in _ops("a.md", "# Guide\n\nIntro.\n\n## Step\n\nDo it.\n")] == ["Guide", "Guide › Step"]
    two = _ops("notes.md", "# One\n\na\n\n# Two\n\nb\n")
    assert [o["title"] for o in two] == ["notes › One", "notes › Two"]
    assert [o["title"] for o in _ops("x.md", "Before.\n\n## Later\n\nAfter.\n")] == ["x", "x › Later"]
    setext = _ops("s.md", "Guide\n=====\n\nIntro.\n\nStep one\n--------\n\nDo it.\n")
    assert [(o["title"], o["content"]["narrative"]) for o in setext] == [("Guide", "Intro."), ("Guide › Step one", "Do it.")]


def test_headings_inside_fenced_code_are_not_headings() -> None:
    text = ("# Page\n\n## Real\n\n```bash\n#### not a heading\n# nor this\n```\n\n"
            "~~~markdown\n```\n## still code: a ``` line does not close a ~~~ fence\n```\n~~~\n\nAfter.\n")
    ops = _ops("f.md", text)
    assert [o["title"] for o in ops] == ["Page › Real"]
    assert "#### not a heading" in ops[0]["content"]["narrative"] and "After." in ops[0]["content"]["narrative"]


def test_titles_are_bounded_and_keep_the_page_and_the_section() -> None:
    heads = "".join(f"{'#' * n} Heading number {n} of a very deeply nested reference page here\n\n" for n in range(1, 7))
    t = _ops("deep.md", "---\ntitle: The Page\n---\n\n" + heads + "Text.\n")[0]["title"]
    assert len(t) <= TITLE_CHARS and t.startswith("The Page › …") and "Heading number 6" in t
    question = "How can I prevent my package from being published to the official registry by mistake, or by a script?"
    long = _ops("faq.md", f"# FAQ\n\n## {question}\n\nSet `private: true`.\n")[0]
    assert long["title"].startswith("FAQ › How can I prevent") and long["title"].endswith("…")
    assert long["content"]["narrative"] == f"{question}\n\nSet `private: true`."   # its words are kept
    assert markdown_sections.plain_heading("[`npm`](/cli) **install** {#install}") == "npm install"
    assert markdown_sections.plain_heading("`_auth` and snake_case_name") == "_auth and snake_case_name"


def test_a_page_without_headings_splits_at_paragraphs_as_before() -> None:
    paras = [f"Paragraph {i} " + "word " * 60 for i in range(12)]
    ops = _ops("plain.md", "\n\n".join(paras))
    bodies = [o["content"]["narrative"] for o in ops]
    assert len(ops) > 1 and all(len(b.split()) <= SECTION_WORDS for b in bodies)
    assert "\n\n".join(bodies) == "\n\n".join(paras)                     # every paragraph, whole, in order
    assert [o["title"] for o in ops][:2] == ["plain", "plain (part 2)"]


# -- tables -----------------------------------------------------------------------

def test_a_table_stays_whole_in_its_section() -> None:
    table = "| Flag | Default |\n| --- | --- |\n" + "".join(f"| `--f{i}` | {i} |\n" for i in range(20))
    ops = _ops("t.md", "## Flags\n\nThe flags:\n\n" + table)
    assert len(ops) == 1 and table.strip() in ops[0]["content"]["narrative"]


def test_a_huge_table_splits_by_rows_each_part_with_its_header() -> None:
    header = "| Flag | Default | Type | Description |\n| --- | --- | --- | --- |"
    rows = [f"| `--flag-{i}` | {i} | Number | What flag {i} does, in a sentence of about ten words. |" for i in range(200)]
    ops = _ops("big.md", "## Flags\n\n" + header + "\n" + "\n".join(rows) + "\n\nAfter the table.\n")
    bodies = [o["content"]["narrative"] for o in ops]
    assert len(bodies) > 2
    seen = []
    for body in bodies:
        lines = body.split("\n")
        if lines[0].startswith("|"):
            assert "\n".join(lines[:2]) == header                # every piece says what its columns mean
            assert len(lines) > 2                                 # and holds rows: never a header alone
            seen += [ln for ln in lines[2:] if ln.startswith("| `--flag")]
        assert len(body.split()) <= SECTION_WORDS
    assert seen == rows                                           # every row once, in order
    assert [o["title"] for o in ops][:2] == ["big › Flags", "big › Flags (part 2)"]
    assert not any(TABLE_DELIMITER.match(b.split("\n")[0]) for b in bodies)


# -- curating again ---------------------------------------------------------------

def test_curating_a_folder_again_changes_nothing(mem: Memory, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _file(docs, "commands/npm-install.md", INSTALL)
    _file(docs, "using-npm/config.md", CONFIG)
    first = mem.ingest(files=[docs])
    again = mem.ingest(files=[docs])
    assert [r.path for r in again] == [r.path for r in first] and len(first) == 5
    assert {r.status for r in first} == {"added"} and {r.status for r in again} == {"unchanged"}


def test_a_document_sent_without_its_file_reads_alike() -> None:
    crlf = "\ufeff" + CONFIG.replace("\n", "\r\n")
    assert [(o["path"], o["title"], o["content"]) for o in _ops("config.md", crlf)] == \
        [(o["path"], o["title"], o["content"]) for o in _ops("config.md", CONFIG)]


_PIECES = st.sampled_from([
    "# Top", "## Section", "#### `setting-name`", "###### deep", "Title line\n=====", "```\n# code, not a heading\n```",
    "~~~\n```\n## still code\n```\n~~~", "| a | b |\n| --- | --- |\n| 1 | 2 |", "Plain words here.", "* a list item",
    "---\ntitle: x: y\n---", "---\n[broken\n---", "+++\ntitle = 'toml'\n+++", "<!-- a comment -->", "",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=14), st.integers(0, 60))
def test_any_page_is_curated_without_losing_a_line(pieces: list[str], rows: int) -> None:
    from memgrove.tree.writes.op_shapes import check_shape

    table = "| k | v |\n|---|---|\n" + "\n".join(f"| row {i} | {'w ' * 30}|" for i in range(rows))
    text = "\n\n".join(pieces + [table])
    if not text.strip():
        return
    ops = _ops("page.md", text)
    bodies = "\n".join(o["content"]["narrative"] for o in ops)
    for op in ops:
        check_shape(op)                                     # every operation is one the writer takes
        assert len(op["title"]) <= TITLE_CHARS
    # every line that is not a heading or front matter is in some entry
    meta, body = documents.split_front_matter(text)
    lines = body.split("\n")
    found = markdown_sections._headings(lines)
    for i, line in enumerate(lines):
        setext_text = i + 1 in found and markdown_sections._SETEXT.match(lines[i + 1])
        if line.strip() and i not in found and not setext_text:
            assert line.strip() in bodies, line

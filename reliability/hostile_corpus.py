"""The hostile corpus: every bad input (path tricks, terminal escapes, markup, control characters, NUL bytes,
lone surrogates, huge and deep fields, non-UTF-8 files, garbage JSON, odd message ids ...) and the surfaces
each goes through (hostile.py runs them)."""

from __future__ import annotations

import base64
import json
import random
from typing import Any


ESCAPE_DIR = "/tmp/mg-hostile-escape"


def path_payloads() -> list[tuple[str, str]]:
    return [
        ("dotdot", "../../etc/passwd"), ("absolute", "/etc/passwd"), ("escape_md", "a/../../../x.md"),
        ("backslash", "..\\..\\win\\x.md"), ("drive", "C:\\temp\\x.md"), ("home", "~/.ssh/id_rsa"),
        ("too_deep", "a/b/c/d/e/f/g.md"), ("empty", ""), ("space", " "), ("dot", "."), ("dotdot_only", ".."),
        ("context", "a/b/context.md"), ("hidden", "a/b/.hidden.md"), ("underscore", "a/b/_x.md"),
        ("reserved", "CON/aux/nul.md"), ("slashes", "a//b///c.md"), ("trailing_slash", "a/b/c.md/"),
        ("dot_segments", "./a/./b/c.md"), ("percent", "%2e%2e/%2e%2e/x.md"),
        ("long_segment", "a/b/" + "x" * 300 + ".md"), ("fullwidth", "ａｕｔｈ/ｊｗｔ/ｒｏｔａｔｉｏｎ.md"),
        ("cyrillic_a", "аuth/jwt/rotation.md"), ("zero_width", "auth/jwt/rot\u200bation.md"),
        ("rtl", "auth/jwt/\u202egpj.md"), ("newline", "auth/jwt/x\ny.md"), ("nul", "auth/jwt/x\x00y.md"),
        ("abs_tmp", ESCAPE_DIR + "/a/b.md"), ("upper_ext", "Auth/JWT/X.MD"), ("double_ext", "auth/jwt/x.md.md"),
        ("cyrillic", "файлы/заметки/план.md"), ("cjk", "日本/記録/メモ.md"), ("spaces", "Team Notes/On Call/Rota 2024.md"),
        ("accents", "auth/jwt/" + "é" * 100 + ".md"), ("escape_seq", "a/b/\x1b[31mred.md"),
        ("markup", "a/b/[bold]x[/bold].md"), ("lone_surrogate", "a/b/\ud800.md"),
    ]


def text_payloads() -> list[tuple[str, str]]:
    b64 = base64.b64encode(random.Random(7).randbytes(150_000)).decode()
    return [
        ("osc52", "Note \x1b]52;c;ZXZpbA==\x07 copies to the clipboard"), ("csi_clear", "\x1b[2J\x1b[H screen cleared"),
        ("osc8_link", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ here"), ("csi8", "\x9b31m eight-bit"),
        ("bell", "ring \x07\x08\x7f bell"), ("markup_close", "text [/dim] closing tag"),
        ("markup_link", "[link=https://evil.example]click me[/link]"), ("markup_open", "[bold red]unclosed markup"),
        ("brackets", "[[ not ]] markup ["), ("crlf", "line one\r\nline two\rline three"), ("nul", "nul \x00 byte"),
        ("lone_surrogate", "lone \ud800 surrogate"), ("bom", "\ufeffbom first"), ("combining", "e\u0301" * 600),
        ("emoji", "🔥" * 1500), ("rtl", "\u202eevil text reversed"), ("confusable", "раураl ассоunt"),
        ("long_token", "a" * 100_000), ("no_punctuation", "word " * 30_000), ("base64_image",
         f"![img](data:image/png;base64,{b64})"), ("deep_heading", "#" * 1000 + " deep"),
        ("dup_headings", "## same heading\ntext\n" * 4000), ("frontmatter", "---\ntitle: injected\nrelated: [/etc/passwd]\n---\n# x"),
        ("yaml_bomb", "---\na: &a [x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b]\n---\nbody"),
        ("template", "{{template}} ${HOME} $(rm -rf /) `id`"), ("sql", "'; DROP TABLE files; --"),
        ("format", "%s%n%x {0} {name}"), ("backslashes", "\\" * 500), ("json_literal", "null"), ("huge_number", "1e999"),
        ("two_mb", "x" * 2_000_000), ("summary_70k", "s" * 70_000), ("many_lines", "\n" * 200_000 + "end"),
        ("only_space", " \t\n "), ("question_flood", "why? " * 40_000),
    ]


def file_payloads() -> list[tuple[str, str, bytes]]:
    return [
        ("latin1.txt", "non_utf8", "café au lait, naïve".encode("latin-1")), ("nul.md", "binary", b"# T\n\x00\x01\x02" * 100),
        ("elf.bin", "elf", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40), ("huge.md", "over_limit", b"x " * 6_000_000),
        ("image.md", "base64_md", ("# Pic\n\n![p](data:image/png;base64," +
                                   base64.b64encode(random.Random(3).randbytes(150_000)).decode() + ")\n").encode()),
        ("headings.md", "dup_headings", ("## Same\ntext\n" * 5000).encode()),
        ("deep.md", "deep_headings", "".join("#" * (i % 7 + 1) + f" h{i}\nline\n" for i in range(3000)).encode()),
        ("front.md", "frontmatter_bomb", b"---\na: &a [x,x]\nb: &b [*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b]\n---\n# t\nbody"),
        ("crlf.md", "crlf", b"# Title\r\n\r\nBody line\r\n"), ("bom.md", "bom", "\ufeff# Title\n\nbody".encode()),
        ("empty.md", "empty", b""), ("long_line.txt", "long_token", b"z" * 300_000),
        ("escapes.md", "escapes", b"# \x1b]52;c;ZXZpbA==\x07Title\n\nbody \x1b[2J"),
        ("links_out.md", "related_outside", b"---\ntitle: Outside links\nrelated: ['/etc/passwd', '../../x.md']\n---\n"
                                            b"# Outside links\n\nhostile hand placed body title\n"),
    ]


def json_payloads() -> list[tuple[str, bytes]]:
    return [("deep_list", b"[" * 100_000 + b"]" * 100_000), ("deep_object", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
            ("not_json", b"this is not json"), ("empty", b""), ("number", b"1e999"), ("nan", b"[NaN]"),
            ("object_not_list", b'{"op": "ADD"}'), ("wrong_types", b'[{"op": 1, "path": [], "reason": {}}]'),
            ("null_op", b"[null]"), ("huge_list", json.dumps([{"op": "UPSERT", "path": f"bulk/many/e_{i}.md",
                                                                "content": "x", "reason": "bulk"}
                                                               for i in range(20_000)]).encode()),
            ("utf16", '[{"op": "ADD"}]'.encode("utf-16")), ("latin1", '[{"op":"ADD","path":"a/b/c.md","reason":"é"}]'.encode("latin-1")),
            ("related_outside", json.dumps([{"op": "UPSERT", "path": "hostile/rel/out.md", "content": "x",
                                             "related": ["/etc/passwd", "../../x.md"], "reason": "r"}]).encode()),
            ("twenty_mb", json.dumps([{"op": "UPSERT", "path": "hostile/big/op.md", "content": "y" * 20_000_000,
                                       "reason": "big"}]).encode())]


def conversations() -> list[tuple[str, Any]]:
    def conv(ids, cid="c1", texts=None):
        return {"id": cid, "messages": [{"id": i, "speaker": "Ana", "text": (texts or {}).get(i, f"message {i} says {k}")}
                                        for k, i in enumerate(ids)]}
    return [("ids_dash_underscore", conv(["m-1", "m_1", "m.1"])), ("ids_cjk", conv(["一", "二", "三"])),
            ("ids_case", conv(["A1", "a1"])), ("ids_slash", conv(["../x", "..\\y", "/etc/z"])),
            ("ids_empty", conv(["", " "])), ("ids_long", conv(["i" * 5000, "i" * 5001])),
            ("ids_numbers", conv([1, "1", 1.0])), ("conv_id_dots", conv(["a"], cid="../../..")),
            ("conv_id_cjk", conv(["a"], cid="会話")), ("no_messages", {"id": "x", "messages": []}),
            ("messages_not_list", {"id": "x", "messages": "hi"}), ("speaker_none", {"id": "x", "messages": [{"id": "1", "text": "t"}]}),
            ("not_object", ["a", "b"]), ("huge_text", conv(["1"], texts={"1": "w " * 3_000_000})),
            ("escape_text", conv(["1"], texts={"1": "\x1b]52;c;ZXZpbA==\x07 copied"})),
            ("deep_extra", {"id": "x", "messages": [{"id": "1", "speaker": "A", "text": "t", "meta": [[[[[[[]]]]]]]}]})]


PATH_API = ("api_curate_path", "api_merge_into", "api_related", "api_show", "api_list", "api_history", "api_delete",
            "tool_read_entry", "tool_list_tree", "tool_curate_path")
PATH_CLI = ("cli_show", "cli_history", "cli_tree")
TEXT_API = ("api_title", "api_summary", "api_content", "api_tags", "api_reason", "api_source_ref", "api_ingest_text",
            "api_search", "api_query", "tool_search", "tool_curate_content")
TEXT_CLI = ("cli_curate_text", "cli_search", "cli_query", "cli_render")
# the payloads the issue found bugs with go through every surface; the others through a seeded sample
EVERYWHERE = {"dotdot", "absolute", "abs_tmp", "spaces", "cyrillic", "cjk", "long_token", "no_punctuation",
              "base64_image", "dup_headings", "osc52", "markup_close", "markup_link", "summary_70k", "nul"}


def build_corpus(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []

    def add(surface: str, label: str, **kw: Any) -> None:
        cases.append({"id": f"{surface}:{label}", "surface": surface, "label": label, **kw})

    for payloads, api, clis, k in ((path_payloads(), PATH_API, PATH_CLI, 6), (text_payloads(), TEXT_API, TEXT_CLI, 7)):
        for label, p in payloads:
            every = label in EVERYWHERE
            for surface in [*(api if every else rng.sample(api, k)), *(clis if every else [rng.choice(clis)])]:
                add(surface, label, text=p)
    for name, label, data in file_payloads():
        for surface in ("api_ingest_file", "cli_curate_file", "hand_placed"):
            add(surface, label, name=name, b64=base64.b64encode(data).decode())
    for label, data in json_payloads():
        add("cli_ops", label, b64=base64.b64encode(data).decode())
        add("cli_conversation", label, b64=base64.b64encode(data).decode())
    for label, c in conversations():
        add("api_conversation", label, conv=c)
    add("cli_stdin", "over_limit", b64=base64.b64encode(b"x " * 6_000_000).decode())
    for label, pair in distinct_pairs():
        add("distinct", label, pair=pair)
    rng.shuffle(cases)
    return cases


def distinct_pairs() -> list[tuple[str, dict[str, Any]]]:
    """Different inputs that a careless curator maps to one entry."""
    same_start = "Deploy notes for the staging cluster are kept here. " * 3
    return [("texts_same_opening", {"texts": [same_start + "First marker dzone.", same_start + "Second marker dztwo."]}),
            ("readme_twice", {"files": [["a/README.md", "# Notes\n\nfirst marker dzthree"],
                                        ["b/README.md", "# Notes\n\nsecond marker dzfour"]]}),
            ("non_latin_names", {"files": [["заметки.txt", "first marker dzfive"], ["日记.txt", "second marker dzsix"]]}),
            ("ids_dash_underscore", {"conv": {"id": "dz", "messages": [
                {"id": "m-1", "speaker": "A", "text": "first marker dzseven"},
                {"id": "m_1", "speaker": "A", "text": "second marker dzeight"}]}}),
            ("ids_cjk", {"conv": {"id": "dzc", "messages": [
                {"id": "一", "speaker": "A", "text": "first marker dznine"},
                {"id": "二", "speaker": "A", "text": "second marker dzten"},
                {"id": "三", "speaker": "A", "text": "third marker dzeleven"}]}})]

"""Hostile inputs: a deterministic corpus of bad inputs through the Python API, the CLI and the LangChain tools.

Every payload (path tricks, terminal escapes, rich markup, control characters,
confusables, NUL bytes, lone surrogates, huge and deep fields, long tokens,
base64 blobs, duplicate headings, injected frontmatter, non-UTF-8 and binary
files, garbage and deeply nested JSON, odd message ids ...) goes through each
surface it fits. Each case must be rejected with a clear error (a
``MemgroveError``; a tool's "Error: ..." line; a CLI one-line error) or be
accepted and land *inside* the tree as an entry that reads back and is found by
search. "Unexpected" is: any other exception, a traceback, "unexpected" in CLI
output, a raw terminal escape printed, markup interpreted, a file written
outside the tree, two different inputs landing in one entry, or a case taking
more than ``--slow`` seconds plus the time its entries take to write (``pace.py``: a
5,000-section file is 5,000 entries, and may take what they cost on this machine).

API and tool cases run in a worker process that reports each case on one line;
a worker stuck on a case is killed and a new one continues after it.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shlex
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .common import MEMGROVE, SectionResult, child_args, child_env, cli_repro, run
from .pace import CALIBRATION_ENTRIES, ENTRY_MARGIN, LARGEST_CASE_ENTRIES, allowed, entries_in, seconds_per_entry

SECTION = "hostile"
ESCAPE_DIR = "/tmp/mg-hostile-escape"


# -- the corpus ------------------------------------------------------------------------------

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


# -- running cases (in the worker) --------------------------------------------------------------

ITEM_OF = {"RecursionError": 13, "MarkupError": 11, "BrokenPipeError": 13, "TypeError": 13}


def _payload(case: dict[str, Any]) -> Any:
    return case.get("text")


def _marker(case: dict[str, Any]) -> str:
    return "hx" + "".join(c for c in case["id"] if c.isalnum()).lower()[:40] + "q"


def api_case(mem: Any, tools: dict[str, Any], case: dict[str, Any], inputs: Path) -> dict[str, Any]:
    """Run one API or tool case; returns problems (an empty list: rejected cleanly or accepted and sound)."""
    from memgrove.tree.errors import MemgroveError

    s, p, marker = case["surface"], _payload(case), _marker(case)
    base = {"op": "UPSERT", "path": f"hostile/cases/{marker}.md", "title": "Hostile case",
            "content": f"Hostile case marker {marker}.", "reason": "hostile input"}
    problems: list[str] = []
    try:
        if s.startswith("api_") and s[4:] in ("title", "summary", "content", "tags", "reason", "source_ref",
                                              "curate_path", "related"):
            op = dict(base)
            field = s[4:]
            if field == "content":
                op["content"] = f"{p}\n\nmarker {marker}"
            elif field == "tags":
                op["tags"] = [p]
            elif field == "source_ref":
                op["sources"] = [{"kind": "text", "ref": p}]
            elif field == "curate_path":
                op["path"] = p
            elif field == "related":
                op["related"] = [p]
            else:
                op[field] = p
            results = mem.curate([op])
            problems += _accepted(mem, [r.path for r in results if r.path], marker)
        elif s == "api_merge_into":
            mem.curate([{"op": "UPSERT", "path": f"hostile/merge/{marker}.md", "content": f"merge me {marker}",
                         "reason": "setup"}])
            mem.curate([{"op": "MERGE", "path": f"hostile/merge/{marker}.md", "merge_into": p, "reason": "hostile"}])
        elif s == "api_delete":
            mem.curate([{"op": "DELETE", "path": p, "reason": "hostile delete"}])
        elif s == "api_show":
            mem.show(p)
        elif s == "api_list":
            mem.list(p)
        elif s == "api_history":
            mem.history(path=p)
        elif s == "api_ingest_text":
            results = mem.ingest(text=p + f"\n\nmarker {marker}")
            problems += _accepted(mem, [r.path for r in results if r.path], marker)
        elif s == "api_search":
            mem.search(p)
        elif s == "api_query":
            mem.query(p)
        elif s == "api_ingest_file":
            f = inputs / case["name"]
            f.write_bytes(base64.b64decode(case["b64"]))
            mem.ingest(files=[f])
        elif s == "api_conversation":
            mem.ingest(conversation=case["conv"])
        elif s == "hand_placed":
            # a file put in the tree by hand (a git pull): reading, searching and doctor must cope
            target = mem.home / "tree" / "hostile" / "hand" / (case["name"].rsplit(".", 1)[0] + ".md")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(case["b64"]))
            # one bad file must not break search or doctor for the whole tree
            for what, fn in (("search", lambda: mem.search("hostile hand placed body title")),
                             ("doctor", mem.doctor)):
                try:
                    fn()
                except Exception as exc:  # noqa: BLE001
                    problems.append(f"{what} fails because of a hand-placed file: {type(exc).__name__}: {exc}"[:200])
            try:
                mem.show(f"hostile/hand/{target.name}")
            except MemgroveError:
                pass
            target.unlink()
            target.parent.rmdir()
        elif s == "distinct":
            problems += _distinct(mem, case["pair"], inputs)
        elif s.startswith("tool_"):
            problems += _tool_case(tools, s, p, marker, mem)
        else:
            return {"problems": [f"unknown surface {s}"]}
    except MemgroveError as exc:
        return {"status": "rejected", "error": str(exc)[:300], "problems": problems}
    except RecursionError:
        return {"status": "unexpected", "error": "RecursionError", "problems": problems + ["RecursionError"]}
    except Exception as exc:  # noqa: BLE001 - the thing this suite looks for
        return {"status": "unexpected", "error": f"{type(exc).__name__}: {exc}"[:300],
                "problems": problems + [f"{type(exc).__name__}: {str(exc)[:200]}"],
                "where": traceback.format_exc().strip().splitlines()[-3][:200]}
    return {"status": "accepted", "problems": problems}


def _accepted(mem: Any, paths: list[str], marker: str) -> list[str]:
    """An accepted write must land inside the tree as an entry that reads back and is found."""
    problems = []
    for path in paths:
        full = (mem.home / "tree" / path).resolve()
        if not str(full).startswith(str((mem.home / "tree").resolve()) + os.sep):
            problems.append(f"written outside the tree: {path}")
            continue
        if full.exists():
            try:
                mem.read(path)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"accepted but unreadable: {path}: {str(exc)[:120]}")
    if paths and not any(h.path in paths for h in mem.search(marker, limit=10)):
        problems.append(f"accepted but not found by search ({paths[0]})")
    return problems


def _distinct(mem: Any, pair: dict[str, Any], inputs: Path) -> list[str]:
    from memgrove.tree.errors import MemgroveError

    markers: list[str]
    try:
        if "texts" in pair:
            for t in pair["texts"]:
                mem.ingest(text=t)
            markers = [t.split("marker ")[1].rstrip(".") for t in pair["texts"]]
        elif "files" in pair:
            files = []
            for name, text in pair["files"]:
                f = inputs / "distinct" / name
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(text, encoding="utf-8")
                files.append(f)
            mem.ingest(files=files)
            markers = [text.split("marker ")[1] for _, text in pair["files"]]
        else:
            mem.ingest(conversation=pair["conv"])
            markers = [m["text"].split("marker ")[1] for m in pair["conv"]["messages"]]
    except MemgroveError:
        return []   # refusing the batch is allowed
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (mem.home / "tree").rglob("*.md"))
    lost = [m for m in markers if m not in text]
    return [f"different inputs overwrote each other: {', '.join(lost)} gone"] if lost else []


def _tool_case(tools: dict[str, Any], s: str, p: str, marker: str, mem: Any) -> list[str]:
    if s == "tool_search":
        out = tools["search_knowledge"].invoke({"query": p})
        if any(c.isalnum() for c in p) and "non-empty query" in out:
            return ["search_knowledge answered 'give a non-empty query' to a non-empty query"]
    elif s == "tool_read_entry":
        out = tools["read_entry"].invoke({"path": p})
    elif s == "tool_list_tree":
        out = tools["list_tree"].invoke({"folder": p})
    elif s == "tool_curate_path":
        out = tools["curate"].invoke({"operations": [{"op": "UPSERT", "path": p, "content": f"tool {marker}",
                                                       "reason": "hostile tool"}]})
    else:
        out = tools["curate"].invoke({"operations": [{"op": "UPSERT", "path": f"hostile/tool/{marker}.md",
                                                       "content": f"{p}\n\nmarker {marker}", "reason": "hostile tool"}]})
    text = out if isinstance(out, str) else json.dumps(out, default=str)
    return ["traceback in tool output"] if "Traceback" in text else []


def fresh_copy(template: Path, folder: Path) -> Path:
    """Every case starts from the same small memory: one case's damage never shows up in another."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(template, folder / "proj", symlinks=True)
    (folder / "inputs").mkdir()
    return folder / "proj"


def outside_files(folder: Path) -> list[str]:
    """Files of a case's folder that are neither the memory's nor the case's inputs."""
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()
            if not p.relative_to(folder).parts[0] == "inputs"
            and not (p.relative_to(folder).parts[:2] == ("proj", ".memgrove"))]


def worker(args: dict[str, Any]) -> None:
    """A warm process (memgrove and LangChain imported) that forks one child per case, so a case
    stuck in C code (a regex over a huge text) is killed after ``timeout`` without a new start."""
    import memgrove.tools  # noqa: F401 - imported once, before the forks
    from memgrove import Memory  # noqa: F401

    cases = [json.loads(x) for x in Path(args["cases"]).read_text().splitlines()]
    result = Path(args["scratch"] + ".result")
    with open(args["out"], "a") as out:
        for i in range(args["start"], len(cases)):
            out.write(json.dumps({"i": i, "started": True}) + "\n")
            out.flush()
            result.unlink(missing_ok=True)
            t0 = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    r = _one_case(cases[i], Path(args["template"]), Path(args["scratch"]))
                    result.write_text(json.dumps(r))
                finally:
                    os._exit(0)
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() - t0 > args["timeout"]:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.005)
            if result.exists():
                r = json.loads(result.read_text())
            elif time.monotonic() - t0 > args["timeout"]:
                r = {"status": "hang", "problems": [f"no answer within {args['timeout']:g} s (killed)"],
                     "seconds": time.monotonic() - t0}
            else:
                r = {"status": "unexpected", "problems": [f"the process died (status {status}) in this case"],
                     "seconds": time.monotonic() - t0}
            r["i"] = i
            out.write(json.dumps(r) + "\n")
            out.flush()


def _one_case(case: dict[str, Any], template: Path, scratch: Path) -> dict[str, Any]:
    from memgrove import Memory

    root = fresh_copy(template, scratch)
    before = entries_in(root)
    mem = Memory.open(root, lock_timeout=5)
    tools = {t.name: t for t in mem.tools()} if case["surface"].startswith("tool_") else {}
    t0 = time.monotonic()
    r = api_case(mem, tools, case, scratch / "inputs")
    r["seconds"] = time.monotonic() - t0
    r["entries"] = entries_in(root) - before
    if r.get("status") == "accepted":
        rep = mem.doctor()
        if not rep.ok:
            r["problems"].append("accepted, but doctor then finds: " + "; ".join(rep.problems)[:200])
    mem.close()
    r["problems"] += [f"written outside the tree: {p}" for p in outside_files(scratch)]
    return r


# -- CLI cases (from the parent) --------------------------------------------------------------------

ESCAPES = ("\x1b", "\x9b", "\x07")
ARG_MAX = 30_000   # one command-line argument may not exceed 128 KiB (4-byte characters included)


def cli_case(template: Path, scratch: Path, case: dict[str, Any], timeout: float) -> tuple[list[str], float, str, int]:
    root = fresh_copy(template, scratch)
    inputs = scratch / "inputs"
    before = entries_in(root)
    problems, secs, repro = _cli_case(root, case, inputs, timeout)
    return (problems + [f"written outside the tree: {p}" for p in outside_files(scratch)], secs, repro,
            entries_in(root) - before)


def _cli_case(root: Path, case: dict[str, Any], inputs: Path, timeout: float) -> tuple[list[str], float, str]:
    s, p = case["surface"], _payload(case)
    if isinstance(p, str):
        p = p[:ARG_MAX]
    marker = _marker(case)
    stdin = None
    if s == "cli_show":
        argv = ["show", p]
    elif s == "cli_history":
        argv = ["history", "--path", p]
    elif s == "cli_tree":
        argv = ["tree", p]
    elif s == "cli_curate_text":
        argv = ["curate", p + f" marker {marker}", "--json"]
    elif s == "cli_search":
        argv = ["search", p]
    elif s == "cli_query":
        argv = ["query", p]
    elif s in ("cli_curate_file", "cli_ops", "cli_conversation"):
        f = inputs / f"{marker}_{case.get('name', 'input.json')}"
        f.write_bytes(base64.b64decode(case["b64"]))
        argv = {"cli_curate_file": ["curate", "-f", str(f)], "cli_ops": ["curate", "--ops", str(f)],
                "cli_conversation": ["curate", "--conversation", str(f)]}[s]
    elif s == "cli_stdin":
        argv, stdin = ["curate", "-"], base64.b64decode(case["b64"])
    elif s == "cli_render":
        return _render_case(root, p, marker, timeout)
    else:
        return [f"unknown surface {s}"], 0.0, ""
    r = run([MEMGROVE, "--root", str(root), *map(_arg, argv)], timeout=timeout, stdin=stdin)
    return _cli_problems(r), r.seconds, cli_repro(root, *argv) + (" < BIG_INPUT" if stdin else "")


def _arg(a: str) -> bytes:
    """A command-line argument as the OS takes it: no NUL; a lone surrogate as the bytes it escapes."""
    return a.replace("\x00", "").encode("utf-8", "surrogatepass")


def _cli_problems(r: Any) -> list[str]:
    from .common import cli_problem

    why = cli_problem(r)
    out = [why] if why else []
    if any(e in r.out for e in ESCAPES):
        out.append("raw terminal escape sequence printed")
    return out


def _render_case(root: Path, p: str, marker: str, timeout: float) -> tuple[list[str], float, str]:
    """Curate an entry whose title, reason and body are the payload; tree, history, show and query
    must print it as text (no escape sequence, no markup interpreted, no failure)."""
    ops = root.parent / "inputs" / f"{marker}_ops.json"
    path = f"hostile/render/{marker}.md"
    ops.write_text(json.dumps([{"op": "UPSERT", "path": path, "title": p[:200], "reason": p[:200],
                                "content": f"{p[:5000]}\n\nmarker {marker}"}]))
    r = run([MEMGROVE, "--root", str(root), "curate", "--ops", str(ops)], timeout=timeout)
    if r.code != 0:
        return _cli_problems(r), r.seconds, cli_repro(root, "curate", "--ops", str(ops))
    problems, worst = [], r.seconds
    for argv in (["tree", "hostile/render"], ["history", "-n", "3"], ["show", path], ["query", marker]):
        c = run([MEMGROVE, "--root", str(root), *argv], timeout=timeout)
        worst = max(worst, c.seconds)
        problems += [f"`{argv[0]}`: {x}" for x in _cli_problems(c)]
        literal = p[:200].strip()
        if argv[0] in ("tree", "history") and c.code == 0 and literal.startswith("[") and "[" in literal \
                and literal.split("]")[0] + "]" not in c.out.replace("\n", ""):
            problems.append(f"`{argv[0]}`: markup in the title was interpreted, not printed")
    return problems, worst, f"curate an entry titled {p[:60]!r}, then memgrove tree / history / show / query"


# -- the parent -------------------------------------------------------------------------------------

def _item_for(problem: str, case: dict[str, Any], seconds: float, slow: float) -> int | None:
    if seconds > slow:
        return 8
    for name, item in ITEM_OF.items():
        if name in problem:
            return item
    if "non-empty query" in problem or "InvalidPath" in problem or "hand-placed" in problem:
        return 10
    if "surrogate" in problem:
        return None   # not in issue 13: a lone surrogate is accepted and then cannot be written or read
    if "unreadable" in problem or "not found by search" in problem:
        return 5
    if "terminal escape" in problem or "markup" in problem:
        return 11
    if "overwrote" in problem:
        return 4
    return None


def _api_outcomes(base: Path, api: list[dict], template: Path, case_timeout: float, seed: int) -> list[tuple]:
    """API and tool cases in a worker process, restarted after a case it could not finish."""
    import subprocess

    outcomes: list[tuple] = []
    cases_file = base / "api_cases.jsonl"
    cases_file.write_text("\n".join(json.dumps(c) for c in api))
    out = base / "api_out.jsonl"
    out.touch()
    repro = "python -m benchmarks.reliability --sections hostile --no-write --hostile-only "
    start, pos = 0, 0
    while start < len(api):
        args = base / "worker.json"
        args.write_text(json.dumps({"cases": str(cases_file), "template": str(template), "out": str(out),
                                    "scratch": str(base / "api_case"), "start": start, "timeout": case_timeout}))
        with (base / "worker.stderr").open("w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "benchmarks.reliability.hostile", "--child", "worker",
                                     str(args)], stdout=subprocess.DEVNULL, stderr=err, env=child_env(),
                                    start_new_session=True)
        current, since, progressed = None, time.monotonic(), False
        try:
            while True:
                time.sleep(0.01)
                with out.open() as fh:
                    fh.seek(pos)
                    chunk = fh.read()
                end = chunk.rfind("\n") + 1
                pos += len(chunk[:end].encode())
                for line in chunk[:end].splitlines():
                    d = json.loads(line)
                    progressed = True
                    if d.get("started"):
                        current, since = d["i"], time.monotonic()
                        continue
                    c = api[d["i"]]
                    outcomes.append((c, d.get("status", "?"), d.get("problems", []), d["seconds"],
                                     repro + shlex.quote(c["id"]), d.get("entries", 0)))
                    current, start = None, d["i"] + 1
                if proc.poll() is not None:
                    if current is not None:   # died inside a case
                        c = api[current]
                        outcomes.append((c, "unexpected", [f"the process died ({proc.returncode}) in this case: "
                                         f"{(base / 'worker.stderr').read_text()[-200:]}"], time.monotonic() - since,
                                         repro + shlex.quote(c["id"]), 0))
                        start = current + 1
                    elif not progressed:
                        raise RuntimeError(f"hostile worker failed: {(base / 'worker.stderr').read_text()[-300:]}")
                    break
                if current is not None and time.monotonic() - since > case_timeout + 60:
                    c = api[current]
                    outcomes.append((c, "hang", [f"no answer within {case_timeout:g} s (killed)"], case_timeout,
                                     repro + shlex.quote(c["id"]), 0))
                    start = current + 1
                    break
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
    return outcomes


def run_section(work: Path, *, seed: int, limit: int, case_timeout: float, slow: float,
                only: list[str] | None = None) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["surface", "cases", "accepted", "rejected cleanly", "unexpected",
                                          "over their bound", "slowest s", "most entries written"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    shutil.rmtree(ESCAPE_DIR, ignore_errors=True)
    template = base / "template"
    # fsync stalls of a busy disk are not what "over 2 s" looks for: a pathological input is
    (template / ".memgrove").mkdir(parents=True)
    (template / ".memgrove" / "config.toml").write_text("[tree]\ndurable = false\n")
    with Memory.open(template, create=True) as mem:
        mem.curate([{"op": "ADD", "path": "hostile/base/one.md", "content": "base entry one", "reason": "seed"},
                    {"op": "ADD", "path": "hostile/base/two.md", "content": "base entry two", "reason": "seed"}])
        mem.search("base entry")
    per_entry = seconds_per_entry(template, base / "pace")
    # a case is killed once even the largest input of the corpus would be over its bound
    case_timeout = max(case_timeout, allowed(slow, per_entry, LARGEST_CASE_ENTRIES))
    corpus = build_corpus(seed)
    cases = corpus[:limit] if limit else corpus
    if only:
        cases = [c for c in corpus if c["id"] in only]
    elif limit:   # every surface at least once, even in a small run
        seen = {c["surface"] for c in cases}
        cases += [c for c in corpus[limit:] if c["surface"] not in seen and not seen.add(c["surface"])]
    res.summary["corpus"] = len(corpus)
    res.summary["cases"] = len(cases)
    api = [c for c in cases if not c["surface"].startswith("cli_")]
    t0 = time.monotonic()
    outcomes = _api_outcomes(base, api, template, case_timeout, seed)
    print(f"   hostile: {len(api)} API/tool cases in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    # a CLI case pays the interpreter's start: its bound is --slow beyond twice that (measured now)
    starts = sorted(run([MEMGROVE, "--version"], timeout=60).seconds for _ in range(3))
    cli_slow = slow + max(1.0, 2 * starts[1])
    for c in (c for c in cases if c["surface"].startswith("cli_")):
        problems, secs, repro, entries = cli_case(template, base / "cli_case", c, case_timeout + cli_slow - slow)
        outcomes.append((c, "unexpected" if problems else "ok", problems, max(0.0, secs - (cli_slow - slow)), repro,
                         entries))
    print(f"   hostile: {len(cases) - len(api)} CLI cases in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    if Path(ESCAPE_DIR).exists():
        res.fail("written outside the tree", ESCAPE_DIR, "run the hostile corpus (abs_tmp cases)")

    per: dict[str, dict[str, Any]] = {}
    for c, status, problems, secs, repro, entries in outcomes:
        row = per.setdefault(c["surface"], {"n": 0, "accepted": 0, "rejected": 0, "unexpected": 0, "slow": 0,
                                            "max": 0.0, "entries": 0})
        row["n"] += 1
        row["max"] = max(row["max"], secs)
        row["entries"] = max(row["entries"], entries)
        bound = allowed(slow, per_entry, entries)
        if secs > bound:
            row["slow"] += 1
            problems = problems + [f"took {secs:.1f} s (bound {bound:.1f} s for {entries} entries written)"]
        if problems:
            row["unexpected"] += 1
            item = _item_for(" ".join(problems), c, secs, bound)
            res.fail("unexpected" if secs <= bound else "slow", f"{c['id']}: {'; '.join(problems)}", repro, item)
        elif status == "rejected":
            row["rejected"] += 1
        else:
            row["accepted"] += 1
    for s in sorted(per):
        r = per[s]
        res.rows.append([s, r["n"], r["accepted"], r["rejected"], r["unexpected"], r["slow"], f"{r['max']:.2f}",
                         r["entries"]])
    res.summary.update(unexpected=sum(r["unexpected"] for r in per.values()),
                       slow=sum(r["slow"] for r in per.values()), ms_per_entry=round(per_entry * 1000, 2))
    res.notes.append(f"{len(outcomes)} cases of a corpus of {len(corpus)} (seeded order), each on a fresh copy of "
                     f"a small memory; a case is killed after {case_timeout:.0f} s. CLI times are given "
                     f"less {cli_slow - slow:.1f} s: twice the interpreter's start (`memgrove --version`, "
                     f"{starts[1]:.2f} s here), at least 1 s. A case may take {slow:g} s plus {ENTRY_MARGIN:g} x "
                     f"{per_entry * 1000:.1f} ms for each entry it wrote: the median time per entry of curating "
                     f"a file of {CALIBRATION_ENTRIES} one-line sections or a message of as many parts, whichever "
                     "is dearer, measured at the start of this run (benchmarks/reliability/pace.py: a 5,000-section "
                     "file is 5,000 entries, linear, not slow).")
    return res


if __name__ == "__main__" and "--child" in sys.argv:
    mode, a = child_args()
    {"worker": worker}[mode](a)

"""Hostile requests to a running ``memgrove serve``: REST routes, headers, and MCP over HTTP
(``/mcp``: the ``memgrove_*`` tools and the file-style ``memory`` tool, huge ``str_replace`` and
``insert`` payloads included).

One server answers every case, as it would in production, so what one case leaves behind (a
held lock, a thread still working, a file outside the tree) shows up in the next. A case passes
when it is answered within its bound with a success or a clear refusal: an HTTP 4xx with a JSON
``error`` body, or an MCP tool result (``isError`` with an ``Error: ...`` line for a refusal).
A 5xx, a protocol error, no answer, a file written outside the project or another project's
``.memgrove/`` touched is a failure. After every case ``/health`` must answer; after them all
an ordinary write must get the writer lock at once and ``doctor`` must find nothing.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Callable

from . import serving
from .common import SectionResult
from .pace import allowed, seconds_per_entry, seconds_per_mb

SECTION = "hostile_served"
# refused by the HTTP parser before any route (a request line past its limit): plain text, still clear
HTTP_LAYER = {400, 413, 414, 431}
BIG_MATCHES = 400_000          # "a\n" x this: an 800 KB entry whose every line matches old_str
# a question past the bound (10,000 characters) must be refused (413), not answered: a 10 MB one once
# took 24-42 s of CPU and grew the server from 1 to 3 GB (issue 41 item 7)
GIANT = "why " * 2_500_000
REFUSED_QUESTIONS = {"question 10 MB", "question 20,000 characters", "/query/invoke question 10 MB",
                     "/query/invoke message 20,000 characters", "/query/stream question 20,000 characters",
                     "search 20,000 characters", "memgrove_query 1 MB", "memgrove_search 20,000 characters"}


def _tree_files(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in folder.rglob("*"):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def rest_cases(srv: serving.Served, other: Path) -> list[tuple[str, Callable[[], serving.Reply]]]:
    long_path = "a/" * 2500 + "x.md"
    deep = ('{"operations": [{"op": "ADD", "path": "deep/nest/x.md", "content": "x", "reason": "r", "tags": '
            + "[" * 50_000 + '"x"' + "]" * 50_000 + "}]}").encode()
    c = srv.call
    cases: list[tuple[str, Callable[[], serving.Reply]]] = [
        ("project ../other", lambda: c("GET", "/api/search?q=secret", headers={"X-Memgrove-Project": str(other)})),
        ("project /proc/self/cwd", lambda: c("GET", "/api/tree", headers={"X-Memgrove-Project": "/proc/self/cwd"})),
        ("project /proc/1/root", lambda: c("GET", "/api/tree?project=/proc/1/root/etc")),
        ("project 5,000 characters", lambda: c("GET", "/api/tree", headers={"X-Memgrove-Project": "p" * 5000})),
        ("origin with a port suffix", lambda: c("GET", "/api/tree", headers={
            "Origin": f"http://127.0.0.1:{srv.port}.evil.com"})),
        ("host with userinfo", lambda: c("GET", "/api/tree", headers={"Host": f"127.0.0.1:{srv.port}@evil.com"})),
        ("entry ../ path", lambda: c("GET", "/api/entries/..%2F..%2Fetc%2Fpasswd")),
        ("entry path 5,000 characters", lambda: c("GET", "/api/entries/" + long_path)),
        ("search 100 KB", lambda: c("GET", "/api/search?q=" + "zq" * 50_000)),
        ("curate outside the tree", lambda: c("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": "../../x.md", "content": "x", "reason": "r"}]})),
        ("curate 50,000 levels deep", lambda: c("POST", "/api/curate", deep)),
        ("curate 20 MB body", lambda: c("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": "big/body/x.md", "content": "x" * 20_000_000, "reason": "r"}]})),
        ("ingest text 11 MB", lambda: c("POST", "/api/ingest", {"text": "word " * 2_200_000})),
        ("query 100 KB", lambda: c("POST", "/api/query", {"question": "why " * 25_000})),
        ("question 10 MB", lambda: c("POST", "/api/query", {"question": GIANT})),
        ("question 20,000 characters", lambda: c("POST", "/api/query", {"question": "why " * 5_000})),
        ("/query/invoke question 10 MB", lambda: c("POST", "/query/invoke", {"input": {"question": GIANT}})),
        ("/query/invoke message 20,000 characters", lambda: c("POST", "/query/invoke", {"input": {"messages": [
            {"role": "user", "content": "why " * 5_000}]}})),
        ("/query/stream question 20,000 characters", lambda: c("POST", "/query/stream", {"input": {
            "question": "why " * 5_000}})),
        ("search 20,000 characters", lambda: c("GET", "/api/search?q=" + "zq" * 10_000)),
        ("history of ../", lambda: c("GET", "/api/history?path=../../etc")),
        ("undo of a made-up id", lambda: c("POST", "/api/undo", {"id": "../../etc/passwd"})),
    ]
    return cases


async def _mcp_call(srv: serving.Served, tool: str, args: dict, timeout: float) -> tuple[bool, str]:
    """One call in a session of its own (the client ends a session on an HTTP error): (ok, text).
    An HTTP 413 (the MCP library's 4 MiB limit on a message) is a clear refusal too."""
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    try:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {srv.token}"}, timeout=timeout,
                                     trust_env=False) as client:
            async with streamable_http_client(f"http://127.0.0.1:{srv.port}/mcp", http_client=client) as (read, write, _):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    r = await asyncio.wait_for(s.call_tool(tool, args), timeout)
                    text = " ".join(getattr(b, "text", "") for b in r.content)
                    return True, ("ERROR " if r.isError else "") + text[:300]
    except BaseException as exc:  # noqa: BLE001 - what the section looks for (an ExceptionGroup from the client)
        text = repr(exc)
        if "413" in text:
            return True, "ERROR Error: 413 request body too large (the MCP library's 4 MiB limit on a message)"
        return False, f"{type(exc).__name__}: {text[:200]}"


def _mcp_calls(srv: serving.Served, calls: list[tuple[str, str, dict, float]], timeout: float) -> list[tuple]:
    """(label, ok, text, seconds, MB written) of each call."""
    out = []
    for label, tool, args, mb in calls:
        t0 = time.monotonic()
        ok, text = asyncio.run(_mcp_call(srv, tool, args, timeout))
        out.append((label, ok, text, time.monotonic() - t0, mb))
    return out


def mcp_calls() -> list[tuple[str, str, dict, float]]:
    """(label, tool, arguments, MB the call writes into one entry: its time bound grows with it)."""
    big = "/memories/hostile/big/matches.md"
    large = "/memories/hostile/big/large.md"
    return [
        ("view a 5,000-character path", "memory", {"command": "view", "path": "/memories/" + "a" * 5000 + ".md"}, 0),
        ("view ../ path", "memory", {"command": "view", "path": "/memories/../../etc/passwd"}, 0),
        (f"str_replace with {BIG_MATCHES:,} matches", "memory", {"command": "str_replace", "path": big,
                                                                 "old_str": "a", "new_str": "b"}, 0),
        ("insert at line 10^12", "memory", {"command": "insert", "path": big, "insert_line": 10**12,
                                            "insert_text": "x"}, 0),
        ("create 3 MB", "memory", {"command": "create", "path": large, "file_text": "HEAD\n" + "x " * 1_500_000}, 3),
        ("str_replace new_str 3 MB", "memory", {"command": "str_replace", "path": large, "old_str": "HEAD",
                                                "new_str": "y" * 3_000_000}, 6),
        ("insert 3 MB", "memory", {"command": "insert", "path": large, "insert_line": 1,
                                   "insert_text": "z" * 3_000_000}, 9),
        ("insert past max_input_bytes", "memory", {"command": "insert", "path": large, "insert_line": 1,
                                                   "insert_text": "w" * 3_000_000}, 9),
        ("message past 4 MiB", "memory", {"command": "create", "path": "/memories/hostile/big/huge.md",
                                          "file_text": "x " * 2_500_000}, 0),
        ("rename out of /memories", "memory", {"command": "rename", "old_path": big,
                                               "new_path": "/memories/../../../tmp/x.md"}, 0),
        ("memgrove_search 100 KB", "memgrove_search", {"query": "zq" * 50_000}, 0),
        ("memgrove_query 1 MB", "memgrove_query", {"query": "why " * 250_000}, 0),
        ("memgrove_search 20,000 characters", "memgrove_search", {"query": "zq" * 10_000}, 0),
        ("memgrove_curate outside", "memgrove_curate", {"operations": [
            {"op": "ADD", "path": "/etc/x.md", "content": "x", "reason": "r"}]}, 0),
        ("memgrove_read ../", "memgrove_read", {"path": "../../etc/passwd"}, 0),
        ("project argument ../other", "memgrove_search", {"query": "secret", "project": "../other"}, 0),
    ]


def run_section(work: Path, *, slow: float) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["surface", "case", "answer", "seconds"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    project, other = base / "proj", base / "other"
    with Memory.open(other, create=True) as m:
        m.curate([{"op": "ADD", "path": "private/notes/secret.md", "content": "the other project's secret",
                   "reason": "seed"}])
    with Memory.open(project, create=True) as m:
        m.curate([{"op": "ADD", "path": "hostile/big/matches.md", "title": "Matches",
                   "content": "a\n" * BIG_MATCHES, "reason": "seed"}])
    Memory.open(base / "template", create=True).close()
    per_entry = seconds_per_entry(base / "template", base / "pace")
    per_mb = seconds_per_mb(base / "template", base / "pace")
    shutil.rmtree(base / "pace", ignore_errors=True)
    other_before = _tree_files(other)
    outside_before = set(p.name for p in base.iterdir())
    repro = "python -m reliability --sections hostile_served"
    try:
        srv = serving.start(project, base / "serve.log")
    except RuntimeError as exc:
        res.fail("start", str(exc), repro)
        return res
    bound = allowed(slow, per_entry, 1)
    try:
        for label, fn in rest_cases(srv, other):
            t0 = time.monotonic()
            r = fn()
            secs = time.monotonic() - t0
            err = r.body.get("error") if isinstance(r.body, dict) else None
            answer = f"{r.status} {err.get('code', '') if isinstance(err, dict) else ''}"
            res.rows.append(["REST", label, answer.strip() if r.status else r.error[:60], f"{secs:.2f}"])
            if r.status == 0 or r.status >= 500:
                res.fail("server error", f"REST {label}: {r.status or r.error} {str(r.body)[:160]}", repro)
            elif r.status >= 400 and not isinstance(err, dict) and r.status not in HTTP_LAYER:
                res.fail("unclear refusal", f"REST {label}: {r.status} without an error body", repro)
            if label in REFUSED_QUESTIONS and r.status != 413:
                res.fail("question not refused", f"REST {label}: {r.status or r.error} (413 expected)", repro, item=7)
            if secs > bound:
                res.fail("slow", f"REST {label}: {secs:.1f} s (bound {bound:.1f} s)", repro)
            if srv.call("GET", "/health", timeout=10, token="-").status != 200:
                res.fail("health", f"/health did not answer after REST {label}", repro)
        for label, ok, text, secs, mb in _mcp_calls(srv, mcp_calls(), timeout=120):
            res.rows.append(["MCP", label, text[:70], f"{secs:.2f}"])
            if not ok:
                res.fail("MCP protocol error", f"{label}: {text}", repro)
            elif text.startswith("ERROR") and "Error:" not in text:
                res.fail("unclear MCP refusal", f"{label}: {text[:160]}", repro)
            elif label in REFUSED_QUESTIONS and not (text.startswith("ERROR") and "at most" in text):
                res.fail("question not refused", f"MCP {label}: {text[:160]}", repro, item=7)
            limit = allowed(slow, per_entry, 1, per_mb, mb)
            if secs > limit:
                res.fail("slow", f"MCP {label}: {secs:.1f} s (bound {limit:.1f} s)", repro)
        # nothing held: an ordinary write gets the lock at once
        t0 = time.monotonic()
        r = srv.call("POST", "/api/curate", {"operations": [
            {"op": "ADD", "path": "after/all/fine.md", "content": "after the hostile cases", "reason": "r"}]})
        if r.status != 200:
            res.fail("write after the cases", f"{r.status or r.error} {str(r.body)[:160]}", repro)
        res.summary["write_after_s"] = round(time.monotonic() - t0, 2)
    finally:
        code = srv.stop()
        if code != 0:
            res.fail("graceful stop", f"exit status {code}: {srv.log_tail(300)}", repro)
    if _tree_files(other) != other_before:
        res.fail("another project touched", "files of the project the token does not serve changed", repro)
    new = set(p.name for p in base.iterdir()) - outside_before - {"serve.log"}
    if new or Path("/tmp/x.md").exists():
        res.fail("written outside", ", ".join(sorted(new)) or "/tmp/x.md", repro)
    with Memory.open(project) as m:
        rep = m.doctor()
        if not rep.ok:
            res.fail("doctor after the cases", "; ".join(rep.problems)[:300], repro)
    res.summary.update(cases=len(res.rows), bound_s=round(bound, 1))
    res.summary["ms_per_mb"] = round(per_mb * 1000)
    res.notes.append(f"One `memgrove serve` answers every case in turn, with its token; each case must be answered "
                     f"within {bound:.1f} s (--slow plus one entry's measured write time; a call writing a large "
                     f"entry also 3 x {per_mb:.2f} s per MB it writes, measured now) with a success or a clear refusal "
                     "(4xx with an error body; an MCP result, `Error: ...` when refused; the MCP library's own 4 MiB "
                     f"limit on a message answers 413). The entry of the first str_replace holds {BIG_MATCHES:,} "
                     "lines that each match old_str.")
    return res

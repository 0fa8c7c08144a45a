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
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from .common import MEMGROVE, SectionResult, child_args, child_env, cli_repro, run
from .hostile_api import _marker, _payload, api_case
from .hostile_corpus import ESCAPE_DIR, build_corpus
from .pace import CALIBRATION_ENTRIES, ENTRY_MARGIN, LARGEST_CASE_ENTRIES, allowed, entries_in, seconds_per_entry

SECTION = "hostile"


# -- running cases (in the worker) --------------------------------------------------------------

ITEM_OF = {"RecursionError": 13, "MarkupError": 11, "BrokenPipeError": 13, "TypeError": 13}


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
    from memgrove.tree.base.model_files import model_available
    from memgrove.tree.meaning.embedding import load_encoder

    if model_available():   # loaded once, before the forks: no case pays for loading the model
        load_encoder()

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
    # one case's inputs, with ranking by meaning as configured (a search computes its few vectors),
    # but no background embedder: it is fork_safety's and embed_backlog's subject, and here it only
    # took the CPU the case's own writes are timed by (722 s for the API cases against 351)
    mem = Memory.open(root, lock_timeout=5, embed_ahead=False)
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
    repro = "python -m reliability --sections hostile --no-write --hostile-only "
    start, pos = 0, 0
    while start < len(api):
        args = base / "worker.json"
        args.write_text(json.dumps({"cases": str(cases_file), "template": str(template), "out": str(out),
                                    "scratch": str(base / "api_case"), "start": start, "timeout": case_timeout}))
        with (base / "worker.stderr").open("w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "reliability.hostile", "--child", "worker",
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
    per_entry = seconds_per_entry(template, base / "pace", embed_ahead=False)
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
                     "is dearer, measured at the start of this run (reliability/pace.py: a 5,000-section "
                     "file is 5,000 entries, linear, not slow).")
    return res


if __name__ == "__main__" and "--child" in sys.argv:
    mode, a = child_args()
    {"worker": worker}[mode](a)

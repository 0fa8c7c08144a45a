#!/usr/bin/env python
"""A CLI user with ranking by meaning on, right after ``memgrove curate -f`` of real documentation:
how long each ``memgrove search`` and the first ``memgrove query`` take, and how soon every entry has
its vector without the user running anything (issue 43: every search ≤ 0.5 s, the first query ≤ 1 s,
all vectors within 2 minutes of the curate returning). Side by side in one run, arms in turn:

- **ahead**: the product (``embed_job = true``): the curate leaves the vectors to a detached background
  job (tree/meaning/embed_job.py); a search computes none while it runs, and loads no model while
  fewer than half the entries have a vector;
- **in-search**: ``embed_job = false``, as before this: each search computes up to 8 missing vectors
  itself, nothing computes them ahead;
- **words**: ``semantic_weight = 0``, the reference.

    .venv/bin/python benchmarks/cli_ahead.py                 # npm's docs, ~752 entries: ~6 minutes
    .venv/bin/python benchmarks/cli_ahead.py --docs DIR --searches 6 --rounds 1

The documentation is read where it is installed (default: npm's, /usr/lib/node_modules/npm/docs/content,
91 markdown pages and 93 html ones, as a user would point ``-f`` at them); nothing of it is copied
into the repository. Each command is a fresh ``python -m memgrove`` process with the environment
of a user's install (bytecode cached: ``PYTHONDONTWRITEBYTECODE`` unset). Also measured: the
model's load in a fresh process, and what a search's handful of vectors costs (8 entries of these
docs, one encode) against the question's own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.machine import loadavg, machine_info, machine_line  # noqa: E402
from harness.report import RESULTS, log, table, write  # noqa: E402

DOCS = Path("/usr/lib/node_modules/npm/docs/content")
QUESTIONS = ["how do I publish a scoped package", "what does package-lock.json record", "run a script before install",
             "set the registry for one scope", "what are workspaces", "fix the vulnerabilities audit found",
             "deprecate an old version", "where is the cache folder", "link a package I am developing",
             "what are peer dependencies", "log in to a private registry", "remove a package from node_modules"]
FIRST_QUERY = "how do I make my package private to my organization?"
ARMS = {"ahead": "[tree]\nsemantic_weight = 0.5\nembed_job = true\n",
        "in-search": "[tree]\nsemantic_weight = 0.5\nembed_job = false\n",
        "words": "[tree]\nsemantic_weight = 0\n"}
READY_BY_S = 120.0


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGROVE_", "OPENAI_", "LANGSMITH_"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    return out | {"LANGSMITH_TRACING": "false"}


def run(project: Path, *args: str, timeout: float = 600) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "memgrove", "--no-server", "--root", str(project), *args],
                         env=env(), capture_output=True, text=True, timeout=timeout, cwd=project)
    took = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"memgrove {' '.join(args)} failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
    return took, out.stdout


def exact(project: Path) -> dict:
    try:
        return json.loads(run(project, "status", "--json")[1])["vectors"]
    except SystemExit as exc:       # said, and counted as not known
        log(str(exc))
        return {}


def job_running(home: Path) -> bool:
    from memgrove.tree.meaning.embed_job import job_state

    return job_state(home) is not None


def arm(name: str, docs: Path, searches: int, tmp: Path) -> dict:
    project = tmp / name
    project.mkdir()
    run(project, "init")
    (project / ".memgrove" / "config.toml").write_text(ARMS[name], encoding="utf-8")
    curate_s, out = run(project, "curate", "--verbatim", "-f", str(docs), "--json")
    t_done = time.perf_counter()
    entries = sum(r["status"] == "added" for r in json.loads(out)["applied"])
    first_q, out = run(project, "query", FIRST_QUERY, "--json")
    first_q_ms = json.loads(out)["latency_ms"]
    times, inner = [], []
    for q in (QUESTIONS * 2)[:searches]:
        took, out = run(project, "search", q, "-n", "5", "--json")
        times.append(took)
        inner.append(json.loads(out)["latency_ms"] / 1000)
    home = project / ".memgrove"
    ready_s = None
    if name == "ahead":
        while time.perf_counter() - t_done < 1200:
            if not job_running(home):
                break
            time.sleep(1.0)
        v = exact(project)
        ready_s = time.perf_counter() - t_done if v.get("missing") == 0 else None
    v = exact(project) if name != "words" else {}
    later = [run(project, "search", q, "-n", "5")[0] for q in QUESTIONS[:max(3, searches // 2)]]
    bare = [run(project, "--version")[0] for _ in range(3)]
    res = {"entries": entries, "curate_s": round(curate_s, 2), "first_query_s": round(first_q, 3),
           "first_query_inner_s": round(first_q_ms / 1000, 3), "search_inner_s": [round(t, 3) for t in inner],
           "bare_cli_s": round(statistics.median(bare), 3), "search_s": [round(t, 3) for t in times], "ready_s": None if ready_s is None else round(ready_s, 1),
           "with_vectors_after": v.get("with_vectors"), "missing_after": v.get("missing"),
           "search_after_ready_s": [round(t, 3) for t in later]}
    log(f"  {name}: curate {curate_s:.1f} s, first query {first_q:.2f} s, searches p50 "
        f"{statistics.median(times):.2f} s max {max(times):.2f} s, ready {ready_s}")
    return res


def costs(docs_project: Path, runs: int) -> dict:
    """The model's load in a fresh process, and one encode of 8 entries' texts against the question's."""
    code = ("import time,sys;t=time.perf_counter();from memgrove.tree.meaning.embedding import load_encoder;"
            "e=load_encoder('');print(time.perf_counter()-t)")
    loads = [float(subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True,
                                  check=True).stdout) for _ in range(runs)]
    from memgrove import Memory

    with Memory.open(docs_project, embed_ahead=False, semantic_weight=0.5) as m:
        enc = m.tree.meaning_encoder()
        texts = list(m.tree._meaning_texts(sorted(m.tree.catalog.files())[:64]).values())
        eight, one, q = [], [], []
        for r in range(runs):
            chunk = texts[(r * 8) % 56:(r * 8) % 56 + 8]
            t = time.perf_counter()
            enc.encode(chunk)
            eight.append(time.perf_counter() - t)
            t = time.perf_counter()
            enc.encode(chunk[:1])
            one.append(time.perf_counter() - t)
            t = time.perf_counter()
            enc.encode([QUESTIONS[r % len(QUESTIONS)]])
            q.append(time.perf_counter() - t)
    med = statistics.median
    return {"model_load_s": round(med(loads), 3), "encode_8_entries_s": round(med(eight), 3),
            "encode_1_entry_s": round(med(one), 3), "encode_question_s": round(med(q), 4), "runs": runs}


def render(report: dict) -> str:
    r, c = report["arms"], report["costs"]
    med = statistics.median
    rows = []
    for name, a in r.items():
        s = a["search_s"]
        si = a["search_inner_s"]
        rows.append([name, a["entries"], f"{a['curate_s']:.1f}", f"{a['first_query_s']:.2f} ({a['first_query_inner_s']:.2f})",
                     f"{med(s):.2f} ({med(si):.2f})", f"{max(s):.2f} ({max(si):.2f})", f"{a['bare_cli_s']:.2f}", "—" if a["ready_s"] is None else f"{a['ready_s']:.0f}",
                     "—" if a["missing_after"] is None else f"{a['with_vectors_after']} / {a['missing_after']}",
                     f"{med(a['search_after_ready_s']):.2f}"])
    ahead = r.get("ahead", {})
    lines = ["# A CLI user right after `curate -f`, meaning on", "", machine_line(report["machine"]), "",
             f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s · docs: {report['docs']} "
             f"(read where installed)", "",
             "Each cell a fresh `python -m memgrove --no-server` process (bytecode cached, as installed). "
             f"After the curate returns: one `memgrove query`, then {len(ahead.get('search_s', []))} "
             "`memgrove search`es back to back; then (ahead) waiting for the background job to exit, and a few "
             "searches more. Seconds: the process's wall time (in brackets the `latency_ms` the command reports: "
             "opening the memory and the search, or the query's pipeline); `memgrove --version` is the bare start.", "",
             *table(["arm", "entries", "curate", "first query", "search p50", "search max", "bare CLI",
                     "all vectors after", "with / missing after", "search p50 after"], rows, "lrrrrrrrrr"), "",
             f"Targets (ahead): every search ≤ 0.5 s, first query ≤ 1 s, vectors ready ≤ {READY_BY_S:.0f} s "
             "after the curate.", "",
             *table(["cost", "seconds"], [["model's load, fresh process (median)", c["model_load_s"]],
                                          ["encode 8 entries of these docs (a search's handful)", c["encode_8_entries_s"]],
                                          ["encode 1 entry", c["encode_1_entry_s"]],
                                          ["encode the question", c["encode_question_s"]]]), ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=DOCS)
    ap.add_argument("--searches", type=int, default=12)
    ap.add_argument("--arms", nargs="+", default=list(ARMS))
    ap.add_argument("--cost-runs", type=int, default=5)
    ap.add_argument("--out", default=str(RESULTS / "cli_ahead"))
    args = ap.parse_args()
    if not args.docs.is_dir():
        raise SystemExit(f"{args.docs}: no such folder of documentation (--docs DIR)")
    t0 = time.time()
    report = {"machine": machine_info(0), "command": "python benchmarks/cli_ahead.py " + " ".join(sys.argv[1:]),
              "docs": str(args.docs), "arms": {}}
    tmp = Path(tempfile.mkdtemp(prefix="memgrove-cli-ahead-"))
    try:
        subprocess.run([sys.executable, "-m", "memgrove", "--help"], env=env(), capture_output=True)   # bytecode
        for name in args.arms:
            log(f"arm {name}")
            report["arms"][name] = arm(name, args.docs, args.searches, tmp)
        report["costs"] = costs(tmp / args.arms[0], args.cost_runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["machine"]["loadavg_end"] = loadavg()
    report["wall_s"] = round(time.time() - t0, 1)
    md = render(report)
    print(md)
    write(Path(args.out), report, md)


if __name__ == "__main__":
    main()

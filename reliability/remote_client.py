"""The remote client (``Memory.connect``, the store over HTTP, the CLI with ``MEMGROVE_URL``) against
servers that answer badly (bad_servers.py, on 127.0.0.1, in this process): silent, dripping a
byte a second, a 1 GB ``Content-Length``, an endless chunked body, JSON nested 200,000 deep, not
JSON, a list for an object, missing fields, fields of the wrong types.

Each kind's calls run in a child process (``--child``), which reports for each call the error it
raised and how long it took, and its peak memory (``ru_maxrss``) before and after the calls.
Every call must end within its ``timeout`` plus ``SLACK`` with the library's own error --
``ServerTimeout`` for a silent or dripping server, ``BadReply`` for the others -- and the
client's memory must stay bounded (``RSS_BOUND_MB`` over its start: the reply limit is 64 MB).
The CLI's ``memgrove search`` with ``MEMGROVE_URL`` must end the same way, with one line and no
traceback. The children run side by side (most of them only wait).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .bad_servers import KINDS, BadServer
from .common import MEMGROVE, PYTHON, SectionResult, child_env, run

SECTION = "remote_client"
SLACK = 10.0           # seconds past a call's timeout (a shared, loaded machine); a hang is 600 s
RSS_BOUND_MB = 300     # the client's peak memory over its start (before: 2.8 GB for a 1 GB reply)
ADD = {"op": "ADD", "path": "notes/a.md", "title": "A", "content": "a", "reason": "r"}
CALLS = ("search", "curate", "show", "history", "count", "ingest", "store")


def _expected(kind: str) -> str:
    return "ServerTimeout" if kind in ("silent", "slow") else "BadReply"


def run_section(work: Path, *, timeout: float = 4.0, calls: tuple[str, ...] | list[str] = CALLS,
                kinds: tuple[str, ...] | list[str] = KINDS) -> SectionResult:
    res = SectionResult(SECTION, columns=["server", "calls", "library error in time", "slowest s", "client peak +MB",
                                          "CLI"])
    repro = "python -m reliability --sections remote_client"
    servers = {kind: BadServer(kind) for kind in kinds}
    try:
        with ThreadPoolExecutor(max_workers=2 * len(kinds)) as pool:
            children = {k: pool.submit(_client, srv.url, k, timeout, list(calls)) for k, srv in servers.items()}
            clis = {k: pool.submit(_cli, srv.url, timeout, work) for k, srv in servers.items()}
            for kind in kinds:
                _check(res, kind, timeout, children[kind].result(), clis[kind].result(), repro)
    finally:
        for srv in servers.values():
            srv.close()
    res.summary = {"kinds": len(kinds), "calls": len(kinds) * len(calls), "timeout_s": timeout,
                   "slowest_s": max((r[3] for r in res.rows), default=0.0),
                   "peak_mb": max((r[4] for r in res.rows if isinstance(r[4], (int, float))), default=0)}
    return res


def _client(url: str, kind: str, timeout: float, calls: list[str]) -> dict[str, Any]:
    budget = timeout * len(calls) + 60      # the child's own start (imports) and slack; past it: killed
    r = run([PYTHON, "-m", "reliability.remote_client", "--child", url, kind, str(timeout), ",".join(calls)],
            timeout=budget)
    try:
        return json.loads(r.out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = "killed: no answer in time" if r.timed_out else f"exit {r.code}: {r.err.strip()[-300:]}"
        return {"error": why}


def _cli(url: str, timeout: float, work: Path) -> dict[str, Any]:
    env = child_env(MEMGROVE_URL=url, MEMGROVE_TOKEN="t", MEMGROVE_TIMEOUT=str(timeout))
    work.mkdir(parents=True, exist_ok=True)
    r = run([MEMGROVE, "search", "refresh tokens"], timeout=timeout + 60, env=env, cwd=work)
    return {"code": r.code, "out": r.out, "err": r.err, "seconds": r.seconds, "timed_out": r.timed_out}


def _check(res: SectionResult, kind: str, timeout: float, child: dict[str, Any], cli: dict[str, Any],
           repro: str) -> None:
    want = _expected(kind)
    if "error" in child:
        res.fail(f"{kind}: client", child["error"], repro, 6)
        res.rows.append([kind, 0, 0, 0.0, "-", "-"])
        return
    good = 0
    for call, (got, seconds, message) in child["calls"].items():
        if got == want and seconds <= timeout + SLACK:
            good += 1
        else:
            res.fail(f"{kind}: {call}", f"{got} after {seconds:.1f} s (want {want} within {timeout + SLACK:g} s): "
                                        f"{message}", repro, 6)
    grown = round((child["peak_kb"] - child["start_kb"]) / 1024)
    if grown > RSS_BOUND_MB:
        res.fail(f"{kind}: memory", f"the client's peak memory grew {grown} MB (bound {RSS_BOUND_MB} MB)", repro, 6)
    lines = (cli["out"] + cli["err"]).strip().splitlines()
    cli_ok = (not cli["timed_out"] and cli["code"] == 1 and len(lines) == 1 and lines[0].startswith("Error: ")
              and cli["seconds"] <= timeout + SLACK + 5)
    if not cli_ok:
        res.fail(f"{kind}: CLI", f"exit {cli['code']} after {cli['seconds']:.1f} s: {' | '.join(lines)[:300]}",
                 repro, 6)
    slowest = max((s for _, s, _ in child["calls"].values()), default=0.0)
    res.rows.append([kind, len(child["calls"]), good, round(slowest, 2), grown, "one line" if cli_ok else "FAILED"])


# -- the child: the calls, in a process of their own ---------------------------------------------

def _child(url: str, kind: str, timeout: float, calls: list[str]) -> None:
    from memgrove import Memory
    from memgrove.store.remote import RemoteContextTreeStore

    mem = Memory.connect(url, "t", timeout=timeout)
    store = RemoteContextTreeStore(url, token="t", timeout=timeout)
    actions = {"search": lambda: mem.search("refresh tokens"), "curate": lambda: mem.curate([ADD]),
               "show": lambda: mem.show("notes/a.md"), "history": lambda: mem.history(),
               "count": lambda: mem.count(), "ingest": lambda: mem.ingest(text="a note"),
               "store": lambda: store.put(("notes",), "a", {"text": "a"})}
    start_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out: dict[str, Any] = {}
    for call in calls:
        t0 = time.monotonic()
        try:
            actions[call]()
            got, message = "no error", ""
        except Exception as exc:  # noqa: BLE001 - what it raised is what the parent checks
            got, message = type(exc).__name__, str(exc)[:300]
        out[call] = (got, time.monotonic() - t0, message)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"calls": out, "start_kb": start_kb, "peak_kb": peak_kb}))


if __name__ == "__main__" and "--child" in sys.argv:
    i = sys.argv.index("--child")
    _child(sys.argv[i + 1], sys.argv[i + 2], float(sys.argv[i + 3]), sys.argv[i + 4].split(","))

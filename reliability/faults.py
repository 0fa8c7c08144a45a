"""Faults: every derived file deleted, emptied or garbled; bad settings; a full disk; a read-only tree.

Each damage case gets a fresh copy of a small memory, then one child process runs
the everyday commands through the CLI's own code (``doctor``, ``search``,
``query``, ``curate``, ``stats``, ``tree``, ``history``, ``show``; click's test
runner, without ``MEMGROVE_RAISE_ERRORS``, so an error reads as a user sees it).
Each must succeed or fail with a clear one-line error — never "unexpected", never
a traceback, never a hang (the child is killed after ``--fault-timeout``).
Then ``doctor --fix``, and doctor, search, query and curate must all work again
(derived state is rebuilt or reset), with every entry file and journal line
intact.

The full disk is a small tmpfs (``mount -t tmpfs -o size=...``) filled to the
last byte: one long-lived process tries a curate (a clear error), then search,
query and doctor (must work), then the space is freed and the same process and
another must write again within seconds (a leaked lock would block them). The
read-only tree is the same tmpfs remounted ``ro`` (root ignores file modes, so
chmod would prove nothing). Without permission to mount, both are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import (MEMGROVE, SectionResult, child_args, child_env, cli, cli_problem, cli_repro, run)
from .disk import mount, umount

SECTION = "faults"
TARGETS = ["index", "index/whoosh", "index/catalog.db", "signals.db", "cache", "query-log.jsonl", "generation",
           "write.lock", "journal/pending.json"]
EMPTY = {"index/catalog.db", "signals.db", "query-log.jsonl", "generation", "write.lock", "journal/pending.json"}
ENTRY = "faults/notes/alpha.md"
COMMANDS = [["doctor"], ["search", "rotating refresh tokens"], ["query", "how do refresh tokens rotate?"],
            ["curate", "--ops", "{ops}", "--json"], ["stats"], ["tree"], ["history", "-n", "5"], ["show", ENTRY]]
AFTER_FIX = [["doctor"], ["search", "rotating refresh tokens"], ["query", "how do refresh tokens rotate?"],
             ["curate", "--ops", "{ops}", "--json"]]


# -- the child: commands through the CLI's code ------------------------------------------

def _invoke(root: str, argv: list[str], ops_file: str) -> dict[str, Any]:
    from click.testing import CliRunner

    from memgrove.cli import cli as group

    argv = [a.replace("{ops}", ops_file) for a in argv]
    t0 = time.monotonic()
    r = CliRunner().invoke(group, ["--root", root, *argv])
    out = r.output
    exc = r.exception if r.exception is not None and not isinstance(r.exception, SystemExit) else None
    return {"argv": argv, "code": r.exit_code, "out": out[-400:], "seconds": time.monotonic() - t0,
            "exception": f"{type(exc).__name__}: {exc}" if exc else None}


def commands_child(args: dict[str, Any]) -> None:
    out = []
    for argv in args["commands"]:
        out.append(_invoke(args["root"], argv, args["ops"]))
        Path(args["out"]).write_text(json.dumps(out))   # so far, if a later one hangs


def disk_full_child(args: dict[str, Any]) -> None:
    """One long-lived process on a full disk, then after space is freed."""
    from memgrove import Memory
    from memgrove.tree.base.errors import MemgroveError

    steps: list[dict[str, Any]] = []

    def step(name: str, fn, must_work: bool) -> None:
        t0 = time.monotonic()
        try:
            fn()
            steps.append({"step": name, "ok": True, "must_work": must_work, "seconds": time.monotonic() - t0})
        except MemgroveError as exc:
            steps.append({"step": name, "ok": False, "clear": True, "must_work": must_work, "error": str(exc)[:200],
                          "seconds": time.monotonic() - t0})
        except Exception as exc:  # noqa: BLE001
            steps.append({"step": name, "ok": False, "clear": False, "must_work": must_work,
                          "error": f"{type(exc).__name__}: {exc}"[:200], "seconds": time.monotonic() - t0})
        Path(args["out"]).write_text(json.dumps(steps))

    mem = Memory.open(args["root"], lock_timeout=3)
    mem.search("refresh tokens")
    filler = Path(args["filler"])
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)   # fill the file system to its last byte
    for size in (1 << 20, 1 << 12, 1):
        try:
            while True:
                os.write(fd, b"\0" * size)
        except OSError:
            pass
    os.close(fd)
    op = lambda i: [{"op": "UPSERT", "path": f"faults/full/e_{i}.md", "content": "x " * 2000, "reason": "full disk"}]
    step("curate while full", lambda: mem.curate(op(1)), False)
    step("search while full", lambda: mem.search("rotating refresh tokens"), True)
    step("query while full", lambda: mem.query("how do refresh tokens rotate?"), True)
    step("doctor while full", lambda: mem.doctor(), True)
    step("list while full", lambda: mem.list(""), True)
    filler.unlink()
    step("curate after space was freed (same process)", lambda: mem.curate(op(2)), True)

    def other() -> None:
        ops = Path(args["ops"])
        r = subprocess.run([MEMGROVE, "--root", args["root"], "curate", "--ops", str(ops)], capture_output=True,
                           text=True, timeout=30, env=child_env())
        if r.returncode:
            raise RuntimeError(r.stderr.strip()[-200:])
    step("curate after space was freed (another process)", other, True)
    mem.close()


# -- the parent ----------------------------------------------------------------------------------

def _template(base: Path) -> Path:
    from memgrove import Memory

    home = base / "template"
    with Memory.open(home, create=True) as mem:
        mem.curate([{"op": "ADD", "path": ENTRY, "title": "Refresh token rotation",
                     "content": "Refresh tokens rotate on every use; the old one is revoked after 30 s.",
                     "reason": "seed"}] +
                   [{"op": "ADD", "path": f"faults/more/n_{i}.md", "content": f"Note {i} about rotating keys.",
                     "reason": "seed"} for i in range(20)])
        mem.query("how do refresh tokens rotate?")
        mem.query("what about rotating keys?")
        mem.doctor()
    return home


def _damage(mg: Path, target: str, how: str) -> None:
    p = mg / target
    if how == "deleted":
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        return
    files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p]
    for i, f in enumerate(files):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"" if how == "empty" else bytes((37 * i + 11 * k) % 256 for k in range(4096)))


def _extra_damage(mg: Path, name: str) -> None:
    if name == "catalog with an old schema":
        cat = mg / "index" / "catalog.db"
        cat.unlink()
        con = sqlite3.connect(cat)
        con.execute("CREATE TABLE files (path TEXT PRIMARY KEY, mtime INTEGER)")
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.execute("INSERT INTO meta VALUES ('format', 'whoosh-1')")
        con.commit()
        con.close()
    elif name == "setting of the wrong type":
        (mg / "config.toml").write_text('[tree]\nlock_timeout = "soon"\n[query]\nprefetch_limit = "ten"\n')
    elif name == "config.toml garbage":
        (mg / "config.toml").write_bytes(b"\xff\xfe[tree\x00 = = \n")
    elif name == "journal with a garbage line":
        with (mg / "journal" / "journal.jsonl").open("ab") as fh:
            fh.write(b'{"id": "torn\x00\xff garbage\n')
    elif name == "a stale pending.json of applied ops":
        recs = [json.loads(x) for x in (mg / "journal" / "journal.jsonl").read_text().splitlines()[:3]]
        (mg / "journal" / "pending.json").write_text(json.dumps({"records": recs}))


EXTRAS = {"catalog with an old schema": 13, "setting of the wrong type": 13, "config.toml garbage": None,
          "journal with a garbage line": None, "a stale pending.json of applied ops": 7}


def _entries(mg: Path) -> dict[str, str]:
    return {str(p.relative_to(mg / "tree")): p.read_text(encoding="utf-8") for p in (mg / "tree").rglob("*.md")
            if p.name != "context.md"}


def _run_commands(case_dir: Path, root: Path, commands: list[list[str]], timeout: float, n: int) -> tuple[list, bool]:
    ops = case_dir / f"ops{n}.json"
    ops.write_text(json.dumps([{"op": "UPSERT", "path": f"faults/new/e_{n}.md", "content": f"fault note {n}",
                                "reason": "after damage"}]))
    out = case_dir / f"out{n}.json"
    args = case_dir / f"args{n}.json"
    args.write_text(json.dumps({"root": str(root), "commands": commands, "ops": str(ops), "out": str(out)}))
    r = run([sys.executable, "-m", "reliability.faults", "--child", "commands", str(args)],
            timeout=timeout * len(commands))
    done = json.loads(out.read_text()) if out.exists() else []
    if r.timed_out or r.code != 0:
        done.append({"argv": commands[len(done)] if len(done) < len(commands) else ["?"], "code": None,
                     "out": r.err[-300:], "seconds": r.seconds,
                     "exception": "hang (killed)" if r.timed_out else f"child exited {r.code}"})
    return done, r.timed_out


def _problem(c: dict[str, Any]) -> str | None:
    if c["exception"]:
        return c["exception"]
    if "unexpected" in c["out"].lower() or "Traceback" in c["out"]:
        return c["out"].strip().splitlines()[-1][:200]
    return None


def damage_case(res: SectionResult, base: Path, template: Path, label: str, damage, item: int | None,
                timeout: float, repairable: bool = True) -> list[Any]:
    case = base / label.replace("/", "_").replace(" ", "_")
    shutil.rmtree(case, ignore_errors=True)
    shutil.copytree(template, case / "proj")
    root = case / "proj"
    mg = root / ".memgrove"
    before = _entries(mg)
    journal_before = (mg / "journal" / "journal.jsonl").read_bytes()
    damage(mg)
    first, hung = _run_commands(case, root, COMMANDS, timeout, 1)
    bad = []
    for c in first:
        why = _problem(c)
        if why:
            bad.append(why)
            res.fail("unclear error" if "hang" not in why else "hang", f"{label}: `{' '.join(c['argv'][:2])}`: {why}",
                     f"damage .memgrove/{label} of a fresh memory, then {cli_repro(root, *c['argv'])}",
                     item or 13)
    fixed, _ = _run_commands(case, root, [["doctor", "--fix"]] + AFTER_FIX, timeout, 2)
    # the settings are the user's: a clear error is all that is owed, doctor --fix must not touch them
    not_fixed = [c for c in fixed[1:] if (c["code"] != 0 and repairable) or _problem(c)]
    for c in not_fixed[:2]:
        res.fail("not repaired", f"{label}: after doctor --fix, `{' '.join(c['argv'][:2])}` still fails: "
                 f"{(_problem(c) or c['out'].strip().splitlines()[-1] if c['out'].strip() else c['code'])}",
                 f"damage .memgrove/{label}, then memgrove doctor --fix; {cli_repro(root, *c['argv'])}", item or 13)
    after = _entries(mg)
    lost = [p for p, t in before.items() if after.get(p) != t]
    if lost:
        res.fail("entry changed by a repair", f"{label}: {lost[0]} ({len(lost)} entries)", f"damage {label}, doctor --fix")
    if not (mg / "journal" / "journal.jsonl").read_bytes().startswith(journal_before[: len(journal_before) - 1]):
        res.fail("journal rewritten", f"{label}: the journal lost lines", f"damage {label}, doctor --fix")
    worst = max((c["seconds"] for c in first + fixed), default=0.0)
    return [label, len(first), len(bad), "hang" if hung else f"{worst:.1f}",
            "yes" if not not_fixed else f"NO ({len(not_fixed)} commands fail)", "yes" if not lost else "NO"]


def disk_cases(res: SectionResult, base: Path, template: Path, size_mb: int, timeout: float) -> list[list[Any]]:
    point = base / "tmpfs"
    why = mount(point, size_mb)
    if why:
        res.notes.append(f"disk full and read-only tree skipped: cannot mount a tmpfs ({why})")
        return [["disk full", 0, 0, "skipped", why, ""], ["read-only tree", 0, 0, "skipped", why, ""]]
    rows = []
    try:
        root = point / "proj"
        shutil.copytree(template, root)
        (root / ".memgrove" / "config.toml").write_text("[tree]\nlock_timeout = 5\n")   # a leaked lock fails fast
        ops = point.parent / "full_ops.json"
        ops.write_text(json.dumps([{"op": "UPSERT", "path": "faults/full/other.md", "content": "from another process",
                                    "reason": "after the disk was full"}]))
        out = base / "full.json"
        args = base / "full.args.json"
        args.write_text(json.dumps({"root": str(root), "filler": str(point / "filler.bin"), "ops": str(ops),
                                    "out": str(out)}))
        r = run([sys.executable, "-m", "reliability.faults", "--child", "disk_full", str(args)],
                timeout=timeout * 3)
        steps = json.loads(out.read_text()) if out.exists() else []
        repro = (f"fill a {size_mb} MB tmpfs holding the memory, then in one process: curate, search, query, "
                 "doctor; free the space; curate again")
        if r.timed_out:
            res.fail("hang", f"disk full: a step did not finish within {timeout * 3:.0f} s "
                     f"(after: {[s['step'] for s in steps]})", repro, 2)
        if not steps and not r.timed_out:
            res.fail("suite error", f"disk full child failed: {r.err.strip()[-300:]}", repro)
        bad = 0
        for s in steps:
            if s["ok"] or (not s["must_work"] and s.get("clear")):
                continue
            bad += 1
            res.fail("disk full", f"{s['step']}: {s['error']}", repro, 2)
        rows.append(["disk full (one long-lived process)", len(steps), bad, "hang" if r.timed_out else
                     f"{max((s['seconds'] for s in steps), default=0):.1f}", "—", "—"])
        (point / "filler.bin").unlink(missing_ok=True)

        # read-only: reads must work, a write must fail clearly
        rr = run(["mount", "-o", "remount,ro", str(point)], timeout=20)
        if rr.code != 0:
            rows.append(["read-only tree", 0, 0, "skipped", rr.err.strip(), ""])
            return rows
        bad = n = 0
        worst = 0.0
        for argv in (["search", "rotating refresh tokens"], ["query", "how do refresh tokens rotate?"],
                     ["query", "a question never asked before about rotation"], ["doctor"], ["tree"],
                     ["history", "-n", "3"], ["show", ENTRY], ["stats"], ["curate", "a note on a read-only disk"]):
            n += 1
            c = cli(root, *argv, timeout=timeout)
            worst = max(worst, c.seconds)
            why = cli_problem(c) or (None if c.code == 0 or argv[0] == "curate" else
                                     f"exit {c.code}: {c.text.strip()[-160:]}")
            if why:
                bad += 1
                res.fail("read-only tree", f"`{' '.join(argv[:2])}`: {why}",
                         f"mount -o remount,ro the memory's file system; {cli_repro(root, *argv)}", 2)
        rows.append(["read-only tree", n, bad, f"{worst:.1f}", "—", "—"])
        run(["mount", "-o", "remount,rw", str(point)], timeout=20)
    finally:
        umount(point)
    return rows


def pipe_cases(res: SectionResult, template: Path, base: Path) -> list[Any]:
    root = base / "pipe" / "proj"
    shutil.copytree(template, root)
    n = bad = 0
    for argv in (["query", "how do refresh tokens rotate?"], ["tree"], ["history", "-n", "50"],
                 ["search", "rotating"]):
        n += 1
        cmd = f"{MEMGROVE} --root '{root}' {' '.join(repr(a) for a in argv)} | head -c 1 >/dev/null"
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60, env=child_env())
        if "Traceback" in p.stderr or "BrokenPipe" in p.stderr or "Exception ignored" in p.stderr:
            bad += 1
            res.fail("broken pipe", f"`{argv[0]}` piped into head: {p.stderr.strip().splitlines()[-1][:160]}",
                     f"memgrove {' '.join(argv)} | head -c 1", 13)
    return ["output piped into `head -c 1`", n, bad, "—", "—", "—"]


def run_section(work: Path, *, seed: int, timeout: float, damage: list[str], disk_mb: int,
                targets: list[str] | None = None, extras: bool = True) -> SectionResult:
    res = SectionResult(SECTION, columns=["case", "commands", "unclear / hung", "slowest s", "repaired by doctor --fix",
                                          "entries intact"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    template = _template(base)
    for target in targets or TARGETS:
        for how in damage:
            if (how == "deleted" and target == "journal/pending.json") or (how == "empty" and target not in EMPTY):
                continue   # there is none normally; an empty folder is a deleted one
            res.rows.append(damage_case(res, base, template, f"{target} {how}",
                                        lambda mg, t=target, h=how: _damage(mg, t, h), None, timeout))
    for name, item in (EXTRAS if extras else {}).items():
        res.rows.append(damage_case(res, base, template, name, lambda mg, n=name: _extra_damage(mg, n), item, timeout,
                                    repairable="config" not in name and "setting" not in name))
    res.rows += disk_cases(res, base, template, disk_mb, timeout)
    res.rows.append(pipe_cases(res, template, base))
    res.summary.update(cases=len(res.rows), failures=len(res.failures))
    return res


if __name__ == "__main__" and "--child" in sys.argv:
    mode, a = child_args()
    {"commands": commands_child, "disk_full": disk_full_child}[mode](a)

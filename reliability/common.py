"""What every section shares: failures and results, child processes with timeouts, the CLI.

Children run as ``python -m reliability.<module> --child ...`` with the
repository on ``PYTHONPATH``, and the real ``memgrove`` entry point beside the
interpreter; none of them sees the developer's ``MEMGROVE_*`` settings or a model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
MEMGROVE = str(Path(sys.executable).with_name("memgrove"))


@dataclass
class Failure:
    section: str
    check: str              # the check that failed, a short name
    detail: str             # what happened
    repro: str              # one line that reproduces it
    item: int | None = None  # the issue 13 item it most likely is (None: not one of them)

    def line(self) -> str:
        tag = f" (item {self.item})" if self.item else ""
        return f"[{self.section}] {self.check}{tag}: {self.detail} — repro: {self.repro}"


@dataclass
class SectionResult:
    name: str
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    seconds: float = 0.0

    def fail(self, check: str, detail: str, repro: str, item: int | None = None) -> None:
        self.failures.append(Failure(self.name, check, _one_line(detail), _one_line(repro, 600), item))

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["failures"] = [asdict(f) for f in self.failures]
        return d


def _one_line(text: str, limit: int = 300) -> str:
    # what the inputs contain (escapes, control characters, lone surrogates) must not reach the report raw
    text = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in " ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def child_env(**extra: str) -> dict[str, str]:
    """The environment of every child: no memory, no model, one-line errors (as a user sees them)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMGROVE_") and k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


@dataclass
class Run:
    code: int | None
    out: str
    err: str
    seconds: float
    timed_out: bool = False

    @property
    def text(self) -> str:
        return self.out + self.err


def run(argv: list[str], *, timeout: float, stdin: bytes | None = None, cwd: str | Path | None = None,
        env: dict[str, str] | None = None) -> Run:
    """Run a command in its own process group; on timeout the whole group is killed (never a hang)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env or child_env(),
                            start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        out, err = proc.communicate()
        timed_out = True
    return Run(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
               time.monotonic() - t0, timed_out)


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def cli(root: str | Path, *args: str, timeout: float = 60.0, stdin: bytes | None = None) -> Run:
    """``memgrove --root ROOT ARGS...`` as a user runs it."""
    return run([MEMGROVE, "--root", str(root), *args], timeout=timeout, stdin=stdin)


def cli_repro(root: str | Path, *args: str) -> str:
    import shlex

    return "memgrove --root " + shlex.quote(str(root)) + " " + " ".join(shlex.quote(a) for a in args)


def cli_problem(r: Run) -> str | None:
    """Why a CLI run is not a clean success or a clean one-line error, or None."""
    if r.timed_out:
        return f"no answer within {r.seconds:.0f} s (killed)"
    if r.code is None or r.code < 0:
        return f"died of signal {-(r.code or 0)}"
    if "Traceback (most recent call last)" in r.text:
        return "traceback: " + r.text.strip().splitlines()[-1][:200]
    if "unexpected" in r.err.lower():
        return "unexpected error: " + r.err.strip()[:200]
    if r.code not in (0, 1, 2):
        return f"exit status {r.code}: {r.err.strip()[:200]}"
    return None


def spawn_child(module: str, mode: str, args: dict[str, Any], workdir: Path, name: str) -> subprocess.Popen:
    """A ``--child`` of one of this package's modules; arguments go in a file, stderr to ``name.stderr``."""
    arg_file = workdir / f"{name}.args.json"
    arg_file.write_text(json.dumps(args))
    err = (workdir / f"{name}.stderr").open("w")
    proc = subprocess.Popen([PYTHON, "-m", f"reliability.{module}", "--child", mode, str(arg_file)],
                            stdout=subprocess.DEVNULL, stderr=err, env=child_env(), start_new_session=True)
    err.close()
    return proc


def child_args() -> tuple[str, dict[str, Any]]:
    """In a child: ``(mode, args)`` from ``--child MODE ARGFILE``."""
    i = sys.argv.index("--child")
    return sys.argv[i + 1], json.loads(Path(sys.argv[i + 2]).read_text())


def append_fsync(path: Path | str, record: dict[str, Any]) -> None:
    """One JSON line, written with one write(2) and fsynced: what the parent counts as acknowledged."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path | str) -> list[dict[str, Any]]:
    """The complete JSON lines of a file (a line cut by a kill is not counted)."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.split(b"\n")[:-1]:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q / 100 * (len(s) - 1)))))]


def journal_ids(home: Path) -> list[str]:
    """Every record id in the journal, in order (damaged lines skipped)."""
    ids = []
    path = home / "journal" / "journal.jsonl"
    try:
        fh = path.open(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ids
    with fh:
        for line in fh:
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError, TypeError):
                continue
    return ids


def duplicates(ids: list[str]) -> list[str]:
    seen, dup = set(), []
    for i in ids:
        if i in seen:
            dup.append(i)
        seen.add(i)
    return dup


def torn_files(home: Path) -> list[str]:
    """Files of the tree that do not parse (a torn write would be one)."""
    from memgrove.tree.entries import entry as entry_mod
    from memgrove.tree.base.errors import InvalidEntry

    bad = []
    root = home / "tree"
    for p in root.rglob("*.md"):
        try:
            entry_mod.parse(p.read_text(encoding="utf-8"), where=str(p.relative_to(root)))
        except (OSError, UnicodeDecodeError, InvalidEntry) as exc:
            bad.append(f"{p.relative_to(root)}: {str(exc)[:120]}")
    return bad

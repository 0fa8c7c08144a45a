"""Git replication of a tree: every applied batch becomes a commit, pushed to ``[replication] remote``.

One process per tree owns the repository (``.memgrove/git``, an ``flock`` on ``git/owner.lock``):
the server, or a CLI process when no server runs. In it:

- the write path hands over each batch once it is durable (``batch_done``, under the writer
  lock): the batch's files as they now are, and its operations' ids and reasons. A thread of
  its own makes the commit (``fast-import``, from that content: a later batch cannot leak into
  it), so a commit never holds the writer lock and a git failure never fails a write;
- what changed otherwise (a hand edit, another process's write, a commit that failed) is
  caught up by a commit of the files as they are (``catch_up``, under the writer lock), when
  the generation moved without a batch of ours, after a failure, and every ``CATCH_UP_S``;
- every ``push_interval`` the branch is pushed; a failed push is retried with backoff (up to
  ``MAX_BACKOFF_S``) and reported (``status``: ``/health``, ``doctor``);
- every ``pull_interval`` the remote is looked at; someone else's commits are merged in
  (``replication_pull.py``): applied as journaled ``PULL`` operations, or, where they conflict
  with ours, refused and kept on a branch named in the report.

The journal stays the truth for undo; the repository is a copy of the files for other machines.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import forksafe
from ..writes.archive import in_tree, is_archived
from ..base.fsio import atomic_write
from ..entries.paths import CONTEXT_FILE, parent_folders
from ..base.credentials import redact
from .git import REMOTE, Git, GitFailed, PushRejected
from .replicated_tree import ReplicatedTree
from .settings import ReplicationSettings, load_replication_settings, remote_location

if TYPE_CHECKING:
    from ..writes.journal import JournalRecord

log = logging.getLogger("memgrove.replication")
GIT_DIR = "git"
STATE_FILE = "memgrove-state.json"
CATCH_UP_S = 60.0        # the files are compared with the branch at least this often
MAX_BACKOFF_S = 300.0    # a failing push or fetch is retried at least this often
CLOSE_TIMEOUT_S = 15.0   # what closing waits for the last commit and push
KEPT_CONFLICTS = 20


def git_path(rel: str) -> str:
    """A journaled path as the repository names it: ``tree/...`` or ``archive/...``."""
    return f"archive/{in_tree(rel)}" if is_archived(rel) else f"tree/{rel}"


def replication_for(tree: "ReplicatedTree") -> "Replicator | None":
    """The tree's replication, when ``[replication] remote`` is set (nothing runs until a write)."""
    settings = load_replication_settings(tree.home)
    return Replicator(tree, settings) if settings.remote else None


class Replicator:
    def __init__(self, tree: "ReplicatedTree", settings: ReplicationSettings):
        self.tree = tree
        self.settings = settings
        self.git = Git(tree.home / GIT_DIR, tree.home, settings.git_timeout)
        self.remote = remote_location(settings.remote, tree.home.parent)
        self.pushed_head: str | None = None     # the remote's tip as last seen (replicas wait on it)
        self._cond = forksafe.condition()
        self._queue: list[tuple[str, dict[str, bytes | None]]] = []
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._owner_fd: int | None = None
        self._owner_tried = False
        self._seen_gen: int | None = None
        self._catch_up_due = True              # the first thing an owner does
        self._last_catch_up = 0.0
        self._next_push = 0.0
        self._next_pull = 0.0
        self._failures = 0
        self._head_checked = False      # the remote's HEAD names the pushed branch (point_remote_head)
        self._retry_at = 0.0
        self._ready = False
        self.state: dict[str, Any] = _load_state(self.git.git_dir)
        forksafe.in_child(self._forked)

    def _forked(self) -> None:
        """In a forked child (tree/base/forksafe.py): the thread, its queue and the repository are the
        parent's, which catches this child's writes up as any other process's. This process's copy
        of the owner lock's descriptor is closed (the parent's lock stays: a copy closed is not an
        unlock)."""
        self._thread = None
        self._queue = []
        if self._owner_fd is not None:
            try:
                os.close(self._owner_fd)
            except OSError:
                pass
        self._owner_fd, self._owner_tried = None, False

    # -- owning the repository -----------------------------------------------------------
    def own(self) -> bool:
        """Take the repository for this process if no other process has it (once per process)."""
        if self._owner_fd is not None:
            return True
        if self._owner_tried:
            return False
        self._owner_tried = True
        try:
            self.git.git_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.git.git_dir / "owner.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            self._report("commit_error", f"cannot open the repository: {exc}")
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False     # another process (the server) replicates this tree; it catches our writes up
        self._owner_fd = fd
        return True

    def start(self) -> bool:
        """Own the repository and start the thread now (a server: pulls run before any write)."""
        if not self.own():
            return False
        self._ensure_thread()
        return True

    def _ensure_thread(self) -> None:
        with self._cond:
            if self._thread is None and not self._stopping:
                self._thread = threading.Thread(target=self._run, name="memgrove-replication", daemon=True)
                self._thread.start()

    # -- from the write path ---------------------------------------------------------------
    def batch_done(self, records: list["JournalRecord"], touched: list[str], generation: int) -> None:
        """A batch is durable (called under the writer lock): its files as they are now, and a
        message of its operations, go to the commit queue. Never raises."""
        try:
            if not self.own():
                return
            paths = set(touched)
            for rel in touched:
                if not is_archived(rel):
                    paths.update(f"{f}/{CONTEXT_FILE}" for f in parent_folders(rel))
            files: dict[str, bytes | None] = {}
            for rel in sorted(paths):
                p = self.tree._abs(rel)
                try:
                    files[git_path(rel)] = None if p.is_symlink() else p.read_bytes()
                except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                    files[git_path(rel)] = None
            with self._cond:
                if self._seen_gen is not None and generation != self._seen_gen + 1:
                    self._catch_up_due = True     # someone else wrote between our batches
                self._seen_gen = generation
                self._queue.append((batch_message(records), files))
                self._cond.notify_all()
            self._ensure_thread()
        except Exception as exc:  # noqa: BLE001 - a write never fails for its copy in git
            self._report("commit_error", f"batch not queued for git ({exc}); the next catch-up commits it")
            self._catch_up_due = True

    # -- the thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                if (not self._queue or now < self._retry_at) and not self._stopping:
                    self._cond.wait(timeout=max(0.05, self._next_due() - now))
                stopping = self._stopping
            if stopping or time.monotonic() >= self._retry_at:
                try:
                    self._step(stopping)
                except Exception as exc:  # noqa: BLE001 - the thread must outlive any one failure
                    if not isinstance(exc, GitFailed):
                        log.exception("replication step failed")
                    self._report("commit_error", f"{type(exc).__name__}: {exc}" if not isinstance(exc, GitFailed)
                                 else str(exc))
                    self._catch_up_due = True
                    self._retry_at = time.monotonic() + self._backoff()
            if stopping:
                return

    def _step(self, stopping: bool) -> None:
        if not self._ready:
            self.git.ensure(self.remote, self.settings.branch)
            self._ready = True
        self._commit_queued()
        now = time.monotonic()
        if self._catch_up_due or now - self._last_catch_up >= CATCH_UP_S or \
                self.tree._generation() != self._seen_gen:
            self.catch_up()
        if stopping or now >= self._next_pull:
            self._pull()
        if stopping or now >= self._next_push:
            self._push()
        self.pushed_head = self.git.ref(f"refs/remotes/{REMOTE}/{self.settings.branch}")

    def _next_due(self) -> float:
        return max(self._retry_at, min(self._next_push, self._next_pull, self._last_catch_up + CATCH_UP_S))

    def _commit_queued(self) -> None:
        if not self._ready:
            return
        with self._cond:
            batch, self._queue = self._queue, []
        if not batch:
            return
        try:
            self.git.import_commits(self.settings.branch, batch)
            self._report("commit_error", None)
        except GitFailed as exc:
            self._report("commit_error", str(exc))
            self._catch_up_due = True       # the files hold it: a catch-up commits them

    def catch_up(self) -> str | None:
        """Commit the files as they are (under the writer lock, the queue first); the new commit or None."""
        with self.tree.lock.hold():
            return self.catch_up_locked()

    def catch_up_locked(self) -> str | None:
        self._commit_queued()
        head = self.git.ref(f"refs/heads/{self.settings.branch}")
        tree = self.git.snapshot_tree()
        made = None
        if tree != self.git.tree_of(head):
            made = self.git.commit_tree(tree, [head] if head else [], catch_up_message(head))
            self.git.update_ref(f"refs/heads/{self.settings.branch}", made)
        self._seen_gen = self.tree._generation()
        self._catch_up_due = False
        self._last_catch_up = time.monotonic()
        return made

    def _pull(self) -> None:
        from .pull import pull

        self._next_pull = time.monotonic() + self.settings.pull_interval
        try:
            report = pull(self)
        except GitFailed as exc:
            self._report("pull_error", str(exc))
            return
        self._report("pull_error", None)
        if report:
            conflicts = (self.state.get("conflicts") or []) + [report]
            self._report("conflicts", conflicts[-KEPT_CONFLICTS:])
            log.warning("replication conflict: %s", report["message"])
            self.tree.notice(report["message"])

    def _push(self) -> None:
        if not self.ahead():
            self._next_push = time.monotonic() + self.settings.push_interval
            return
        branch = self.settings.branch
        refs = [f"refs/heads/{branch}:refs/heads/{branch}"] + [
            f"refs/heads/{c['branch']}:refs/heads/{c['branch']}" for c in self.state.get("conflicts") or []
            if not c.get("pushed")]
        try:
            self.git.push(refs)
        except PushRejected:
            # someone pushed first: merge their commits now, push again right after (a second
            # refusal in a row waits, so a merge that cannot settle it never spins)
            self._next_pull = 0.0
            self._next_push = time.monotonic() + min(self.settings.push_interval, 1.0)
            return
        except GitFailed as exc:
            self._report("push_error", str(exc))
            self._next_push = time.monotonic() + self._backoff()
            return
        for c in self.state.get("conflicts") or []:
            c["pushed"] = True
        if not self._head_checked:      # once a process: after its first push the branch exists there
            self._head_checked = True
            try:
                hint = self.git.point_remote_head(self.remote, branch)
            except GitFailed as exc:
                hint = str(exc)
            if hint:
                log.warning("replication: %s", hint)
        self._failures = 0
        self._report("push_error", None, pushed_at=time.time(), retry_in=None)
        self._next_push = time.monotonic() + self.settings.push_interval

    def _backoff(self) -> float:
        """Seconds to the next try after one more failure in a row: doubling, at most MAX_BACKOFF_S."""
        self._failures += 1
        wait = min(self.settings.push_interval * 2 ** min(self._failures - 1, 10), MAX_BACKOFF_S)
        self._report("retry_in", round(wait, 1))
        return wait

    # -- what it reports -----------------------------------------------------------------
    def ahead(self) -> bool:
        """The branch holds commits the remote has not been given (as far as this process knows)."""
        try:
            head = self.git.ref(f"refs/heads/{self.settings.branch}")
            return head is not None and head != self.git.ref(f"refs/remotes/{REMOTE}/{self.settings.branch}")
        except GitFailed:
            return False

    def _report(self, key: str, value: Any, **more: Any) -> None:
        old = self.state.get(key)
        if key.endswith("_error"):
            since = f"{key}_since"
            if value and not old:
                self.state[since] = time.time()
                log.warning("replication: %s", value)
            elif not value:
                self.state.pop(since, None)
        self.state[key] = value
        self.state.update(more)
        if old != value or more:
            _save_state(self.git.git_dir, self.state)

    def status(self) -> dict[str, Any]:
        """What ``/health`` and ``doctor`` say of replication: the commit, what is not pushed yet
        and since when, the last errors, the conflicts kept on branches."""
        return status_of(self.git, self.settings, self.state)

    # -- closing -----------------------------------------------------------------------------
    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Commit what is queued and push once (bounded by ``timeout``), then stop."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        if self._owner_fd is not None:
            os.close(self._owner_fd)
            self._owner_fd = None


def status_of(git: Git, settings: ReplicationSettings, state: dict[str, Any]) -> dict[str, Any]:
    branch = settings.branch
    out: dict[str, Any] = {"remote": redact(settings.remote), "branch": branch}
    try:
        head = git.ref(f"refs/heads/{branch}") if (git.git_dir / "HEAD").exists() else None
        pushed = git.ref(f"refs/remotes/{REMOTE}/{branch}") if head else None
        out["commit"] = head
        out["unpushed"] = git.count(pushed, head) if head and head != pushed else 0
        oldest = git.oldest_time(pushed, head) if out["unpushed"] else None
        # how far the remote (and so every replica) lags this tree: the age of its oldest unpushed commit
        out["lag_seconds"] = round(max(0.0, time.time() - oldest), 1) if oldest else 0.0
    except GitFailed as exc:
        out["git_error"] = str(exc)
    for key in ("push_error", "push_error_since", "pull_error", "commit_error", "pushed_at", "retry_in"):
        if state.get(key) is not None:
            out[key] = state[key]
    out["conflicts"] = [{k: c[k] for k in ("at", "remote_commit", "branch", "paths", "message") if k in c}
                        for c in state.get("conflicts") or []]
    return out


def problems_of(status: dict[str, Any]) -> list[str]:
    """One line per thing ``doctor`` warns about."""
    out = []
    if status.get("push_error"):
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(status.get("push_error_since") or time.time()))
        out.append(f"replication: pushing to {status['remote']} fails since {since} ({status['push_error']}); "
                   f"{status.get('unpushed', '?')} commit(s) wait, retried with backoff (writes go on)")
    for key, what in (("pull_error", "looking at the remote"), ("commit_error", "committing"),
                      ("git_error", "reading the repository")):
        if status.get(key):
            out.append(f"replication: {what} failed: {status[key]}")
    for c in status.get("conflicts") or []:
        out.append(f"replication: {c['message']}")
    return out


def batch_message(records: list["JournalRecord"]) -> str:
    ops = [r for r in records]
    head = (f"{ops[0].op} {ops[0].path}" if len(ops) == 1 else f"{len(ops)} operations") if ops else "a batch"
    lines = [f"memgrove: {head}", ""]
    for r in ops[:200]:
        reason = " ".join(r.reason.split())[:300]
        lines.append(f"{r.id} {r.op} {r.path} ({r.actor}): {reason}")
    if len(ops) > 200:
        lines.append(f"... and {len(ops) - 200} more (see `memgrove history`)")
    lines += ["", "Memgrove-Ops: " + " ".join(r.id for r in ops)]
    return "\n".join(lines) + "\n"


def catch_up_message(head: str | None) -> str:
    if head is None:
        return "memgrove: the tree as it was when replication started\n"
    return ("memgrove: changes made outside this process's batches (hand edits, another process's writes, "
            "or a batch whose own commit failed); the journal names the operations\n")


def _load_state(git_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((git_dir / STATE_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_state(git_dir: Path, state: dict[str, Any]) -> None:
    try:
        atomic_write(git_dir / STATE_FILE, json.dumps(state, indent=1), durable=False)
    except OSError:
        pass


def read_status(home: Path) -> dict[str, Any] | None:
    """Replication's status read from the repository and its state file (``doctor`` in any process);
    None when replication is off."""
    settings = load_replication_settings(home)
    if not settings.remote:
        return None
    git = Git(home / GIT_DIR, home, settings.git_timeout)
    return status_of(git, settings, _load_state(git.git_dir))

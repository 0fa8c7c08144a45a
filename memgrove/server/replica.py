"""``memgrove serve --replica-of URL``: a read replica of a primary's memory.

In an empty folder, the replica asks the primary for its git remote (``GET /api/replication``,
with the primary's token: ``MEMGROVE_TOKEN``), clones the tree from it and follows it
(tree/replication/follow.py): after every push of the primary, which it learns of by waiting on
``GET /api/replication/wait`` (one held request), or every ``pull_interval`` seconds when the
primary does not answer. It answers reads itself (search, query tiers 0–2; tiers 3–4 with its
own model settings) and forwards every write (``ForwardWrites``: any POST, PUT, PATCH or DELETE
under ``/api/`` but the reads among them, and the history and review queue, which only the
primary holds) to the primary, with the caller's token, body and project, and
answers what the primary answers: a write names the primary's project this replica follows
(``replica.json``'s ``project``, which ``/api/replication`` gave) unless it names another one, which
is forwarded as named -- the primary accepts or refuses it exactly as it would if asked directly. The writes made in its own process -- MCP tools, LangServe
graphs -- go there too: its tree's ``forward_writes`` is a ``PrimaryWriter`` (forward_writes.py).
With the primary unreachable a write is ``PrimaryUnreachable`` (503) and nothing is applied here;
reads go on from the commit served.

``memgrove serve --promote`` turns a replica into a primary (``promote``): it catches up with
the remote, names the remote in ``[replication]`` and forgets the primary; stop the old primary
first (one writer per project).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit

from memgrove.tree.base import forksafe
from memgrove.tree.base.errors import MemgroveError, PrimaryUnreachable
from memgrove.tree.base.fsio import atomic_write
from memgrove.tree.base.home import HOME_NAME, locate_home
from memgrove.tree.replication.follow import Follower, replica_info, write_replica_info
from memgrove.tree.base.credentials import redact
from memgrove.tree.replication.git import GitFailed
from memgrove.tree.replication.settings import load_replication_settings

log = logging.getLogger("memgrove.replica")
WAIT_S = 20.0           # how long one wait on the primary's next push is held
TOKEN_ENV = "MEMGROVE_TOKEN"
PROJECT_HEADER = "x-memgrove-project"
READ_POSTS = ("/api/query",)
READ_SUFFIXES = ("/search", "/namespaces")    # the store's reads that are POSTs (/api/store/...)
PRIMARY_READS = ("/api/history", "/api/review")   # what only the primary holds: its journal, its review queue


class ReplicaRefused(MemgroveError):
    """A replica cannot start: the folder holds a memory already, or the primary cannot be asked."""

    code = "serve_refused"


def is_write(method: str, path: str) -> bool:
    """A request the replica forwards: every POST/PUT/PATCH/DELETE under /api/ but the reads, and the
    reads of what only the primary holds (the journal's history, the review queue)."""
    if method in ("GET", "HEAD") and (path in PRIMARY_READS or path.startswith(tuple(p + "/" for p in PRIMARY_READS))):
        return True
    if method in ("GET", "HEAD", "OPTIONS") or not path.startswith("/api/"):
        return False
    if path in READ_POSTS or (path.startswith("/api/store/") and path.endswith(READ_SUFFIXES)):
        return False
    return True


def check_primary_url(primary: str) -> str:
    """The primary's URL as given, once checked: http(s)://host[:port], no credentials in it (the
    replica's bearer token is ``MEMGROVE_TOKEN``; a password in a URL would reach logs and errors)."""
    u = urlsplit(primary)
    try:
        u.port
    except ValueError:
        raise ReplicaRefused(f"--replica-of {redact(primary)!r} is not a URL with a valid port") from None
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ReplicaRefused(f"--replica-of takes the primary's URL, http(s)://host:port, not {redact(primary)!r}")
    if "@" in u.netloc:
        raise ReplicaRefused(f"--replica-of takes the primary's URL without user:password@ ({redact(primary)}): "
                             f"a replica sends the primary's token, set {TOKEN_ENV}, as its bearer token")
    return primary


def ask_primary(primary: str, path: str, token: str | None, *, method: str = "GET", body: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 30.0,
                params: dict[str, str] | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request to the primary: (status, headers, body), within ``timeout`` seconds in all however
    slowly it answers, a body of at most 64 MB (memgrove/remote/deadline.py). ``PrimaryUnreachable`` when it
    cannot be asked, or does not answer in time."""
    from memgrove.remote.deadline import Late, TooLarge, connection, read_body
    from memgrove.remote.wire import MAX_REPLY

    u = urlsplit(primary)
    host = u.hostname or "127.0.0.1"
    conn = connection(u.scheme == "https", host, u.port or (443 if u.scheme == "https" else 80))
    conn.deadline = time.monotonic() + timeout      # type: ignore[attr-defined]
    # the Host header is host[:port] only: never the URL's user:password@ (check_primary_url refuses those)
    shown = f"[{host}]" if ":" in host else host
    sent = {"Host": shown + (f":{u.port}" if u.port else ""), **(headers or {})}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    target = u.path.rstrip("/") + path + ("?" + urlencode(params) if params else "")
    try:
        try:
            conn.request(method, target, body=body, headers=sent)
        except (OSError, http.client.HTTPException, Late) as exc:
            raise PrimaryUnreachable(f"the primary {redact(primary)} cannot be reached ({exc or 'no time left'}); "
                                     "nothing was applied: retry once it is back") from None
        try:
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), read_body(resp, MAX_REPLY)
        except (OSError, http.client.HTTPException, Late, TooLarge) as exc:
            why = (f"not within {timeout:g} s" if isinstance(exc, Late) else
                   "a reply past 64 MB" if isinstance(exc, TooLarge) else str(exc))
            raise PrimaryUnreachable(f"the primary {redact(primary)} did not answer ({why}); the write may have "
                                     "been applied there: see its history") from None
    finally:
        conn.close()


class Replica:
    def __init__(self, home: Path, primary: str, token: str | None):
        info = replica_info(home) or {}
        self.home = home
        self.primary = primary.rstrip("/")
        self.token = token
        self.remote = str(info.get("remote") or "")
        self.branch = str(info.get("branch") or "main")
        self.project = str(info.get("project") or "") or None     # the primary's project it follows
        settings = load_replication_settings(home)
        self.interval = settings.pull_interval
        self.timeout = settings.git_timeout
        self.follower: Follower | None = None
        self.confirmed_at = 0.0          # when it last knew it served everything the remote held
        self.waiting = False             # a wait on the primary's next push is held (it wakes us)
        self.error: str | None = None
        self.primary_error: str | None = None
        self._stop = threading.Event()
        # held by the thread while it follows (writes into the tree), and by ``stop`` for good: the
        # server closes its memory only once no follow is under way (a tantivy index closed under a
        # follow crashed a replica's shutdown with SIGSEGV)
        self._following = forksafe.lock()
        self._thread: threading.Thread | None = None
        self.writer: Any = None          # forward_writes of the served tree (forward_writes.py)

    # -- setting up --------------------------------------------------------------------
    @classmethod
    def prepare(cls, folder: str | Path | None, primary: str | None, token: str | None) -> "Replica":
        """The replica of ``folder``: made there in an empty folder (asking ``primary`` for its remote),
        or the one already there (``replica.json``)."""
        base = Path(folder or ".").expanduser().absolute()
        home = base if base.name == HOME_NAME else base / HOME_NAME
        info = replica_info(home) if home.exists() else None
        check_primary_url(primary if primary is not None else str((info or {}).get("primary") or ""))
        if info is None:
            if primary is None:
                raise ReplicaRefused(f"{base} is not a replica: start one with --replica-of URL")
            if (home / "tree").is_dir() and any((home / "tree").iterdir()):
                raise ReplicaRefused(f"{base} holds a memory already: a replica starts in an empty folder")
            status, _, body = ask_primary(primary, "/api/replication", token)
            if status != 200:
                raise ReplicaRefused(f"the primary {redact(primary)} answered {status} to /api/replication: "
                                     f"{body[:300].decode('utf-8', 'replace')}")
            try:
                data = json.loads(body)
            except (ValueError, RecursionError):
                data = None
            if not isinstance(data, dict):
                raise ReplicaRefused(f"the primary {redact(primary)} answered /api/replication with something not "
                                     "a memgrove reply")
            if not data.get("remote"):
                raise ReplicaRefused(f"the primary {redact(primary)} has no [replication] remote to follow")
            home = locate_home(home, create=True)
            write_replica_info(home, primary, data["remote"], data.get("branch") or "main", data.get("project"))
        elif primary is not None and primary.rstrip("/") != info.get("primary"):
            write_replica_info(home, primary, str(info.get("remote")), str(info.get("branch") or "main"),
                               info.get("project"))
        return cls(home, primary or str(info.get("primary")), token)   # type: ignore[union-attr]

    def catch_up(self, tree: Any) -> None:
        """The first sync, before the server answers (a replica never serves an empty tree it could fill)."""
        self.follower = Follower(tree, self.remote, self.branch, self.timeout)
        try:
            self._sync()
        finally:
            self.follower = None      # the server's own memory follows from now on (start)

    def start(self, memory_for: Callable[[], Any]) -> None:
        from .forward_writes import PrimaryWriter

        # the writes made in this process (MCP tools, LangServe graphs) go to the primary too
        self.writer = PrimaryWriter(self.primary, self.token, timeout=max(self.timeout, 130.0), project=self.project)
        memory_for().tree.forward_writes = self.writer

        def run() -> None:
            if self.follower is None:
                self.follower = Follower(memory_for().tree, self.remote, self.branch, self.timeout)
            while not self._stop.is_set():
                with self._following:
                    if self._stop.is_set():
                        return
                    self._sync()
                self._wait_for_push()

        self._thread = threading.Thread(target=run, name="memgrove-replica", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No follow after this one: waits for the one under way (``git_timeout`` at most; a wait on
        the primary's next push is left to end on its own). The writer stays open: the server
        finishes the writes under way after this."""
        self._stop.set()
        if not self._following.acquire(timeout=self.timeout + 5.0):
            log.warning("replica: a follow still under way after %.0f s at shutdown", self.timeout + 5.0)

    # -- following ---------------------------------------------------------------------
    def _sync(self) -> None:
        assert self.follower is not None
        started = time.time()
        try:
            self.follower.sync()
            self.error = None
            self.confirmed_at = started
        except (GitFailed, OSError, MemgroveError) as exc:
            if str(exc) != self.error:
                log.warning("replica: following %s failed: %s", redact(self.remote), exc)
            self.error = str(exc)

    def _wait_for_push(self) -> None:
        """Hold a request on the primary until it pushes past the commit served (or ``WAIT_S``);
        without an answer, wait ``pull_interval`` and follow the remote alone."""
        served = self.follower.served if self.follower else None
        self.waiting = self.error is None
        try:
            status, _, body = ask_primary(self.primary, "/api/replication/wait", self.token, timeout=WAIT_S + 10,
                                          params={"after": served or "", "timeout": str(WAIT_S),
                                                  **({"project": self.project} if self.project else {})})
            self.primary_error = None if status == 200 else f"{status}: {body[:200].decode('utf-8', 'replace')}"
            if status == 200 and json.loads(body).get("pushed") in (None, served) and self.error is None:
                self.confirmed_at = time.time()     # nothing pushed meanwhile: still up to date
            if status != 200:
                self._stop.wait(self.interval)
        except PrimaryUnreachable as exc:
            self.primary_error = str(exc)
            self.waiting = False
            self._stop.wait(self.interval)
        finally:
            self.waiting = False

    # -- serving -----------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        served = self.follower.served if self.follower else None
        lag = 0.0 if self.waiting and self.error is None else round(max(0.0, time.time() - self.confirmed_at), 1)
        details = {"primary": redact(self.primary), "remote": redact(self.remote), "branch": self.branch,
                   "primary_reachable": self.primary_error is None, "primary_error": self.primary_error,
                   "follow_error": self.error, "refused": list(self.follower.refused) if self.follower else []}
        return {"role": "replica", "commit": served, "lag_seconds": lag if self.confirmed_at else None,
                "replication": details}

    def forward(self, method: str, path: str, query: str, headers: dict[str, str],
                body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """A write sent on to the primary as it came (the caller's token, its body, the project it
        names); the primary's answer."""
        kept = {k: v for k, v in headers.items() if k in ("authorization", "content-type", "accept")}
        named = headers.get(PROJECT_HEADER)
        params = parse_qsl(query, keep_blank_values=True)
        if not named:
            named = next((v for k, v in params if k == "project"), None)
        project = self._primary_project(named)
        if project:
            kept[PROJECT_HEADER] = project
        query = urlencode([(k, v) for k, v in params if k != "project"])     # one name: the header's
        target = path + ("?" + query if query else "")
        status, got, data = ask_primary(self.primary, target, None, method=method, body=body, headers=kept,
                                        timeout=max(self.timeout, 130.0))
        return status, [(k, v) for k, v in got if k.lower() in ("content-type", "retry-after", "www-authenticate")], data


    def _primary_project(self, named: str | None) -> str | None:
        """The project a forwarded write names on the primary: the one this replica follows when it
        names none or this replica's own folder; else the name as given (the primary decides)."""
        if not named:
            return self.project
        own = {str(self.home.parent), str(self.home)}
        try:
            given = os.path.normpath(os.path.abspath(os.path.expanduser(named)))
            if given in own or os.path.realpath(given) in {os.path.realpath(p) for p in own}:
                return self.project or None
        except (OSError, ValueError):
            pass
        return named


class ForwardWrites:
    """ASGI: a write goes to the primary (``Replica.forward``); everything else to the app."""

    def __init__(self, app: Callable, replica: Replica):
        self.app = app
        self.replica = replica

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or not is_write(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            status, got, data = await asyncio.to_thread(
                self.replica.forward, scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1"),
                headers, b"".join(chunks))
        except MemgroveError as exc:
            from .errors import error_response

            await error_response(exc)(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in got]
                    + [(b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})


def promote(folder: str | Path | None) -> Path:
    """Turn the replica in ``folder`` into a primary: catch up with the remote, name it in
    ``[replication]`` of config.toml, forget the primary. The home."""
    from memgrove.tree.store import ContextTree

    base = Path(folder or ".").expanduser().absolute()
    home = locate_home(base)
    info = replica_info(home)
    if info is None:
        raise ReplicaRefused(f"{home.parent} is not a replica: nothing to promote")
    tree = ContextTree(home, replicate=False)
    try:
        try:
            Follower(tree, str(info["remote"]), str(info.get("branch") or "main")).sync()
        except (GitFailed, OSError) as exc:
            log.warning("promote: could not catch up with %s (%s); serving the commit held", redact(str(info["remote"])), exc)
    finally:
        tree.close()
    set_replication(home, str(info["remote"]), str(info.get("branch") or "main"))
    (home / "replica.json").unlink()
    return home


def set_replication(home: Path, remote: str, branch: str) -> None:
    """Name the remote and branch in ``[replication]`` of config.toml, keeping everything else."""
    cfg = home / "config.toml"
    lines = cfg.read_text(encoding="utf-8").splitlines() if cfg.exists() else []
    mine = [f"remote = {json.dumps(remote)}", f"branch = {json.dumps(branch)}"]
    out, inside, done = [], False, False
    for line in lines:
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            inside = header.group(1).strip() == "replication"
            out.append(line)
            if inside and not done:
                out += mine
                done = True
            continue
        if inside and re.match(r"\s*(remote|branch)\s*=", line):
            continue
        out.append(line)
    if not done:
        out += ["", "[replication]", *mine]
    atomic_write(cfg, "\n".join(out) + "\n")

"""The git commands replication needs, through the git CLI (``subprocess``, each with a timeout).

The repository is ``.memgrove/git``, a bare repository: its history holds ``tree/`` and
``archive/`` (the truth) and nothing derived. Commits are built from content given in
memory (``fast-import``) or from the files (``add`` with a private index, for a catch-up);
a merge is computed without a work tree (``merge-tree --write-tree``, git >= 2.38). Git never
writes into the tree: the caller writes what a pull brings, through the journal.

Every failure is a ``GitFailed`` (the command, its exit status and its last line of error):
replication reports it and retries; it never reaches a writer.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..base.credentials import redact

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
IDENTITY = ("memgrove", "memgrove@localhost")
REMOTE = "origin"
# what of .memgrove/ the repository holds: the tree and the archive, never hidden or temp files
# (temp files start with ".mg-"); indexes, caches, locks, the journal and config stay local
EXCLUDE = "/*\n!/tree/\n!/archive/\n.*\n"


class GitFailed(Exception):
    """A git command failed, timed out, or git is not installed."""


class PushRejected(GitFailed):
    """The remote refused a push that is not a fast-forward: someone else pushed first."""


def quote(path: str) -> str:
    """A path as fast-import reads it (C-style quoting, always)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass(frozen=True)
class Change:
    """One path's difference between two trees (``diff-tree -r``); a sha of zeros is no file."""

    path: str
    old_mode: str
    new_mode: str
    old: str
    new: str


class Git:
    def __init__(self, git_dir: Path, work_tree: Path, timeout: float):
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.timeout = timeout

    def run(self, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (0,),
            index: Path | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_AUTHOR_NAME=IDENTITY[0],
                   GIT_AUTHOR_EMAIL=IDENTITY[1], GIT_COMMITTER_NAME=IDENTITY[0], GIT_COMMITTER_EMAIL=IDENTITY[1])
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")   # never a password prompt
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        cmd = ["git", f"--git-dir={self.git_dir}", f"--work-tree={self.work_tree}", *args]
        try:
            res = subprocess.run(cmd, input=input, capture_output=True, env=env, timeout=timeout or self.timeout)
        except subprocess.TimeoutExpired:
            raise GitFailed(f"git {args[0]} timed out after {timeout or self.timeout:g} s") from None
        except OSError as exc:
            raise GitFailed(f"cannot run git: {exc.strerror or exc}") from None
        if res.returncode not in ok:
            err = res.stderr.decode("utf-8", "replace").strip().splitlines()
            why = next((ln for ln in reversed(err) if ln.startswith(("fatal:", "error:"))), err[-1] if err else "")
            raise GitFailed(redact(f"git {args[0]} failed ({res.returncode}): {why}"))
        return res

    def out(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).stdout.decode("utf-8", "replace").strip()

    # -- the repository ------------------------------------------------------------------
    def ensure(self, url: str, branch: str) -> None:
        """Create the bare repository (once) and point its remote at ``url``."""
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            try:
                subprocess.run(["git", "init", "-q", "--bare", str(self.git_dir)], capture_output=True,
                               timeout=self.timeout, check=True, env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
            except (OSError, subprocess.SubprocessError) as exc:
                raise GitFailed(f"git init failed: {exc}") from None
            self.run("symbolic-ref", "HEAD", f"refs/heads/{branch}")
            self.run("config", "gc.auto", "256")
        exclude = self.git_dir / "info" / "exclude"
        if not exclude.exists() or exclude.read_text() != EXCLUDE:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text(EXCLUDE)
        urls = self.run("config", "--get", f"remote.{REMOTE}.url", ok=(0, 1)).stdout.decode().strip()
        if not urls:
            self.run("remote", "add", REMOTE, url)
        elif urls != url:
            self.run("remote", "set-url", REMOTE, url)

    def ref(self, name: str) -> str | None:
        res = self.run("rev-parse", "--verify", "-q", name + "^{commit}", ok=(0, 1, 128))
        return res.stdout.decode().strip() or None if res.returncode == 0 else None

    def tree_of(self, commit: str | None) -> str:
        return self.out("rev-parse", f"{commit}^{{tree}}") if commit else EMPTY_TREE

    def update_ref(self, ref: str, sha: str) -> None:
        self.run("update-ref", ref, sha)

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        return self.run(*args, input=message.encode("utf-8")).stdout.decode().strip()

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, ok=(0, 1)).returncode == 0

    def has(self, sha: str) -> bool:
        return self.run("cat-file", "-e", f"{sha}^{{commit}}", ok=(0, 1, 128)).returncode == 0

    def subject(self, sha: str) -> tuple[str, str]:
        """(author, subject) of a commit."""
        out = self.out("log", "-1", "--format=%an%x00%s", sha)
        author, _, subject = out.partition("\0")
        return author, subject

    # -- commits -------------------------------------------------------------------------
    def import_commits(self, branch: str, commits: list[tuple[str, dict[str, bytes | None]]]) -> str | None:
        """One commit per ``(message, {path: content or None for removed})``, each on the last, in
        one ``fast-import`` run; the new tip. Nothing touches the files or the index."""
        ref = f"refs/heads/{branch}"
        parent = self.ref(ref)
        stream: list[bytes] = []
        for message, files in commits:
            msg = message.encode("utf-8")
            stream.append(b"commit %s\ncommitter %s <%s> now\ndata %d\n%s\n"
                          % (ref.encode(), IDENTITY[0].encode(), IDENTITY[1].encode(), len(msg), msg))
            if parent:
                stream.append(b"from %s\n" % parent.encode())
                parent = None   # the next commits follow this one on the branch
            for path, data in files.items():
                if data is None:
                    stream.append(b"D " + quote(path).encode("utf-8") + b"\n")
                else:
                    stream.append(b"M 100644 inline " + quote(path).encode("utf-8") + b"\ndata %d\n" % len(data)
                                  + data + b"\n")
            stream.append(b"\n")
        stream.append(b"done\n")
        self.run("fast-import", "--quiet", "--done", "--date-format=now", input=b"".join(stream))
        return self.ref(ref)

    def snapshot_tree(self) -> str:
        """The tree of ``tree/`` and ``archive/`` as they are on disk (a private index keeps the
        files' stats, so only changed files are read again)."""
        index = self.git_dir / "memgrove.index"
        self.run("add", "-A", "--", ".", index=index)    # what info/exclude leaves: tree/ and archive/
        return self.run("write-tree", index=index).stdout.decode().strip()

    # -- the remote ----------------------------------------------------------------------
    def remote_head(self, branch: str) -> str | None:
        out = self.out("ls-remote", REMOTE, f"refs/heads/{branch}")
        return out.split()[0] if out else None

    def point_remote_head(self, url: str, branch: str) -> str | None:
        """A remote whose HEAD names a branch it does not hold (``git init --bare`` names ``master``
        while ``branch`` is pushed): a ``git clone`` of it checks out nothing. A local bare
        repository's HEAD is pointed at ``branch`` (a push cannot move HEAD); for another remote
        the returned line says what to change there. None when HEAD names a branch it holds."""
        out = self.out("ls-remote", "--symref", REMOTE, "HEAD")
        if any(not ln.startswith("ref:") for ln in out.splitlines() if ln.strip()):
            return None                 # HEAD resolves to a commit: a clone checks it out
        local = Path(url[len("file://"):] if url.startswith("file://") else url)
        if "://" not in str(local) and local.is_absolute() and (local / "HEAD").is_file():
            Git(local, local, self.timeout).run("symbolic-ref", "HEAD", f"refs/heads/{branch}")
            return None
        return redact(f"the default branch (HEAD) of the remote {url} is a branch it does not hold: a git clone "
                      f"of it checks out nothing; make {branch} its default branch (memgrove pushes that one)")

    def fetch(self, branch: str) -> None:
        self.run("fetch", "-q", "--no-tags", REMOTE, f"+refs/heads/{branch}:refs/remotes/{REMOTE}/{branch}")

    def push(self, refspecs: list[str]) -> None:
        """Push; a ref the remote refuses as not a fast-forward raises ``PushRejected``."""
        res = self.run("push", "--porcelain", REMOTE, *refspecs, ok=(0, 1, 128))
        if res.returncode == 0:
            return
        rejected = [ln for ln in res.stdout.decode("utf-8", "replace").splitlines() if ln.startswith("!")]
        if rejected and all("rejected" in ln for ln in rejected):
            raise PushRejected("push rejected: the remote has commits this tree does not have yet (merged next)")
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        why = next((ln for ln in err if ln.startswith(("fatal:", "error:"))), err[-1] if err else "")
        raise GitFailed(redact(f"git push failed ({res.returncode}): {why}"))

    def oldest_time(self, since: str | None, until: str) -> int | None:
        """Commit time (unix seconds) of the oldest commit in ``since..until``."""
        out = self.out("log", "--reverse", "--format=%ct", f"{since}..{until}" if since else until)
        return int(out.split("\n", 1)[0]) if out else None

    def count(self, since: str | None, until: str) -> int:
        return int(self.out("rev-list", "--count", f"{since}..{until}" if since else until) or 0)

    # -- merging -------------------------------------------------------------------------
    def merge(self, ours: str | None, theirs: str) -> tuple[str, list[str]]:
        """(merged tree, conflicted paths) of two commits, without a work tree; a conflicted file's
        content in that tree is meaningless (the caller keeps ours)."""
        if ours is None:
            return self.tree_of(theirs), []
        res = self.run("merge-tree", "--write-tree", "--name-only", "-z", "--allow-unrelated-histories",
                       ours, theirs, ok=(0, 1))
        parts = res.stdout.decode("utf-8", "surrogateescape").split("\0")
        tree = parts[0].strip()
        conflicted = []
        if res.returncode == 1:
            for p in parts[1:]:
                if not p:
                    break        # an empty field ends the list of conflicted files
                conflicted.append(p)
        return tree, sorted(set(conflicted))

    def diff(self, a: str, b: str) -> list[Change]:
        out = self.run("diff-tree", "-r", "-z", "--no-renames", a, b).stdout.decode("utf-8", "surrogateescape")
        fields = out.split("\0")
        changes = []
        i = 0
        while i + 1 < len(fields) and fields[i].startswith(":"):
            old_mode, new_mode, old, new, _status = fields[i][1:].split(" ")
            changes.append(Change(fields[i + 1], old_mode, new_mode, old, new))
            i += 2
        return changes

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The contents of blobs, read in one ``cat-file --batch``."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self.run("cat-file", "--batch", input=("\n".join(wanted) + "\n").encode()).stdout
        got, pos = {}, 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            size = int(header[2])
            got[sha] = out[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
        return got

    def tree_with(self, tree: str, paths: dict[str, tuple[str, str] | None]) -> str:
        """``tree`` with these paths set to ``(mode, blob)``, or removed (None)."""
        if not paths:
            return tree
        index = self.git_dir / "memgrove-merge.index"
        try:
            self.run("read-tree", tree, index=index)
            lines = [f"{v[0]} {v[1]}\t{p}" if v else f"0 {'0' * 40}\t{p}" for p, v in paths.items()]
            self.run("update-index", "--index-info", input=("\n".join(lines) + "\n").encode("utf-8"), index=index)
            return self.run("write-tree", index=index).stdout.decode().strip()
        finally:
            index.unlink(missing_ok=True)

    def ls(self, tree: str) -> dict[str, tuple[str, str]]:
        """``{path: (mode, sha)}`` of every file in a tree."""
        out = self.run("ls-tree", "-r", "-z", tree).stdout.decode("utf-8", "surrogateescape")
        found = {}
        for item in out.split("\0"):
            if item:
                meta, _, path = item.partition("\t")
                mode, _kind, sha = meta.split(" ")
                found[path] = (mode, sha)
        return found

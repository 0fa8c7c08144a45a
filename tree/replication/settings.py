"""The ``[replication]`` settings of ``config.toml``: the git remote a primary keeps its tree in.

    [replication]
    remote = "git@example.com:team/memory.git"   # or a path to a bare repository
    push_interval = 5.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import MemgroveError
from ..base.setting_field import setting
from ..settings import load_table


@dataclass(frozen=True)
class ReplicationSettings:
    """The ``[replication]`` table (docs/settings.md)."""

    remote: str = setting("", "Git URL or path of a bare repository the tree is pushed to (\"\" = no replication); "
                              "read replicas clone and follow it.", section="replication")
    branch: str = setting("main", "The remote's branch the tree is kept on.", section="replication")
    push_interval: float = setting(5.0, "Seconds within which a committed batch is pushed; a failed push is retried "
                                        "with backoff (up to 300 s) and reported in /health and doctor.",
                                   section="replication")
    pull_interval: float = setting(5.0, "Seconds between two looks at the remote for commits pushed by others "
                                        "(merged in as journaled PULL operations); a replica follows this often.",
                                   section="replication")
    git_timeout: float = setting(60.0, "Seconds a git command may take before it is given up (and retried).",
                                 section="replication")


def remote_location(remote: str, project: Path) -> str:
    """A remote as git is given it: a relative local path is taken from the project folder."""
    if "://" in remote or re.match(r"^[^/]+:", remote) or Path(remote).is_absolute():
        return remote
    return str((project / remote).resolve())


def load_replication_settings(home: Path | None, **overrides) -> ReplicationSettings:
    s = load_table(home, "replication", ReplicationSettings, overrides)
    assert isinstance(s, ReplicationSettings)
    if min(s.push_interval, s.pull_interval, s.git_timeout) <= 0:
        raise MemgroveError("push_interval, pull_interval and git_timeout must be positive")
    if not s.branch or s.branch.startswith("-") or any(c in s.branch for c in " ~^:?*[\\"):
        raise MemgroveError(f"branch {s.branch!r} is not a valid git branch name")
    if s.remote.startswith("-"):
        raise MemgroveError(f"remote {s.remote!r} is not a git URL or path")
    return s

"""A read replica's tree follows its primary's git remote.

``.memgrove/replica.json`` names the primary, its remote and branch; a tree holding it takes no
batch of its own (``ReadOnlyReplica``): its files come from the remote only. ``Follower.sync``
fetches the remote's tip and writes what changed since the commit served (each file atomically,
checked as a pulled file is: inside ``tree/`` or ``archive/``, no hidden path, no symlink, UTF-8),
then indexes those files as hand edits are indexed (``_index_paths``, or a rebuild when most of
the tree changed) and bumps the generation, all under the writer lock: a search sees the commit
before or after, never half of it. The journal stays the primary's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..writes.archive import is_archived
from ..base.fsio import atomic_write
from .replicator import GIT_DIR
from .git import Git
from .replicated_tree import ReplicatedTree
from .pull import ZERO, journal_path, refusal

REPLICA_FILE = "replica.json"
REBUILD_ABOVE = 2000      # more changed files than this: rebuild the index rather than update it


def replica_info(home: Path) -> dict[str, Any] | None:
    """What ``replica.json`` says (``primary``, ``remote``, ``branch``, ``project``), or None: not a replica."""
    try:
        data = json.loads((home / REPLICA_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"primary": "?", "remote": "", "branch": "main"}   # damaged: still read-only
    return data if isinstance(data, dict) else None


def write_replica_info(home: Path, primary: str, remote: str, branch: str, project: str | None = None) -> None:
    """``project``: the primary's project this replica follows (its folder on the primary's machine)."""
    info = {"primary": primary, "remote": remote, "branch": branch}
    if project:
        info["project"] = project
    atomic_write(home / REPLICA_FILE, json.dumps(info, indent=1))


class Follower:
    def __init__(self, tree: "ReplicatedTree", remote: str, branch: str, timeout: float = 60.0):
        self.tree = tree
        self.branch = branch
        self.git = Git(tree.home / GIT_DIR, tree.home, timeout)
        self.git.ensure(remote, branch)
        self.refused: list[dict[str, str]] = []      # files of the remote this tree could not take

    @property
    def served(self) -> str | None:
        return self.git.ref(f"refs/heads/{self.branch}")

    def remote_tip(self) -> str | None:
        return self.git.remote_head(self.branch)

    def sync(self) -> bool:
        """Bring the tree to the remote's tip; True if anything changed."""
        tip = self.remote_tip()
        served = self.served
        if tip is None or tip == served:
            return False
        self.git.fetch(self.branch)
        changes = self.git.diff(self.git.tree_of(served), self.git.tree_of(tip))
        data = self.git.blobs([c.new for c in changes if c.new != ZERO])
        tree = self.tree
        with tree.lock.hold():
            written: list[str] = []
            for c in changes:
                why = refusal(c, data.get(c.new, b""), tree)
                if why:
                    self.refused.append({"path": c.path, "why": why, "commit": tip})
                    continue
                rel = journal_path(c.path)
                target = tree._abs(rel)
                if c.new == ZERO:
                    try:
                        os.unlink(target)
                    except FileNotFoundError:
                        pass
                    _prune(target.parent, tree.home)
                else:
                    atomic_write(target, data[c.new], durable=False)
                if not is_archived(rel):
                    written.append(rel)
            if len(written) > REBUILD_ABOVE:
                tree._rebuild_locked()
            else:
                tree._index_paths(written)
            tree._bump_generation()
            self.git.update_ref(f"refs/heads/{self.branch}", tip)
        self.refused = self.refused[-20:]
        return True


def _prune(folder: Path, home: Path) -> None:
    """Remove folders a removed file left empty, up to ``tree/`` or ``archive/``."""
    stops = {home / "tree", home / "archive"}
    while folder not in stops and home in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent

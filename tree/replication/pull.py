"""A primary merges commits someone else pushed to its remote, as hand edits are taken in.

Under the writer lock, with the files committed first (so the branch is the files), the remote's
tip is merged with the branch without a work tree (``merge-tree``). What the merge changes is
written through the journal as ``PULL`` operations (undoable, indexed, listed like any write).
A file changed here and on the remote since they parted, or one the tree cannot take (outside
``tree/`` and ``archive/``, hidden, a symlink, not UTF-8 text, too large), is refused: this
tree's version stays, the remote's commit is kept on a branch ``memgrove/conflict-<commit>``
(pushed with the next push) and the report names both. Nothing is lost on either side: the
merge commit has the remote's commit as a parent.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Protocol

from ..writes.archive import PREFIX
from ..base.errors import InvalidPath
from ..writes.journal import JournalRecord, new_op_id, utc_now_iso
from ..writes.op_shapes import OpResult, Planned
from ..entries.paths import is_entry_file, resolve_inside
from ..base.credentials import redact
from .git import REMOTE, Change

from .git import Git
from .replicated_tree import ReplicatedTree
from .settings import ReplicationSettings


class Puller(Protocol):
    """What a pull uses of the replicator that runs it (``Replicator``, which imports this module)."""
    git: Git
    settings: ReplicationSettings
    tree: ReplicatedTree
    _seen_gen: int

    def catch_up_locked(self) -> Any: ...

ZERO = "0" * 40
CONFLICT_BRANCH = "memgrove/conflict-"


def pull(rep: "Puller") -> dict[str, Any] | None:
    """Merge the remote's new commits, if any; a conflict report, or None."""
    git, branch = rep.git, rep.settings.branch
    remote = git.remote_head(branch)
    if remote is None:
        return None                        # an empty remote: the next push creates the branch
    tracking_ref = f"refs/remotes/{REMOTE}/{branch}"
    head = git.ref(f"refs/heads/{branch}")
    if remote == git.ref(tracking_ref):
        return None
    if head and git.has(remote) and git.is_ancestor(remote, head):
        git.update_ref(tracking_ref, remote)    # ours already holds it (our own push, seen again)
        return None
    git.fetch(branch)
    with rep.tree._writing():
        rep.catch_up_locked()              # the branch is the files now: a merge sees our changes
        head = git.ref(f"refs/heads/{branch}")
        if head and git.is_ancestor(remote, head):
            return None
        return _merge_locked(rep, head, remote)


def _merge_locked(rep: "Puller", head: str | None, remote: str) -> dict[str, Any] | None:
    git, tree, branch = rep.git, rep.tree, rep.settings.branch
    merged, conflicted = git.merge(head, remote)
    ours_tree = git.tree_of(head)
    changes = git.diff(ours_tree, merged)
    refused: dict[str, str] = {c: "changed here and on the remote" for c in conflicted}
    data = git.blobs([c.new for c in changes if c.new != ZERO and c.path not in refused])
    author, subject = git.subject(remote)
    now = datetime.now(timezone.utc)
    planned: list[Planned] = []
    for c in changes:
        if c.path in refused:
            continue
        why = refusal(c, data.get(c.new, b""), tree)
        if why:
            refused[c.path] = why
            continue
        rel = journal_path(c.path)
        after = data[c.new].decode("utf-8") if c.new != ZERO else None
        before = tree._read_disk(rel)
        if before == after:
            continue
        rec = JournalRecord(id=new_op_id(now), at=utc_now_iso(now), op="PULL", path=rel,
                            reason=f"pulled from {redact(rep.settings.remote)}: commit {remote[:12]} by "
                                   f"{author}: {' '.join(subject.split())[:200]}",
                            actor="git", before=before, after=after)
        entry = is_entry_file(rel)
        planned.append(Planned(record=rec, result=OpResult("PULL", rel, "pulled", f"pulled {rel} ({remote[:12]})", rec.id),
                               updated=[rel] if entry and after is not None else [],
                               removed=[rel] if entry and after is None else []))
    final = merged
    if refused:
        ours = git.ls(ours_tree)
        final = git.tree_with(merged, {p: ours.get(p) for p in refused})
    if planned:
        tree._apply(planned)
    if head is None or (not refused and final == git.tree_of(remote) and git.is_ancestor(head, remote)):
        new = remote                       # a fast-forward
    else:
        new = git.commit_tree(final, [head, remote], f"memgrove: merged {remote[:12]} from the remote "
                                                     f"({len(planned)} file(s) taken, {len(refused)} refused)\n")
    git.update_ref(f"refs/heads/{branch}", new)
    rep._seen_gen = tree._generation()
    if not refused:
        return None
    kept = CONFLICT_BRANCH + remote[:12]
    git.update_ref(f"refs/heads/{kept}", remote)
    paths = sorted(refused)
    shown = ", ".join(f"{p} ({refused[p]})" for p in paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "remote_commit": remote, "branch": kept,
            "paths": [{"path": p, "why": refused[p]} for p in paths], "pushed": False,
            "message": f"refused {len(paths)} file(s) of the remote's commit {remote[:12]} by {author}: {shown}; "
                       f"this tree's version is kept, the remote's is on branch {kept}"}


def journal_path(path: str) -> str:
    """``tree/a/b.md`` -> ``a/b.md``; ``archive/a/b.md`` -> ``@archive/a/b.md``."""
    top, _, rel = path.partition("/")
    return PREFIX + rel if top == "archive" else rel


def refusal(c: Change, data: bytes, tree: Any) -> str | None:
    """Why the tree cannot take this change of the remote's, or None."""
    top, _, rel = c.path.partition("/")
    if top not in ("tree", "archive") or not rel:
        return "outside tree/ and archive/"
    if any(not p or p.startswith(".") or p == ".." for p in rel.split("/")):
        return "a hidden or invalid path"
    if c.new != ZERO:
        if c.new_mode not in ("100644", "100755"):
            return "not a plain file (a symlink or a submodule)"
        if len(data) > tree.settings.max_input_bytes:
            return f"larger than max_input_bytes ({tree.settings.max_input_bytes})"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "not UTF-8 text"
    try:
        resolve_inside(*tree._base(journal_path(c.path)))
    except InvalidPath:
        return "it resolves outside the tree"
    return None

"""A small project served by ``memgrove serve`` for the web page's browser tests and screenshots.

    folder = seed(tmp / "project", hostile=hostile_pages())   # the sample, review items, hostile
    srv = start_server(folder)                                # helpers/memgrove_server.py
    sign_in(browser, srv.url, srv.token)

The bundled sample (a team conversation and three notes: realistic content), a few operations
facts, two near-duplicate merges waiting in the review queue (one to approve, one to reject), an
entry to undo, and, for the safety tests, the hostile corpus as entries under ``hostile/corpus/``.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any, Sequence

from memgrove import Memory
from memgrove.sample import sample_dir
from memgrove.tree.hygiene import review
from memgrove.tree.hygiene.findings import Candidate

WAIT = 20.0          # seconds a page or a part of it may take to show up on a busy machine

FACTS = [
    ("ops/backups/nightly.md", "Nightly backups", "Backups run nightly at 02:00.", ["backups"]),
    ("ops/backups/every_night.md", "Backups every night", "Backups run every night at 02:00 UTC, kept 30 days.",
     ["backups", "retention"]),
    ("ops/deploys/friday.md", "No Friday deploys", "No deploys on Fridays.", ["deploys"]),
    ("ops/deploys/no_friday.md", "Never deploy on a Friday", "We never deploy on a Friday; hotfixes excepted.",
     ["deploys", "policy"]),
    ("ops/oncall/rotation.md", "On-call rotation", "The on-call rotation changes every Monday at 09:00.",
     ["oncall"]),
    ("ops/scratch/undo_me.md", "A note added by mistake", "This note was added by mistake and will be undone.",
     ["scratch"]),
]
APPROVE = ("ops/backups/every_night.md", "ops/backups/nightly.md")      # (kept, merged into it)
REJECT = ("ops/deploys/no_friday.md", "ops/deploys/friday.md")
UNDO = "ops/scratch/undo_me.md"
HOSTILE_FOLDER = "hostile/corpus"


def merge(kept: str, dup: str) -> Candidate:
    return Candidate("near_duplicate", (kept, dup), "MERGE",
                     ({"op": "MERGE", "path": dup, "merge_into": kept, "reason": "nearly the same"},),
                     "high lexical overlap", 0.82, {"overlap": 0.9})


def hostile_path(page: dict[str, Any]) -> str:
    return f"{HOSTILE_FOLDER}/{page['name']}.md"


def seed(folder: Path, *, hostile: Sequence[dict[str, Any]] = (), with_review: bool = True) -> Path:
    """``folder`` as a memgrove project holding the content above; returns ``folder``."""
    with Memory.open(folder, create=True, durable=False) as mem:
        _ingest_sample(mem, folder)
        mem.curate([{"op": "ADD", "path": p, "title": t, "content": c, "tags": tags, "reason": "seeded for the page"}
                    for p, t, c, tags in FACTS])
        if hostile:
            mem.curate([{"op": "ADD", "path": hostile_path(h), "title": h["title"], "content": h["body"],
                         "tags": h["tags"], "reason": "hostile corpus"} for h in hostile])
        if with_review:
            review.queue(mem.tree, merge(*APPROVE), proposed_by="dream")
            review.queue(mem.tree, merge(*REJECT), proposed_by="model")
    return folder


def _ingest_sample(mem: Memory, folder: Path) -> None:
    """The bundled sample, copied into the project and ingested by relative paths: the entries'
    sources read ``sample/notes/auth_design.md#...``, not this machine's site-packages."""
    shutil.copytree(sample_dir(), folder / "sample", dirs_exist_ok=True)
    with contextlib.chdir(folder):          # before the server starts: no other thread here yet
        mem.ingest(conversation=Path("sample/conversation.json"), files=sorted(Path("sample/notes").glob("*.md")))


def review_ids(folder: Path) -> dict[str, str]:
    """The pending items' ids by the entry each would merge away."""
    with Memory.open(folder) as mem:
        return {str(i.candidate["paths"][1]): i.id for i in review.pending(mem.tree)}


def sign_in(driver: Any, base: str, token: str | None) -> None:
    """Sign ``driver`` in at ``base`` with ``token`` through the sign-in form (nothing when it is)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{base}/ui/tree")
    if "/ui/login" not in driver.current_url:
        return
    box = driver.find_element(By.ID, "token")
    box.clear()
    box.send_keys(token or "")
    box.submit()
    WebDriverWait(driver, WAIT).until(EC.url_contains("/ui/tree"))

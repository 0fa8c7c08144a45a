"""The Review view: every pending change with what it would change (before/after, planned and
written nowhere), and dream's runs with what each did and whether it can be undone."""

from __future__ import annotations

from typing import Any

from memgrove.tree.hygiene import dream_state, review

from .changes_view import diff

RUNS = 20            # the newest runs shown
RUN_ROWS = 20        # of each, the findings listed (the rest counted)
PAGE_ITEMS = 50      # pending items a page lists
OPEN = 10            # of those, the first with what they would change planned at once; the rest when opened


def row(item: Any) -> dict[str, Any]:
    c = item.candidate
    return {"id": item.id, "kind": str(c.get("kind", "")), "action": str(c.get("action", "")),
            "reason": str(c.get("reason", "")), "confidence": c.get("confidence"),
            "paths": [str(p) for p in c.get("paths", [])][:10], "proposed_by": item.proposed_by,
            "created": item.created, "run": item.run or "", "diffs": None, "error": None}


def planned(mem: Any, item: Any) -> dict[str, Any]:
    """What approving ``item`` would write, as diffs (``review.preview``: planned, written nowhere)."""
    got = review.preview(mem.tree, item)
    return {"diffs": [diff(ch["before"], ch["after"], ch["path"]) for ch in got["changes"]], "error": got["error"]}


def items(mem: Any, page: int = 0) -> dict[str, Any]:
    """A page of the queue, oldest first; the first ``OPEN`` with their diffs. The queue is
    ``Memory.review``'s (a read replica's is its primary's), planned against the files here."""
    queue = [review.ReviewItem.from_dict(d) for d in mem.review()]
    page = max(0, page)
    rows = []
    for n, item in enumerate(queue[page * PAGE_ITEMS:(page + 1) * PAGE_ITEMS]):
        r = row(item)
        if n < OPEN:
            r.update(planned(mem, item))
        rows.append(r)
    return {"rows": rows, "total": len(queue), "page": page, "more": (page + 1) * PAGE_ITEMS < len(queue)}


def one(mem: Any, item_id: str) -> dict[str, Any]:
    item = review.ReviewItem.from_dict(mem.review_show(item_id))
    return row(item) | planned(mem, item)


def runs(mem: Any, limit: int = RUNS) -> list[dict[str, Any]]:
    """The newest dream runs: when, status, what each candidate came to, the operations applied."""
    home = mem.tree.home
    out = []
    for rid in reversed(dream_state.run_ids(home)[-limit:]):
        try:
            run = dream_state.load_run(home, rid)
        except Exception:  # noqa: BLE001 - an unreadable run file is shown as such, not a failed page
            out.append({"run": rid, "status": "unreadable", "candidates": [], "applied": [], "started": ""})
            continue
        cands = run.get("candidates") or []
        out.append({"run": rid, "status": str(run.get("status", "")), "started": str(run.get("started", "")),
                    "applied": list(run.get("applied") or []),
                    "undone": run.get("status") == "undone",
                    "candidates": [{"kind": str(c.get("kind", "")), "action": str(c.get("action", "")),
                                    "status": str(c.get("status", "")), "reason": str(c.get("reason", "")),
                                    "paths": [str(p) for p in c.get("paths", [])][:6]} for c in cands[:RUN_ROWS]],
                    "more": max(0, len(cands) - RUN_ROWS)})
    return out


def page(mem: Any, page_no: int = 0) -> dict[str, Any]:
    return {"pending": items(mem, page_no), "runs": runs(mem)}


def decided(how: str, what: str, out: dict[str, Any]) -> str:
    """The notice after approving or rejecting: what was applied, left in conflict, dropped."""
    if how == "reject":
        return f"rejected {len(out.get('rejected', []))} change(s) ({what}); dream will not propose them again"
    parts = [f"approved {what}: {len(out.get('applied', []))} applied"]
    for key, label in (("conflicts", "in conflict (files changed since)"), ("failed", "failed"),
                       ("obsolete", "no longer apply")):
        if out.get(key):
            parts.append(f"{len(out[key])} {label}")
    return ", ".join(parts)


def dreamt(out: dict[str, Any]) -> str:
    counts = out.get("counts") or {}
    applied = len(out.get("applied") or [])
    queued = sum(v.get("queued", 0) for v in counts.values() if isinstance(v, dict))
    return f"dream run {out.get('run')}: {len(out.get('candidates') or [])} finding(s), {applied} operation(s) " \
           f"applied, {queued} queued for review"

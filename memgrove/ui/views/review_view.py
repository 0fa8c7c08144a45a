"""The Review view: every pending change with what it would change (before/after, planned and
written nowhere), and dream's runs with what each did and whether it can be undone."""

from __future__ import annotations

from typing import Any

from memgrove.tree.hygiene import dream_state, review

from .changes_view import diff

RUNS = 20            # the newest runs shown
ITEMS = 200          # pending items shown with their diffs (the queue is listed in full below that)


def items(mem: Any) -> list[dict[str, Any]]:
    tree = mem.tree
    out = []
    for n, item in enumerate(review.pending(tree)):
        c = item.candidate
        row = {"id": item.id, "kind": str(c.get("kind", "")), "action": str(c.get("action", "")),
               "reason": str(c.get("reason", "")), "confidence": c.get("confidence"),
               "paths": [str(p) for p in c.get("paths", [])][:10], "proposed_by": item.proposed_by,
               "created": item.created, "run": item.run or "", "ops": [dict(o) for o in item.ops][:20],
               "diffs": [], "error": None}
        if n < ITEMS:
            planned = review.preview(tree, item)
            row["diffs"] = [diff(ch["before"], ch["after"], ch["path"]) for ch in planned["changes"]]
            row["error"] = planned["error"]
        out.append(row)
    return out


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
                                    "paths": [str(p) for p in c.get("paths", [])][:6]} for c in cands[:100]],
                    "more": max(0, len(cands) - 100)})
    return out


def page(mem: Any) -> dict[str, Any]:
    return {"pending": items(mem), "runs": runs(mem)}


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

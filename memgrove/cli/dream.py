"""``memgrove dream`` and ``memgrove review``: thin commands over ``Memory.dream`` and the
``Memory.review*`` methods (tree/hygiene/dream.py, tree/hygiene/review.py). Listed in ``COMMANDS`` for the group
(``memgrove/cli/app.py``) to add."""

from __future__ import annotations

from typing import Any

import click

from memgrove.cli.common import State, emit_json, json_option, with_global_options, wrap
from memgrove.terminal import echo, safe

_KIND_ORDER = ("duplicate", "near_duplicate", "superseded", "link", "archive", "curate")


@click.command()
@click.option("--dry-run", is_flag=True, help="Only scan: list the candidates, change nothing.")
@click.option("--undo", "undo", is_flag=False, flag_value="", default=None, metavar="[RUN]",
              help="Revert a run instead (default: the newest run).")
@click.option("--force", is_flag=True, help="With --undo: revert even if files changed since (kept in the journal).")
@click.option("--with-approved", is_flag=True,
              help="With --undo: also revert what was approved in review from the run's proposals.")
@click.option("--no-model", is_flag=True, help="Do not ask the model even when one is configured: queue instead.")
@json_option
@click.pass_obj
def dream(state: State, dry_run: bool, undo: str | None, force: bool, with_approved: bool, no_model: bool,
          as_json: bool) -> None:
    """Clean the memory: merge exact duplicates, add missing links, ask the model (if configured)
    about near duplicates and superseded facts, queue the rest for `memgrove review`."""
    mem = state.memory()
    if undo is not None:
        out = mem.dream(undo=undo or True, force=force, with_approved=with_approved)
        if as_json:
            emit_json(out)
        else:
            echo(_undo_text(out))
        return
    if with_approved:
        raise click.UsageError("--with-approved goes with --undo")
    out = mem.dream(dry_run=dry_run) if not no_model else mem.dream(dry_run=dry_run, use_model=False)
    if as_json:
        emit_json(out)
        return
    echo(_dream_text(out))


def _undo_text(out: dict[str, Any]) -> str:
    how = ", interrupted" if out.get("interrupted") else ""
    line = (f"undid dream run {out['run']} (started {out.get('started') or '?'}{how}): "
            f"{out.get('operations', len(out['undo']))} operation(s) reverted")
    if out.get("approved"):
        line += f", {len(out['approved'])} of them approved in review from its proposals"
    line += ", every file as before them"
    kept = out.get("approved_kept") or []
    if kept:
        line += (f"\n{len(kept)} operation(s) approved in review from its proposals are kept ({', '.join(kept)}): "
                 f"memgrove dream --undo {out['run']} --with-approved reverts them")
    return safe(line)


def _dream_text(out: dict[str, Any]) -> str:
    counts = out.get("counts") or {}
    if not counts:
        return "nothing to do: no duplicates, superseded facts, missing links or archive candidates found"
    head = "dry run (nothing changed)" if out.get("dry_run") else f"dream run {out['run']}"
    lines = [head, f"{'kind':<16}{'found':>7}{'applied':>9}{'queued':>8}"]
    for kind in sorted(counts, key=lambda k: (_KIND_ORDER.index(k) if k in _KIND_ORDER else 99, k)):
        c = counts[kind]
        lines.append(f"{kind:<16}{c['found']:>7}{c['applied']:>9}{c['queued']:>8}")
    applied = len(out.get("applied") or [])
    queued = sum(c["queued"] for c in counts.values())
    if not out.get("dry_run"):
        tail = [f"{applied} operation(s) applied" + (f" (revert: memgrove dream --undo {out['run']})" if applied else "")]
        if queued:
            tail.append(f"{queued} waiting for review (memgrove review)")
        if out.get("budget_hit"):
            tail.append("the time budget ran out (setting dream_budget_s): the rest was queued")
        failed = [r for r in out["candidates"] if r["status"] == "failed"]
        if failed:
            tail.append(f"{len(failed)} could not be applied (see --json)")
        lines.append("; ".join(tail))
    return "\n".join(safe(line) for line in lines)


class _ReviewGroup(click.Group):
    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        with_global_options(cmd)
        super().add_command(cmd, name)


@click.group(cls=_ReviewGroup, invoke_without_command=True)
@json_option
@click.pass_context
def review(ctx: click.Context, as_json: bool) -> None:
    """The review queue: changes dream or a model proposed that wait for you (list them; show,
    approve or reject one, or --all)."""
    if ctx.invoked_subcommand is not None:
        return
    items = ctx.obj.memory().review()
    if as_json:
        emit_json(items)
        return
    if not items:
        echo("nothing waits for review")
        return
    for item in items:
        echo(_item_line(item))
        click.echo(click.style(wrap(item["candidate"].get("reason", ""), 4), dim=True))
    echo(f"{len(items)} pending: memgrove review show ID, approve ID|--all, reject ID|--all")


def _item_line(item: dict[str, Any]) -> str:
    c = item["candidate"]
    conf = c.get("confidence")
    sure = f", confidence {conf:.2f}" if isinstance(conf, (int, float)) else ""
    return (f"{item['id']}  {c.get('kind', '?')} {c.get('action', '?')}  {', '.join(c.get('paths', []))}"
            f"  (by {item.get('proposed_by', '?')}{sure})")


@review.command("show")
@click.argument("item_id", metavar="ID")
@json_option
@click.pass_obj
def review_show(state: State, item_id: str, as_json: bool) -> None:
    """Show one pending change: what it would do and why."""
    item = state.memory().review_show(item_id)
    if as_json:
        emit_json(item)
        return
    echo(_item_line(item))
    c = item["candidate"]
    echo(f"proposed {item.get('created', '')}" + (f" by dream run {item['run']}" if item.get("run") else ""))
    echo(f"reason: {c.get('reason', '')}")
    for op in c.get("ops", []):
        target = op.get("merge_into") or op.get("by") or ", ".join(op.get("related", []) or [])
        echo(f"  {op.get('op')} {op.get('path')}" + (f" -> {target}" if target else ""))
    if c.get("evidence"):
        echo(f"evidence: {c['evidence']}")


def _decide(state: State, verb: str, item_id: str | None, all_items: bool) -> dict[str, Any]:
    if bool(item_id) == all_items:
        raise click.UsageError(f"give one ID to {verb}, or --all")
    mem = state.memory()
    fn = mem.review_approve if verb == "approve" else mem.review_reject
    return fn(item_id, all=all_items)


@review.command("approve")
@click.argument("item_id", metavar="ID", required=False)
@click.option("--all", "all_items", is_flag=True, help="Approve every pending change.")
@json_option
@click.pass_obj
def review_approve(state: State, item_id: str | None, all_items: bool, as_json: bool) -> None:
    """Apply a pending change (or --all) as one journaled batch; refused if its files changed since."""
    out = _decide(state, "approve", item_id, all_items)
    if as_json:
        emit_json(out)
        return
    for a in out["applied"]:
        echo(f"approved {a['id']}: " + ", ".join(f"{r['op']} {r['path']} {r['status']}" for r in a["results"]))
    for c in out["conflicts"]:
        echo(f"conflict: {c['message']}")
    for f in out["failed"]:
        echo(f"not applied {f['id']}: {'; '.join(f['errors'])}")
    for o in out.get("obsolete", []):
        echo(f"dropped {o['id']}: {o['message']}")
    if not (out["applied"] or out["conflicts"] or out["failed"] or out.get("obsolete")):
        echo("nothing waits for review")


@review.command("reject")
@click.argument("item_id", metavar="ID", required=False)
@click.option("--all", "all_items", is_flag=True, help="Reject every pending change.")
@json_option
@click.pass_obj
def review_reject(state: State, item_id: str | None, all_items: bool, as_json: bool) -> None:
    """Drop a pending change (or --all); dream does not propose it again."""
    out = _decide(state, "reject", item_id, all_items)
    if as_json:
        emit_json(out)
        return
    echo(f"rejected {len(out['rejected'])} change(s); dream will not propose them again"
         if out["rejected"] else "nothing waits for review")


# what the group (memgrove/cli/app.py) adds
COMMANDS = [dream, review]

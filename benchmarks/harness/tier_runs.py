"""Measuring the query tiers: the realized tier of an answer, the interleaved rounds of questions and their
records, the per-tier and per-kind summaries of them, the engine of a memory about to be created, and cold
``memgrove query`` processes."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from harness.stats import summary_ms, timed

Call = tuple[str, str, "dict[str, Any] | None"]   # (kind, question, the entry it was made from)


def label_of(a: Any) -> str:
    """The realized tier of an answer: "0", "1", "2", "ood", "3", "4"."""
    if a.out_of_domain:
        return "ood"
    return str(a.tier)


def timed_query(mem: Any, q: str) -> tuple[Any, float]:
    """``mem.query(q)`` and its wall time in seconds."""
    return timed(lambda: mem.query(q))


def rounds(qs: Any, meas: list[dict[str, Any]], per: int, lag: int,
           extra: Callable[[int], list[Call]] = lambda i: []) -> Iterator[tuple[int, list[Call]]]:
    """Round i's calls: fresh tier-2 question i (tier 2 expected), question i - ``lag`` again (tier 0) and
    reworded (``qs.reword``: tier 1), and ``extra(i)``'s; the order rotated by i, so noise hits every kind alike."""
    for i in range(per + lag):
        calls: list[Call] = []
        if i < per:
            calls.append(("tier2", meas[i]["q"], meas[i]))
        if i >= lag:
            p = meas[i - lag]
            calls.append(("repeat", p["q"], p))
            rq, how = qs.reword(p, i - lag)
            calls.append(("reword:" + how, rq, p))
        calls += extra(i)
        r = i % len(calls)
        yield i, calls[r:] + calls[:r]


def record(kind: str, a: Any, wall: float, src: dict[str, Any] | None = None) -> dict[str, Any]:
    """One answer of a stream: its kind, realized tier, wall and reported ms; for a tier-2 question, whether
    the entry it was made from is the answer's first source, and among its sources."""
    rec = {"kind": kind, "tier": label_of(a), "wall_ms": wall * 1000, "latency_ms": a.latency_ms, "cached": a.cached}
    if kind == "tier2" and src is not None:
        rec["right_entry"] = bool(a.sources) and a.sources[0] == src["entry"]
        rec["in_sources"] = src["entry"] in a.sources
    return rec


def create_memory(tmp: Path, cfg: dict[str, Any], out: dict[str, Any]) -> Any:
    """A new memory in ``tmp`` (``durable=False``), its full-text engine ``cfg["engine"]`` when given (in its
    ``config.toml``, so every process that opens it, cold ones included, uses the same); ``out["engine"]`` names
    the engine it got."""
    from memgrove import Memory

    if cfg.get("engine"):
        (tmp / ".memgrove").mkdir(parents=True, exist_ok=True)
        (tmp / ".memgrove" / "config.toml").write_text(f'[tree]\nengine = "{cfg["engine"]}"\n', encoding="utf-8")
    mem = Memory.open(tmp, create=True, durable=False)
    out["engine"] = mem.tree.engine.name
    return mem


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict]] = collections.defaultdict(list)
    by_tier: dict[str, list[dict]] = collections.defaultdict(list)
    for r in records:
        by_kind[r["kind"]].append(r)
        by_tier[r["tier"]].append(r)
    order = ["0", "1", "2", "ood", "3", "4"]
    tiers = {t: {"wall_ms": summary_ms([r["wall_ms"] / 1000 for r in by_tier[t]]),
                 "reported_ms": summary_ms([r["latency_ms"] / 1000 for r in by_tier[t]]),
                 "from_kinds": dict(collections.Counter(r["kind"] for r in by_tier[t]))}
             for t in order if by_tier.get(t)}
    kinds = {}
    for k, rs in sorted(by_kind.items()):
        mix = collections.Counter(r["tier"] for r in rs)
        kinds[k] = {"n": len(rs), "mix": {t: mix[t] for t in order if mix[t]},
                    "wall_ms": summary_ms([r["wall_ms"] / 1000 for r in rs])}
        if k == "tier2":
            t2 = [r for r in rs if r["tier"] == "2"]
            kinds[k]["right_entry_first"] = sum(r["right_entry"] for r in t2)
            kinds[k]["right_entry_in_sources"] = sum(r["in_sources"] for r in t2)
            kinds[k]["answered_at_tier2"] = len(t2)
    # all rewordings together
    rw = [r for r in records if r["kind"].startswith("reword:")]
    if rw:
        mix = collections.Counter(r["tier"] for r in rw)
        kinds["reword (all)"] = {"n": len(rw), "mix": {t: mix[t] for t in order if mix[t]},
                                 "wall_ms": summary_ms([r["wall_ms"] / 1000 for r in rw])}
    return {"by_tier": tiers, "by_kind": kinds, "queries": len(records)}


def _env() -> dict[str, str]:
    # PYTHONPATH stays: under the tests it carries their site (tests/helpers/engine_site), without which
    # a cold process would rank (engine, semantic_weight) otherwise than the process that built the tree
    return {k: v for k, v in os.environ.items() if k not in ("MEMGROVE_MODEL", "MEMGROVE_HOME")}


def child(argv: list[str], env: dict[str, str] | None = None) -> tuple[str, float]:
    """Run ``argv`` as a fresh process in the temp folder: (its stdout, its seconds). A failure raises with the end
    of its stderr."""
    r, el = timed(lambda: subprocess.run(argv, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True))
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])}... failed ({r.returncode}): {r.stderr.strip()[-600:]}")
    return r.stdout, el


def _cli() -> str:
    exe = Path(sys.executable).parent / "memgrove"
    return str(exe) if exe.exists() else (shutil.which("memgrove") or "memgrove")


def cold_runs(tmp: Path, cached_q: str, fresh: list[str], runs: int) -> dict[str, Any]:
    env, py, cli = _env(), sys.executable, _cli()
    times: dict[str, list[float]] = {k: [] for k in ("python_pass", "import_cli", "cli_tier0", "cli_tier2")}
    inner: dict[str, list[float]] = {"cli_tier0": [], "cli_tier2": []}
    seen: dict[str, collections.Counter] = {"cli_tier0": collections.Counter(), "cli_tier2": collections.Counter()}
    for k in range(runs):
        calls = [("python_pass", [py, "-c", "pass"]), ("import_cli", [py, "-c", "import memgrove.cli"]),
                 ("cli_tier0", [cli, "--root", str(tmp), "query", cached_q, "--json"])]
        if k < len(fresh):
            calls.append(("cli_tier2", [cli, "--root", str(tmp), "query", fresh[k], "--json"]))
        r = k % len(calls)
        for key, argv in calls[r:] + calls[:r]:
            stdout, el = child(argv, env)
            if key.startswith("cli_"):
                a = json.loads(stdout)
                tier = "ood" if a.get("out_of_domain") else str(a["tier"])
                seen[key][tier] += 1
                want = "0" if key == "cli_tier0" else "2"
                if tier != want:
                    continue
                inner[key].append(a["latency_ms"] / 1000)
            times[key].append(el)
    out: dict[str, Any] = {k: summary_ms(v) for k, v in times.items()}
    for k in inner:
        out[k]["reported_latency"] = summary_ms(inner[k])
        out[k]["tiers"] = dict(seen[k])
    out["runs"] = runs
    out["cli"] = cli
    return out

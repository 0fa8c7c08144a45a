"""The suite's command line: sections, budgets, the report and the exit status."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import report
from .common import REPO, SectionResult

SECTIONS = ("concurrency", "crashes", "faults", "hostile", "fuzz", "server_kills", "server_disk", "slow_clients", "hostile_served",
            "dropped", "dream_crash", "unauth_flood", "remote_client", "embed_backlog",
            "fork_safety")
# --quick: every section at a size that runs in well under a minute in all (the test's settings). Its
# time bound is 10x the full run's: the quick run sits inside `make test`, beside other test workers
# on a loaded machine (an MCP call that takes 0.3 s alone took 6.1 s there), so it catches a hang or
# work that grows with the square of the input, and `make reliability` holds the tight bound
QUICK = {"slow": 20.0, "conc_seconds": 1.0, "conc_k": [2], "conc_sweep": 10, "kills": 20, "reindex_kills": 0,
         "hostile_cases": 24, "case_timeout": 2.5, "fuzz_examples": 5, "fault_damage": ["garbage"],
         "fault_targets": ["signals.db", "journal/pending.json"], "fault_extras": False,
         "server_rounds": 2, "dropped_memories": 60, "server_disk_seconds": 2.0, "slow_half_sent": 50,
         "slow_silent": 10, "slow_trickling": 5, "slow_extra": 10, "slow_header_timeout": 2.0,
         "slow_body_timeout": 3.0, "dream_trials": 2, "dream_notes": 45, "flood_sockets": 100, "flood_clients": 8,
         "flood_seconds": 2.0, "flood_baseline": 0.0, "remote_timeout": 1.0, "remote_calls": ["search", "curate", "store"],
         "backlog_entries": 60, "backlog_clients": 8, "backlog_seconds": 1.0, "backlog_turns": 1,
         "fork_forks": 3, "fork_load_rounds": 1, "fork_backlog": 24}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reliability", description=__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="every section small: < 60 s in all")
    p.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    p.add_argument("--out", type=Path, default=REPO / "reliability" / "report",
                   help="report prefix: writes PREFIX.md and PREFIX.json")
    p.add_argument("--no-write", action="store_true", help="print the report, write nothing")
    p.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir, removed)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    g = p.add_argument_group("concurrency")
    g.add_argument("--conc-seconds", type=float, default=15.0, help="length of each round")
    g.add_argument("--conc-k", type=int, nargs="+", default=[2, 4, 8], help="writer processes per round")
    g.add_argument("--conc-modes", nargs="+", choices=("lib", "cli"), default=["lib", "cli"])
    g.add_argument("--conc-sweep", type=int, default=150, help="markers asked again after each round")
    g.add_argument("--max-wait", type=float, default=10.0, help="longest acceptable wait of one writer op (s)")
    g = p.add_argument_group("crashes")
    g.add_argument("--kills", type=int, default=500, help="SIGKILLs of curate/merge/delete/undo/doctor children")
    g.add_argument("--reindex-kills", type=int, default=12, help="SIGKILLs of reindexes of the large tree")
    g.add_argument("--reindex-files", type=int, default=2100, help="files of the large tree (>= 2000: workers)")
    g.add_argument("--lock-bound", type=float, default=5.0, help="seconds a fresh writer may wait after a kill")
    g = p.add_argument_group("faults")
    g.add_argument("--fault-timeout", type=float, default=40.0, help="seconds any one command may take")
    g.add_argument("--fault-damage", nargs="+", default=["deleted", "garbage", "empty"],
                   choices=("deleted", "garbage", "empty"))
    g.add_argument("--disk-mb", type=int, default=12, help="size of the tmpfs for the disk-full case")
    g.add_argument("--fault-targets", nargs="+", default=None, help="derived files to damage (default: all)")
    g.add_argument("--no-fault-extras", dest="fault_extras", action="store_false",
                   help="skip old catalog schema, bad settings, damaged journal line, stale pending.json")
    g = p.add_argument_group("hostile")
    g.add_argument("--hostile-cases", type=int, default=0, help="cases to run (0: all of the corpus)")
    g.add_argument("--case-timeout", type=float, default=3.0, help="a case is killed after this many seconds")
    g.add_argument("--slow", type=float, default=2.0, help="a case taking longer is a failure")
    g.add_argument("--hostile-only", nargs="+", default=None, metavar="CASE_ID",
                   help="run only these cases (ids as the report gives them, e.g. api_search:long_token)")
    g = p.add_argument_group("server_kills")
    g.add_argument("--server-rounds", type=int, default=12, help="SIGKILLs of memgrove serve under load")
    g.add_argument("--server-clients", type=int, default=4, help="writer threads per round")
    g = p.add_argument_group("server_disk")
    g.add_argument("--server-disk-mb", type=int, default=8, help="size of the served project's tmpfs")
    g.add_argument("--server-disk-seconds", type=float, default=6.0, help="length of each phase")
    g.add_argument("--server-disk-writers", type=int, default=2, help="writer threads")
    g = p.add_argument_group("slow_clients")
    g.add_argument("--slow-half-sent", type=int, default=200, help="connections that never finish their headers")
    g.add_argument("--slow-silent", type=int, default=50, help="connections that send nothing")
    g.add_argument("--slow-trickling", type=int, default=20, help="bodies sent a byte a second")
    g.add_argument("--slow-extra", type=int, default=40, help="connections past max_connections")
    g.add_argument("--slow-header-timeout", type=float, default=4.0, help="the server's header_timeout here")
    g.add_argument("--slow-body-timeout", type=float, default=8.0, help="the server's body_timeout here")
    g = p.add_argument_group("unauth_flood")
    g.add_argument("--flood-sockets", type=int, default=250, help="half-sent sockets without a token, reopened when cut")
    g.add_argument("--flood-clients", type=int, default=32, help="authenticated client threads beside them")
    g.add_argument("--flood-seconds", type=float, default=20.0, help="how long the clients ask beside the flood")
    g.add_argument("--flood-baseline", type=float, default=5.0, help="seconds of the same clients without the flood")
    g = p.add_argument_group("remote_client")
    g.add_argument("--remote-timeout", type=float, default=4.0, help="the remote client's timeout per call")
    g.add_argument("--remote-calls", nargs="+", default=["search", "curate", "show", "history", "count", "ingest", "store"],
                   help="the calls made against each bad server")
    g = p.add_argument_group("dropped")
    g.add_argument("--dropped-memories", type=int, default=500, help="memories one process opens and drops")
    g = p.add_argument_group("dream_crash")
    g.add_argument("--dream-trials", type=int, default=30, help="dream runs SIGKILLed, then dream --undo")
    g.add_argument("--dream-notes", type=int, default=300, help="notes of the tree dream cleans")
    g = p.add_argument_group("embed_backlog")
    g.add_argument("--backlog-entries", type=int, default=3000, help="entries without a vector when the server starts")
    g.add_argument("--backlog-clients", type=int, default=32, help="client threads searching")
    g.add_argument("--backlog-seconds", type=float, default=12.0, help="length of each arm's turn")
    g.add_argument("--backlog-turns", type=int, default=2, help="turns of each arm (with the backlog, every vector ready)")
    g = p.add_argument_group("fork_safety")
    g.add_argument("--fork-forks", type=int, default=30, help="children forked amid writes, and amid embedding")
    g.add_argument("--fork-load-rounds", type=int, default=8, help="fresh processes forking 3 children as the model loads")
    g.add_argument("--fork-backlog", type=int, default=120, help="entries written for the embedder before forking")
    g = p.add_argument_group("fuzz")
    g.add_argument("--fuzz-examples", type=int, default=120, help="hypothesis examples per property")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    if args.quick:
        defaults = parser().parse_args([])
        for k, v in QUICK.items():
            if getattr(args, k) == getattr(defaults, k):
                setattr(args, k, v)
    results = run_sections(args)
    meta = report.meta_now(args.seed, " ".join(argv))
    meta["seconds"] = sum(r.seconds for r in results)
    text = report.render(results, meta)
    if args.no_write:
        print(text)
    else:
        md, js = report.write(results, meta, args.out)
        print(text)
        print(f"wrote {md} and {js}")
    return 1 if any(r.failures for r in results) else 0


def run_sections(args: argparse.Namespace) -> list[SectionResult]:
    work = args.work or Path(tempfile.mkdtemp(prefix="mg-reliability-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for name in args.sections:
            t0 = time.monotonic()
            print(f"== {name}", file=sys.stderr, flush=True)
            try:
                res = _run_one(name, args, work)
            except Exception as exc:  # noqa: BLE001 - the suite's own bug must not hide the other sections
                res = SectionResult(name)
                res.fail("suite error", f"{type(exc).__name__}: {exc}", traceback.format_exc().splitlines()[-3])
            res.seconds = time.monotonic() - t0
            print(f"   {name}: {len(res.failures)} failure(s), {res.seconds:.0f} s", file=sys.stderr, flush=True)
            results.append(res)
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return results


def _run_one(name: str, args: argparse.Namespace, work: Path) -> SectionResult:
    if name == "concurrency":
        from . import concurrency

        return concurrency.run_section(work, seed=args.seed, ks=args.conc_k, modes=args.conc_modes,
                                       seconds=args.conc_seconds, sweep=args.conc_sweep, max_wait=args.max_wait)
    if name == "crashes":
        from . import crashes

        return crashes.run_section(work, seed=args.seed, kills=args.kills, reindex_kills=args.reindex_kills,
                                   reindex_files=args.reindex_files, lock_bound=args.lock_bound)
    if name == "faults":
        from . import faults

        return faults.run_section(work, seed=args.seed, timeout=args.fault_timeout, damage=args.fault_damage,
                                  disk_mb=args.disk_mb, targets=args.fault_targets, extras=args.fault_extras)
    if name == "hostile":
        from . import hostile

        return hostile.run_section(work, seed=args.seed, limit=args.hostile_cases, case_timeout=args.case_timeout,
                                   slow=args.slow, only=args.hostile_only)
    if name == "server_kills":
        from . import server_kills

        return server_kills.run_section(work, seed=args.seed, rounds=args.server_rounds, clients=args.server_clients)
    if name == "server_disk":
        from . import server_disk

        return server_disk.run_section(work, size_mb=args.server_disk_mb, seconds=args.server_disk_seconds,
                                       writers=args.server_disk_writers)
    if name == "slow_clients":
        from . import slow_clients

        return slow_clients.run_section(work, half_sent=args.slow_half_sent, silent=args.slow_silent,
                                        trickling=args.slow_trickling, extra=args.slow_extra,
                                        header_timeout=args.slow_header_timeout, body_timeout=args.slow_body_timeout)
    if name == "hostile_served":
        from . import hostile_served

        return hostile_served.run_section(work, slow=args.slow)
    if name == "unauth_flood":
        from . import unauth_flood

        return unauth_flood.run_section(work, flood=args.flood_sockets, clients=args.flood_clients,
                                        seconds=args.flood_seconds, baseline=args.flood_baseline)
    if name == "remote_client":
        from . import remote_client

        return remote_client.run_section(work, timeout=args.remote_timeout, calls=args.remote_calls)
    if name == "fork_safety":
        from . import fork_safety

        return fork_safety.run_section(work, forks=args.fork_forks, load_rounds=args.fork_load_rounds,
                                       backlog=args.fork_backlog)
    if name == "dropped":
        from . import dropped

        return dropped.run_section(work, memories=args.dropped_memories)
    if name == "dream_crash":
        from . import dream_crash

        return dream_crash.run_section(work, seed=args.seed, trials=args.dream_trials, notes=args.dream_notes)
    if name == "embed_backlog":
        from . import embed_backlog

        return embed_backlog.run_section(work, entries=args.backlog_entries, clients=args.backlog_clients,
                                         seconds=args.backlog_seconds, turns=args.backlog_turns, seed=args.seed)
    from . import fuzz

    return fuzz.run_section(work, seed=args.seed, examples=args.fuzz_examples)

"""Searches while the embedder has a backlog (issue 41 item 2): a served project whose ~3,000 entries
have no vector yet (curated with meaning off, as a tree from before meaning was on, or a bulk ingest
the embedder has not reached), ``memgrove serve`` with the product's defaults (meaning on where the
model is installed: its background embedder catches up), and ``clients`` threads searching for
``seconds``. Then the same load once the embedder reports nothing pending (if it gets there within
``ready_wait`` seconds; the report says how far it got otherwise).

Before tree/vector_claims.py, concurrent searches each computed the same missing vectors: 31 answers
in 30 s to 32 clients, a read's p50 51.5 s. A read past ``bound`` seconds, a request that fails, or a
phase in which nothing completes is a failure; the ratio of the two phases' p50 is reported (issue 43
asks for at most 2x). The entries are short facts (about 40 words) so that the embedder finishes within
the section's budget on a 2-core machine.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
import urllib.parse
from pathlib import Path

from . import serving
from .common import SectionResult, pct

SECTION = "embed_backlog"
REPRO = "python -m reliability --sections embed_backlog"
TEAMS = ["payments", "search", "growth", "platform", "mobile", "data", "security", "billing", "support", "infra",
         "identity", "checkout", "catalog", "analytics", "messaging", "storage", "network", "release", "design", "legal"]
SERVICES = ["orders", "invoices", "gateway", "scheduler", "notifier", "ledger", "profile", "inventory", "pricing",
            "shipping", "reports", "exporter", "importer", "auth", "sessions", "uploads", "thumbnails", "webhooks",
            "audit", "quotas", "refunds", "coupons", "ratings", "feeds", "alerts", "backups", "metrics", "tracing"]
TECH = ["Postgres", "Redis", "Kafka", "SQLite", "Elasticsearch", "RabbitMQ", "S3", "Cassandra", "MySQL", "Go",
        "Rust", "Kotlin", "gRPC", "GraphQL", "Kubernetes", "Terraform", "Nginx", "Envoy", "ClickHouse", "DuckDB"]
PEOPLE = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kofi", "Lena", "Maya",
          "Noor", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Vera", "Wen", "Yara", "Zane"]
WHY = ["the latency budget", "the on-call load", "a cost review", "the audit findings", "a customer outage",
       "the migration plan", "the capacity forecast", "a security review", "the quarterly goals", "a failed rollout"]


def entry(i: int) -> dict:
    """Entry ``i``: a short decision, the same in every run."""
    rng = random.Random(f"embed-backlog-{i}")
    team, svc, tech, who, why = (rng.choice(TEAMS), rng.choice(SERVICES), rng.choice(TECH), rng.choice(PEOPLE),
                                 rng.choice(WHY))
    text = (f"The {team} team decided to move the {svc} service to {tech} after {why}. {who} owns the change and "
            f"wrote the runbook; the old setup stays read-only for {rng.randint(2, 12)} weeks, and the "
            f"{rng.choice(SERVICES)} service reads from it until then (note {i}).")
    return {"op": "ADD", "path": f"{team}/{svc}/decision-{i}.md", "title": f"{svc.capitalize()} on {tech}",
            "content": text, "reason": "embed_backlog section"}


def question(rng: random.Random) -> str:
    svc, team = rng.choice(SERVICES), rng.choice(TEAMS)
    return rng.choice([f"what did we decide about the {svc} service?", f"who owns the {svc} migration?",
                       f"why did the {team} team change its database?", f"where does {svc} store its data now?"])


def _load(srv: serving.Served, clients: int, seconds: float, bound: float, seed: int) -> dict:
    """``clients`` threads searching for ``seconds``: each read's seconds, and what went wrong."""
    times: list[float] = []
    errors: list[str] = []
    mutex = threading.Lock()
    end = time.monotonic() + seconds

    def client(k: int) -> None:
        rng = random.Random(f"{seed}-{k}")
        while time.monotonic() < end:
            q = urllib.parse.quote(question(rng))
            t0 = time.monotonic()
            r = srv.call("GET", f"/api/search?q={q}&limit=10", timeout=bound * 6)
            took = time.monotonic() - t0
            with mutex:
                if r.status == 200:
                    times.append(took)
                else:
                    errors.append(f"{r.status or r.error} after {took:.1f} s")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + bound * 6 + 30)
    return {"times": times, "errors": errors}


def _pending(srv: serving.Served) -> dict | None:
    r = srv.call("GET", "/health", timeout=30, token="-")
    return (r.body or {}).get("vectors") if r.status == 200 and isinstance(r.body, dict) else None


def _idle(v: dict | None) -> bool:
    b = (v or {}).get("backlog") or {}
    return bool(b) and b["queued"] == 0 and b["unchecked"] == 0 and v["computing"] == 0


def run_section(work: Path, *, entries: int, clients: int, seconds: float, ready_wait: float,
                bound: float = 10.0, seed: int = 0) -> SectionResult:
    from memgrove import Memory

    res = SectionResult(SECTION, columns=["phase", "reads", "per s", "p50 s", "p95 s", "max s", "vectors pending"])
    base = work / SECTION
    shutil.rmtree(base, ignore_errors=True)
    project = base / "proj"
    t0 = time.monotonic()
    with Memory.open(project, create=True, durable=False, semantic_weight=0.0, embed_ahead=False) as m:
        for s in range(0, entries, 500):
            m.curate([entry(i) for i in range(s, min(entries, s + 500))])
    built = time.monotonic() - t0
    # the product's default named: a test run's own default (meaning off, tests/helpers) must not reach it
    (project / ".memgrove" / "config.toml").write_text('[tree]\nsemantic_weight = "auto"\n', encoding="utf-8")
    try:
        srv = serving.start(project, base / "serve.log")
    except RuntimeError as exc:
        res.fail("start", str(exc), REPRO)
        return res
    try:
        v = _pending(srv)
        if not (v or {}).get("meaning"):
            res.notes.append("Ranking by meaning is off here (no model installed): the searches rank by words.")
        deadline = time.monotonic() + 120
        while (v or {}).get("meaning") and ((v or {}).get("backlog") or {}).get("unchecked", -1) < 0 \
                and time.monotonic() < deadline:
            time.sleep(0.2)               # the model loading: the searches would wait for it, not for vectors
            v = _pending(srv)
        phases = [("backlog", v)]
        got = {"backlog": _load(srv, clients, seconds, bound, seed)}
        after = _pending(srv)
        waited = time.monotonic()
        while not _idle(after) and time.monotonic() - waited < ready_wait:
            time.sleep(1.0)
            after = _pending(srv)
        waited = time.monotonic() - waited
        if _idle(after):
            phases.append(("every vector ready", after))
            got["every vector ready"] = _load(srv, clients, seconds, bound, seed)
        else:
            res.notes.append(f"The embedder still had work {waited:.0f} s after the first phase (ready_wait "
                             f"{ready_wait:g} s): no second phase.")
        for name, state in phases:
            t, errs = got[name]["times"], got[name]["errors"]
            b = (state or {}).get("backlog") or {}
            res.rows.append([name, len(t), round(len(t) / seconds, 1), round(pct(t, 50), 3), round(pct(t, 95), 3),
                             round(max(t, default=0.0), 3), b.get("queued", 0) + max(b.get("unchecked", 0), 0)])
            if not t:
                res.fail("nothing completed", f"{name}: no search answered in {seconds:g} s by {clients} clients",
                         REPRO)
            slow = [x for x in t if x > bound]
            if slow:
                res.fail("slow read", f"{name}: {len(slow)} of {len(t)} searches took more than {bound:g} s "
                         f"(max {max(slow):.1f} s)", REPRO)
            for e in errs[:3]:
                res.fail("failed read", f"{name}: {e} ({len(errs)} in all)", REPRO)
        p50 = {name: pct(got[name]["times"], 50) for name in got}
        if len(p50) == 2 and p50["every vector ready"] > 0:
            res.summary["p50_ratio"] = round(p50["backlog"] / p50["every vector ready"], 2)
        res.summary.update(entries=entries, clients=clients, seconds=seconds, build_s=round(built, 1),
                           waited_for_vectors_s=round(waited, 1),
                           vectors_after_backlog_phase=(after or {}).get("backlog"))
    finally:
        srv.stop()
    res.notes.append(f"{entries} entries curated with meaning off, then `memgrove serve` with the defaults; "
                     f"{clients} clients search for {seconds:g} s per phase (each a new connection per request); "
                     f"a read over {bound:g} s fails. Vectors pending: the embedder's queue and catch-up at the "
                     "phase's start, from /health.")
    return res

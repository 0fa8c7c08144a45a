#!/usr/bin/env python
"""Scale benchmark: synthetic Context Trees of N entries, built through the public API.

    python benchmarks/scale.py                       # sizes 1000 10000, seed 0
    python benchmarks/scale.py --sizes 1000          # smoke run (well under a minute)
    python benchmarks/scale.py --quick --out /tmp/s  # 300 entries, few queries (for tests)
    python benchmarks/scale.py --curve               # scale curve, 1k 5k 25k 100k: ~40 min
    python benchmarks/scale.py --curve --sizes 1000 5000   # quick curve (`make bench`): ~1.5-2 min

``--curve`` measures, per size N (each in a child process, the same seeded corpus):
build time of ``mem.curate`` in batches, the disk size of ``.memgrove/``, peak RSS,
warm ``Memory.query`` latency per realized tier (0 exact cache, 1 fuzzy cache, 2 BM25
direct answer; the questions are benchmarks/tiers.py's: fresh ones from an entry's rarest
title words, their repeats and rewordings) and cold ``memgrove query`` processes; then the
growth exponent of every metric (least-squares slope of log(metric) against log(N)) and a
log-log plot. Results: ``benchmarks/results/scale_curve.{json,md,png}`` for the default
sizes, ``scale_curve_<sizes>.*`` otherwise (``--out`` to choose). The detailed mode below
is the default.

For every size N, in a fresh child process (so peak memory is per size) and a
fresh temp dir, it:

1. builds the tree with ``Memory.open(tmp, create=True, durable=False)`` and
   ``mem.curate([...])`` in batches of ``--batch`` ADDs (curate throughput);
2. applies ``--single-adds`` more ADDs one op per ``curate`` call (the
   per-op latency an agent sees), with a breakdown of where that time goes;
3. times ``mem.fingerprint()``;
4. runs ``--queries`` searches (2-4 vocabulary words, after ``--warmup``
   warm-up queries) three ways, interleaved query by query: the engine alone
   (``mem.tree.engine.search``, the baseline), ``mem.search`` with
   ``scan_interval=0`` (every search first scans the tree's file stats) and
   ``mem.search`` with ``scan_interval=1.0``; then a breakdown of the strict
   search (scan, digest, engine, file reads, signals, the rest);
5. times a full ``mem.reindex()`` and the engine alone on the rebuilt index;
6. times a cold one-shot process ``python -c "from memgrove import Memory;
   Memory.open(path).search('...')"`` (plus ``python -c pass`` and
   ``import memgrove`` as baselines);
7. records peak RSS and the disk size of ``.memgrove/`` (tree/, index/, journal/, rest).

The corpus is seeded (``--seed``) and independent of N: entry i is the same in
every run and every size, so the 1,000-entry tree is a prefix of the
10,000-entry one. Results go to ``benchmarks/results/scale.{json,md}``
(``--quick`` writes ``scale_quick.*`` unless ``--out`` says otherwise) and a
markdown table is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import importlib.metadata
import json
import math
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# Targets of issue 2 for 10,000 entries on the 2-core machine.
TARGETS = {"search_p95_ms": 25.0, "fingerprint_ms": 50.0, "reindex_s": 30.0}
TARGET_SIZE = 10_000

N_DOMAINS = 20
N_TOPICS = 25          # per domain
TOPIC_WORDS = 40       # words that are frequent within one topic
VOCAB = 30_000
ZIPF_S = 1.0
QUERY_MIN_RANK = 30    # query words skip the 30 most frequent (function-word-like) ones


# -- statistics --------------------------------------------------------------

def pct(xs: list[float], q: float) -> float:
    """Percentile with linear interpolation (q in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary_ms(xs_s: list[float]) -> dict[str, float]:
    ms = [x * 1000 for x in xs_s]
    return {"n": len(ms), "p50": round(pct(ms, 50), 3), "p95": round(pct(ms, 95), 3),
            "p99": round(pct(ms, 99), 3), "mean": round(sum(ms) / len(ms), 3) if ms else float("nan"),
            "max": round(max(ms), 3) if ms else float("nan")}


# -- the synthetic corpus ------------------------------------------------------

_STOP = None


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from memgrove.tree.whoosh_engine import STOP_WORDS
        _STOP = STOP_WORDS
    return _STOP


class Corpus:
    """A seeded vocabulary with Zipf-distributed word frequencies, 20 domains × 25 topics,
    each topic with its own 40 frequent words. ``op(i)`` is a pure function of (seed, i)."""

    ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
              "br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "sh", "ch", "th"]
    VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou"]
    CODAS = ["", "", "", "n", "r", "l", "s", "m", "nd", "rt", "st", "x"]

    def __init__(self, seed: int):
        self.seed = seed
        rng = random.Random(f"memgrove-scale-vocab-{seed}")
        stop = _stop_words()
        words: list[str] = []
        seen: set[str] = set()
        while len(words) < VOCAB:
            w = "".join(rng.choice(self.ONSETS) + rng.choice(self.VOWELS) + rng.choice(self.CODAS)
                        for _ in range(rng.choice((1, 2, 2, 2, 3, 3, 4))))
            if len(w) < 3 or w in seen or w in stop:
                continue
            seen.add(w)
            words.append(w)
        # Zipf's law of abbreviation: the frequent words are the short ones
        ties = {w: rng.random() for w in words}
        words.sort(key=lambda w: (len(w), ties[w]))
        self.words = words
        cum, total = [], 0.0
        for r in range(VOCAB):
            total += 1.0 / (r + 1) ** ZIPF_S
            cum.append(total)
        self.cum = cum
        # query words: same Zipf law, without the most frequent ranks
        self.q_words = words[QUERY_MIN_RANK:]
        self.q_cum = [c - cum[QUERY_MIN_RANK - 1] for c in cum[QUERY_MIN_RANK:]]
        # domains and topics: distinct words (from the middle of the vocabulary)
        names = rng.sample(words[2000:12000], N_DOMAINS * (N_TOPICS + 1))
        self.domains = names[:N_DOMAINS]
        self.topics = [names[N_DOMAINS + d * N_TOPICS: N_DOMAINS + (d + 1) * N_TOPICS] for d in range(N_DOMAINS)]
        self.topic_words = [[rng.sample(words[200:], TOPIC_WORDS) for _ in range(N_TOPICS)] for _ in range(N_DOMAINS)]

    def zipf(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)

    def op(self, i: int) -> dict[str, Any]:
        rng = random.Random(f"memgrove-scale-entry-{self.seed}-{i}")
        d, t = rng.randrange(N_DOMAINS), rng.randrange(N_TOPICS)
        tw = self.topic_words[d][t]
        n_words = rng.randint(150, 400)
        # 85% global Zipf words, 15% the topic's own words
        tokens = [rng.choice(tw) if rng.random() < 0.15 else w for w in self.zipf(rng, n_words)]
        title_words = rng.sample(tw, rng.randint(1, 2))
        title_words += rng.choices(self.q_words, cum_weights=self.q_cum, k=rng.randint(3, 6) - len(title_words))
        rng.shuffle(title_words)
        title = " ".join(title_words).capitalize()
        # facts take ~15% of the words, the narrative the rest
        n_facts = rng.randint(2, 4)
        fact_len = max(5, n_words * 15 // 100 // n_facts)
        fact_tokens, narr_tokens = tokens[: n_facts * fact_len], tokens[n_facts * fact_len:]
        sentences, j = [], 0
        while j < len(narr_tokens):
            k = rng.randint(8, 20)
            s = narr_tokens[j:j + k]
            sentences.append(" ".join(s).capitalize() + ".")
            j += k
        paras, j = [], 0
        while j < len(sentences):
            k = rng.randint(3, 6)
            paras.append(" ".join(sentences[j:j + k]))
            j += k
        facts = []
        for f in range(n_facts):
            ft = fact_tokens[f * fact_len:(f + 1) * fact_len]
            facts.append(f"- **{ft[0]}**: {' '.join(ft[1:])} [fact]")
        content = "## Narrative\n" + "\n\n".join(paras) + "\n\n## Facts\n" + "\n".join(facts) + "\n"
        summary = " ".join(sentences[0].split()[:16]).rstrip(".") + "."
        tags = [self.domains[d]] + rng.sample(tw, rng.randint(1, 3))
        stem = "_".join(title_words[:4])[:60]
        path = f"{self.domains[d]}/{self.topics[d][t]}/{stem}_{i}.md"
        return {"op": "ADD", "path": path, "title": title, "summary": summary, "content": content,
                "tags": tags, "reason": f"scale benchmark synthetic entry {i}"}

    def query(self, rng: random.Random) -> str:
        """2-4 words: 1-2 words of a random topic plus Zipf words (ranks >= 30)."""
        d, t = rng.randrange(N_DOMAINS), rng.randrange(N_TOPICS)
        n = rng.randint(2, 4)
        k_topic = rng.randint(1, min(2, n))
        ws = rng.sample(self.topic_words[d][t], k_topic)
        ws += rng.choices(self.q_words, cum_weights=self.q_cum, k=n - k_topic)
        rng.shuffle(ws)
        return " ".join(ws)


# -- exclusive-time profiler (for the breakdowns) --------------------------------

class Profiler:
    """Wraps callables; each bucket gets its exclusive time (nested wrapped calls are
    charged to their own bucket, not to the caller's)."""

    def __init__(self):
        self.totals: dict[str, float] = {}
        self._stack: list[list[float]] = []
        self._undo: list[Callable[[], None]] = []

    def wrap(self, obj: Any, attr: str, bucket: str) -> None:
        orig = getattr(obj, attr)
        had_own = isinstance(obj, type(os)) or attr in getattr(obj, "__dict__", {})
        prof = self

        @functools.wraps(orig)
        def timed(*a, **kw):
            prof._stack.append([0.0])
            t0 = time.perf_counter()
            try:
                return orig(*a, **kw)
            finally:
                el = time.perf_counter() - t0
                child = prof._stack.pop()[0]
                prof.totals[bucket] = prof.totals.get(bucket, 0.0) + el - child
                if prof._stack:
                    prof._stack[-1][0] += el

        setattr(obj, attr, timed)
        if had_own:
            self._undo.append(lambda: setattr(obj, attr, orig))
        else:
            self._undo.append(lambda: delattr(obj, attr))

    def reset(self) -> None:
        self.totals = {}

    def restore(self) -> None:
        for u in reversed(self._undo):
            u()
        self._undo = []


def _breakdown(samples: list[dict[str, float]], totals: list[float]) -> dict[str, dict[str, float]]:
    """Median ms per bucket and share of the summed time; 'other' is total minus buckets."""
    keys = sorted({k for s in samples for k in s})
    rows = {}
    grand = sum(totals)
    for k in keys:
        vals = [s.get(k, 0.0) for s in samples]
        rows[k] = {"p50_ms": round(pct(vals, 50) * 1000, 3), "mean_ms": round(sum(vals) / len(vals) * 1000, 3),
                   "share": round(sum(vals) / grand, 4) if grand else 0.0}
    other = [t - sum(s.values()) for s, t in zip(samples, totals)]
    rows["other"] = {"p50_ms": round(pct(other, 50) * 1000, 3), "mean_ms": round(sum(other) / len(other) * 1000, 3),
                     "share": round(sum(other) / grand, 4) if grand else 0.0}
    rows["total"] = {"p50_ms": round(pct(totals, 50) * 1000, 3), "mean_ms": round(grand / len(totals) * 1000, 3),
                     "share": 1.0}
    return rows


# -- disk and memory -------------------------------------------------------------

def disk_usage(folder: Path) -> dict[str, int]:
    """Apparent bytes, allocated bytes and file count under ``folder``."""
    apparent = allocated = files = 0
    for dirpath, _dirs, names in os.walk(folder):
        for n in names:
            try:
                st = os.lstat(os.path.join(dirpath, n))
            except FileNotFoundError:
                continue
            apparent += st.st_size
            allocated += st.st_blocks * 512
            files += 1
    return {"bytes": apparent, "allocated": allocated, "files": files}


@contextlib.contextmanager
def scratch_dir(prefix: str, cfg: dict[str, Any], out: dict[str, Any]) -> Iterator[Path]:
    """A temp folder for one size's run: removed afterwards, or kept (and named in ``out``) with
    ``cfg["keep"]``. Shared by this file's and benchmarks/tiers.py's per-size workers."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    if cfg.get("keep"):
        out["kept_at"] = str(tmp)
    try:
        yield tmp
    finally:
        if not cfg.get("keep"):
            shutil.rmtree(tmp, ignore_errors=True)


def maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)  # KiB on Linux


def _has_setting(name: str) -> bool:
    from memgrove import TreeSettings
    return name in {f.name for f in __import__("dataclasses").fields(TreeSettings)}


def _segments(mem: Any) -> int | None:
    """Number of Whoosh segments (private API; informational only)."""
    try:
        return len(mem.tree.engine._index()._segments())
    except Exception:  # noqa: BLE001 - another engine or another Whoosh version
        return None


def _deleted(mem: Any) -> int | None:
    """Deleted documents still held in the Whoosh segments (informational only)."""
    try:
        ix = mem.tree.engine._index()
        return ix.doc_count_all() - ix.doc_count()
    except Exception:  # noqa: BLE001
        return None


def _rss_kb(pid: int | str, field: str = "VmRSS") -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _child_pids() -> list[str]:
    out: list[str] = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):
                with open(f"/proc/self/task/{tid}/children") as fh:
                    out += fh.read().split()
    except OSError:
        pass
    return out


class RssSampler:
    """Peak of (this process's RSS + its children's RSS), sampled every 20 ms (Linux /proc).

    ``ru_maxrss`` of children is useless here: a forked child counts the parent's pages."""

    def __init__(self, every: float = 0.02):
        import threading
        self.every = every
        self.peak_kb = 0
        self.peak_anon_kb = 0  # this process's anonymous memory (heap; not mmapped index files)
        self.peak_children = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            kids = _child_pids()
            total = _rss_kb("self") + sum(_rss_kb(k) for k in kids)
            self.peak_kb = max(self.peak_kb, total)
            self.peak_anon_kb = max(self.peak_anon_kb, _rss_kb("self", "RssAnon"))
            self.peak_children = max(self.peak_children, len(kids))
            self._stop.wait(self.every)

    @property
    def peak_mb(self) -> float:
        return round(self.peak_kb / 1024, 1)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# -- one size, in a child process --------------------------------------------------

def run_size(n: int, cfg: dict[str, Any]) -> dict[str, Any]:
    from memgrove import Memory
    from memgrove.tree import contexts as contexts_mod
    from memgrove.tree import index_sync as sync_mod, ranking as ranking_mod, store as store_mod
    from memgrove.tree.catalog import digest_of, scan

    log = functools.partial(print, file=sys.stderr, flush=True)
    corpus = Corpus(cfg["seed"])
    out: dict[str, Any] = {"size": n, "loadavg_start": [round(x, 2) for x in os.getloadavg()]}
    with scratch_dir(f"memgrove-scale-{n}-", cfg, out) as tmp:
        phases: dict[str, float] = {}
        mark = [time.perf_counter()]

        def phase(name: str) -> None:
            now = time.perf_counter()
            phases[name] = round(now - mark[0], 2)
            mark[0] = now

        # 1. build -----------------------------------------------------------------
        t_gen = time.perf_counter()
        ops = [corpus.op(i) for i in range(n)]
        out["generate_s"] = round(time.perf_counter() - t_gen, 3)
        words = [len(o["content"].split()) for o in ops]
        out["corpus"] = {"entries": n, "words_p50": pct(words, 50), "words_total": sum(words),
                         "domains": len({o["path"].split("/")[0] for o in ops}),
                         "topics": len({"/".join(o["path"].split("/")[:2]) for o in ops})}
        _tiers_module().choose_engine(tmp, cfg.get("engine"))
        mem = Memory.open(tmp, create=True, durable=False)
        out["engine"] = mem.tree.engine.name
        batch = cfg["batch"]
        batch_times = []
        t0 = time.perf_counter()
        for i in range(0, n, batch):
            tb = time.perf_counter()
            res = mem.curate(ops[i:i + batch])
            batch_times.append(time.perf_counter() - tb)
            assert len(res) == len(ops[i:i + batch]) and all(r.status == "added" for r in res)
            if (i // batch) % 8 == 7:
                log(f"  [{n}] built {i + batch}/{n} ({(i + batch) / (time.perf_counter() - t0):.0f} ops/s)")
        build_s = time.perf_counter() - t0
        first, last = batch_times[0], batch_times[-1]
        out["build"] = {
            "seconds": round(build_s, 3), "ops_per_s": round(n / build_s, 1), "batch": batch,
            "batches": len(batch_times),
            "first_batch_ops_per_s": round(min(batch, n) / first, 1),
            "last_batch_ops_per_s": round((n - batch * (len(batch_times) - 1)) / last, 1),
            "batch_s_p50": round(pct(batch_times, 50), 3),
        }
        out["maxrss_after_build_mb"] = maxrss_mb()
        log(f"  [{n}] build {build_s:.1f} s ({n / build_s:.0f} ops/s)")

        phase("build")
        # 2. single-op batches, with a breakdown of the time ----------------------------
        tree = mem.tree
        prof = Profiler()
        prof.wrap(sync_mod, "scan", "scan (os.scandir + stat)")
        prof.wrap(sync_mod, "digest_of", "digest (blake2b per file)")
        prof.wrap(store_mod, "plan_batch", "plan (validate + render entry)")
        prof.wrap(tree.journal, "write_pending", "journal")
        prof.wrap(tree.journal, "append", "journal")
        prof.wrap(tree.journal, "clear_pending", "journal")
        prof.wrap(tree, "_write_file", "write files")
        prof.wrap(contexts_mod, "render", "context.md render (parse siblings)")
        prof.wrap(tree, "_read_disk", "read files")
        prof.wrap(tree, "_doc_for", "index doc (read + parse)")
        prof.wrap(tree.engine, "write", "whoosh write + commit")
        prof.wrap(tree.catalog, "apply", "catalog (sqlite)")
        prof.wrap(tree.catalog, "stats_of", "catalog (sqlite)")
        prof.wrap(tree.catalog, "digest", "catalog (sqlite)")
        prof.wrap(tree.catalog, "backlinks", "catalog (sqlite)")
        prof.wrap(tree, "_bump_generation", "generation file")
        prof.wrap(tree.signals, "forget", "signals (sqlite)")
        single_ops = [corpus.op(n + j) for j in range(cfg["single_adds"])]
        single_t, single_b = [], []
        try:
            for o in single_ops:
                prof.reset()
                ts = time.perf_counter()
                mem.curate([o])
                single_t.append(time.perf_counter() - ts)
                single_b.append(dict(prof.totals))
        finally:
            prof.restore()
        out["single_add"] = {"latency_ms": summary_ms(single_t),
                             "ops_per_s": round(len(single_t) / sum(single_t), 1),
                             "breakdown": _breakdown(single_b, single_t)}
        log(f"  [{n}] single ADD p50 {pct(single_t, 50) * 1000:.1f} ms")

        mem.close()

        # Three readers on the built tree. "default" is Memory.open's default settings
        # (an inotify watcher in a long-lived process, if the library has one); "strict"
        # scans the file stats before every search (watch off, scan_interval=0); "interval"
        # scans at most once a second (watch off, scan_interval=1.0).
        no_watch = {"watch": False} if _has_setting("watch") else {}
        readers = {
            "default": Memory.open(tmp, durable=False),
            "strict": Memory.open(tmp, durable=False, scan_interval=0.0, **no_watch),
            "interval_1s": Memory.open(tmp, durable=False, scan_interval=1.0, **no_watch),
        }
        out["reader_settings"] = {k: {"watch": getattr(m.tree.settings, "watch", None),
                                      "scan_interval": m.tree.settings.scan_interval} for k, m in readers.items()}

        phase("single_adds")
        # 3. fingerprint ----------------------------------------------------------------
        out["fingerprint_ms"] = {}
        for name in ("default", "strict"):
            m = readers[name]
            m.fingerprint(), m.fingerprint()  # the second check is where a watcher starts
            fp = []
            for _ in range(cfg["fingerprints"]):
                tf = time.perf_counter()
                m.fingerprint()
                fp.append(time.perf_counter() - tf)
            out["fingerprint_ms"][name] = summary_ms(fp)
        scan_t, dig_t = [], []
        for _ in range(cfg["fingerprints"]):
            ts = time.perf_counter()
            cur = scan(tree.root)
            scan_t.append(time.perf_counter() - ts)
            ts = time.perf_counter()
            digest_of(cur)
            dig_t.append(time.perf_counter() - ts)
        out["scan_ms"] = summary_ms(scan_t)
        out["digest_ms"] = summary_ms(dig_t)
        out["files_scanned"] = len(cur)
        out["folders"] = sum(1 for _ in os.walk(tree.root))

        phase("fingerprint")
        # 4. search: engine and the three readers, interleaved query by query ---------------
        base = readers["strict"]
        boosts = base.tree.settings.boosts()
        qrng = random.Random(f"memgrove-scale-queries-{cfg['seed']}")
        warm = [corpus.query(qrng) for _ in range(cfg["warmup"])]
        queries = [corpus.query(qrng) for _ in range(cfg["queries"])]
        limit = 10
        eng_limit = limit * 3 + 10  # what ContextTree.search asks the engine for

        def engine(q: str):
            return base.tree.engine.search(q, boosts=boosts, limit=eng_limit)

        modes: dict[str, Callable[[str], Any]] = {"engine": engine, **{k: m.search for k, m in readers.items()}}
        for q in warm:
            for f in modes.values():
                f(q)
        out["watcher_active"] = getattr(readers["default"].tree, "_watcher", None) is not None
        times: dict[str, list[float]] = {m: [] for m in modes}
        empty = 0
        hits_n = []
        names = list(modes)
        for k, q in enumerate(queries):
            r = k % len(names)
            for m in names[r:] + names[:r]:  # rotate the order so noise hits every mode alike
                ts = time.perf_counter()
                res = modes[m](q)
                times[m].append(time.perf_counter() - ts)
                if m == "strict":
                    hits_n.append(len(res))
                    empty += not res
        base50 = pct(times["engine"], 50)
        base95 = pct(times["engine"], 95)
        out["search"] = {m: summary_ms(v) for m, v in times.items()}
        for m in readers:
            out["search"][m]["x_engine_p50"] = round(pct(times[m], 50) / base50, 2)
            out["search"][m]["x_engine_p95"] = round(pct(times[m], 95) / base95, 2)
        out["search"]["queries"] = len(queries)
        out["search"]["warmup"] = len(warm)
        out["search"]["empty_results"] = empty
        out["search"]["hits_p50"] = pct(hits_n, 50)
        out["search"]["examples"] = queries[:5]
        out["whoosh_segments"] = _segments(base)
        out["whoosh_deleted_docs"] = _deleted(base)
        log(f"  [{n}] search p50 ms: " + ", ".join(f"{m} {pct(v, 50) * 1000:.1f}" for m, v in times.items()))

        # where a search's time goes (exclusive time per part), strict and default
        out["search_breakdown"] = {}
        for name in ("strict", "default"):
            t2 = readers[name].tree
            prof = Profiler()
            prof.wrap(sync_mod, "scan", "scan (os.scandir + stat)")
            prof.wrap(sync_mod, "digest_of", "digest (blake2b per file)")
            prof.wrap(t2, "_index_usable", "index check (exists + sqlite)")
            prof.wrap(t2.catalog, "digest", "index check (exists + sqlite)")
            prof.wrap(t2, "_generation", "generation file")
            if getattr(t2, "_watcher", None) is not None:
                prof.wrap(t2._watcher, "changed", "watcher check (inotify)")
            prof.wrap(t2, "_engine_search", "engine search")
            prof.wrap(t2.engine, "terms", "analyze query terms")
            prof.wrap(t2, "_read_disk", "read hit files")
            prof.wrap(store_mod.entry_mod, "parse", "parse hit entries (YAML + sections)")
            prof.wrap(store_mod, "excerpt", "excerpts")
            prof.wrap(t2.signals, "get_many", "signals read (sqlite)")
            prof.wrap(t2.signals, "record_access", "signals write (sqlite)")
            prof.wrap(ranking_mod, "days_since_update", "stat hits (recency)")
            sb, st_ = [], []
            try:
                for q in queries[: cfg["breakdown_queries"]]:
                    prof.reset()
                    ts = time.perf_counter()
                    readers[name].search(q)
                    st_.append(time.perf_counter() - ts)
                    sb.append(dict(prof.totals))
            finally:
                prof.restore()
            out["search_breakdown"][name] = _breakdown(sb, st_)
        for m in readers.values():
            m.close()

        phase("search")
        # 5. full reindex -----------------------------------------------------------------
        mem = Memory.open(tmp, durable=False)
        with RssSampler() as sampler:
            tr = time.perf_counter()
            docs = mem.reindex()
            reindex_s = time.perf_counter() - tr
        out["reindex"] = {"seconds": round(reindex_s, 3), "docs": docs, "docs_per_s": round(docs / reindex_s, 1),
                          "procs": mem.tree.settings.index_procs if out["files_scanned"] >= 2000 else 1,
                          "peak_rss_mb": sampler.peak_mb, "peak_workers": sampler.peak_children}
        log(f"  [{n}] reindex {reindex_s:.1f} s ({docs} docs)")
        for q in warm:
            mem.tree.engine.search(q, boosts=boosts, limit=eng_limit)
        after = []
        for q in queries[: cfg["breakdown_queries"]]:
            ts = time.perf_counter()
            mem.tree.engine.search(q, boosts=boosts, limit=eng_limit)
            after.append(time.perf_counter() - ts)
        out["search"]["engine_after_reindex"] = summary_ms(after)
        out["whoosh_segments_after_reindex"] = _segments(mem)
        out["whoosh_deleted_docs_after_reindex"] = _deleted(mem)
        mem.close()
        out["maxrss_mb"] = maxrss_mb()

        phase("reindex")
        # 6. cold one-shot process ------------------------------------------------------------
        py = sys.executable
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
        env.pop("MEMGROVE_HOME", None)

        def wall(code: str) -> float:
            ts = time.perf_counter()
            subprocess.run([py, "-c", code], check=True, env=env, cwd=tempfile.gettempdir(),
                           stdout=subprocess.DEVNULL)
            return time.perf_counter() - ts

        cold, base_py, base_imp, inner = [], [], [], []
        crng = random.Random(f"memgrove-scale-cold-{cfg['seed']}")
        for k in range(cfg["cold_runs"]):
            q = corpus.query(crng)
            if k % 2 == 0:  # the baselines vary less: every other run is enough
                base_py.append(wall("pass"))
                base_imp.append(wall("import memgrove"))
            cold.append(wall(f"from memgrove import Memory; Memory.open({str(tmp)!r}).search({q!r})"))
        probe = ("import time; t0 = time.perf_counter(); from memgrove import Memory; t1 = time.perf_counter(); "
                 "m = Memory.open({p!r}); t2 = time.perf_counter(); m.search({q!r}); t3 = time.perf_counter(); "
                 "print(t1 - t0, t2 - t1, t3 - t2)")
        for k in range(min(3, cfg["cold_runs"])):
            q = corpus.query(crng)
            r = subprocess.run([py, "-c", probe.format(p=str(tmp), q=q)], check=True, env=env,
                               capture_output=True, text=True)
            inner.append([float(x) for x in r.stdout.split()])
        out["cold"] = {
            "runs": len(cold),
            "query_process_ms": summary_ms(cold),
            "python_pass_ms": summary_ms(base_py),
            "import_memgrove_ms": summary_ms(base_imp),
            "inside_p50_ms": {
                "import": round(pct([x[0] for x in inner], 50) * 1000, 1),
                "open": round(pct([x[1] for x in inner], 50) * 1000, 2),
                "first_search": round(pct([x[2] for x in inner], 50) * 1000, 1),
            },
        }
        log(f"  [{n}] cold query process p50 {pct(cold, 50) * 1000:.0f} ms")

        phase("cold")
        # 7. disk ----------------------------------------------------------------------------
        home = tmp / ".memgrove"
        parts = {name: disk_usage(home / name) for name in ("tree", "index", "journal")}
        total = disk_usage(home)
        parts["other"] = {k: total[k] - sum(p[k] for p in parts.values()) for k in total}
        parts["total"] = total
        out["disk"] = parts
        phase("disk")
        out["phase_s"] = phases
        out["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        return out


# -- scale curves (--curve): one size, in a child process ------------------------------------

CURVE_SIZES = [1000, 5000, 25000, 100000]


def _tiers_module() -> Any:
    """benchmarks/tiers.py (its question generators and cold-process runner), imported lazily:
    tiers.py imports this file at its top, so importing it here at module level would be circular."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import tiers  # noqa: PLC0415
    return tiers


class LazyOps:
    """The first ``n`` ops of the corpus, generated on access (``Corpus.op`` is a pure function of i):
    the curve never holds all N entries in memory, so peak RSS is memgrove's, not the corpus's."""

    def __init__(self, corpus: Corpus, n: int):
        self.corpus, self.n = corpus, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.corpus.op(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.corpus.op(i) for i in range(self.n))


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_curve_size(n: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """Build time, disk, peak RSS, warm latency per realized tier (``Memory.query``) and cold
    ``memgrove query`` processes for one tree of ``n`` entries."""
    os.environ.pop("MEMGROVE_MODEL", None)  # no LLM: tiers 0-2 never need one
    tiers = _tiers_module()
    from memgrove import Memory
    importlib.import_module("memgrove.graphs.pipeline")  # now, not at the first query: one version of the code

    log = functools.partial(print, file=sys.stderr, flush=True)
    out: dict[str, Any] = {"size": n, "loadavg": {"start": _loadavg()}, "commit": _commit(),
                           "uncommitted": _uncommitted()}
    corpus = Corpus(cfg["seed"])
    ops = LazyOps(corpus, n)
    out["rss_baseline_mb"] = maxrss_mb()  # interpreter + imports + the corpus's vocabulary
    with scratch_dir(f"memgrove-curve-{n}-", cfg, out) as tmp:
        # 1. build: curate in batches, generation of the ops not timed ------------------------------
        _tiers_module().choose_engine(tmp, cfg.get("engine"))
        mem = Memory.open(tmp, create=True, durable=False)
        out["engine"] = mem.tree.engine.name
        batch = int(cfg.get("size_batch", {}).get(str(n), cfg["batch"]))
        batch_t: list[float] = []
        gen_s = 0.0
        every = max(1, (n // batch) // 10)
        with RssSampler(every=0.1) as sampler:
            for i in range(0, n, batch):
                tg = time.perf_counter()
                chunk = [ops[j] for j in range(i, min(n, i + batch))]
                tb = time.perf_counter()
                gen_s += tb - tg
                res = mem.curate(chunk)
                batch_t.append(time.perf_counter() - tb)
                assert len(res) == len(chunk) and all(r.status == "added" for r in res)
                if len(batch_t) % every == 0 and i + batch < n:
                    done = i + len(chunk)
                    log(f"  [{n}] built {done}/{n} ({done / sum(batch_t):.0f} ops/s, last batch "
                        f"{len(chunk) / batch_t[-1]:.0f} ops/s)")
            mem.close()
        build_s = sum(batch_t)
        last_n = n - batch * (len(batch_t) - 1)
        out["build"] = {"seconds": round(build_s, 2), "ops_per_s": round(n / build_s, 1), "batch": batch,
                        "batches": len(batch_t), "generate_s_not_timed": round(gen_s, 1),
                        "first_batch_ops_per_s": round(min(batch, n) / batch_t[0], 1),
                        "last_batch_ops_per_s": round(last_n / batch_t[-1], 1),
                        "peak_rss_with_children_mb": sampler.peak_mb,
                        "peak_rss_anon_mb_sampled": round(sampler.peak_anon_kb / 1024, 1)}
        out["rss_after_build_mb"] = maxrss_mb()
        out["loadavg"]["after_build"] = _loadavg()
        log(f"  [{n}] build {build_s:.1f} s ({n / build_s:.0f} ops/s)")

        # 2. disk, before any query writes the cache or the query log ----------------------------------
        home = tmp / ".memgrove"
        disk = {name: disk_usage(home / name) for name in ("tree", "index", "journal")}
        disk["total"] = disk_usage(home)
        out["disk"] = disk

        # 3. warm Memory.query in a fresh reader (default settings), interleaved rounds -----------------
        tq = time.perf_counter()
        qs = tiers.Questions(corpus, ops, cfg["seed"])  # document frequencies: one pass over the corpus
        per, lag, warm, cold_n = cfg["per_tier"], cfg["lag"], cfg["warmup"], cfg["cold_runs"]
        pool = qs.tier2(warm + per + 3 * cold_n + 5)
        warm_t2, meas, rest = pool[:warm], pool[warm:warm + per], pool[warm + per:]
        out["questions"] = {"generate_s": round(time.perf_counter() - tq, 1),
                            "tier2_examples": [p["q"] for p in meas[:3]],
                            "reword_examples": [qs.reword(p, j)[0] for j, p in enumerate(meas[:3])]}
        mem = Memory.open(tmp, durable=False)

        def ask(q: str) -> tuple[Any, float]:
            ts = time.perf_counter()
            a = mem.query(q)
            return a, time.perf_counter() - ts

        t_first = time.perf_counter()
        _, first = ask(warm_t2[0]["q"])
        out["first_query_ms"] = round(first * 1000, 1)
        for k, p in enumerate(warm_t2):  # warm-up: every kind of call, not recorded
            ask(p["q"])
            ask(qs.reword(p, k)[0])
        # A reader becomes "long-lived" (inotify watcher instead of a stat scan per query) once it
        # has been checking for `watch_after` seconds; a short warm-up must not end before that.
        wait = mem.tree.settings.watch_after + 0.1 - (time.perf_counter() - t_first)
        if wait > 0:
            time.sleep(wait)
        ask(warm_t2[0]["q"])
        out["watcher_active"] = getattr(mem.tree, "_watcher", None) is not None  # private: informational
        records: list[dict[str, Any]] = []
        t_loop = time.perf_counter()
        for i in range(per + lag):
            calls: list[tuple[str, str, dict[str, Any]]] = []
            if i < per:
                calls.append(("tier2", meas[i]["q"], meas[i]))    # fresh: tier 2 expected
            if i >= lag:
                p = meas[i - lag]
                calls.append(("repeat", p["q"], p))               # same words: tier 0 expected
                rq, how = qs.reword(p, i - lag)
                calls.append(("reword:" + how, rq, p))            # reworded: tier 1 expected
            r = i % len(calls)
            for kind, q, src in calls[r:] + calls[:r]:            # rotate the order: noise hits every kind alike
                a, wall = ask(q)
                rec = {"kind": kind, "tier": tiers.label_of(a), "wall_ms": wall * 1000,
                       "latency_ms": a.latency_ms, "cached": a.cached}
                if kind == "tier2":  # did tier 2 answer with the entry the question was made from?
                    rec["right_entry"] = bool(a.sources) and a.sources[0] == src["entry"]
                    rec["in_sources"] = src["entry"] in a.sources
                records.append(rec)
        out["query_loop_s"] = round(time.perf_counter() - t_loop, 1)
        out.update(tiers.summarize(records))
        out["loadavg"]["after_queries"] = _loadavg()
        log(f"  [{n}] warm p50 ms: " + ", ".join(f"tier {k} {v['wall_ms']['p50']:.2f} (n={v['wall_ms']['n']})"
                                                 for k, v in out["by_tier"].items()))

        # 4. cold `memgrove query` processes: a cached question (tier 0), fresh ones routed to tier 2 -----
        fresh = [p["q"] for p in rest if mem.pipeline.retrieve(p["q"])[1] == "direct"]  # caches nothing
        cached_q = next(p["q"] for p in meas if mem.query(p["q"]).tier == 0)  # asked before: cached
        mem.close()
        out["rss_peak_mb"] = maxrss_mb()  # before the cold processes (children, not counted here)
        out["cold"] = tiers.cold_runs(tmp, cached_q, fresh[:cold_n], cold_n)
        c = out["cold"]
        log(f"  [{n}] cold p50 ms: tier 0 {c['cli_tier0']['p50']:.0f}, tier 2 {c['cli_tier2']['p50']:.0f}")
        out["loadavg"]["end"] = _loadavg()
        return out


# -- reporting -------------------------------------------------------------------------

def versions(*dists: str) -> dict[str, str | None]:
    """Installed version of each distribution (None if it is not installed); every report records them."""
    out: dict[str, str | None] = {}
    for d in dists:
        try:
            out[d] = importlib.metadata.version(d)
        except importlib.metadata.PackageNotFoundError:
            out[d] = None
    return out


def machine_info(seed: int) -> dict[str, Any]:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True,
                                text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    cpu = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_total = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_total = round(int(line.split()[1]) / 1024 / 1024, 1)
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "cores": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "ram_gb": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "whoosh": (v := versions("Whoosh-Reloaded", "whoosh", "memgrove"))["Whoosh-Reloaded"] or v["whoosh"],
        "memgrove": v["memgrove"],
        "commit": commit,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def _ok(value: float, target: float) -> str:
    return "ok" if value <= target else "MISS"


def render_markdown(report: dict[str, Any]) -> str:
    m, runs, c = report["machine"], report["runs"], report["config"]
    sizes = [r["size"] for r in runs]
    L: list[str] = ["# memgrove scale benchmark", ""]
    L.append(f"{m['date']} · seed {m['seed']} · {m['cores']} cores ({m['cpu']}) · {m['ram_gb']} GB RAM · "
             f"Python {m['python']} · whoosh-reloaded {m['whoosh']} · memgrove {m['memgrove']} @ {m['commit']} · "
             f"load average at start {m['loadavg']}")
    L.append("")
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s")
    L.append("")
    L.append(f"Build: `Memory.open(tmp, create=True, durable=False)` + `mem.curate` in batches of {c['batch']} ADDs; "
             f"then {c['single_adds']} ADDs one per `curate` call. Search: {c['queries']} queries of 2-4 vocabulary "
             f"words after {c['warmup']} warm-up queries, `limit=10`, all modes interleaved query by query in one "
             f"process: *engine* = `mem.tree.engine.search` alone (the baseline); *default* = `Memory.open` defaults "
             f"(inotify watcher once the process is warm); *strict* = `watch=False, scan_interval=0` (stat scan of "
             f"the whole tree before every search); *interval* = `watch=False, scan_interval=1.0`. Times in ms "
             f"unless noted. *interval*'s p95 depends on how often its once-a-second rescan falls on a measured "
             f"query (about one in (1 s ÷ the time of one round of all modes)). Shared, noisy 2-core machine: read "
             f"medians and the ratios measured in the same run.")
    L.append("")
    growth = len(sizes) >= 2
    tgt_col = TARGET_SIZE in sizes
    head = "| metric | " + " | ".join(f"{s:,}" for s in sizes) + " |"
    if growth:
        head += f" ×{sizes[-1] / sizes[0]:g} entries → |"
    if tgt_col:
        head += f" target @ {TARGET_SIZE:,} |"
    L.append(head)
    L.append("|" + "---|" * (head.count("|") - 1))
    tr = next((r for r in runs if r["size"] == TARGET_SIZE), None)

    def row(label: str, get: Callable[[dict], float], fmt: str = "{:.1f}", key: str = "", unit: str = "ms",
            grow: bool = True, text: Callable[[dict], str] | None = None) -> None:
        vals = [get(r) for r in runs]
        cells = [text(r) for r in runs] if text else [fmt.format(v) for v in vals]
        line = f"| {label} | " + " | ".join(cells) + " |"
        if growth:
            line += (f" ×{vals[-1] / vals[0]:.2f} |" if grow and vals[0] else " |")
        if tgt_col:
            target = ""
            if key and tr is not None:
                v = get(tr)
                target = f"≤ {TARGETS[key]:g} {unit}: **{'ok' if v <= TARGETS[key] else 'MISS'}**"
            line += f" {target} |"
        L.append(line)

    row("curate, batches of %d: ops/s" % c["batch"], lambda r: r["build"]["ops_per_s"], "{:.0f}")
    row("  first batch, ops/s", lambda r: r["build"]["first_batch_ops_per_s"], "{:.0f}")
    row("  last batch, ops/s", lambda r: r["build"]["last_batch_ops_per_s"], "{:.0f}")
    row("curate, one op per call: ops/s", lambda r: r["single_add"]["ops_per_s"], "{:.1f}")
    row("  latency p50", lambda r: r["single_add"]["latency_ms"]["p50"])
    row("  latency p95", lambda r: r["single_add"]["latency_ms"]["p95"])
    row("full reindex, s", lambda r: r["reindex"]["seconds"], "{:.2f}", "reindex_s", "s")
    labels = {"engine": "engine alone (baseline)", "default": "mem.search, default (watcher)",
              "strict": "mem.search, strict scan", "interval_1s": "mem.search, scan_interval=1.0"}
    for mode, label in labels.items():
        for p in ("p50", "p95", "p99"):
            key = "search_p95_ms" if p == "p95" and mode != "engine" else ""
            row(f"search {p}: {label}", lambda r, mode=mode, p=p: r["search"][mode][p], "{:.2f}", key)
    for mode in ("default", "strict", "interval_1s"):
        row(f"  {mode} ÷ engine, p50 / p95", lambda r, mode=mode: r["search"][mode]["x_engine_p50"], grow=False,
            text=lambda r, mode=mode: f"{r['search'][mode]['x_engine_p50']:.2f}× / "
                                      f"{r['search'][mode]['x_engine_p95']:.2f}×")
    row("search p50: engine alone after full reindex", lambda r: r["search"]["engine_after_reindex"]["p50"], "{:.2f}")
    row("search p95: engine alone after full reindex", lambda r: r["search"]["engine_after_reindex"]["p95"], "{:.2f}")
    row("  Whoosh segments: built by curate / after reindex", lambda r: r["whoosh_segments"] or 0, grow=False,
        text=lambda r: f"{r['whoosh_segments']} / {r['whoosh_segments_after_reindex']}")
    row("  deleted docs kept in the index: built by curate", lambda r: r["whoosh_deleted_docs"] or 0, grow=False,
        text=lambda r: f"{r['whoosh_deleted_docs']} of {r['whoosh_deleted_docs'] + r['files_scanned']}"
        if r["whoosh_deleted_docs"] is not None else "?")
    row("fingerprint p50: default (watcher)", lambda r: r["fingerprint_ms"]["default"]["p50"], "{:.2f}")
    row("fingerprint p95: default (watcher)", lambda r: r["fingerprint_ms"]["default"]["p95"], "{:.2f}",
        "fingerprint_ms")
    row("fingerprint p50: strict (scan)", lambda r: r["fingerprint_ms"]["strict"]["p50"], "{:.2f}")
    row("fingerprint p95: strict (scan)", lambda r: r["fingerprint_ms"]["strict"]["p95"], "{:.2f}",
        "fingerprint_ms")
    row("  stat scan of the tree alone, p50", lambda r: r["scan_ms"]["p50"], "{:.2f}")
    row("  digest of the scan alone, p50", lambda r: r["digest_ms"]["p50"], "{:.2f}")
    row("cold one-shot query process, p50", lambda r: r["cold"]["query_process_ms"]["p50"], "{:.0f}")
    row("  `python -c pass`, p50", lambda r: r["cold"]["python_pass_ms"]["p50"], "{:.0f}")
    row("  `python -c 'import memgrove'`, p50", lambda r: r["cold"]["import_memgrove_ms"]["p50"], "{:.0f}")
    row("  inside it: `Memory.open`", lambda r: r["cold"]["inside_p50_ms"]["open"], "{:.1f}")
    row("  inside it: first `search`", lambda r: r["cold"]["inside_p50_ms"]["first_search"], "{:.0f}")
    row("peak RSS after the build, MB", lambda r: r["maxrss_after_build_mb"], "{:.0f}")
    row("peak RSS, whole run in-process, MB", lambda r: r["maxrss_mb"], "{:.0f}")
    row("peak RSS during reindex (process + workers), MB", lambda r: r["reindex"]["peak_rss_mb"], "{:.0f}")
    mb = 1024 * 1024
    row("disk tree/, MB (bytes / allocated)", lambda r: r["disk"]["tree"]["allocated"] / mb,
        text=lambda r: f"{r['disk']['tree']['bytes'] / mb:.1f} / {r['disk']['tree']['allocated'] / mb:.1f}")
    row("disk index/, MB", lambda r: r["disk"]["index"]["allocated"] / mb, "{:.1f}")
    row("disk journal/, MB", lambda r: r["disk"]["journal"]["allocated"] / mb, "{:.1f}")
    row("disk .memgrove/ total, MB", lambda r: r["disk"]["total"]["allocated"] / mb, "{:.1f}")
    row("files in tree/ (entries + context.md)", lambda r: r["files_scanned"], "{:,}")
    L.append("")
    if tgt_col and tr is not None:
        L.append(f"Targets (issue 2, {TARGET_SIZE:,} entries, 2 cores): search p95 ≤ {TARGETS['search_p95_ms']:g} ms "
                 f"warm, fingerprint ≤ {TARGETS['fingerprint_ms']:g} ms (compared with p95), full reindex ≤ "
                 f"{TARGETS['reindex_s']:g} s.")
        L.append("")

    for r in runs:
        L.append(f"## {r['size']:,} entries: where the time goes")
        L.append("")
        for name, bd in r["search_breakdown"].items():
            L.append(f"Search, {labels.get(name, name)}: {bd['total']['mean_ms']:.2f} ms mean, "
                     f"{bd['total']['p50_ms']:.2f} ms p50 over {c['breakdown_queries']} queries "
                     f"(exclusive time per part):")
            L.append("")
            L.append("| part | p50 ms | mean ms | share |")
            L.append("|---|---|---|---|")
            for k, v in sorted(bd.items(), key=lambda kv: -kv[1]["mean_ms"]):
                if k != "total":
                    L.append(f"| {k} | {v['p50_ms']:.3f} | {v['mean_ms']:.3f} | {v['share'] * 100:.0f}% |")
            L.append("")
        L.append(f"Curate, one ADD per call: {r['single_add']['latency_ms']['mean']:.1f} ms mean, "
                 f"{r['single_add']['latency_ms']['p50']:.1f} ms p50:")
        L.append("")
        L.append("| part | p50 ms | mean ms | share |")
        L.append("|---|---|---|---|")
        for k, v in sorted(r["single_add"]["breakdown"].items(), key=lambda kv: -kv[1]["mean_ms"]):
            if k != "total":
                L.append(f"| {k} | {v['p50_ms']:.3f} | {v['mean_ms']:.3f} | {v['share'] * 100:.0f}% |")
        L.append("")
        L.append(f"Corpus: {r['corpus']['entries']:,} entries, {r['corpus']['words_total']:,} words "
                 f"(median {r['corpus']['words_p50']:.0f} per entry), {r['corpus']['domains']} domains, "
                 f"{r['corpus']['topics']} topics, {r['folders']} folders; Whoosh segments after the build "
                 f"{r['whoosh_segments']}, after reindex {r['whoosh_segments_after_reindex']}; queries with no hit "
                 f"{r['search']['empty_results']} (those fall back to fuzzy/prefix); watcher active in the default "
                 f"reader: {r['watcher_active']}; load average {r['loadavg_start']} → {r['loadavg_end']}; "
                 f"this size took {r['wall_s']:.0f} s.")
        L.append("")
    return "\n".join(L)


# -- scale curves: growth exponents, report, plot ----------------------------------------------

_MB = 1024 * 1024


def _batch_note(runs: list[dict[str, Any]], c: dict[str, Any]) -> str:
    """" (100,000 in batches of 1000)" when --size-batch changed the batch of some size."""
    other = [(r["size"], r["build"]["batch"]) for r in runs if r["build"]["batch"] != c["batch"]]
    return (" (" + ", ".join(f"{s:,} in batches of {b}" for s, b in other) + ")") if other else ""


def _tier_p(r: dict[str, Any], tier: str, p: str = "p50") -> float | None:
    v = r.get("by_tier", {}).get(tier, {}).get("wall_ms", {})
    return v.get(p) if v.get("n") else None


def _cold_p(r: dict[str, Any], key: str, p: str = "p50") -> float | None:
    v = r.get("cold", {}).get(key, {})
    return v.get(p) if v.get("n") else None


# key -> (label, unit, getter); the order of the table and of the plot's legends
CURVE_METRICS: dict[str, tuple[str, str, Callable[[dict[str, Any]], float | None]]] = {
    "build_s": ("build (curate, batches)", "s", lambda r: r["build"]["seconds"]),
    "build_ops_per_s": ("build throughput", "ops/s", lambda r: r["build"]["ops_per_s"]),
    "disk_mb": (".memgrove/ on disk", "MB", lambda r: r["disk"]["total"]["allocated"] / _MB),
    "peak_rss_mb": ("peak RSS (build + warm queries)", "MB", lambda r: r["rss_peak_mb"]),
    "tier0_p50_ms": ("tier 0 exact cache p50", "ms", lambda r: _tier_p(r, "0")),
    "tier1_p50_ms": ("tier 1 fuzzy cache p50", "ms", lambda r: _tier_p(r, "1")),
    "tier2_p50_ms": ("tier 2 BM25 direct p50", "ms", lambda r: _tier_p(r, "2")),
    "tier2_p95_ms": ("tier 2 BM25 direct p95", "ms", lambda r: _tier_p(r, "2", "p95")),
    "cold_tier2_p50_ms": ("cold `memgrove query`, tier 2, p50", "ms", lambda r: _cold_p(r, "cli_tier2")),
    "cold_tier0_p50_ms": ("cold `memgrove query`, tier 0, p50", "ms", lambda r: _cold_p(r, "cli_tier0")),
}


def growth_exponent(sizes: list[float], values: list[float | None]) -> dict[str, Any]:
    """Least-squares slope of log(value) against log(size) (1.0 = linear, 0 = flat), its R², and the
    slopes between consecutive sizes. Points with no value (or a non-positive one) are left out."""
    pts = [(math.log(s), math.log(v)) for s, v in zip(sizes, values)
           if v is not None and isinstance(v, (int, float)) and math.isfinite(v) and v > 0 and s > 0]
    out: dict[str, Any] = {"slope": None, "r2": None, "points": len(pts), "local": []}
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        out["local"].append(round((y1 - y0) / (x1 - x0), 3) if x1 != x0 else None)
    if len(pts) < 2:
        return out
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return out
    slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
    ss_tot = sum((y - my) ** 2 for _, y in pts)
    ss_res = sum((y - (my + slope * (x - mx))) ** 2 for x, y in pts)
    out["slope"] = round(slope, 3)
    out["r2"] = round(1 - ss_res / ss_tot, 3) if ss_tot > 0 else 1.0
    return out


def curve_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    sizes = [r["size"] for r in runs]
    metrics, exps = {}, {}
    for key, (label, unit, get) in CURVE_METRICS.items():
        vals = []
        for r in runs:
            v = get(r)
            vals.append(round(v, 3) if isinstance(v, (int, float)) and math.isfinite(v) else None)
        metrics[key] = {"label": label, "unit": unit, "values": vals}
        exps[key] = growth_exponent(sizes, vals)
    return {"sizes": sizes, "metrics": metrics, "exponents": exps}


def _f(v: float | None, fmt: str = "{:.2f}") -> str:
    return "—" if v is None else fmt.format(v)


def _k(e: dict[str, Any]) -> str:
    return "—" if e["slope"] is None else f"{e['slope']:.2f}"


def render_curve_markdown(report: dict[str, Any], png: str | None) -> str:
    m, c, runs, cv = report["machine"], report["config"], report["runs"], report["curve"]
    M, E = cv["metrics"], cv["exponents"]
    L = ["# memgrove scale curve", ""]
    L.append(f"{m['date']} · seed {m['seed']} · {m['cores']} cores ({m['cpu']}) · {m['ram_gb']} GB RAM · "
             f"Python {m['python']} · whoosh-reloaded {m['whoosh']} · memgrove {m['memgrove']} @ {m['commit']}"
             + (f" (uncommitted: {', '.join(m['uncommitted'])})" if m.get("uncommitted") else ""))
    L.append("")
    commits = {r["size"]: r.get("commit") for r in runs}
    if any(c_ and c_ != m["commit"] for c_ in commits.values()):
        L.append("**The code changed during the run** (commit per size: "
                 + ", ".join(f"{s:,} @ {c_}" for s, c_ in commits.items()) + ").")
        L.append("")
    L.append(f"Load average (1/5/15 min): {m['loadavg']} at the start, {m['loadavg_end']} at the end; per size "
             "below. The machine is shared (other benchmarks may run beside this one): read medians, and "
             "exponents over the whole range rather than one step.")
    L.append("")
    L.append(f"Command: `{report['command']}` · wall time {report['wall_s']:.0f} s "
             f"({report['wall_s'] / 60:.1f} min)")
    L.append("")
    L.append(f"Each size in its own child process and temp dir. Build: `Memory.open(tmp, create=True, "
             f"durable=False)` + `mem.curate` in batches of {c['batch']} ADDs{_batch_note(runs, c)} (seeded "
             f"synthetic corpus, entry *i* "
             f"the same at every size; generating the ops is not timed). Warm: a fresh `Memory.open(tmp, "
             f"durable=False)` (default settings, no LLM) answers `Memory.query` in {c['per_tier']} interleaved "
             f"rounds after {c['warmup']} warm-up rounds: a fresh question from an entry's rarest title words "
             f"(tier 2 expected), the same question {c['lag']} rounds later (tier 0) and a rewording (tier 1); "
             f"latency = wall time of `mem.query`, grouped by the tier the answer reported (benchmarks/tiers.py's "
             f"generators). Cold: `memgrove --root T query Q --json` as a fresh process, {c['cold_runs']} rounds "
             f"(a cached question, and a fresh one checked to route to tier 2). Peak RSS = the worker's "
             f"`ru_maxrss` over build + warm queries (baseline before the build ≈ "
             f"{runs[0]['rss_baseline_mb']:.0f} MB: interpreter, imports, the corpus vocabulary). Disk = "
             f"allocated size of `.memgrove/` after the build. Times in ms unless noted.")
    L.append("")
    L.append("| size | build s | build ops/s | disk MB | peak RSS MB | tier0 p50 | tier1 p50 | tier2 p50 / p95 | "
             "cold CLI p50 (tier 2) |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for j, r in enumerate(runs):
        v = {k: M[k]["values"][j] for k in M}
        L.append(f"| {r['size']:,} | {_f(v['build_s'], '{:.1f}')} | {_f(v['build_ops_per_s'], '{:.0f}')} | "
                 f"{_f(v['disk_mb'], '{:.1f}')} | {_f(v['peak_rss_mb'], '{:.0f}')} | {_f(v['tier0_p50_ms'])} | "
                 f"{_f(v['tier1_p50_ms'])} | {_f(v['tier2_p50_ms'], '{:.1f}')} / {_f(v['tier2_p95_ms'], '{:.1f}')} | "
                 f"{_f(v['cold_tier2_p50_ms'], '{:.0f}')} |")
    L.append(f"| **growth exponent** | **{_k(E['build_s'])}** | **{_k(E['build_ops_per_s'])}** | "
             f"**{_k(E['disk_mb'])}** | **{_k(E['peak_rss_mb'])}** | **{_k(E['tier0_p50_ms'])}** | "
             f"**{_k(E['tier1_p50_ms'])}** | **{_k(E['tier2_p50_ms'])} / {_k(E['tier2_p95_ms'])}** | "
             f"**{_k(E['cold_tier2_p50_ms'])}** |")
    L.append("")
    L.append("Growth exponent: least-squares slope of log(metric) against log(size) over the sizes measured "
             "(1.0 = linear, 0 = flat, 0.5 = ×√N); with two sizes it is the slope between them.")
    L.append("")
    if png:
        L.append(f"![latency, build time and resources against tree size, log-log]({png})")
        L.append("")
    # every exponent, with its fit and the slope between consecutive sizes
    pairs = [f"{a:,}→{b:,}" for a, b in zip(cv["sizes"], cv["sizes"][1:])]
    L.append("| metric | " + " | ".join(f"{s:,}" for s in cv["sizes"]) + " | exponent (R²) | "
             + " | ".join(f"slope {p}" for p in pairs) + " |")
    L.append("|---|" + "---|" * (len(cv["sizes"]) + 1 + len(pairs)))
    for key, mm in M.items():
        e = E[key]
        fmt = "{:.0f}" if mm["unit"] in ("ops/s",) or key.startswith("cold") else (
            "{:.1f}" if mm["unit"] in ("s", "MB") or key.startswith("tier2") else "{:.2f}")
        local = e["local"] + [None] * (len(pairs) - len(e["local"]))
        L.append(f"| {mm['label']}, {mm['unit']} | " + " | ".join(_f(v, fmt) for v in mm["values"])
                 + f" | {_k(e)}" + (f" ({e['r2']:.2f})" if e["r2"] is not None and e["points"] > 2 else "") + " | "
                 + " | ".join(_f(x) for x in local) + " |")
    L.append("")
    # per size: the realized tiers, baselines, load
    L.append("| size | warm answers by reported tier (n) | tier 2: question's entry first | cold runs: reported "
             "tiers (cached / fresh question) | cold CLI tier 0 p50 | `python -c pass` / `import memgrove.cli` p50 | "
             "peak anon. RSS in the build (sampled) MB | first query ms | load avg (1 min) start → after build → end "
             "| wall s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")

    def tiers_seen(d: dict[str, int]) -> str:
        return ", ".join(f"tier {t}×{k}" for t, k in d.items()) or "—"

    for r in runs:
        mix = ", ".join(f"{('tier ' + t) if t != 'ood' else 'ood'}: {v['wall_ms']['n']}"
                        for t, v in r["by_tier"].items())
        cold, t2, la = r["cold"], r["by_kind"].get("tier2", {}), r["loadavg"]
        right = (f"{t2['right_entry_first']} of {t2['answered_at_tier2']}" if t2.get("answered_at_tier2") else "—")
        L.append(f"| {r['size']:,} | {mix} | {right} | {tiers_seen(cold['cli_tier0']['tiers'])} / "
                 f"{tiers_seen(cold['cli_tier2']['tiers'])} | {_f(_cold_p(r, 'cli_tier0'), '{:.0f}')} | "
                 f"{cold['python_pass']['p50']:.0f} / {cold['import_cli']['p50']:.0f} | "
                 f"{_f(r['build'].get('peak_rss_anon_mb_sampled'), '{:.0f}')} | {r['first_query_ms']:.0f} | "
                 f"{la['start'][0]:.2f} → {la['after_build'][0]:.2f} → {la['end'][0]:.2f} | {r.get('wall_s', 0):.0f} |")
    L.append("")
    mix_kind = []
    for k in ("tier2", "repeat", "reword (all)"):
        cells = []
        for r in runs:
            v = r["by_kind"].get(k)
            cells.append(f"{r['size']:,}: " + ("—" if not v else ", ".join(f"{t}×{n_}" for t, n_ in v["mix"].items())))
        mix_kind.append(f"*{k}* → " + "; ".join(cells))
    L.append("Realized tier per question kind (tier×count): " + " · ".join(mix_kind) + ".")
    L.append("")
    return "\n".join(L)


def log_log_axes(ax: Any, sizes: list[int]) -> None:
    """A curve panel's axes: log-log against tree size, one tick per size, legend below."""
    import matplotlib.ticker

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("entries in the tree")
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)


def plot_curve(report: dict[str, Any], path: Path) -> None:
    """Three log-log panels against tree size: query latency, build time, disk and peak RSS."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401  (NullLocator)

    cv = report["curve"]
    sizes, M, E = cv["sizes"], cv["metrics"], cv["exponents"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 6), constrained_layout=True)

    def line(ax, key: str, style: str, label: str | None = None) -> None:
        pts = [(s, v) for s, v in zip(sizes, M[key]["values"]) if v is not None and v > 0]
        if not pts:
            return
        k = E[key]["slope"]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", ms=4,
                label=f"{label or M[key]['label']} (k={k:.2f})" if k is not None else (label or M[key]["label"]))

    def ref(ax, key: str) -> None:  # a slope-1 (linear) guide through the first point
        vals = M[key]["values"]
        if vals and vals[0]:
            ax.plot([sizes[0], sizes[-1]], [vals[0], vals[0] * sizes[-1] / sizes[0]], ":", color="grey",
                    label="linear (k=1) guide")

    ax = axes[0]
    line(ax, "tier0_p50_ms", "-", "tier 0 exact cache, p50")
    line(ax, "tier1_p50_ms", "-", "tier 1 fuzzy cache, p50")
    line(ax, "tier2_p50_ms", "-", "tier 2 BM25 direct, p50")
    line(ax, "tier2_p95_ms", "--", "tier 2 BM25 direct, p95")
    line(ax, "cold_tier0_p50_ms", "-.", "cold CLI, tier 0, p50")
    line(ax, "cold_tier2_p50_ms", "-.", "cold CLI, tier 2, p50")
    ax.set_title("query latency (ms)")
    ax = axes[1]
    line(ax, "build_s", "-", "build: curate in batches (s)")
    ref(ax, "build_s")
    ax.set_title(f"build time (s), batches of {report['config']['batch']}{_batch_note(report['runs'], report['config'])}")
    ax = axes[2]
    line(ax, "disk_mb", "-", ".memgrove/ on disk (MB)")
    line(ax, "peak_rss_mb", "-", "peak RSS (MB)")
    ref(ax, "disk_mb")
    ax.set_title("disk and memory (MB)")
    for ax in axes:
        log_log_axes(ax, sizes)
    m = report["machine"]
    fig.suptitle(f"memgrove scale curve · {m['cores']} cores · load avg {m['loadavg'][0]:.1f} → "
                 f"{m['loadavg_end'][0]:.1f} · k = growth exponent (log-log slope)", fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _uncommitted() -> list[str] | None:
    try:
        return [ln[3:] for ln in subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                                                capture_output=True, text=True, timeout=5).stdout.splitlines()
                if ln.strip()]
    except (OSError, subprocess.SubprocessError):
        return None


def _size_tag(sizes: list[int]) -> str:
    def short(s: int) -> str:
        return f"{s // 1000}k" if s % 1000 == 0 else str(s)
    return "-".join(short(s) for s in sizes)


def _write_curve(report: dict[str, Any], out: Path, *, write: bool, plot: bool) -> None:
    log = functools.partial(print, file=sys.stderr, flush=True)
    png = out.with_suffix(".png") if (plot and write) else None
    if png:
        try:
            plot_curve(report, png)
        except ImportError as exc:  # matplotlib is in the `bench` extra
            log(f"no plot ({exc}); install it with: .venv/bin/pip install -e '.[bench]'")
            png = None
    md = render_curve_markdown(report, png.name if png else None)
    print(md)
    if write:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(md + "\n", encoding="utf-8")
        log(f"wrote {out.with_suffix('.json')}, {out.with_suffix('.md')}" + (f" and {png}" if png else ""))


def curve_main(a: argparse.Namespace, argv: list[str] | None) -> dict[str, Any]:
    if a.from_json:  # re-render only; the measurements (and the exponents) are recomputed from the runs
        report = json.loads(a.from_json.read_text(encoding="utf-8"))
        report["curve"] = curve_summary(report["runs"])
        _write_curve(report, a.out or a.from_json.with_suffix(""), write=not a.no_write, plot=not a.no_plot)
        return report
    q = a.quick
    pick = lambda v, quick, full: v if v is not None else (quick if q else full)  # noqa: E731
    size_batch = {}
    for spec in a.size_batch or []:
        size, _, b = spec.partition("=")
        if not (size.isdigit() and b.isdigit() and int(b) > 0):
            raise SystemExit(f"--size-batch wants SIZE=BATCH, e.g. 100000=1000, not {spec!r}")
        size_batch[size] = int(b)
    cfg = {"mode": "curve", "seed": a.seed, "batch": a.batch, "size_batch": size_batch, "keep": a.keep,
           "per_tier": pick(a.per_tier, 20, 200), "lag": pick(a.lag, 3, 10), "warmup": pick(a.warmup, 3, 10),
           "cold_runs": pick(a.cold_runs, 2, 10), "engine": a.engine}
    sizes = a.sizes or ([200, 400] if q else CURVE_SIZES)
    out = a.out or (RESULTS / (("scale_curve" if sizes == CURVE_SIZES else f"scale_curve_{_size_tag(sizes)}")
                               + (f"_{a.engine}" if a.engine else "")))
    command = "python benchmarks/scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(a.seed)
    machine["uncommitted"] = _uncommitted()
    log = functools.partial(print, file=sys.stderr, flush=True)
    log(f"memgrove scale curve: sizes {sizes}, seed {a.seed}, {machine['cores']} cores, load avg {machine['loadavg']}")
    env = {k: v for k, v in os.environ.items() if k != "MEMGROVE_MODEL"}
    t0 = time.perf_counter()
    runs = []
    for n in sizes:
        ts = time.perf_counter()
        log(f"size {n:,}:")
        if a.in_process:
            res = run_curve_size(n, {**cfg, "size": n})
        else:
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                                   json.dumps({**cfg, "size": n})], stdout=subprocess.PIPE, text=True, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"size {n}: worker failed with exit code {proc.returncode}")
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["wall_s"] = round(time.perf_counter() - ts, 1)
        log(f"  [{n}] took {res['wall_s']:.0f} s")
        runs.append(res)
    machine["loadavg_end"] = _loadavg()
    report = {"mode": "curve", "machine": machine, "config": cfg, "sizes": sizes, "command": command.strip(),
              "wall_s": round(time.perf_counter() - t0, 1), "runs": runs, "curve": curve_summary(runs)}
    _write_curve(report, out, write=not a.no_write, plot=not a.no_plot)
    return report


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="tree sizes (default 1000 10000; with --curve 1000 5000 25000 100000)")
    ap.add_argument("--curve", action="store_true",
                    help="scale curve: build time, disk, peak RSS, warm latency per query tier, cold CLI latency, "
                         "growth exponents and a log-log plot (writes scale_curve*.{json,md,png})")
    ap.add_argument("--per-tier", type=int, default=None,
                    help="--curve: fresh tier-2 questions, each repeated (tier 0) and reworded (tier 1) (default 200)")
    ap.add_argument("--lag", type=int, default=None, help="--curve: rounds between a question and its repeat (10)")
    ap.add_argument("--no-plot", action="store_true", help="--curve: no PNG")
    ap.add_argument("--size-batch", nargs="+", default=None, metavar="SIZE=BATCH",
                    help="--curve: build this size in batches of BATCH instead of --batch (still `mem.curate`; "
                         "e.g. 100000=1000 builds 100k about twice as fast, but its build time is then not on the "
                         "same curve)")
    ap.add_argument("--from-json", type=Path, default=None,
                    help="--curve: re-render OUT.md and OUT.png from a curve JSON (no measuring)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="size 300, few queries (for tests); with --curve sizes 200 400, 20 rounds, 2 cold runs")
    ap.add_argument("--queries", type=int, default=None, help="measured queries per mode (default 300)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up queries (default 20; --curve: rounds, 10)")
    ap.add_argument("--batch", type=int, default=250, help="ops per curate call while building")
    ap.add_argument("--single-adds", type=int, default=None, help="single-op curate calls (default 100)")
    ap.add_argument("--breakdown-queries", type=int, default=None,
                    help="queries per search-breakdown pass and after the reindex (default 50)")
    ap.add_argument("--cold-runs", type=int, default=None, help="cold one-shot processes (default 10)")
    ap.add_argument("--engine", choices=("whoosh", "tantivy"), default=None,
                    help="the trees' full-text engine (default: the product default); its name ends the file names")
    ap.add_argument("--out", type=Path, default=None,
                    help="write OUT.json and OUT.md (default benchmarks/results/scale, or scale_quick with --quick; "
                         "--curve: scale_curve for the default sizes, else scale_curve_<sizes>, plus OUT.png)")
    ap.add_argument("--no-write", action="store_true", help="only print the table")
    ap.add_argument("--keep", action="store_true", help="keep the temp trees (prints where)")
    ap.add_argument("--in-process", action="store_true", help="run sizes in this process (peak RSS then accumulates)")
    ap.add_argument("--worker", type=str, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)

    if a.worker:  # child: one size, JSON on stdout
        import signal
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally: remove the temp tree
        cfg = json.loads(a.worker)
        res = (run_curve_size if cfg.get("mode") == "curve" else run_size)(cfg["size"], cfg)
        sys.stdout.write(json.dumps(res) + "\n")
        return res

    if a.curve:
        return curve_main(a, argv)
    quick = a.quick
    cfg = {
        "seed": a.seed,
        "batch": a.batch,
        "queries": a.queries or (60 if quick else 300),
        "warmup": a.warmup if a.warmup is not None else (10 if quick else 20),
        "single_adds": a.single_adds or (20 if quick else 100),
        "cold_runs": a.cold_runs or (3 if quick else 10),
        "fingerprints": 20 if quick else 50,
        "breakdown_queries": a.breakdown_queries or (30 if quick else 50),  # also the engine-after-reindex pass
        "keep": a.keep, "engine": a.engine,
    }
    sizes = a.sizes or ([300] if quick else [1000, 10000])
    out = a.out or (RESULTS / (("scale_quick" if quick else "scale") + (f"_{a.engine}" if a.engine else "")))
    command = "python benchmarks/scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    machine = machine_info(a.seed)
    print(f"memgrove scale benchmark: sizes {sizes}, seed {a.seed}, {machine['cores']} cores, "
          f"load avg {machine['loadavg']}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    runs = []
    for n in sizes:
        ts = time.perf_counter()
        print(f"size {n:,}:", file=sys.stderr, flush=True)
        if a.in_process:
            res = run_size(n, {**cfg, "size": n})
        else:
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                                   json.dumps({**cfg, "size": n})], stdout=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"size {n}: worker failed with exit code {proc.returncode}")
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["wall_s"] = round(time.perf_counter() - ts, 1)
        runs.append(res)
    report = {"machine": machine, "config": cfg, "sizes": sizes, "targets": {**TARGETS, "size": TARGET_SIZE},
              "command": command.strip(), "wall_s": round(time.perf_counter() - t0, 1), "runs": runs}
    md = render_markdown(report)
    print(md)
    if not a.no_write:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        out.with_suffix(".md").write_text(md + "\n", encoding="utf-8")
        print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}", file=sys.stderr)
    return report


if __name__ == "__main__":
    main()

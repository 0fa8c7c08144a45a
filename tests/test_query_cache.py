"""Cache correctness: tiers 0 and 1 (tree/index/cache.py and the pipeline).

A cached answer is served only while the tree is unchanged: after any curate
operation, a hand edit of any file (seen by the inotify watcher or by a scan),
or an undo, the next query must not get it. Tier 0 forgives case and spacing;
tier 1 forgives rewording but never a different number, name or negation.
Concurrent queries (threads, processes) while another process curates never
raise and never cite an entry deleted before they began.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import QUERY_SEED
from helpers.scripted_model import ScriptedChatModel
from helpers.watching import at_once, eventually

from memgrove import Memory
from memgrove.graphs import tiers
from memgrove.tree.index.cache import QueryCache, asks_same, jaccard, normalize_query, question_forms

Q = "How do refresh tokens rotate?"                 # tier 2, cites auth/jwt/rotation.md
Q_REWORDED = "how do the refresh tokens rotate now"  # the same words as Q once "the" and "now" are dropped
ROTATION = "auth/jwt/rotation.md"


def seeded(tmp_path: Path, **kw) -> Memory:
    # watch_after=0: the watcher starts at the second check, as in a long-lived process
    m = Memory.open(tmp_path, create=True, durable=False, watch_after=0, **kw)
    m.curate(QUERY_SEED)
    return m


def served_from_cache(mem: Memory, question: str) -> bool:
    """Would tier 0 or 1 answer ``question`` now? (asks the pipeline's own cache step)"""
    return mem.pipeline.from_caches(question, mem.pipeline.fingerprint(), time.perf_counter()) is not None


def warm(mem: Memory) -> tiers.Answer:
    """Q answered fresh, then from tier 0 and tier 1: the cache is primed."""
    first = mem.query(Q)
    assert (first.tier, first.cached, first.sources[0]) == (2, False, ROTATION)
    assert (mem.query(Q).tier, mem.query(Q_REWORDED).tier) == (0, 1)
    return first


# -- tree/index/cache.py ------------------------------------------------------------------

def test_normalize_query():
    assert normalize_query("  How  do\tRefresh\nTOKENS rotate? ") == "how do refresh tokens rotate?"


@pytest.mark.parametrize("q,words,asks", [
    ("what changed in 2023", ("chang", "in", "2023"), ()),
    ("Does Ana lead payments", ("ana", "lead", "payment"), ()),
    ("Ana led the payments?", ("ana", "lead", "payment"), ()),     # an irregular form, a plural
    ("did the job not run", ("job", "not", "run"), ()),
    ("didn't the job run", ("not", "job", "run"), ()),
    ("What's the job's schedule now?", ("job", "schedul"), ()),     # clitics and filler dropped
    ("Can you tell me when the job ran?", ("job", "run"), ("when",)),
    ("How do refresh tokens rotate", ("refresh", "token", "rotat"), ("how",)),
])
def test_question_forms(q, words, asks):
    assert question_forms(q) == (words, frozenset(asks))


def test_querycache_exact_and_fingerprint(tmp_path):
    c = QueryCache(tmp_path / "cache")
    try:
        c.put("How do refresh tokens rotate?", "fp1", {"text": "A"})
        assert c.get_exact("how do  REFRESH tokens rotate?", "fp1")["answer"] == {"text": "A"}
        assert c.get_exact("how do refresh tokens rotate?", "fp2") is None
        assert c.get_fuzzy("how do the refresh tokens rotate now", "fp2") is None
    finally:
        c.close()


def test_querycache_fuzzy_threshold_edge(tmp_path):
    c = QueryCache(tmp_path / "cache")
    try:
        c.put("alpha beta gamma", "fp", {"text": "A"})
        at = "alpha beta gamma delta epsilon"        # 3/5 = 0.6
        below = "alpha beta gamma delta epsilon zeta"  # 3/6 = 0.5
        words = lambda q: frozenset(question_forms(q).words)  # noqa: E731
        assert jaccard(words(at), words("alpha beta gamma")) == pytest.approx(0.6)
        assert c.get_fuzzy(at, "fp") is None           # the default: every word the same
        item, sim = c.get_fuzzy(at, "fp", threshold=0.6)
        assert item["answer"] == {"text": "A"} and sim == pytest.approx(0.6)
        assert c.get_fuzzy(below, "fp", threshold=0.6) is None
        # fewer than min_tokens content words: never fuzzy
        c.put("alpha", "fp", {"text": "B"})
        assert c.get_fuzzy("alpha!", "fp", min_tokens=2) is None
    finally:
        c.close()


def test_querycache_entries_expire(tmp_path):
    c = QueryCache(tmp_path / "cache", ttl=0.05)
    try:
        c.put("alpha beta gamma", "fp", {"text": "A"})
        assert c.get_exact("alpha beta gamma", "fp") is not None
        time.sleep(0.12)
        assert c.get_exact("alpha beta gamma", "fp") is None
        assert c.get_fuzzy("alpha beta gamma delta", "fp") is None
    finally:
        c.close()


# -- tiers 0 and 1 through the pipeline --------------------------------------------------

def test_case_and_spacing_hit_tier0(tmp_path):
    mem = seeded(tmp_path)
    try:
        a = mem.query(Q)
        for variant in ("how do refresh tokens rotate?", "  HOW   do refresh\ttokens ROTATE?  "):
            b = mem.query(variant)
            assert (b.tier, b.cached) == (0, True)
            assert (b.text, b.sources, b.top_score) == (a.text, a.sources, a.top_score)
            assert b.question == variant.strip()
    finally:
        mem.close()


def test_reworded_question_hits_tier1(tmp_path):
    mem = seeded(tmp_path)
    try:
        a = mem.query(Q)
        assert asks_same(question_forms(Q), question_forms(Q_REWORDED))
        b = mem.query(Q_REWORDED)
        assert (b.tier, b.cached, b.text, b.sources) == (1, True, a.text, a.sources)
        # a question that asks more is answered afresh
        far = "refresh tokens rotate how often, and who decided that rule"
        assert not asks_same(question_forms(Q), question_forms(far))
        assert mem.query(far).tier >= 2
    finally:
        mem.close()


MEANING_CHANGES = {
    "number": ("What did the 2023 release move to the ledger format",
               "What did the 2024 release move to the ledger format"),
    "name": ("Does Ana lead the payments team?", "Does Ben lead the payments team?"),
    "name first": ("Ana leads the payments team?", "Ben leads the payments team?"),
    "negation": ("did the old refresh tokens get revoked after the grace period",
                 "did the old refresh tokens not get revoked after the grace period"),
    "negation first": ("did the old refresh tokens not get revoked after the grace period",
                       "did the old refresh tokens get revoked after the grace period"),
    "contraction": ("did the old refresh tokens get revoked after the grace period",
                    "didn't the old refresh tokens get revoked after the grace period"),
}


@pytest.mark.parametrize("first,second", MEANING_CHANGES.values(), ids=MEANING_CHANGES.keys())
def test_fuzzy_tier_never_serves_a_different_meaning(tmp_path, first, second):
    # close enough that the old rule (Jaccard >= 0.6 of the word sets) served it
    assert jaccard(frozenset(question_forms(first).words), frozenset(question_forms(second).words)) >= 0.6
    # a scripted model, so tier 3-4 answers are real (cacheable) LLM answers
    model = ScriptedChatModel(replies=["## Summary\nfirst answer (team/people/ana.md)",
                                       "## Summary\nsecond answer (team/people/ana.md)"])
    mem = seeded(tmp_path, model=model)
    try:
        a = mem.query(first)
        assert not a.cached and (a.tier == 2 or a.llm)
        assert mem.query(first).tier == 0                         # it is cached
        b = mem.query(second)
        assert b.tier >= 2 and not b.cached, (b.tier, b.question)
        assert mem.query(second).tier == 0
    finally:
        mem.close()


def test_fuzzy_tier_and_lowercase_names(tmp_path):
    c = QueryCache(tmp_path / "cache")
    try:
        c.put("does ana lead the payments team", "fp", {"text": "Ana: yes"})
        assert c.get_fuzzy("does ben lead the payments team", "fp") is None
    finally:
        c.close()


def test_fuzzy_tier_still_serves_a_capitalized_first_word_that_both_share(tmp_path):
    mem = seeded(tmp_path)
    try:
        mem.query(Q)
        b = mem.query("Refresh tokens: how do they rotate now?")
        assert (b.tier, b.cached) == (1, True)
    finally:
        mem.close()


# -- invalidation -------------------------------------------------------------------------

CURATE_OPS = {
    "ADD elsewhere": [{"op": "ADD", "path": "misc/notes/unrelated.md", "title": "Unrelated",
                       "content": "Lunch is at noon.", "reason": "test"}],
    "UPDATE the source": [{"op": "UPDATE", "path": ROTATION, "replace": True, "title": "JWT refresh token rotation",
                           "content": "Refresh tokens rotate hourly now.", "reason": "test"}],
    "UPDATE elsewhere": [{"op": "UPDATE", "path": "team/people/ana.md", "content": "Ana also runs hiring.",
                          "reason": "test"}],
    "UPSERT": [{"op": "UPSERT", "path": "misc/notes/unrelated.md", "title": "Unrelated", "content": "x",
                "reason": "test"}],
    "DELETE the source": [{"op": "DELETE", "path": ROTATION, "reason": "test"}],
    "DELETE elsewhere": [{"op": "DELETE", "path": "releases/notes/release_2023.md", "reason": "test"}],
    "MERGE": [{"op": "MERGE", "path": "releases/notes/release_2023.md",
               "merge_into": "releases/notes/release_2024.md", "reason": "test"}],
}


@pytest.mark.parametrize("ops", CURATE_OPS.values(), ids=CURATE_OPS.keys())
def test_no_cached_answer_after_any_curate_op(tmp_path, ops):
    mem = seeded(tmp_path)
    try:
        warm(mem)
        mem.curate(ops)
        assert not served_from_cache(mem, Q) and not served_from_cache(mem, Q_REWORDED)
        a = mem.query(Q)
        assert not a.cached and a.tier >= 2
        if ops[0]["path"] == ROTATION and ops[0]["op"] == "DELETE":
            assert ROTATION not in a.sources
        if ops[0]["path"] == ROTATION and ops[0]["op"] == "UPDATE":
            assert "hourly" in a.text
    finally:
        mem.close()


def test_curate_by_another_process_invalidates(tmp_path):
    mem = seeded(tmp_path)
    try:
        warm(mem)
        other = Memory.open(tmp_path, durable=False)
        try:
            other.curate([{"op": "DELETE", "path": ROTATION, "reason": "test"}])
        finally:
            other.close()
        a = mem.query(Q)
        assert not a.cached and ROTATION not in a.sources
    finally:
        mem.close()


def _hand_edit(mem: Memory, kind: str) -> None:
    root = mem.home / "tree"
    if kind == "modify the source":
        p = root / ROTATION
        p.write_text(p.read_text().replace("30 second", "ninety second"))
    elif kind == "same-size edit":
        p = root / ROTATION
        before = p.stat()
        time.sleep(0.02)        # past the file system's timestamp granularity
        p.write_text(p.read_text().replace("30 second", "45 second"))
        assert p.stat().st_size == before.st_size
    elif kind == "add a file":
        (root / "misc" / "notes").mkdir(parents=True)
        (root / "misc" / "notes" / "by_hand.md").write_text("# By hand\n\nRefresh tokens are great.\n")
    elif kind == "delete the source":
        (root / ROTATION).unlink()
    elif kind == "delete another file":
        (root / "releases" / "notes" / "release_2023.md").unlink()
    elif kind == "edit a context.md":
        p = root / "auth" / "context.md"
        p.write_text(p.read_text() + "\nEdited by hand.\n")
    else:
        raise AssertionError(kind)


HAND_EDITS = ["modify the source", "same-size edit", "add a file", "delete the source", "delete another file",
              "edit a context.md"]


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "no-watcher"])
@pytest.mark.parametrize("kind", HAND_EDITS)
def test_no_cached_answer_after_a_hand_edit(tmp_path, kind, watch):
    # without a watcher, every search scans (scan_interval=0); a watcher's event arrives a moment later
    seen = eventually if watch else at_once
    mem = seeded(tmp_path, watch=watch, scan_interval=0)
    try:
        warm(mem)                                   # several queries: a watcher is on by now
        assert (mem.tree._watcher is not None) is watch
        _hand_edit(mem, kind)
        assert seen(lambda: not served_from_cache(mem, Q) and not served_from_cache(mem, Q_REWORDED))
        a = mem.query(Q)
        assert not a.cached and a.tier >= 2
        if kind == "delete the source":
            assert ROTATION not in a.sources
        if kind == "modify the source":
            assert "ninety second" in a.text
        if kind == "same-size edit":
            assert "45 second" in a.text
    finally:
        mem.close()


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "no-watcher"])
def test_no_cached_answer_after_a_hand_edit_through_the_graph(tmp_path, watch):
    seen = eventually if watch else at_once
    mem = seeded(tmp_path, watch=watch, scan_interval=0)
    try:
        g = mem.graph()
        p = mem.home / "tree" / ROTATION
        for i in range(1, 6):
            assert tiers.Answer.from_dict(g.invoke({"question": Q})["answer"]).tier == 0 or i == 1
            p.write_text(p.read_text().replace("grace period" + "!" * (i - 1) + ".", "grace period" + "!" * i + "."))

            def answered_afresh() -> bool:
                a = tiers.Answer.from_dict(g.invoke({"question": Q})["answer"])
                return not a.cached and "grace period" + "!" * i + "." in a.text

            assert seen(answered_afresh)
        assert (mem.tree._watcher is not None) is watch
    finally:
        mem.close()


@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "no-watcher"])
def test_hand_added_entry_is_found_by_the_next_graph_query(tmp_path, watch):
    """The graph's two branches both check for hand edits; the search must not run on the index
    while the other branch is still bringing it in step."""
    seen = eventually if watch else at_once
    mem = seeded(tmp_path, watch=watch, scan_interval=0)
    try:
        g = mem.graph()
        warm(mem)
        folder = mem.home / "tree" / "hand" / "notes"
        folder.mkdir(parents=True)
        for i in range(5):
            (folder / f"n{i}.md").write_text(f"# Walrus{i} fact\n\nThe walrus{i} colony lives on ice floe {i}.\n")

            def found() -> bool:
                a = tiers.Answer.from_dict(g.invoke({"question": f"where does the walrus{i} colony live"})["answer"])
                return a.sources[:1] == [f"hand/notes/n{i}.md"]

            assert seen(found), i
    finally:
        mem.close()


@pytest.mark.xfail(strict=True, reason="known limit of the stat-based fingerprint: an edit that keeps "
                                       "size and mtime (a restored timestamp, or within the clock's granularity) "
                                       "is not seen, even when inotify reported it")
def test_same_size_edit_with_restored_mtime(tmp_path):
    mem = seeded(tmp_path)
    try:
        warm(mem)
        p = mem.home / "tree" / ROTATION
        st = p.stat()
        p.write_text(p.read_text().replace("30 second", "45 second"))
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert not mem.query(Q).cached
    finally:
        mem.close()


def test_hand_edit_seen_by_a_fresh_process(tmp_path):
    mem = seeded(tmp_path)
    warm(mem)
    mem.close()
    _hand_edit_target = tmp_path / ".memgrove" / "tree" / ROTATION
    _hand_edit_target.write_text(_hand_edit_target.read_text().replace("30 second", "ninety second"))
    mem = Memory.open(tmp_path, durable=False)
    try:
        a = mem.query(Q)
        assert not a.cached and "ninety second" in a.text
    finally:
        mem.close()


def test_no_cached_answer_after_undo(tmp_path):
    mem = seeded(tmp_path)
    try:
        warm(mem)
        [deleted] = mem.curate([{"op": "DELETE", "path": ROTATION, "reason": "test"}])
        a = mem.query(Q)
        assert not a.cached and ROTATION not in a.sources
        mem.undo(deleted.id)
        assert not served_from_cache(mem, Q)
        b = mem.query(Q)
        assert not b.cached and b.sources[0] == ROTATION
        # and undoing an ADD
        assert mem.query(Q).tier == 0
        [added] = mem.curate([{"op": "ADD", "path": "misc/notes/x.md", "title": "X", "content": "x", "reason": "t"}])
        assert mem.query(Q).tier == 2
        assert mem.query(Q).tier == 0
        mem.undo(added.id)
        assert not mem.query(Q).cached
    finally:
        mem.close()


def test_no_cached_answer_after_a_ranking_setting_changes(tmp_path):
    """An answer was ranked under the settings of its time: a memory reopened with another ranking
    setting (config.toml edited) answers afresh; one reopened with only how it writes changed
    still serves the cache."""
    with seeded(tmp_path) as m:
        warm(m)
    with Memory.open(tmp_path, durable=True, lock_timeout=5.0, watch=False) as m:
        assert served_from_cache(m, Q) and m.query(Q).tier == 0
    with Memory.open(tmp_path, durable=False, watch_after=0, proximity_weight=0.6) as m:
        assert not served_from_cache(m, Q)
        assert (m.query(Q).tier, m.query(Q).tier) == (2, 0)
        m.tree.settings = m.tree.settings.replace(gap_ratio=0.5)     # changed in the running process
        assert not served_from_cache(m, Q)


@pytest.mark.parametrize("query_table,served", [("llm_timeout = 5.0\ncache_ttl_days = 3.0\n", True),
                                                 ("prefetch_limit = 3\n", False),
                                                 ("direct_score = 0.8\n", False)])
def test_no_cached_answer_after_a_query_setting_changes(tmp_path, query_table, served):
    """The [query] table decides what an answer holds (how many entries are prefetched, which tier
    answers): after an edit of it the memory answers afresh; an edit of how long an LLM may take
    or how long the cache keeps answers still serves the cache."""
    with seeded(tmp_path) as m:
        warm(m)
        (m.home / "config.toml").write_text("[query]\n" + query_table)
    with Memory.open(tmp_path, durable=False, watch_after=0) as m:
        assert served_from_cache(m, Q) is served
        assert m.query(Q).cached is served


def test_llm_answers_are_invalidated_too(tmp_path):
    model = ScriptedChatModel(replies=["## Summary\nAna (team/people/ana.md)", "## Summary\nBen (team/people/ana.md)"])
    mem = seeded(tmp_path, model=model)
    try:
        assert mem.query("who owns billing").llm
        assert mem.query("who owns billing").tier == 0
        mem.curate([{"op": "UPDATE", "path": "team/people/ana.md", "reason": "t",
                     # a match no closer than the seed's, so the question still routes to the LLM
                     "content": "Since May, Ben owns billing and Ana works on the ledger."}])
        b = mem.query("who owns billing")
        assert (b.tier, b.cached, b.text) == (3, False, "## Summary\nBen (team/people/ana.md)")
        assert len(model.calls) == 2
    finally:
        mem.close()


# -- the graph's two branches and a writer between them ------------------------------------

def test_graph_never_caches_an_answer_under_a_later_fingerprint(tmp_path):
    """search and fingerprint run in parallel: a write between them must not poison the cache.

    Here the search runs first, then another writer deletes the entry it found,
    then the fingerprint is taken. The answer (citing the entry) must not be
    cached under the post-delete fingerprint, or the next query would serve it.
    """
    from memgrove.graphs import build_query_graph

    mem = seeded(tmp_path)
    try:
        tree = mem.tree
        searched = threading.Event()
        real_search, real_fp = tree.search, tree.fingerprint

        def search(*a, **kw):
            hits = real_search(*a, **kw)
            if not searched.is_set():
                other = Memory.open(tmp_path, durable=False)
                try:
                    other.curate([{"op": "DELETE", "path": ROTATION, "reason": "concurrent writer"}])
                finally:
                    other.close()
                searched.set()
            return hits

        def fingerprint():
            # hold back only the graph's fingerprint node (the search node takes one too); both
            # ask through QueryPipeline.fingerprint, so the node is the caller's caller
            if sys._getframe(2).f_code.co_name == "fingerprint":
                assert searched.wait(10)
            return real_fp()

        tree.search, tree.fingerprint = search, fingerprint
        g = build_query_graph(mem)
        first = tiers.Answer.from_dict(g.invoke({"question": Q})["answer"])
        assert searched.is_set() and first.tier == 2
        # the deletion is complete before this query begins: it must not cite the entry
        second = tiers.Answer.from_dict(g.invoke({"question": Q})["answer"])
        assert ROTATION not in second.sources, second
        assert not (mem.home / "tree" / ROTATION).exists()
    finally:
        mem.close()


# -- concurrency ----------------------------------------------------------------------------

CURATOR = textwrap.dedent("""
    import json, os, sys, time
    from memgrove import Memory
    root, log, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mem = Memory.open(root, durable=False)
    out = open(log, "a")
    try:
        for i in range(rounds):
            ops = [{"op": "ADD", "path": f"churn/items/item_{i}.md", "title": f"Zephyr marker item {i}",
                    "content": f"Zephyr marker item {i} says hello.", "reason": "churn"}]
            if i >= 2:
                ops.append({"op": "DELETE", "path": f"churn/items/item_{i - 2}.md", "reason": "churn"})
            mem.curate(ops)
            done = time.monotonic()
            if i == 0:
                print("READY", flush=True)   # the askers start now, not while this process imports
            if i >= 2:
                out.write(json.dumps({"deleted": f"churn/items/item_{i - 2}.md", "done": done}) + "\\n")
                out.flush()
            time.sleep(0.03)
    finally:
        mem.close()
        open(log + ".done", "w").close()   # the askers stop once they have seen this
    print("CURATED", rounds)
""")

ASKER = textwrap.dedent("""
    import json, os, sys, time, traceback
    from memgrove import Memory
    root, out_file, done_file, least = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    questions = ["zephyr marker item", "Zephyr marker item says hello", "zephyr marker items say hello"]
    mem = Memory.open(root, durable=False)
    rows, errors = [], []
    n = 0
    # asks for as long as the curator works (however slow a loaded machine makes it), at least `least` times
    cap = time.monotonic() + 300
    while (not os.path.exists(done_file) or n < least) and time.monotonic() < cap:
        q = questions[n % len(questions)]
        n += 1
        began = time.monotonic()
        try:
            a = mem.query(q)
            rows.append({"began": began, "tier": a.tier, "sources": a.sources, "cached": a.cached})
        except Exception:
            errors.append(traceback.format_exc())
    mem.close()
    json.dump({"rows": rows, "errors": errors}, open(out_file, "w"))
""")


def _check_no_stale_citation(rows: list[dict], deletions: dict[str, float]) -> None:
    for r in rows:
        for p in r["sources"]:
            done = deletions.get(p)
            assert done is None or done >= r["began"], f"{p} was deleted before the query began: {r}"


ROUNDS = 12   # a curator's ADDs, each but the first two with a DELETE: every run churns as much, fast or slow


def _seed_churn(tmp_path: Path) -> None:
    m = Memory.open(tmp_path, create=True, durable=False)
    m.curate([{"op": "ADD", "path": "other/notes/filler.md", "title": "Filler", "content": "nothing", "reason": "s"}])
    m.close()


def _start(script: str, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMGROVE_HOME", "MEMGROVE_MODEL")}
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)


def _deletions(log: Path) -> dict[str, float]:
    return {d["deleted"]: d["done"] for d in map(json.loads, log.read_text().splitlines())}


@pytest.mark.slow
@pytest.mark.parametrize("via", ["query", "graph"])
def test_queries_in_threads_while_another_process_curates(tmp_path, via):
    _seed_churn(tmp_path)
    log = tmp_path / "deletions.jsonl"
    curator = _start(CURATOR, str(tmp_path), str(log), str(ROUNDS))
    mem = Memory.open(tmp_path, durable=False)
    graph = mem.graph() if via == "graph" else None
    rows: list[dict] = []
    errors: list[BaseException] = []
    # on a loaded machine the curator may take seconds to import: ask only once it curates
    assert curator.stdout is not None and curator.stdout.readline().strip() == "READY", curator.communicate()
    cap = time.monotonic() + 300
    questions = ["zephyr marker item", "Zephyr marker item says hello", "zephyr marker items say hello"]

    def ask(k: int) -> None:
        # for as long as the curator works, however slow a loaded machine makes it (no rate is assumed)
        n = k
        while (curator.poll() is None or len(rows) < 20) and time.monotonic() < cap:
            q = questions[n % 3]
            n += 1
            began = time.monotonic()
            try:
                if graph is None:
                    a = mem.query(q)
                else:
                    a = tiers.Answer.from_dict(graph.invoke({"question": q})["answer"])
                rows.append({"began": began, "tier": a.tier, "sources": a.sources})
            except BaseException as exc:  # noqa: BLE001 - collected and reported below
                errors.append(exc)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(330)
        out, err = curator.communicate(timeout=60)
    finally:
        mem.close()
    assert curator.returncode == 0, err
    assert not errors, repr(errors[:3])
    deletions = _deletions(log)
    assert len(deletions) == ROUNDS - 2 and len(rows) >= 20
    assert any(r["tier"] <= 1 for r in rows) and any(r["sources"] for r in rows), \
        [(round(r["began"] % 100, 2), r["tier"], len(r["sources"])) for r in rows]
    _check_no_stale_citation(rows, deletions)


@pytest.mark.slow
def test_queries_in_two_processes_while_another_process_curates(tmp_path):
    _seed_churn(tmp_path)
    log = tmp_path / "deletions.jsonl"
    curator = _start(CURATOR, str(tmp_path), str(log), str(ROUNDS))
    askers = [_start(ASKER, str(tmp_path), str(tmp_path / f"asker{k}.json"), f"{log}.done", "10") for k in range(2)]
    results = []
    for k, p in enumerate(askers):
        _, err = p.communicate(timeout=360)
        assert p.returncode == 0, err
        results.append(json.loads((tmp_path / f"asker{k}.json").read_text()))
    _, err = curator.communicate(timeout=60)
    assert curator.returncode == 0, err
    deletions = _deletions(log)
    assert len(deletions) == ROUNDS - 2
    for res in results:
        assert res["errors"] == [], res["errors"][:2]
        assert len(res["rows"]) >= 10
        assert any(r["sources"] for r in res["rows"])
        _check_no_stale_citation(res["rows"], deletions)
    assert any(r["tier"] <= 1 for res in results for r in res["rows"])

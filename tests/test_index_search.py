"""The BM25F index and search: hits, normalization, gap filter, boosts, and staying
in step with the files (hand edits, deleted or corrupt index, malformed files)."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.watching import at_once, eventually
from memgrove import BatchRejected, Hit, Memory, MemgroveError
from memgrove.tree.index.catalog import scan
from memgrove.tree.ranking.hits import excerpt
from memgrove.tree.ranking.own import gap_filter
from memgrove.tree.ranking.table import normalize


def op(kind: str, path: str, **fields: Any) -> dict[str, Any]:
    return {"op": kind, "path": path, "reason": fields.pop("reason", "test"), **fields}


def paths(hits: list[Hit]) -> list[str]:
    return [h.path for h in hits]


@pytest.fixture
def bmem(tmp_path: Path):
    """A memory ranked by pure relevance (the ``benchmark`` profile)."""
    m = Memory.open(tmp_path / "bench", create=True, durable=False, profile="benchmark")
    yield m
    m.close()


CORPUS = [
    op("ADD", "auth/jwt/rotation.md", title="Refresh token rotation", summary="Rotate on every use.",
       tags=["auth"], sources=[{"kind": "conversation", "ref": "c1#m4", "at": "2026-03-02T09:27:00Z"}],
       content="Refresh tokens rotate on every use; reuse of an old token revokes the whole family."),
    op("ADD", "auth/jwt/lifetime.md", title="Token lifetime", content="Access tokens live fifteen minutes."),
    op("ADD", "ops/deploy/runbook.md", title="Deploy runbook", content="Deploys happen on tuesdays after standup."),
    op("ADD", "ops/db/postgres.md", title="Postgres tuning", content="Set shared buffers to a quarter of memory."),
]


# -- pure helpers --------------------------------------------------------------------

def test_normalize() -> None:
    assert normalize(0) == 0.0
    assert normalize(-1) == 0.0
    assert normalize(1) == 0.5
    assert normalize(3) == 0.75
    assert 0 < normalize(1e-9) < normalize(10) < normalize(1e6) < 1


def test_gap_filter() -> None:
    scored = [("a", 1.0), ("b", 0.8), ("c", 0.75), ("d", 0.74)]
    assert gap_filter(scored, 0.75) == [("a", 1.0), ("b", 0.8), ("c", 0.75)]
    assert gap_filter(scored, 0.0) == scored
    assert gap_filter(scored, 1.0) == [("a", 1.0)]
    assert gap_filter([], 0.75) == []


def test_excerpt() -> None:
    text = " ".join(["filler"] * 100 + ["needle", "here"] + ["after"] * 100)
    ex = excerpt(text, ["needl"], 80)
    assert "needle" in ex and ex.startswith("… ") and ex.endswith(" …")
    assert len(ex) <= 80 + 4
    assert excerpt("short text", ["x"], 80) == "short text"
    assert excerpt(text, ["absent"], 40).startswith("filler") and excerpt(text, ["absent"], 40).endswith("…")


# -- hits -------------------------------------------------------------------------------

def test_hits_carry_path_title_score_excerpt_sources(mem) -> None:
    mem.curate(CORPUS)
    hits = mem.search("refresh token rotation")
    top = hits[0]
    assert top.path == "auth/jwt/rotation.md"
    assert top.title == "Refresh token rotation"
    assert top.kind == "entry"
    assert 0 < top.score < 1
    assert top.bm25 > 0
    assert "revokes the whole family" in top.excerpt
    assert top.sources == [{"kind": "conversation", "ref": "c1#m4", "at": "2026-03-02T09:27:00Z"}]
    assert top.summary == "Rotate on every use."
    d = top.to_dict()
    assert d["path"] == top.path and d["sources"] == top.sources and d["score"] == round(top.score, 4)


def test_benchmark_scores_are_relevance_relative_to_the_best(bmem) -> None:
    # no signal scales them: each hit's score is its (lifted) BM25 over the best's, on the same linear
    # scale as the product profile's, which ranking by meaning adds to (not s/(1+s), where every good
    # match sits near 1 and a cosine outweighs the words)
    bmem.curate(CORPUS)
    hits = bmem.search("token")
    assert len(hits) > 1
    for h in hits:
        assert 0 < h.score <= 1 + 1e-9
        assert h.score / hits[0].score == pytest.approx(h.bm25 / hits[0].bm25)
        assert 0 < h.relevance < 1
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_limit(bmem) -> None:
    bmem.curate([op("ADD", f"a/b/e{i}.md", title=f"Entry {i}", content="shared words everywhere") for i in range(8)])
    assert len(bmem.search("shared words", limit=3)) == 3
    assert len(bmem.search("shared words", limit=50)) == 8
    with pytest.raises(MemgroveError, match="limit"):
        bmem.search("shared", limit=0)


def test_no_match_returns_empty(mem) -> None:
    mem.curate(CORPUS)
    assert mem.search("xylophone") == []
    assert mem.search("the of and") == []   # only stop words


def test_gap_filter_drops_weak_results(tmp_path) -> None:
    ops = [op("ADD", "a/b/strong.md", title="Alpha beta gamma", content="alpha beta gamma delta alpha beta gamma"),
           op("ADD", "a/b/weak.md", title="Unrelated", content="gamma " + "filler words " * 200)]
    with Memory.open(tmp_path / "g1", create=True, durable=False, profile="benchmark") as m:
        m.curate(ops)
        hits = m.search("alpha beta gamma")
        assert paths(hits) == ["a/b/strong.md"]
        top = hits[0].score
        assert all(h.score >= 0.75 * top for h in hits)
    # folder and neighbourhood coverage off: they lift the weak one toward the strong one (after the filter)
    with Memory.open(tmp_path / "g1", durable=False, profile="benchmark", gap_ratio=0.0, folder_weight=0.0,
                     near_weight=0.0) as m:
        hits = m.search("alpha beta gamma")
        assert paths(hits)[:2] == ["a/b/strong.md", "a/b/weak.md"]
        assert hits[1].score < 0.75 * hits[0].score


TITLE_VS_BODY = [
    op("ADD", "fruit/notes/first.md", title="Kumquat harvest", content="Notes about the orchard."),
    op("ADD", "fruit/notes/second.md", title="Orchard notes", content="Details of the kumquat harvest."),
]


def test_title_match_outranks_body_match(bmem) -> None:
    bmem.curate(TITLE_VS_BODY)
    assert paths(bmem.search("kumquat"))[0] == "fruit/notes/first.md"


def test_boosts_are_settings(tmp_path) -> None:
    with Memory.open(tmp_path / "b", create=True, durable=False, profile="benchmark") as m:
        m.curate(TITLE_VS_BODY)
        assert paths(m.search("kumquat"))[0] == "fruit/notes/first.md"
    # the same index, queried with the title field switched off and content boosted
    with Memory.open(tmp_path / "b", durable=False, profile="benchmark", title_boost=0.0, content_boost=3.0,
                     gap_ratio=0.0) as m:
        assert m.tree.settings.boosts()["title"] == 0.0
        assert paths(m.search("kumquat"))[0] == "fruit/notes/second.md"
    (tmp_path / "b" / ".memgrove" / "config.toml").write_text("[tree]\ntitle_boost = 0.0\ncontent_boost = 3.0\n")
    with Memory.open(tmp_path / "b", durable=False, profile="benchmark") as m:
        assert paths(m.search("kumquat"))[0] == "fruit/notes/second.md"


def test_unknown_setting_is_an_error(tmp_path) -> None:
    with pytest.raises(MemgroveError, match="unknown setting"):
        Memory.open(tmp_path / "x", create=True, title_bost=5)
    with pytest.raises(MemgroveError, match="unknown ranking profile"):
        Memory.open(tmp_path / "x", create=True, profile="fastest")


def test_context_hits_can_be_excluded(tmp_path) -> None:
    ops = [op("ADD", "auth/jwt/a.md", title="A", content="something", context={"topic": "Overview of wombats."})]
    with Memory.open(tmp_path / "c", create=True, durable=False) as m:
        m.curate(ops)
        assert paths(m.search("wombats")) == ["auth/jwt/context.md"]
        assert m.search("wombats")[0].kind == "context"
    with Memory.open(tmp_path / "c", durable=False, include_context_hits=False) as m:
        assert m.search("wombats") == []


def test_stemming_and_prefix_fallback(bmem) -> None:
    bmem.curate(CORPUS)
    assert paths(bmem.search("rotating"))[0] == "auth/jwt/rotation.md"   # stemmed
    assert paths(bmem.search("postgr"))[0] == "ops/db/postgres.md"      # prefix, as a fallback


def test_a_doubled_consonant_is_undone_before_ing_and_ed(bmem) -> None:
    # Whoosh's own Porter stemmer left "running" as "runn" and "planned" as "plann"
    terms = bmem.tree.engine.terms
    assert terms("running runs ran") == ["run"]
    assert terms("planned planning plans") == ["plan"]
    assert terms("shopping") == terms("shop") and terms("swimming") == terms("swim")
    assert terms("general") != terms("generous")
    bmem.curate([op("ADD", "chat/s1/a.md", title="Jon, 8 May 2023", content="I've been running every morning."),
                 op("ADD", "chat/s1/b.md", title="Ana, 8 May 2023", content="A morning walk sounds nice.")])
    assert paths(bmem.search("Who runs in the morning?")) == ["chat/s1/a.md"]   # b only says "morning"


def test_possessives_and_contractions_leave_no_stray_terms(bmem) -> None:
    assert bmem.tree.engine.terms("What is Dave's car? It's red, isn't it, and he'll say he didn't") == [
        "dave", "car", "red", "say"]
    assert bmem.tree.engine.terms("Don won the race") == ["don", "won", "race"]   # a name and a verb
    bmem.curate([op("ADD", "chat/s1/a.md", title="Ana", content="It's lovely, that's what it's like."),
                 op("ADD", "chat/s1/b.md", title="Ben", content="Dave restores a car.")])
    # "Dave's" no longer matches every "it's" and "that's"
    assert paths(bmem.search("Dave's car")) == ["chat/s1/b.md"]


def test_irregular_and_informal_forms_meet_their_base_form(bmem) -> None:
    terms = bmem.tree.engine.terms
    assert terms("Jon went to Paris and bought shoes") == terms("Did Jon go to Paris and buy shoes?")
    assert terms("my mom took the kids' pics") == terms("my mother take the children photos")
    assert terms("her favourite colour") == terms("her fave color") == terms("her favorite color")
    assert terms("we won't stay") == ["won", "stay"]   # "won" is left alone: "won't" is not "win"
    bmem.curate([op("ADD", "chat/s1/a.md", title="Jon, 8 May 2023", content="I went to Lisbon with my mom."),
                 op("ADD", "chat/s1/b.md", title="Ana, 8 May 2023", content="Lisbon sounds lovely, I hope to go.")])
    # without the forms only "go" would match, and only b
    assert paths(bmem.search("Where did they go with their mother?"))[0] == "chat/s1/a.md"


def test_dotted_names_are_found_by_their_parts(bmem) -> None:
    terms = bmem.tree.engine.terms
    assert terms("Bunny.net") == ["bunny.net", "bunni", "net"]
    assert terms("EUR 3.50 for v2.4.0") == ["eur", "3.50", "v2.4.0", "v2"]   # numbers stay values
    bmem.curate([op("ADD", "infra/cdn/bunny.md", title="CDN", content="Static assets are served by Bunny.net."),
                 op("ADD", "infra/env/staging.md", title="Staging", content="Staging runs at staging.kestrel.dev."),
                 op("ADD", "infra/env/prices.md", title="Prices", content="The minimum payout is EUR 3.50 a job.")])
    assert paths(bmem.search("Bunny"))[0] == "infra/cdn/bunny.md"
    assert paths(bmem.search("kestrel.dev"))[0] == "infra/env/staging.md"
    assert paths(bmem.search("bunny.net"))[0] == "infra/cdn/bunny.md"
    assert "infra/env/prices.md" not in paths(bmem.search("3"))


def test_fuzzy_fallback_only_when_exact_finds_nothing(bmem) -> None:
    bmem.curate([op("ADD", "ops/k8s/cluster.md", title="Cluster notes", content="kubernetes cluster upgrade steps"),
                 op("ADD", "ops/release/steps.md", title="Release notes", content="deployment happens on tuesdays")])
    assert paths(bmem.search("kubernetis")) == ["ops/k8s/cluster.md"]
    # "deployment" matches exactly, so the misspelled word is not expanded
    assert paths(bmem.search("kubernetis deployment")) == ["ops/release/steps.md"]
    assert bmem.search("qqqqqqqq") == []


# -- staying in step with the files ------------------------------------------------

@pytest.mark.parametrize("watch", [True, False], ids=["watcher", "scan every search"])
def test_hand_edit_is_picked_up_by_next_search(tmp_path, watch) -> None:
    # with a watcher, the next search once its event arrived (a moment later, on watchdog's threads)
    seen = eventually if watch else at_once
    with Memory.open(tmp_path / "h", create=True, durable=False, watch=watch, watch_after=0, scan_interval=0) as m:
        m.curate(CORPUS)
        m.search("tuesdays")
        m.search("tuesdays")   # a second search: a long-lived process starts watching
        assert (m.tree._watcher is not None) is watch
        f = m.home / "tree/ops/deploy/runbook.md"
        f.write_text(f.read_text().replace("Deploys happen on tuesdays after standup.",
                                           "Deploys now happen on fridays, carefully."))
        assert seen(lambda: paths(m.search("fridays")) == ["ops/deploy/runbook.md"])
        assert m.search("tuesdays") == []
        # a hand-added file, in a new folder
        new = m.home / "tree/ops/oncall/pager.md"
        new.parent.mkdir()
        new.write_text("# Pager duty\n\nThe capybara rotation pages weekly.\n")
        assert seen(lambda: paths(m.search("capybara")) == ["ops/oncall/pager.md"])
        assert m.search("capybara")[0].title == "Pager duty"
        # a hand-deleted file
        (m.home / "tree/ops/db/postgres.md").unlink()
        # (a search leaves out a hit whose file is gone: the index's count tells it was seen)
        assert seen(lambda: m.count() == len(scan(m.home / "tree")))
        assert m.search("shared buffers") == []


def test_hand_edit_seen_by_another_process_view(tmp_path) -> None:
    with Memory.open(tmp_path / "p", create=True, durable=False) as writer:
        writer.curate(CORPUS)
    f = tmp_path / "p/.memgrove/tree/auth/jwt/lifetime.md"
    f.write_text(f.read_text().replace("fifteen", "ninety"))
    with Memory.open(tmp_path / "p", durable=False) as reader:
        assert paths(reader.search("ninety minutes"))[0] == "auth/jwt/lifetime.md"


def test_curate_sees_hand_added_entry(mem) -> None:
    mem.curate(CORPUS)
    hand = mem.home / "tree/auth/jwt/hand.md"
    hand.write_text("# Hand\n\nhand made\n")
    with pytest.raises(Exception, match="already exists"):
        mem.curate([op("ADD", "auth/jwt/hand.md", title="H", content="x")])
    mem.curate([op("UPDATE", "auth/jwt/hand.md", tags=["manual"])])
    assert mem.read("auth/jwt/hand.md").tags == ["manual"]


@pytest.mark.parametrize("what", ["index", "engine", "catalog"])
def test_deleted_index_is_rebuilt(mem, what) -> None:
    mem.curate(CORPUS)
    count = mem.count()
    index = mem.home / "index"
    mem.close()
    if what == "index":
        shutil.rmtree(index)
    elif what == "engine":   # index/whoosh or index/tantivy
        shutil.rmtree(mem.tree.engine.folder)
    else:
        for p in index.glob("catalog.db*"):
            p.unlink()
    m = Memory.open(mem.home, durable=False)
    try:
        assert paths(m.search("tuesdays")) == ["ops/deploy/runbook.md"]
        assert m.count() == count
        assert m.tree.links("auth/jwt/rotation.md") == ([], [])
        assert m.doctor().ok
    finally:
        m.close()


def test_index_deleted_under_a_live_memory(mem) -> None:
    mem.curate(CORPUS)
    mem.search("tuesdays")
    shutil.rmtree(mem.tree.engine.folder)
    assert paths(mem.search("tuesdays")) == ["ops/deploy/runbook.md"]


@pytest.mark.parametrize("garbage", [b"", b"garbage", os.urandom(4096), b"\x00" * 100])
def test_corrupt_index_is_rebuilt(mem, garbage) -> None:
    mem.curate(CORPUS)
    count = mem.count()
    mem.close()
    written = 0
    for p in (mem.home / "index").rglob("*"):
        if p.is_file():
            p.write_bytes(garbage)
            written += 1
    assert written >= 3
    m = Memory.open(mem.home, durable=False)
    try:
        assert paths(m.search("shared buffers")) == ["ops/db/postgres.md"]
        assert m.count() == count
        assert m.doctor().ok
    finally:
        m.close()


def test_truncated_index_files_are_rebuilt(mem) -> None:
    mem.curate(CORPUS)
    mem.close()
    for p in mem.tree.engine.folder.iterdir():
        p.write_bytes(p.read_bytes()[: max(1, p.stat().st_size // 2)])
    with Memory.open(mem.home, durable=False) as m:
        assert paths(m.search("shared buffers")) == ["ops/db/postgres.md"]


def test_damaged_catalog_digest_is_rebuilt(mem) -> None:
    mem.curate(CORPUS)
    mem.close()
    db = sqlite3.connect(mem.home / "index" / "catalog.db")
    db.execute("UPDATE meta SET value='not a number' WHERE key='digest'")
    db.commit()
    db.close()
    with Memory.open(mem.home, durable=False) as m:
        assert paths(m.search("shared buffers")) == ["ops/db/postgres.md"]
        assert m.doctor().ok


# whoosh's reader() retries an OSError ten times and drops each attempt's open segment
# file unclosed; those ResourceWarnings are whoosh's, raised where memgrove cannot reach
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("seed", range(8))
def test_randomly_damaged_index_is_rebuilt(mem, seed) -> None:
    """Bytes flipped, files truncated or overwritten: search still answers, from a rebuilt index."""
    mem.curate(CORPUS)
    count = mem.count()
    mem.close()
    rnd = random.Random(seed)
    for p in sorted((mem.home / "index").rglob("*")):
        if not p.is_file() or rnd.random() < 0.3:
            continue
        data = bytearray(p.read_bytes())
        how = rnd.choice(["flip", "truncate", "garbage"])
        if how == "flip" and data:
            for _ in range(rnd.randint(1, 20)):
                data[rnd.randrange(len(data))] = rnd.randrange(256)
        elif how == "truncate":
            data = data[: rnd.randint(0, len(data))]
        else:
            data = bytearray(rnd.randbytes(rnd.randint(0, 2000)))
        p.write_bytes(bytes(data))
    with Memory.open(mem.home, durable=False) as m:
        assert paths(m.search("shared buffers")) == ["ops/db/postgres.md"]
        assert m.count() == count


def test_malformed_file_is_skipped_and_reported(mem) -> None:
    mem.curate(CORPUS)
    bad = mem.home / "tree/auth/jwt/broken.md"
    bad.write_text("---\ntitle: [unclosed\n---\n# Broken\n\nwalrus\n")
    notutf8 = mem.home / "tree/auth/jwt/latin1.md"
    notutf8.write_bytes("# Caf\xe9\n\nwalrus\n".encode("latin-1"))
    assert mem.search("walrus") == []
    assert mem.search("tuesdays")[0].path == "ops/deploy/runbook.md"
    assert mem.count() == len(scan(mem.home / "tree")) - 2
    rep = mem.doctor()
    assert not rep.ok
    assert any(p.startswith("auth/jwt/broken.md") and "malformed YAML" in p for p in rep.problems)
    assert any(p.startswith("auth/jwt/latin1.md") and "not UTF-8" in p for p in rep.problems)
    assert mem.reindex() == len(scan(mem.home / "tree")) - 2
    # fixing the file by hand brings it back
    bad.write_text("---\ntitle: Fixed\n---\n# Fixed\n\nwalrus\n")
    notutf8.unlink()
    assert paths(mem.search("walrus")) == ["auth/jwt/broken.md"]
    assert mem.doctor().ok


def test_file_at_invalid_path_is_a_warning(mem) -> None:
    mem.curate(CORPUS)
    (mem.home / "tree/auth/stray.md").write_text("# Stray\n\nstray\n")
    rep = mem.doctor()
    assert rep.ok
    assert any(w.startswith("auth/stray.md: not at a valid entry path") for w in rep.warnings)


def test_count_equals_valid_markdown_files(mem) -> None:
    assert mem.count() == 0
    mem.curate(CORPUS)
    n_files = len(list((mem.home / "tree").rglob("*.md")))
    assert n_files == 4 + 5   # 4 entries; context.md in auth, auth/jwt, ops, ops/deploy, ops/db
    assert mem.count() == n_files
    (mem.home / "tree/ops/db/notes.txt").write_text("not markdown")
    (mem.home / "tree/ops/db/.hidden.md").write_text("# hidden\n")
    (mem.home / "tree/ops/db/_draft.md").write_text("# draft\n")
    assert mem.count() == n_files
    rep = mem.doctor()
    assert (rep.entries, rep.contexts, rep.indexed) == (4, 5, n_files)


def test_reindex_returns_document_count(mem) -> None:
    assert mem.reindex() == 0
    mem.curate(CORPUS)
    n = len(scan(mem.home / "tree"))
    seen: list[tuple[int, int]] = []
    assert mem.reindex(progress=lambda i, total: seen.append((i, total))) == n
    assert seen and seen[-1] == (n, n)
    assert mem.count() == n
    assert paths(mem.search("tuesdays")) == ["ops/deploy/runbook.md"]


def test_fingerprint(mem) -> None:
    mem.curate(CORPUS)
    fp = mem.fingerprint()
    assert mem.fingerprint() == fp
    mem.search("token")
    mem.count()
    mem.history()
    mem.list("auth")
    mem.show("auth/jwt/rotation.md")
    assert mem.fingerprint() == fp
    mem.reindex()
    assert mem.fingerprint() == fp
    with pytest.raises(BatchRejected, match="already exists"):
        mem.curate([op("ADD", "auth/jwt/rotation.md", title="dup", content="x")])
    assert mem.fingerprint() == fp        # a rejected batch changes nothing
    mem.curate([op("UPDATE", "auth/jwt/lifetime.md", content="Access tokens live ten minutes.")])
    fp2 = mem.fingerprint()
    assert fp2 != fp
    f = mem.home / "tree/auth/jwt/lifetime.md"
    f.write_text(f.read_text() + "\nhand edit\n")
    fp3 = mem.fingerprint()
    assert fp3 not in (fp, fp2)
    assert mem.fingerprint() == fp3
    f.unlink()
    assert mem.fingerprint() not in (fp, fp2, fp3)


def test_fingerprint_agrees_across_instances(tmp_path) -> None:
    with Memory.open(tmp_path / "f", create=True, durable=False) as a:
        a.curate(CORPUS)
        with Memory.open(tmp_path / "f", durable=False) as b:
            assert a.fingerprint() == b.fingerprint()
            b.curate([op("DELETE", "ops/db/postgres.md")])
            assert a.fingerprint() == b.fingerprint()


def test_watcher_starts_only_in_a_process_that_keeps_checking(tmp_path) -> None:
    # a one-shot CLI query checks twice within milliseconds: it must not pay for inotify setup
    # (3 s, not less: on a loaded machine the curate and two searches took longer than 0.3 s)
    with Memory.open(tmp_path / "w", create=True, durable=False, watch_after=3.0) as m:
        m.curate(CORPUS)
        m.search("tuesdays")
        m.search("tuesdays")
        assert m.tree._watcher is None
        time.sleep(3.05)
        m.search("tuesdays")
        assert m.tree._watcher is not None and m.tree._watcher.usable

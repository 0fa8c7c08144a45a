"""The ``SearchEngine`` contract, which both engines (Whoosh and tantivy) must pass, and their
agreement: one analyzer, the same terms, idf, matched terms and scores on the same documents."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from whoosh.analysis import LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.lang.porter2 import stem as porter2

from memgrove import Memory
from memgrove.tree.text import analysis
from memgrove.tree.index import tantivy_engine, whoosh_engine
from memgrove.tree.index.engine import FIELDS, IndexBroken, IndexDoc
from memgrove.tree.index.engines import open_engine
from memgrove.tree.index.sync import INDEX_FORMAT
from memgrove.tree.base.errors import MemgroveError
from memgrove.tree.settings import TreeSettings
from memgrove.tree.index.tantivy_engine import EngineMissing, TantivyEngine
from memgrove.tree.index.whoosh_engine import WhooshEngine

ENGINES = {"whoosh": WhooshEngine, "tantivy": TantivyEngine}
BOOSTS = TreeSettings().boosts()

CORPUS = [
    ("Deploy notes", "We deploy on Fridays using staging.kestrel.dev and the 2.4.0 release; it's fine.",
     "ops deploy", "release"),
    ("Kayak trip", "I went kayaking with my mom's kids; we didn't capsize. Bought a new paddle for $3.50.",
     "life trips", "kayak outdoors"),
    ("pool_size tuning", "Raise pool_size to 20 when the DB (db.example.com) is slow; __init__.py reads it.",
     "code database", "postgres"),
    ("Café naïve", "Straße 東京 ÉCOLE naïveté — the café's colour scheme, favourite photos, neighbours.",
     "misc unicode", ""),
    ("Running plans", "Running, planned, shopping; the runner ran and runs. Generous general ideas.",
     "health", "fitness"),
    ("Bunny.net CDN", "Bunny.net serves main.py and v1.2.beta; the e-mail went to x.y_z.", "infra cdn", "cdn"),
    ("Kayaker club", "The kayaker club meets at the lake. Kayaks for rent.", "life clubs", "kayak"),
]


def docs(n_extra: int = 0, seed: int = 1) -> list[IndexDoc]:
    out = [IndexDoc(f"d/{i}.md", "entry", t, c, p, g) for i, (t, c, p, g) in enumerate(CORPUS)]
    rng = random.Random(seed)
    words = " ".join(c for _, c, _, _ in CORPUS).split()
    for i in range(n_extra):
        out.append(IndexDoc(f"x/{i}.md", "entry", " ".join(rng.sample(words, 3)),
                            " ".join(rng.choices(words, k=rng.randint(5, 60))), "x topic", ""))
    return out


@pytest.fixture(params=sorted(ENGINES))
def engine(request, tmp_path: Path):
    e = ENGINES[request.param](tmp_path / request.param)
    yield e
    e.close()


@pytest.fixture
def both(tmp_path: Path):
    es = [ENGINES[n](tmp_path / n) for n in sorted(ENGINES)]
    yield es
    for e in es:
        e.close()


def paths(hits) -> list[str]:
    return [h[0] for h in hits]


# -- one analyzer -------------------------------------------------------------------------------

def old_whoosh_analyzer():
    """The Whoosh pipeline memgrove used before tree/text/analysis.py (whoosh_engine.py at b968f1c)."""
    from memgrove.tree.text.word_forms import STEMS

    return (RegexTokenizer(r"[^\W_]+(?:\.[^\W_]+)*") | whoosh_engine_dotted() | LowercaseFilter()
            | StopFilter(stoplist=analysis.STOP_WORDS, minsize=1) | base_form_filter()
            | StemFilter(stemfn=lambda w: STEMS.get(w) or porter2(w)))


def whoosh_engine_dotted():
    from whoosh.analysis import Filter

    class Dotted(Filter):
        def __call__(self, tokens):
            for t in tokens:
                text = t.text
                yield t
                if "." in text:
                    for part in text.split("."):
                        if part and not part.isdigit() and any(c.isalpha() for c in part):
                            t.text = part
                            yield t
    return Dotted()


def base_form_filter():
    from whoosh.analysis import Filter

    from memgrove.tree.text.word_forms import BASE_OF

    class Base(Filter):
        def __call__(self, tokens):
            for t in tokens:
                t.text = BASE_OF.get(t.text, t.text)
                yield t
    return Base()


VARIED = [t + " " + c + " " + p + " " + g for t, c, p, g in CORPUS] + [
    "Didn't Dave's kids go? won't can't I'd we'll they're you've",
    "3.50 2.4.0 10.0.0.1 a.1b 1e10 0x1F 42nd 1,000,000 -7",
    "snake_case __dunder__ CamelCase a_b_c _x_ x__y",
    "Ünïcödé ΑΒΓ привет мир 東京タワー العربية ﬁ ǅ İstanbul",
    "went gone bought children people mom's colour grey aeroplane",
    "publications public universities universe organisations organ business busy",
    "", "   ", "...", "a.b. .c .", "the and of",
]


@pytest.mark.parametrize("text", VARIED)
def test_analyze_is_the_old_whoosh_pipeline(text: str) -> None:
    if "東京タワー" not in text:
        assert analysis.analyze(text) == [t.text for t in old_whoosh_analyzer()(text)]
    else:   # every script searchable: Greek accents and CJK runs differ on purpose (test_multilingual.py)
        assert analysis.analyze(text) == ["ünïcödé", "αβγ", "привет", "мир", "東京", "京タ", "タワ", "ワー", "العربية",
                                          "ﬁ", "ǆ", "i̇stanbul"]


@pytest.mark.parametrize("text", VARIED)
def test_both_engines_index_exactly_the_analyzer_terms(both, text: str) -> None:
    """Whoosh's field terms and tantivy's term dictionary hold analyze()'s terms, nothing else."""
    doc = IndexDoc("p.md", "entry", "", text, "", "")
    want = set(analysis.analyze(text))
    for e in both:
        e.rebuild([doc])
    t, w = both
    assert [tok.text for tok in whoosh_engine.analyzer()(text)] == analysis.analyze(text)
    with w._mutex:
        got_w = {x.decode() if isinstance(x, bytes) else x
                 for x in w._get_searcher().reader().field_terms("content")}
    got_t = {term for term, _ in t._index().searcher().terms_with_prefix("content", "")}
    assert got_w == want
    assert got_t == want


def test_query_terms_are_bounded() -> None:
    assert len(analysis.terms(" ".join(f"word{i}x" for i in range(500)))) == analysis.MAX_QUERY_TERMS
    assert analysis.terms("flow " * 10_000 + "deploy") == ["flow"]


# -- the contract -------------------------------------------------------------------------------

def test_write_replace_delete(engine) -> None:
    engine.rebuild(docs())
    assert engine.count() == len(CORPUS)
    engine.write(replace=[IndexDoc("d/0.md", "entry", "Shipping notes", "we ship boats", "ops", "")],
                 delete=["d/1.md"])
    assert engine.count() == len(CORPUS) - 1
    assert paths(engine.search("deploy", boosts=BOOSTS, limit=10)) == []  # the old text is gone
    assert paths(engine.search("ship", boosts=BOOSTS, limit=10)) == ["d/0.md"]
    assert "d/1.md" not in paths(engine.search("paddle capsize", boosts=BOOSTS, limit=10))
    engine.write(replace=[IndexDoc("n.md", "entry", "new", "brand new paddle", "", "")])
    assert paths(engine.search("paddle", boosts=BOOSTS, limit=10)) == ["n.md"]
    engine.write()  # nothing to do is no commit and no error
    assert engine.count() == len(CORPUS)


def test_boosts_order_hits(engine) -> None:
    engine.rebuild([IndexDoc("title.md", "entry", "lighthouse", "a tall tower", "", ""),
                    IndexDoc("body.md", "entry", "a tower", "the lighthouse by the sea", "", ""),
                    IndexDoc("none.md", "entry", "other", "nothing", "", "")])
    assert paths(engine.search("lighthouse", boosts=BOOSTS, limit=5)) == ["title.md", "body.md"]
    flipped = dict(BOOSTS, title=0.1, content=5.0)
    assert paths(engine.search("lighthouse", boosts=flipped, limit=5)) == ["body.md", "title.md"]
    assert paths(engine.search("lighthouse", boosts=dict(BOOSTS, title=0.0), limit=5)) == ["body.md"]


def test_fuzzy_and_prefix_fallbacks(engine) -> None:
    engine.rebuild(docs())
    assert engine.search("kayakk", boosts=BOOSTS, limit=10) == []
    fuzzy = engine.search("kayakk", boosts=BOOSTS, limit=10, expand="fuzzy")
    assert {"d/1.md", "d/6.md"} <= set(paths(fuzzy)) and all(m == {"kayak"} for _, _, m in fuzzy)
    prefix = engine.search("kay", boosts=BOOSTS, limit=10, expand="prefix")
    assert set(paths(prefix)) == {"d/1.md", "d/6.md"}
    assert engine.search("ka", boosts=BOOSTS, limit=10, expand="prefix") == []   # under 3 letters
    assert engine.search("kayq", boosts=BOOSTS, limit=10, expand="prefix") == []


def test_engines_agree_on_terms_idf_matches_and_scores(both) -> None:
    corpus = docs(200)
    for e in both:
        e.rebuild(corpus)
        e.write(replace=corpus[:5], delete=[d.path for d in corpus[-10:]])
    t, w = both
    queries = ["deploy kayak", "Did my mom's kids go kayaking?", "pool_size db slow", "Bunny.net main.py",
               "running plans generous", "colour photos", "kestrel release 2.4.0", "zzz nothing"]
    for q in queries:
        assert w.terms(q) == t.terms(q) == analysis.terms(q)
        assert w.idf(w.terms(q)) == pytest.approx(t.idf(t.terms(q)))
        for expand in ("none", "fuzzy", "prefix"):
            hw = w.search(q, boosts=BOOSTS, limit=1000, expand=expand)
            ht = t.search(q, boosts=BOOSTS, limit=1000, expand=expand)
            assert {p: m for p, _, m in hw} == {p: m for p, _, m in ht}, (q, expand)
            if expand == "none":  # Whoosh's scores of expansions depend on its segments
                sw, st = {p: s for p, s, _ in hw}, {p: s for p, s, _ in ht}
                # equal up to how each engine rounds a field's length into one byte
                assert all(st[p] == pytest.approx(sw[p], rel=0.06) for p in sw), (q, expand)
    assert w.count() == t.count()


def test_rebuild_leaves_no_leftovers_and_removes_a_killed_ones(engine) -> None:
    engine.rebuild(docs())
    assert engine.leftovers() == []
    new = engine.folder.with_name(engine.folder.name + ".new")
    new.mkdir()
    (new / "junk").write_text("half a rebuild")
    old = engine.folder.with_name(engine.folder.name + ".old")
    old.write_text("a file where a folder was")
    assert set(engine.leftovers()) == {new, old}
    assert engine.remove_leftovers() == 2 and engine.leftovers() == []
    engine.rebuild(docs()[:3])
    assert engine.count() == 3


def test_a_rebuild_is_seen_by_another_instance(engine, tmp_path: Path) -> None:
    engine.rebuild(docs())
    other = type(engine)(engine.folder)
    assert other.count() == len(CORPUS)
    engine.rebuild(docs()[:2])
    engine.write(replace=[IndexDoc("z.md", "entry", "zebra", "", "", "")])
    assert other.count() == 3
    assert paths(other.search("zebra", boosts=BOOSTS, limit=5)) == ["z.md"]
    other.close()


def test_missing_index_is_broken(engine) -> None:
    assert not engine.exists()
    with pytest.raises(IndexBroken):
        engine.search("deploy", boosts=BOOSTS, limit=5)
    with pytest.raises(IndexBroken):
        engine.write(replace=docs()[:1])


@pytest.mark.parametrize("damage", ["garbage", "truncate", "delete-one"])
def test_corrupt_index_is_broken(engine, damage: str) -> None:
    engine.rebuild(docs(50))
    engine.close()
    files = sorted(p for p in engine.folder.iterdir() if p.is_file() and not p.name.startswith(".")
                   and p.stat().st_size > 0)
    for p in files:
        if damage == "garbage":
            p.write_bytes(b"\x00garbage" * 7)
        elif damage == "truncate":
            p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    if damage == "delete-one":
        for p in files:
            if p.name not in ("meta.json", ".managed.json") and not p.name.startswith("_MAIN"):
                p.unlink()
    with pytest.raises(IndexBroken):
        engine.search("deploy kayak", boosts=BOOSTS, limit=5)
        engine.count()
    engine.rebuild(docs())  # what the tree does with a broken index
    assert engine.count() == len(CORPUS)


def test_a_huge_query_costs_a_bounded_time(engine) -> None:
    engine.rebuild(docs(300))
    rng = random.Random(3)
    huge = " ".join("".join(rng.choices("abcdefghij", k=rng.randint(3, 12))) for _ in range(20_000))
    for expand in ("none", "fuzzy", "prefix"):
        start = time.process_time()    # CPU seconds (every thread of this process): load does not move them
        engine.search(huge + " " + "x" * 100_000, boosts=BOOSTS, limit=10, expand=expand)
        assert time.process_time() - start < 5.0, expand


class RecordingSearcher:
    def __init__(self, searcher) -> None:
        self.searcher = searcher
        self.asked: list[tuple[str, str]] = []

    def terms_with_prefix(self, field: str, prefix: str):
        self.asked.append((field, prefix))
        return self.searcher.terms_with_prefix(field, prefix)


def test_tantivy_expands_at_most_the_bounded_terms(tmp_path: Path) -> None:
    """As WhooshEngine: only terms of at most MAX_EXPAND_CHARS letters are expanded, at most
    MAX_EXPANDED_TERMS of them, out of at most MAX_QUERY_TERMS terms of the query; prefixes only
    on the short fields, fuzzy matches on content share two letters."""
    e = TantivyEngine(tmp_path / "t")
    e.rebuild(docs(300))
    words = ["k" * 40] + [f"kay{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(200)]
    terms = e.terms(" ".join(words))
    assert len(terms) == analysis.MAX_QUERY_TERMS
    rec = RecordingSearcher(e._index().searcher())
    e._clauses(rec, terms, BOOSTS, "prefix")
    assert {f for f, _ in rec.asked} == set(analysis.SHORT_FIELDS)
    asked = {p for _, p in rec.asked}
    assert 0 < len(asked) <= analysis.MAX_EXPANDED_TERMS and "k" * 40 not in asked
    rec.asked.clear()
    e._clauses(rec, terms, BOOSTS, "fuzzy")
    assert 0 < len(rec.asked) <= analysis.MAX_EXPANDED_TERMS * len(FIELDS)
    assert {p for f, p in rec.asked if f not in analysis.SHORT_FIELDS} == {"ka"}
    assert {p for f, p in rec.asked if f in analysis.SHORT_FIELDS} == {"k"}
    e.close()


def test_an_index_on_a_read_only_file_system_answers(engine, tmp_path: Path) -> None:
    """tantivy opens its lock file for writing even to read: on a read-only mount it reads a copy."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        e = type(engine)(mnt / "index")
        e.rebuild(docs())
        e.write(replace=docs()[:1])
        e.close()
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        e = type(engine)(mnt / "index")
        assert paths(e.search("kayak", boosts=BOOSTS, limit=5))[:2] == ["d/6.md", "d/1.md"]
        assert e.count() == len(CORPUS)
        e.close()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


# -- crash safety: a real kill -9 -------------------------------------------------------------

KILLED = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from memgrove.tree.index.engine import IndexDoc
    from memgrove.tree.index.tantivy_engine import TantivyEngine
    e = TantivyEngine(Path(sys.argv[1]), procs=2)
    docs = lambda n: (IndexDoc(f"k/{i}.md", "entry", f"title {i}", "word " * 50 + f"w{i}", "k", "") for i in range(n))
    if sys.argv[2] == "write":
        while True:   # commits in a loop, killed in one of them
            e.write(replace=list(docs(300)))
            print("committed", flush=True)
    else:
        def progress(i):
            if i == 2000:
                print("building", flush=True)
        e.rebuild(docs(10**7), total=10**7, progress=progress)
""")


@pytest.mark.parametrize("during", ["write", "rebuild"])
def test_tantivy_killed_mid_commit_leaves_a_usable_or_rebuildable_index(tmp_path: Path, during: str) -> None:
    folder = tmp_path / "index" / "tantivy"
    e = TantivyEngine(folder)
    e.rebuild(docs())
    with subprocess.Popen([sys.executable, "-c", KILLED, str(folder), during], stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout.readline().strip() in ("committed", "building")
            time.sleep(0.05)
        finally:
            proc.kill()  # SIGKILL: no cleanup in the child
            proc.wait()
    e.close()
    if during == "rebuild":
        assert e.leftovers()  # the half-built index beside the old, which is untouched
        assert e.count() == len(CORPUS)
        e.remove_leftovers()
    # tantivy's writer lock died with the process: a new writer commits at once
    start = time.monotonic()
    e.write(replace=[IndexDoc("after.md", "entry", "survivor", "after the kill", "", "")])
    assert time.monotonic() - start < 30.0     # a hang guard: a lock that outlived its holder never frees
    assert paths(e.search("survivor", boosts=BOOSTS, limit=5)) == ["after.md"]
    assert (folder / ".tantivy-writer.lock").exists()  # the file stays; its lock does not


# -- choosing the engine ------------------------------------------------------------------------

def test_open_engine_uses_a_folder_per_engine(tmp_path: Path) -> None:
    for name, cls in ENGINES.items():
        e = open_engine(tmp_path, TreeSettings(engine=name))
        assert isinstance(e, cls) and e.folder == tmp_path / "index" / name and e.name == name


def test_an_unknown_engine_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".memgrove").mkdir()
    (tmp_path / ".memgrove" / "config.toml").write_text('[tree]\nengine = "lucene"\n')
    with pytest.raises(MemgroveError, match="unknown engine 'lucene'; use one of whoosh, tantivy"):
        Memory.open(tmp_path, create=True)


def test_tantivy_chosen_but_not_installed_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tantivy_engine, "tantivy", None)
    (tmp_path / ".memgrove").mkdir()
    (tmp_path / ".memgrove" / "config.toml").write_text('[tree]\nengine = "tantivy"\n')
    with pytest.raises(EngineMissing) as info:
        Memory.open(tmp_path, create=True)
    assert str(info.value) == ("engine = \"tantivy\" needs the tantivy package: "
                               "pip install 'memgrove[fast]'")
    assert info.value.code == "engine_missing" and "\n" not in str(info.value)


def test_without_tantivy_the_module_still_imports(tmp_path: Path) -> None:
    """The import is optional: a Python without tantivy imports the engine module and gets the
    one-line error only when it chooses tantivy."""
    code = ("import sys; sys.modules['tantivy'] = None\n"
            "from memgrove.tree.index.tantivy_engine import TantivyEngine, EngineMissing\n"
            "from memgrove.tree.settings import TreeSettings\n"
            "from memgrove.tree.index.engines import open_engine\n"
            "from pathlib import Path\n"
            "open_engine(Path(sys.argv[1]), TreeSettings(engine='whoosh'))\n"
            "try:\n    open_engine(Path(sys.argv[1]), TreeSettings(engine='tantivy'))\n"
            "except EngineMissing as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                         env={**os.environ, "MEMGROVE_TEST_ENGINE": ""}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "engine = \"tantivy\" needs the tantivy package: pip install 'memgrove[fast]'"


def test_switching_engines_rebuilds_once(tmp_path: Path) -> None:
    def opened(engine: str) -> Memory:
        return Memory.open(tmp_path, create=True, durable=False, engine=engine, include_context_hits=False)

    def found(mem: Memory) -> set[str]:
        return {h.path for h in mem.search("deploy", limit=50)}

    with opened("whoosh") as mem:
        mem.curate([{"op": "ADD", "path": "ops/deploy/friday.md", "title": "Friday deploys",
                     "content": "We deploy on Fridays.", "reason": "test"}])
        want = found(mem)
        home = mem.home
    assert want == {"ops/deploy/friday.md"}
    for i, engine in enumerate(("tantivy", "whoosh", "tantivy")):
        with opened(engine) as mem:
            assert found(mem) == want   # rebuilt: the other engine's writes are in
            assert mem.tree.catalog.get_meta("format") == mem.tree.index_format == f"{engine}-{INDEX_FORMAT}"
            # a write on this engine: the other engine's index is now stale and must not be trusted
            mem.curate([{"op": "ADD", "path": f"ops/deploy/n{i}.md", "title": f"{engine} deploys",
                         "content": "Deploy notes.", "reason": "test"}])
            want = found(mem)
            folder = (home / "index" / engine).stat().st_ino
        with opened(engine) as mem:   # the same engine again: no second rebuild
            assert found(mem) == want
            assert (home / "index" / engine).stat().st_ino == folder
    assert len(want) == 4

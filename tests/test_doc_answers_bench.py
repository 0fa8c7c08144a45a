"""The documentation QA set (benchmarks/data/docqa/, benchmarks/doc_answers.py): every short answer stands in
its page, every page is named in SOURCE.md, the halves are split by page, and the first sentence the user
reads is cut as the benchmark says."""

from __future__ import annotations

from collections import Counter

from helpers.benchmarks import load_benchmark

bench = load_benchmark("doc_answers")


def test_every_answer_stands_in_its_page_and_the_halves_split_by_page():
    questions = bench.load_questions()
    assert bench.check(questions) == []
    assert len(questions) >= 110
    halves = Counter(q["split"] for q in questions)
    assert min(halves["dev"], halves["test"]) >= 0.4 * len(questions)
    pages_of = {h: {q["page"] for q in questions if q["split"] == h} for h in ("dev", "test")}
    assert pages_of["dev"].isdisjoint(pages_of["test"])
    assert len({q["kind"] for q in questions}) >= 5


def test_every_page_is_named_in_source_md():
    source = (bench.DATA / "SOURCE.md").read_text(encoding="utf-8")
    pages = bench.pages()
    assert 20 <= len(pages) <= 40
    assert [p for p in pages if p.split("/", 1)[1] not in source] == []


def test_a_wrong_answer_is_reported():
    q = dict(bench.load_questions()[0], answer="an answer no page holds", id="x")
    assert any("does not stand in" in p for p in bench.check([q]))


def test_the_first_sentence_is_the_first_lines_first_sentence():
    assert bench.first_sentence("\nDefault is `dist`. Set it with -o.\nMore.") == "Default is `dist`."
    assert bench.first_sentence("Installed in 2.0.0 on Linux. Then") == "Installed in 2.0.0 on Linux."
    assert bench.first_sentence("Use `--refresh` (e.g. uv sync --refresh)") == "Use `--refresh` (e.g. uv sync --refresh)"
    assert bench.first_sentence("") == ""


def test_a_link_is_read_as_its_text():
    q = {"answer": "nox-poetry", "alternatives": []}
    assert bench.hit(q, "Use the [`nox-poetry`](https://github.com/cjolowicz/nox-poetry) package.")
    assert bench.readable('see [here]({{< relref "cli#add" >}} "the add command").') == "see here."

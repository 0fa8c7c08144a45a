"""Every script is searchable: CJK words inside sentences, Cyrillic ё, Greek accents, full-width
forms (tree/text/analysis.py), the same on both engines (``MEMGROVE_TEST_ENGINE``)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memgrove import Memory
from memgrove.cli import cli
from memgrove.tree.text import analysis

NOTES = {
    "ja": "佐藤さんはデータベースの移行を担当しています。来週の月曜日に完了する予定です。",
    "ja2": "東京の本社は渋谷にあります。会議室は三階です。",
    "ja3": "昼ごはんはすしでした。",
    "ko": "우리 팀은 매주 금요일에 회의를 합니다. 회의실은 2층에 있습니다.",
    "zh": "我们的服务器部署在上海的数据中心，每天凌晨三点备份。",
    "ru": "Ёжик в тумане — любимый мультфильм Маши.",
    "el": "Η συνάντηση είναι στην Αθήνα την Τρίτη.",
    "fw": "The ＡＰＩ key rotates every ３０ days.",
    "en": "Refresh tokens rotate on every use. The deploy runs on Fridays.",
}


@pytest.fixture
def paths(mem: Memory) -> dict[str, str]:
    out = {}
    for key, text in NOTES.items():
        out[key] = mem.ingest(text=text)[0].path
    return out


def top(mem: Memory, query: str) -> str | None:
    hits = mem.search(query)
    return hits[0].path if hits else None


@pytest.mark.parametrize("query,key", [
    ("佐藤", "ja"), ("データベース", "ja"), ("渋谷", "ja2"), ("会議室", "ja2"), ("회의실", "ko"), ("금요일", "ko"),
    ("すし", "ja3"), ("上海", "zh"), ("数据中心", "zh"),
    ("ежик", "ru"), ("Ежик", "ru"), ("ЁЖИК", "ru"),
    ("Αθήνα", "el"), ("αθηνα", "el"), ("ΑΘΗΝΑ", "el"), ("συναντηση", "el"),
    ("API key", "fw"), ("ＡＰＩ", "fw"), ("30 days", "fw"),
])
def test_a_word_is_found_inside_a_sentence_in_every_script(mem, paths, query, key):
    assert top(mem, query) == paths[key]


def test_half_width_katakana_finds_full_width(mem, paths):
    assert top(mem, "ﾃﾞｰﾀﾍﾞｰｽ") == paths["ja"]


@pytest.mark.parametrize("question,key", [
    ("データベースの移行は誰が担当していますか？", "ja"),
    ("회의실은 몇 층에 있습니까?", "ko"),
    ("服务器每天什么时候备份？", "zh"),
    ("Как называется мультфильм про ежика?", "ru"),
])
def test_a_question_in_the_notes_language_finds_its_note(mem, paths, question, key):
    answer = mem.query(question)
    assert not answer.out_of_domain
    assert answer.sources[0] == paths[key]
    assert NOTES[key][:8] in answer.answer


@pytest.mark.parametrize("question", ["明日の天気はどうですか？", "猫の名前は何ですか？"])
def test_a_japanese_question_about_nothing_stored_finds_no_note(mem, paths, question):
    # its hiragana pairs ("です", "ます") are grammar, left out of a question with other terms
    assert mem.search(question) == []
    assert mem.query(question).sources == []


def test_cli_search_finds_cjk_words(mem, paths, monkeypatch):
    for word, key in (("佐藤", "ja"), ("データベース", "ja")):
        result = CliRunner().invoke(cli, ["search", word], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert paths[key] in result.output


def test_cjk_runs_are_overlapping_bigrams_and_a_lone_character_a_unigram():
    assert analysis.analyze("データベース") == ["デー", "ータ", "タベ", "ベー", "ース"]
    assert analysis.analyze("人") == ["人"]
    assert analysis.analyze("Python3で作った") == ["python3", "で作", "作っ", "った"]
    assert analysis.analyze("한국어 사용") == ["한국", "국어", "사용"]


def test_folding_is_selected_not_nfkc():
    assert analysis.fold("Ёжик") == "Ежик"
    assert analysis.fold("ＡＢＣ１２\u3000x") == "ABC12 x"
    assert analysis.fold("ﾃﾞｰﾀ") == "データ"
    assert analysis.analyze("Η οδός") == analysis.analyze("η οδος") == ["η", "οδοσ"]
    # NFKC would turn these into other words; they are kept as written
    assert analysis.analyze("x² ½ ﬁle") == ["x²", "½", "ﬁle"]
    assert analysis.analyze("cafe\u0301") == analysis.analyze("café")          # NFC


def test_english_terms_are_unchanged():
    text = "Dave's Bunny.net deploy didn't run; we're running 2.4.0 at 3.50 on pool_size."
    assert analysis.analyze(text) == ["dave", "bunny.net", "bunni", "net", "deploy", "run", "run", "2.4.0",
                                      "3.50", "pool", "size"]

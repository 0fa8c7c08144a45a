"""The answer without a model holds what the question asks for (issue 33).

``graphs/answer_type.py`` reads the kind of value a question asks for and whether a
sentence holds one; ``graphs/answer_pick.py`` leads with the sentence of the chosen
entries that does, never one that only repeats the question's words;
``graphs/answer_time.py`` says what a message's "yesterday" or "last week" was. Each
case has distractors: sentences that share the question's words and do not answer.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.graphs import answer_pick, answer_time, answer_type
from memgrove.sample import sample_dir
from memgrove.tree.text.analysis import terms

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "answer_types.json"


def answer(question: str, bodies: list[str], said: list[str] = (), before: list[tuple[str, str]] = ()) -> str:
    ts = terms(question)
    return answer_pick.answer_text(question, ts, {t: 1.0 for t in ts}, bodies, terms, [], list(said), [], before)


# -- what a question asks for -----------------------------------------------------------------

@pytest.mark.parametrize("question,kind", [
    ("How long was tally-api down during INC-231?", answer_type.DURATION),
    ("How many minutes did the deploy take?", answer_type.DURATION),
    ("How long ago did we move?", answer_type.TIME),
    ("When is Ana's trip to Lisbon?", answer_type.TIME),
    ("What year did we open the office?", answer_type.TIME),
    ("Which Whoosh version do we use?", answer_type.VERSION),
    ("How many pods does tally-api run?", answer_type.NUMBER),
    ("How much does the premium plan cost?", answer_type.NUMBER),
    ("How often do we rotate keys?", answer_type.FREQUENCY),
    ("Who owns the billing service?", answer_type.PERSON),
    ("Where are the backups stored?", answer_type.PLACE),
    ("Which city is the offsite in?", answer_type.PLACE),
    ("What is the name of Ben's dog?", answer_type.NAME),
    ("What breed is Pixel?", answer_type.BREED),
    ("Which book did Nora read last?", answer_type.TITLE),
    ("What did we decide about search?", None),
])
def test_the_kind_a_question_asks_for(question, kind):
    assert answer_type.asked(question) == kind


def test_a_value_the_question_already_names_is_not_an_answer():
    assert answer_type.holds(answer_type.VERSION, "We moved from 2.6 to 2.7.4.", "Did we leave 2.6?")
    assert not answer_type.holds(answer_type.VERSION, "We use 2.6 everywhere.", "Which version, 2.6 or 2.7?")
    assert not answer_type.holds(answer_type.NAME, "Ben loves the dog.", "What is the name of Ben's dog?")
    # "the Riverside shelter" names the shelter; "I'm" and weekdays name nobody
    assert not answer_type.holds(answer_type.NAME, "She came from the Riverside shelter on Saturday.", "What is her name?")
    assert answer_type.holds(answer_type.NAME, "Pixel.", "What is the name of Ben's dog?")
    # "how many pods" wants a number of pods, not of minutes
    assert answer_type.holds(answer_type.NUMBER, "Each of the 12 pods used a pool.", "How many pods are there?")
    assert not answer_type.holds(answer_type.NUMBER, "It was down for 47 minutes.", "How many pods are there?")


# -- the pick, one kind at a time, with distractors ----------------------------------------------

def test_duration():
    got = answer("How long was the billing API down during INC-88?", [
        "The billing API outage INC-88 was caused by an expired certificate on the billing API gateway. "
        "The billing API was down for 22 minutes before the certificate was renewed."])
    assert "22 minutes" in got


def test_time_and_what_a_relative_time_names():
    got = answer("When did Leo adopt the cat?",
                 ["Leo wanted to adopt a cat for years. I adopted the cat yesterday, she is asleep on my desk."],
                 said=["Leo, 4 May 2025"])
    assert "yesterday" in got and "3 May 2025" in got and "Leo, 4 May 2025" in got
    # only a question asking when gets it: elsewhere the day is said, not resolved
    assert "3 May 2025" not in answer("Where is the cat asleep?", ["I adopted the cat yesterday, she is asleep on my desk."],
                                      said=["Leo, 4 May 2025"])


def test_relative_times_are_resolved_no_more_precisely_than_said():
    day = date(2023, 5, 8)   # a Monday
    assert answer_time.resolved("I went yesterday", day) == ["yesterday = 7 May 2023"]
    assert answer_time.resolved("the day before yesterday", day) == ["the day before yesterday = 6 May 2023"]
    assert answer_time.resolved("last week", day) == ["last week = the week before 8 May 2023"]
    assert answer_time.resolved("last Fri", day) == ["last Fri = the Friday before 8 May 2023"]
    assert answer_time.resolved("last year and two months ago", day) == ["last year = 2022", "two months ago = March 2023"]
    assert answer_time.resolved("next month", day) == ["next month = June 2023"]
    assert answer_time.resolved("recently, soon, the other day", day) == []


def test_version():
    got = answer("Which Redis version does the cache use?", [
        "The cache uses Redis for sessions; the Redis cache is shared by all services.",
        "We are on Redis 7.2 since the upgrade."])
    assert "7.2" in got


def test_number_and_frequency():
    assert "49 EUR" in answer("How much does the premium plan cost?", [
        "The premium plan includes priority support and the premium plan has no seat limit. It costs 49 EUR per month."])
    assert "every 90 days" in answer("How often do we rotate the signing keys?", [
        "We rotate the signing keys with a script; the signing keys live in Vault. Keys are rotated every 90 days."])


def test_person_including_a_message_said_in_the_first_person():
    assert "Karim" in answer("Who reviewed the database migration?", [
        "The database migration changed the schema of the orders table, and the migration needed a review.",
        "Karim reviewed it and asked for a rollback script."])
    got = answer("Who covers the on-call shifts in August?",
                 ["The on-call shifts in August are busy. I'll cover the on-call shifts in August while you travel."],
                 said=["Ben, 3 July 2025"])
    assert got.startswith("I'll cover") and "(Ben, 3 July 2025)" in got


def test_place():
    assert "Frankfurt" in answer("Where is the staging cluster hosted?", [
        "The staging cluster mirrors production and the staging cluster is reset every Sunday.",
        "It is hosted in Frankfurt on Hetzner."])


def test_name_from_the_reply_to_a_question_in_the_conversation():
    # "What's the name?" was asked in the conversation: the reply after it answers
    got = answer("What is the name of Ben's dog?",
                 ["Perfect name for an engineer's dog. Send photos once she's settled in.",
                  "Pixel. The shelter named her and it stuck."],
                 said=["Ana, 2 March 2026", "Ben, 2 March 2026"],
                 before=[("", ""), ("No way, congrats! What's the name?", "Ana, 2 March 2026")])
    assert got.startswith("Pixel."), got


def test_the_reply_to_a_chosen_message_that_asks_answers_it():
    # the chosen message asks what we ask; the message after it (its reply) says
    ts = terms("What game was the second tournament based on?")
    got = answer_pick.answer_text(
        "What game was the second tournament based on?", ts, {t: 1.0 for t in ts},
        ["Congrats on the second tournament! What game was it based on?"], terms, [], ["Joanna, 2 May 2022"], [],
        [("", "")], [("It was Street Fighter, I play it a lot with friends.", "Nate, 2 May 2022")])
    assert got.startswith("It was Street Fighter") and "(Nate, 2 May 2022)" in got, got


def test_a_sentence_that_only_repeats_the_question_never_leads():
    got = answer("What did the team decide about the release?", [
        "The team decided about the release.", "The release moves to Friday because of the incident."])
    assert got.startswith("The release moves to Friday"), got


def test_chinese_and_japanese_sentences_end_at_full_stops():
    got = [s for s, _, _ in answer_pick.sentences("佐藤さんは東京に住んでいます。会議は月曜日です！本当？「はい。」次の文。")]
    assert got == ["佐藤さんは東京に住んでいます。", "会議は月曜日です！", "本当？", "「はい。」", "次の文。"]
    assert [s for s, _, _ in answer_pick.sentences("数据库在上海。备份在北京。")] == ["数据库在上海。", "备份在北京。"]


def test_a_japanese_question_is_answered_by_its_sentence(tmp_path):
    mem = Memory.open(tmp_path, create=True, durable=False)
    try:
        mem.curate([{"op": "ADD", "path": "team/people/sato.md", "title": "チームメモ", "reason": "test",
                     "content": "会議は毎週月曜日です。佐藤さんは大阪に住んでいます。データベースはPostgresです。"}])
        assert mem.query("佐藤さんはどこに住んでいますか？").answer.startswith("佐藤さんは大阪に住んでいます。")
        assert mem.query("データベースは何ですか").answer.startswith("データベースはPostgresです。")
    finally:
        mem.close()
    assert answer_pick.word_count("佐藤さんは大阪に住んでいます。") > 1   # no spaces, still several words


def test_the_labelled_set_is_mostly_answered():
    # benchmarks/answer_types.py measures it before/after; this keeps the picker from sliding back
    cases = json.loads(DATA.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 40 and {c["kind"] for c in cases} >= {"duration", "time", "version", "number", "person",
                                                                 "place", "name"}
    hits = sum(c["answer"].lower() in answer(c["q"], c["entries"], c.get("said") or []).lower() for c in cases)
    assert hits >= 0.7 * len(cases), hits


# -- the sample memory's misses (issue 33) --------------------------------------------------------

@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    data = sample_dir()
    mem = Memory.open(tmp_path_factory.mktemp("sample"), create=True, durable=False)
    mem.ingest(conversation=data / "conversation.json", files=sorted((data / "notes").glob("*.md")))
    yield mem
    mem.close()


@pytest.mark.parametrize("question,want", [
    ("How long was tally-api down during INC-231?", "down for 47 minutes"),
    ("Which Whoosh version do we use?", "Whoosh 2.7.4"),
    ("What breed is Pixel?", "border collie mix"),
    ("What is the name of Ben's dog?", "Pixel."),
    ("How many pods does tally-api run?", "12 pods"),
])
def test_the_sample_memorys_misses_are_answered(sample, question, want):
    a = sample.query(question)
    assert want in a.answer, a.answer

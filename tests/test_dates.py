"""``tree/text/dates.py``: the dates a text names, what a question asks about time."""

from __future__ import annotations

from datetime import date

import pytest

from memgrove.tree.text import dates


@pytest.mark.parametrize("text, days", [
    ("1:56 pm on 8 May, 2023", [date(2023, 5, 8)]),
    ("2023-05-08T13:56:00Z", [date(2023, 5, 8)]),
    ("on May 8th, 2023 and then 1st of June 2023", [date(2023, 5, 8), date(2023, 6, 1)]),
    ("Sept. 3 2022", []),                      # "Sept" is neither a month's name nor its abbreviation
    ("Sep 3 2022", [date(2022, 9, 3)]),
    ("31 June 2023", []),                      # no such day
    ("in May 2023", []),                       # a month, not a day
    ("we may 2 of them", []),
])
def test_days_named(text, days):
    assert dates.days_named(text) == days


def test_day_of_and_its_label():
    assert dates.day_of("10:37 am on 27 June, 2023") == date(2023, 6, 27)
    assert dates.day_of("sometime") is None
    assert dates.day_label(date(2023, 6, 7)) == "7 June 2023"


def test_dates_asked_prefers_whole_days_to_months():
    assert dates.dates_asked("What did Nate do on 25 May, 2022?") == [("day", date(2022, 5, 25))]
    assert dates.dates_asked("Where did Joanna travel in July 2022 and August 2022?") == [
        ("month", date(2022, 7, 1)), ("month", date(2022, 8, 1))]
    assert dates.dates_asked("What did Nate do in May 2022 — on 25 May 2022?") == [("day", date(2022, 5, 25))]
    assert dates.dates_asked("What did Nate cook?") == []


def test_a_month_named_alone_takes_the_year_the_question_names_once():
    # the evidence of "from mid-March to August 2024" is in March and in August, not only in August
    assert dates.dates_asked("How much did my rating improve from mid-March to August 2024?") == [
        ("month", date(2024, 3, 1)), ("month", date(2024, 8, 1))]
    assert dates.dates_asked("What changed between April and June 2023?") == [
        ("month", date(2023, 4, 1)), ("month", date(2023, 6, 1))]
    # no year to share, two years, a verb, a month with its own day: nothing is guessed
    assert dates.dates_asked("What did I do in March?") == []
    assert dates.dates_asked("Did I move from March 2023 to August 2024 or in June?") == [
        ("month", date(2023, 3, 1)), ("month", date(2024, 8, 1))]
    assert dates.dates_asked("What may I plan in August 2024?") == [("month", date(2024, 8, 1))]
    assert dates.dates_asked("May I plan something in August 2024?") == [("month", date(2024, 8, 1))]
    assert dates.dates_asked("Did the march in August 2024 go ahead?") == [("month", date(2024, 8, 1))]
    assert dates.dates_asked("What happened between March 3 and August 2024?") == [("month", date(2024, 8, 1))]


def test_date_closeness():
    day = [("day", date(2023, 5, 23))]
    assert dates.date_closeness(day, date(2023, 5, 23)) == dates.SAME_DAY
    assert dates.date_closeness(day, date(2023, 5, 27)) == dates.SAME_WEEK
    assert dates.date_closeness(day, date(2023, 5, 16)) == dates.SAME_WEEK      # 7 days before
    assert dates.date_closeness(day, date(2023, 5, 2)) == dates.SAME_MONTH
    assert dates.date_closeness(day, date(2023, 5, 31)) == dates.SAME_MONTH   # 8 days after
    assert dates.date_closeness(day, date(2023, 6, 5)) == 0.0
    assert dates.date_closeness(day, None) == 0.0
    assert dates.date_closeness([], date(2023, 5, 23)) == 0.0
    month = [("month", date(2023, 8, 1))]
    assert dates.date_closeness(month, date(2023, 8, 31)) == 1.0
    assert dates.date_closeness(month, date(2023, 9, 1)) == 0.0
    # the best of several named dates
    both = [("day", date(2023, 1, 1)), ("day", date(2023, 5, 23))]
    assert dates.date_closeness(both, date(2023, 5, 23)) == dates.SAME_DAY


@pytest.mark.parametrize("question, asks", [
    ("When did Caroline go to the support group?", True),
    ("  when was the release?", True),
    ("What year did John start surfing?", True),
    ("How long ago was her birthday?", True),
    ("Since when has the build been red?", True),
    ("What did Caroline say when she left?", False),    # "when" in the middle asks no time
    ("What is the pool size?", False),
    ("How many times did it fail?", False),
])
def test_asks_when(question, asks):
    assert dates.asks_when(question) is asks


@pytest.mark.parametrize("text, says", [
    ("I had a lil car accident last Friday.", True),
    ("We moved here in 2019.", True),
    ("It was two weeks ago.", True),
    ("See you on 8 May!", True),
    ("May 3 works for me.", True),
    ("You may like this painting.", False),            # the verb, not the month
    ("The sunset over the lake was lovely.", False),
])
def test_mentions_time(text, says):
    assert dates.mentions_time(text) is says


@pytest.mark.parametrize("question, asked, bounds", [
    # a bound: the day itself is not what is asked about (no date lift for it)
    ("Which port did the dev log shipper listen on before 24 April 2026?", [], [("before", date(2026, 4, 24))]),
    ("What changed since 2026-03-02?", [], [("after", date(2026, 3, 2))]),
    ("Where was the office until the 3rd of May 2024?", [], [("before", date(2024, 5, 3))]),
    # a time unit anchors the question at the day (LoCoMo asks so): days near it are asked about
    ("What did John do the week before August 3, 2023?", [("day", date(2023, 8, 3))], []),
    ("What did Andrew do on the Monday before July 24, 2023?", [("day", date(2023, 7, 24))], []),
    ("What did Maria do last weekend before April 10, 2023?", [("day", date(2023, 4, 10))], []),
    ("What happened on 8 May 2023?", [("day", date(2023, 5, 8))], []),
])
def test_a_date_after_before_or_since_is_a_bound(question, asked, bounds):
    assert dates.dates_asked(question) == asked
    assert dates.bounds_asked(question) == bounds

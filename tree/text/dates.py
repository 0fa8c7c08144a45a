"""When things happened: the dates a text names, the day an entry is about, and
whether a question asks for a time.

Plain functions over text, used by the verbatim curator (titles that name the
day), the index (each entry's day and whether its text says when) and search
(a question that names a date or asks "when" favours entries that match).
English month names; numeric-only dates other than ISO ("05/08/2023") are not
read, because their order is ambiguous.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timezone

MONTHS = {name.lower(): n for n in range(1, 13) for name in (calendar.month_name[n], calendar.month_abbr[n])}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)


def _day(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def days_named(text: str) -> list[date]:
    """Every whole date ``text`` names, in order: "2023-05-08", "8 May, 2023",
    "May 8th 2023", "8th of May 2023". Impossible dates (31 June) are skipped."""
    return list(dict.fromkeys(d for _, d in _dated_spans(text)))


def day_of(when: str) -> date | None:
    """The first whole date a time names ("1:56 pm on 8 May, 2023" -> 2023-05-08), or None."""
    days = days_named(when)
    return days[0] if days else None


_SLASHED_DAY = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\b")   # "2023/05/20 (Sat) 02:21": year first, unambiguous
# Epoch seconds from 2001 to 2100: a number outside is more likely milliseconds or a mistake.
_EPOCH_RANGE = (978307200, 4102444800)


def readable_time(value: object) -> str | None:
    """A message time as memgrove keeps it, or None when it names no moment a reader could place.

    Kept as given: ISO 8601 (``2023-05-08T13:56:00Z``, ``2023-05-08``), any text naming a whole
    date (``1:56 pm on 8 May, 2023``, ``May 8, 2023``) and ``2023/05/20 (Sat) 02:21``. Epoch
    seconds (a number, as chat exports give them) become ISO 8601 UTC. Relative times
    ("yesterday", "last Friday") and dates without a year are not resolved against the time of
    curation -- a stored export is curated long after it was written, so that guess would be
    wrong silently -- they are refused, and the caller says so.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not _EPOCH_RANGE[0] <= value <= _EPOCH_RANGE[1]:
            return None
        return datetime.fromtimestamp(value, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        return text
    except ValueError:
        pass
    m = _SLASHED_DAY.match(text)
    if m and _day(int(m.group(1)), int(m.group(2)), int(m.group(3))):
        return text
    return text if days_named(text) else None


def day_label(d: date) -> str:
    """``8 May 2023``: how titles name a day (the words a question uses, not ISO)."""
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


# -- what a question asks -------------------------------------------------------

# How near an entry's day is to a day the question names, as a share of the date lift.
# The same day counts fully; a conversation's date is often a few days after what it
# tells ("last Friday"), so the surrounding week counts most of it, the month some.
SAME_DAY, SAME_WEEK, SAME_MONTH = 1.0, 0.8, 0.4
WEEK_DAYS = 7


# a month named in full and capitalized, with no year or day after it ("from mid-March to August
# 2024"); lower-case "may" and "march" are verbs more often than months, and so is "May I"
_MONTH_ALONE = re.compile(r"\b(" + "|".join(calendar.month_name[1:]) + r")\b(?!\.?,?\s+(?:of\s+)?\d)"
                         r"(?!\s+(?:I|we|you|he|she|they)\b)")   # "May I ..."
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")


# a date after "before", "until", "after", "since" is a bound, not the day asked about ("which port
# did staging use before 24 April 2026?"), unless a time unit anchors the question at it: "the
# week before August 3, 2023", "two weeks before", "the Monday before" ask about days near it
_UNITS = frozenset("day days week weeks weekend weekends month months year years night morning evening afternoon "
                   "monday tuesday wednesday thursday friday saturday sunday".split())
_BOUND = re.compile(r"(?:(\w+)\s+)?\b(before|until|till|prior to|after|since)\s+(?:the\s+)?$", re.I)


def bounds_asked(question: str) -> list[tuple[str, date]]:
    """The whole dates a question names as bounds: ``("before", d)`` after "before", "until",
    "prior to"; ``("after", d)`` after "after", "since" (``_BOUND``)."""
    out = []
    for m in _dated_spans(question):
        b = _BOUND.search(question[:m[0]])
        if b and (b.group(1) or "").lower() not in _UNITS:
            out.append(("after" if b.group(2).lower() in ("after", "since") else "before", m[1]))
    return out


def _dated_spans(text: str) -> list[tuple[int, date]]:
    """``(position, day)`` of every whole date ``text`` names, in order (``days_named``)."""
    found = [(m.start(), _day(int(m.group(1)), int(m.group(2)), int(m.group(3)))) for m in _ISO_DAY.finditer(text)]
    found += [(m.start(), _day(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1))))
              for m in _DAY_MONTH_YEAR.finditer(text)]
    found += [(m.start(), _day(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2))))
              for m in _MONTH_DAY_YEAR.finditer(text)]
    return sorted((i, d) for i, d in found if d is not None)


def dates_asked(question: str) -> list[tuple[str, date]]:
    """The dates a question names: ``("day", d)`` for whole dates (a bound, ``bounds_asked``, left
    out); if it names none, ``("month", first of the month)`` for each month and year ("in May
    2023"), and for each month named alone when the question names one year: English says the
    shared year once ("from March to August 2024", "between April and June 2023")."""
    days = days_named(question)
    if days:
        bound = {d for _, d in bounds_asked(question)}
        return [("day", d) for d in days if d not in bound]
    months = [(m.start(), date(int(m.group(2)), MONTHS[m.group(1).lower()], 1)) for m in _MONTH_YEAR.finditer(question)]
    years = set(_YEAR.findall(question))
    if months and len(years) == 1:
        year = int(years.pop())
        months += [(m.start(), date(year, MONTHS[m.group(1).lower()], 1)) for m in _MONTH_ALONE.finditer(question)]
    return list(dict.fromkeys(("month", d) for _, d in sorted(months, key=lambda x: x[0])))


def date_closeness(asked: list[tuple[str, date]], day: date | None) -> float:
    """0..1: how well an entry about ``day`` fits the dates a question names."""
    best = 0.0
    if day is None:
        return best
    for kind, d in asked:
        same_month = (day.year, day.month) == (d.year, d.month)
        if kind == "month":
            best = max(best, SAME_DAY if same_month else 0.0)
        elif day == d:
            return SAME_DAY
        elif abs((day - d).days) <= WEEK_DAYS:
            best = max(best, SAME_WEEK)
        elif same_month:
            best = max(best, SAME_MONTH)
    return best


_ASKS_WHEN = re.compile(r"^\W*when\b|\bsince when\b|\b(?:what|which)\s+(?:year|month|day|date|week|time)\b"
                        r"|\bhow long\b", re.I)


def asks_when(question: str) -> bool:
    """Does the question ask for a time ("When did ...", "What year ...", "How long ago ...")?"""
    return bool(_ASKS_WHEN.search(question))


# Words that place an event in time. On LoCoMo 87% of the messages that answer a
# "when" question contain one, against 20% of all messages.
_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|weeks?|weekends?|months?|years?|"
    r"mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"recently|soon|since|before|after|earlier|later|summer|winter|spring|autumn|"
    r"christmas|holidays?|birthday|\d{4})\b"
    r"|\bmay\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?may\b", re.I)


def mentions_time(text: str) -> bool:
    """Does the text say when something happened ("last Friday", "in 2022", "two weeks ago")?"""
    return bool(_TIME_WORDS.search(text))

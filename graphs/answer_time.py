"""What a relative time in a dated message names: "yesterday", said on 8 May 2023, is 7 May 2023.

A message of a conversation has a day; what it tells is often placed relative to it
("I went yesterday", "last week", "two years ago"). An answer to "when" shows that
day, and what each relative time in the sentence names from it, no more precisely than
it says: "last week" is "the week before 8 May 2023", not a day; "last Friday" is "the
Friday before 8 May 2023" (which Friday a speaker means by it varies). Expressions
without a fixed meaning ("recently", "soon", "the other day") are left as they are.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

from memgrove.tree.text.dates import day_label

_WEEKDAYS = [d.lower() for d in calendar.day_name]
_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBERS.update({"a": 1, "an": 1, "a couple of": 2})
_EXPR = re.compile(
    r"\b(?P<day>the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|this morning|"
    r"last night)\b"
    r"|\b(?P<rel>last|next|this past|this coming)\s+(?P<unit>week|weekend|month|year|"
    + "|".join(_WEEKDAYS) + r"|mon|tues?|wed|thurs?|fri|sat|sun)\b"
    r"|\b(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|few)"
    r"\s+(?P<ago_unit>day|week|month|year)s?\s+ago\b", re.I)


def _month_back(d: date, months: int) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 - months, 12)
    return date(y, m + 1, 1)


def _month_label(d: date) -> str:
    return f"{calendar.month_name[d.month]} {d.year}"


def _one(m: re.Match[str], day: date) -> str | None:
    said = m.group(0)
    if m.group("day"):
        word = m.group("day").lower()
        if word in ("today", "tonight", "this morning"):
            return f"{said} = {day_label(day)}"
        if word.startswith("the day"):
            return f"{said} = {day_label(day + timedelta(days=2 if 'after' in word else -2))}"
        if word in ("yesterday", "last night"):
            return f"{said} = {day_label(day - timedelta(days=1))}"
        return f"{said} = {day_label(day + timedelta(days=1))}"
    if m.group("rel"):
        back = m.group("rel").lower() in ("last", "this past")
        unit = m.group("unit").lower()
        side = "before" if back else "after"
        if unit in ("week", "weekend"):
            return f"{said} = the {unit} {side} {day_label(day)}"
        if unit == "month":
            return f"{said} = {_month_label(_month_back(day, 1 if back else -1))}"
        if unit == "year":
            return f"{said} = {day.year - 1 if back else day.year + 1}"
        name = next(d for d in calendar.day_name if d.lower().startswith(unit[:3]))
        return f"{said} = the {name} {side} {day_label(day)}"
    n_word = m.group("n").lower()
    unit = m.group("ago_unit").lower()
    if n_word in ("a few", "few"):
        return f"{said} = a few {unit}s before {day_label(day)}"
    n = int(n_word) if n_word.isdigit() else _NUMBERS.get(n_word)
    if n is None:
        return None
    if unit == "year":
        return f"{said} = {day.year - n}"
    if unit == "month":
        return f"{said} = {_month_label(_month_back(day, n))}"
    if unit == "day":
        return f"{said} = {day_label(day - timedelta(days=n))}"
    return f"{said} = {'the week' if n == 1 else f'{n_word} weeks'} before {day_label(day)}"


def resolved(text: str, day: date) -> list[str]:
    """What each relative time of ``text`` names, said on ``day``: ``["yesterday = 7 May 2023"]``."""
    out = []
    for m in _EXPR.finditer(text):
        got = _one(m, day)
        if got and got not in out:
            out.append(got)
    return out


__all__ = ["resolved"]

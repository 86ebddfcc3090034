"""The everyday time phrases ("Sunday", "next Friday", "last month", "two weeks ago", "the 3rd of May",
"December 2025") resolved by calendar arithmetic, to the very date `dateparser` gives them.

Why: a question's slots are read while its embedding is computed, on the event loop's thread. dateparser takes
0.4-1 ms a phrase (more for one it has not seen), which an FAQ answer can meet as a wait. These forms make up
nearly every time a question names, and their arithmetic is a few lines. Anything else, and every odd case of
these (a day that is not in that month, a month read on the 29th or later, where dateparser's clamping has its
own rules), is `UNREAD` here and goes to dateparser as before. `tests/unit/graph/test_calendar_words.py` holds
the two to the same answer over a sweep of phrases and dates.

Phrases come as `graph/times.py` passes them: lower case, "on " and "this " taken off the front.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta
from enum import Enum
from typing import Final, Literal

from tools.domain import MONTH_NUMBERS, NUMBER_WORDS, WEEKDAYS

Prefer = Literal["past", "future"]


class Unread(Enum):
    """Not a phrase this module resolves: dateparser reads it."""

    UNREAD = "unread"


UNREAD: Final = Unread.UNREAD

_DAY_OF = {d: i for i, d in enumerate(WEEKDAYS)}
_COUNT = {**NUMBER_WORDS, "a": 1, "an": 1}
_M = "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
_DAYS_FROM_TODAY = {"today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1, "day after tomorrow": 2}
_WEEKDAY = re.compile(rf"^(?:(?P<rel>next|last) )?(?P<day>{'|'.join(WEEKDAYS)})$")
_STEP = re.compile(r"^(?P<rel>last|next) (?P<unit>week|month|year)$")
_AGO = re.compile(rf"^(?P<n>\d{{1,3}}|{'|'.join(_COUNT)}) (?P<unit>day|week|month)s? ago$")
_DAY_MONTH = re.compile(rf"^(?:the )?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m>{_M})(?: (?P<y>\d{{4}}))?$")
_MONTH_DAY = re.compile(rf"^(?P<m>{_M})\.? (?P<d>\d{{1,2}})(?:st|nd|rd|th)?$")
_MONTH = re.compile(rf"^(?P<m>{_M})\.?(?:,? (?P<y>\d{{4}}))?$")


def resolve(phrase: str, today: date, prefer: Prefer) -> date | None | Unread:
    """The date `phrase` names against `today`, as dateparser reads it with `prefer`; `UNREAD` when it is not one
    of the forms above, or is one of their odd cases.
    """
    if phrase in _DAYS_FROM_TODAY:
        return today + timedelta(days=_DAYS_FROM_TODAY[phrase])
    if m := _WEEKDAY.match(phrase):
        return _weekday(_DAY_OF[m["day"]], today, m["rel"] or ("last" if prefer == "past" else "next"))
    if m := _STEP.match(phrase):
        sign = 1 if m["rel"] == "next" else -1
        return _step(today, m["unit"], sign)
    if m := _AGO.match(phrase):
        return _step(today, m["unit"], -(_COUNT[m["n"]] if m["n"] in _COUNT else int(m["n"])))
    if m := _DAY_MONTH.match(phrase) or _MONTH_DAY.match(phrase):
        return _day_month(int(m["d"]), MONTH_NUMBERS[m["m"]], m.groupdict().get("y"), today, prefer)
    if m := _MONTH.match(phrase):
        return _month(MONTH_NUMBERS[m["m"]], m["y"], today, prefer)
    return UNREAD


def _weekday(day: int, today: date, rel: str) -> date:
    """The nearest such weekday strictly after today ("next") or strictly before it ("last")."""
    if rel == "next":
        return today + timedelta(days=(day - today.weekday() - 1) % 7 + 1)
    return today - timedelta(days=(today.weekday() - day - 1) % 7 + 1)


def _step(today: date, unit: str, n: int) -> date | Unread:
    """`today` moved by `n` days, weeks, months or years (a month or year keeps the day of the month)."""
    if unit == "day":
        return today + timedelta(days=n)
    if unit == "week":
        return today + timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    year, month = divmod(today.year * 12 + today.month - 1 + months, 12)
    if not 1 <= year <= 9999:
        return UNREAD
    return today.replace(year=year, month=month + 1, day=min(today.day, calendar.monthrange(year, month + 1)[1]))


def _day_month(day: int, month: int, year: str | None, today: date, prefer: Prefer) -> date | Unread:
    """A day of a month: in the year named, else the nearest such date not after today ("past") or after it."""
    try:
        if year is not None:
            return date(int(year), month, day)
        found = date(today.year, month, day)
        if prefer == "past":
            return found if found <= today else found.replace(year=today.year - 1)
        return found if found > today else found.replace(year=today.year + 1)
    except ValueError:  # the 31st of a 30-day month, the 29th of February: dateparser's to read
        return UNREAD


def _month(month: int, year: str | None, today: date, prefer: Prefer) -> date | Unread:
    """A month, on today's day of the month: in the year named, else the nearest such month up to this one
    ("past") or after it.
    """
    if today.day > 28:  # dateparser's own rules for a day that month may lack
        return UNREAD
    if year is not None:
        return date(int(year), month, today.day)
    if prefer == "past":
        return date(today.year if month <= today.month else today.year - 1, month, today.day)
    return date(today.year if month > today.month else today.year + 1, month, today.day)

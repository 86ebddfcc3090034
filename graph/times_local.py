"""Times read from a question written in one of the desk's other languages ("letzten Monat", "le mois dernier",
"上个月", "im Oktober", "明天", "am Freitag"), as `graph/times.py` reads English ones.

Month names come from Babel's locale data (every form: "Oktober", "Okt."), relative months and months counted back
from each language's words file, `tools/messages/<lang>.words.yaml` (dateparser misses "el mes pasado" and "le mois
dernier"); days are read by `graph/days_local.py`.
"""

from __future__ import annotations

import functools
import re
from datetime import date

from graph import periods
from graph.days_local import (
    calendar_words,
    days_named,
    month_names,
    number,
    number_pattern,
    own_pattern,
    pairs,
    words_of,
    writes_spaces,
)
from graph.times import Times


@functools.cache
def _month_then(key: str) -> re.Pattern[str]:
    """"And the month before that?": a month relative to the one the conversation was about, in every language."""
    from tools.i18n import in_every_language

    return re.compile("|".join(p for patterns in in_every_language(key) for p in patterns), re.IGNORECASE)


@functools.lru_cache(maxsize=16)
def _month_pattern(lang: str) -> re.Pattern[str]:
    names = sorted(month_names(lang), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\.?(?:\s+(20\d\d))?\b", re.IGNORECASE)


def _shift(month: str, by: int) -> str:
    y, m = map(int, month.split("-"))
    total = y * 12 + (m - 1) + by
    return f"{total // 12}-{total % 12 + 1:02d}"


def _named_month(n: int, year: int | None, today: date) -> str:
    """A month named without a year is the latest one up to today (payslips are history)."""
    y = year or (today.year if n <= today.month else today.year - 1)
    return f"{y}-{n:02d}"


@functools.lru_cache(maxsize=16)
def _months_ago(lang: str) -> list[re.Pattern[str]]:
    """"vor zwei Monaten", "hace tres meses", "两个月前": the words file's `months_ago`, `{n}` a number."""
    n = f"(?P<n>{number_pattern(lang)})"
    b = r"\b" if writes_spaces(lang) else ""
    return [re.compile(b + str(p).format(n=n) + b) for p in words_of(lang).get("months_ago") or ()]


def _months(text: str, today: date, lang: str) -> list[str]:
    low, this = text.lower(), f"{today.year}-{today.month:02d}"
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for ago in _months_ago(lang):
        for m in ago.finditer(low):
            found.append((m.start(), _shift(this, -number(m.group("n"), lang))))
            taken.append(m.span())
    for pattern, offset in pairs(lang, "months_relative"):
        for m in re.finditer(pattern, low):
            if not any(a <= m.start() < b for a, b in taken):
                found.append((m.start(), _shift(this, offset)))
                taken.append(m.span())
    if own := own_pattern(lang, "month_pattern"):  # the language's own order, numbers in figures or words
        for m in own.finditer(text):
            if not any(a <= m.start() < b for a, b in taken) and 1 <= (n := number(m["m"], lang)) <= 12:
                found.append((m.start(), _named_month(n, int(m["y"]) if m["y"] else None, today)))
    else:
        for m in _month_pattern(lang).finditer(text):
            year = int(m.group(2)) if m.group(2) else None
            found.append((m.start(), _named_month(month_names(lang)[m.group(1).lower()], year, today)))
    return list(dict.fromkeys(month for _, month in sorted(found)))


def read_times(text: str, today: date, lang: str) -> Times:
    """What a question in `lang` says about time: the months it names (relative or by name), else the day it
    names as that day's month and span.
    """
    months = _months(text, today, lang)
    if months:
        return Times(months[:periods.MAX_PERIOD_MONTHS])
    days = days_named(text, today, lang, "past")
    if days:
        d = days[0][1]
        return Times([f"{d.year}-{d.month:02d}"], span=(d, d))
    return Times([])


def date_slot(text: str, today: date, lang: str) -> str | None:
    """The day a question in `lang` is about, as YYYY-MM-DD (coming days preferred: forecasts are ahead)."""
    days = days_named(text, today, lang, "future")
    return days[0][1].isoformat() if days else None


def relative_to(previous_month: str | None, text: str) -> str | None:
    """The month a follow-up means relative to the conversation's ("und der Monat davor?"): None when it says none."""
    if not previous_month:
        return None
    if _month_then("month_before_that").search(text):
        return _shift(previous_month, -1)
    if _month_then("month_after_that").search(text):
        return _shift(previous_month, 1)
    return None


def warm(lang: str) -> None:
    """Load dateparser's and Babel's data for a language before the first question."""
    days_named("morgen", date(2026, 1, 15), lang, "future")
    month_names(lang)
    calendar_words(lang)



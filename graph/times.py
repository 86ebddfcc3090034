"""Times read from a question: the months, day and period it names, against the run's date.

Regexes only find the phrases that name a time ("last month", "in October", "on Friday", "two weeks ago",
"the 3rd"); `dateparser`, anchored at the run's date, turns them into dates, and `graph/periods.py` reads
the periods ("Q1 2026", "the month before last", "since January"). A phrase that reads as a time but
resolves to nothing is reported as unread, never guessed. `graph/slots.py` fills the
other slots and decides what a question reuses from the conversation.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

import dateparser

from graph import periods
from tools.domain import MONTH_NAMES, WEEKDAYS

# "may" is the month unless a pronoun follows ("may I ...").
_MONTHS = "|".join([*(m for m in MONTH_NAMES if m != "may"), *(m[:3] for m in MONTH_NAMES if m != "may"), "sept",
                    r"may(?!\s+(?:i|we|you|they|he|she)\b)"])
_DAYS = "|".join(WEEKDAYS)
_NUM = r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an|a couple of"
# Phrases that name a time; the first that dateparser understands wins.
_TIME_PHRASES = re.compile(
    r"\b(?:day after tomorrow|tomorrow|tmrw|tmr|2moro|2morrow|2mrw|today|tonight|yesterday|right now"
    r"|this (?:morning|afternoon|evening)"
    rf"|(?:this|next|the)? ?week-?end"
    rf"|(?:last|previous|past|this|current|next) (?:month|week|year)"
    rf"|(?:{_NUM}) (?:days?|weeks?|months?) ago"
    rf"|(?:(?:this|next|last|on) )?(?:{_DAYS})"
    rf"|(?:the )?\d{{1,2}}(?:st|nd|rd|th)?(?: of)? (?:{_MONTHS})\b(?: \d{{4}})?"
    rf"|(?:the )?\d{{1,2}}(?:st|nd|rd|th)"
    rf"|(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?\b(?!\d)"
    rf"|(?:{_MONTHS})(?:\.|\b)(?:,? (?:20\d\d))?"
    r"|20\d\d-\d\d(?:-\d\d)?"
    r"|(?<![\d/.-])\d{1,2}[/.-]20\d\d|20\d\d/\d{1,2}(?![\d/]))\b",  # "03/2026", "3.2026", "2026/03": a month
    re.IGNORECASE)
MONTH_LEVEL = re.compile(  # a phrase naming a whole month, no day in it
    rf"^(?:(?:{_MONTHS})(?:\.|\b)(?:,? 20\d\d)?|(?:last|previous|past|this|current|next) month"
    rf"|(?:{_NUM}) months? ago|20\d\d-\d\d|\d{{1,2}}[/.-]20\d\d|20\d\d/\d{{1,2}})$", re.IGNORECASE)
_ISO = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_NUMERIC_MONTH = re.compile(r"^(?:(\d{1,2})[/.-](20\d\d)|(20\d\d)/(\d{1,2}))$")
_ORDINAL_DAY = re.compile(r"^(?:the )?(\d{1,2})(?:st|nd|rd|th)$", re.IGNORECASE)
Prefer = Literal["past", "future"]  # which way an ambiguous phrase ("Friday", "March") resolves
MAX_MONTHS = 4  # a question naming more months than this gets them together, as a period (totals and each month)


@functools.lru_cache(maxsize=4096)
def _parse(phrase: str, today: date, prefer: Prefer) -> date | None:
    """One time phrase as a date, relative to `today` (None when it is not one): exact and numeric forms here,
    the rest by dateparser. Memoized: the same phrases come back all day.
    """
    phrase = phrase.strip().lower()
    iso = _ISO.match(phrase)
    if iso:  # exact dates are validated here, never guessed
        try:
            return date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3) or 1))
        except ValueError:
            return None
    if numeric := _NUMERIC_MONTH.match(phrase):  # "03/2026": a month and its year, validated, never guessed
        month, year = (numeric.group(1), numeric.group(2)) if numeric.group(1) else (numeric.group(4), numeric.group(3))
        return date(int(year), int(month), 1) if 1 <= int(month) <= 12 else None
    if phrase in ("this month", "current month"):
        return today
    if phrase in ("tmrw", "tmr", "2moro", "2morrow", "2mrw"):  # chat spellings of tomorrow
        return today + timedelta(days=1)
    if phrase in ("right now",) or phrase.startswith("this ") and phrase.split()[1] in ("morning", "afternoon",
                                                                                         "evening"):
        return today
    if "weekend" in phrase:  # the coming Saturday (today when it is one)
        return today + timedelta(days=(5 - today.weekday()) % 7)
    ordinal = _ORDINAL_DAY.match(phrase)
    if ordinal:  # "the 3rd": that day of this month (or the month before when it is still to come)
        try:
            day = today.replace(day=int(ordinal.group(1)))
            if prefer == "past" and day > today:
                day = (today.replace(day=1) - timedelta(days=1)).replace(day=day.day)
            elif prefer == "future" and day < today:
                day = (today.replace(day=28) + timedelta(days=4)).replace(day=day.day)
        except ValueError:  # the 31st of a 30-day month
            return None
        return day
    return _by_dateparser(re.sub(r"^(?:on|this) ", "", phrase), today, prefer)


def _by_dateparser(phrase: str, today: date, prefer: Prefer) -> date | None:
    """What dateparser reads in `phrase`, relative to `today` (None: nothing)."""
    base = datetime(today.year, today.month, today.day)
    parsed = dateparser.parse(phrase, languages=["en"], settings={
        "RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False})
    return parsed.date() if parsed else None


def time_phrases(text: str) -> list[str]:
    """The phrases of a question that name a time, in order."""
    return [m.group(0) for m in _TIME_PHRASES.finditer(text)]


# A period first ("the week before last", "Q1 2026"), else a day or month phrase starting at the same place.
_READ = re.compile(rf"(?P<period>{periods.PATTERN})|(?P<time>{_TIME_PHRASES.pattern})", re.IGNORECASE)


@dataclass(frozen=True)
class Times:
    """What a question says about time, read against the run's date."""

    months: list[str]  # every month it names, in order, once each (all the months of a period)
    period: str | None = None  # the phrase whose months are answered together ("Q1 2026"), if any
    span: tuple[date, date] | None = None  # the week or day it asks about, inside those months
    unread: str | None = None  # a phrase that reads as a time but names no month we can read


def _day_period(phrase: str, today: date) -> periods.Period | None:
    """A day or month phrase as a period: a month, the week it names, or one day."""
    d = _parse(phrase, today, "past")
    if d is None:
        return None
    if MONTH_LEVEL.match(phrase.strip()):
        return periods.Period((f"{d.year}-{d.month:02d}",))
    low = phrase.lower()
    if "week" in low and "end" not in low:  # "last week", "two weeks ago": that week, Monday to Sunday
        return periods.span_period(*periods.week_of(d), today)
    return periods.span_period(d, d, today)


def read_times(text: str, today: date) -> Times:
    """Every time phrase of a question, past months preferred (payslips are history).

    One period ("since January") is answered over its months; several months named ("April compared to
    March") each. A period beside another time, a period longer than `periods.MAX_PERIOD_MONTHS`, or a
    phrase nothing reads ("the last few months") leaves the question unread: it steps aside.
    """
    readings: list[tuple[str, periods.Period]] = []
    for m in _READ.finditer(text):
        found = periods.resolve(m, today) if m.group("period") else _day_period(m.group(0), today)
        if found is None:
            return Times([], unread=m.group(0).strip())
        readings.append((m.group(0).strip(), found))
    if left := periods.DATEISH.search(_READ.sub(" ", text)):
        return Times([], unread=left.group(0))
    months = list(dict.fromkeys(mo for _, p in readings for mo in p.months))
    if not readings and re.search(r"\bso far\b", text, re.IGNORECASE):
        months = [f"{today.year}-{today.month:02d}"]
    several = [phrase for phrase, p in readings if p.several]
    if several and len(readings) > 1:  # "Q1 compared to Q2": not answered as one list of months
        return Times([], unread=" / ".join(phrase for phrase, _ in readings))
    if len(months) > periods.MAX_PERIOD_MONTHS:
        return Times([], unread=several[0] if several else readings[0][0])
    span = readings[0][1].span if len(readings) == 1 else None
    together = len(months) > 1 and bool(several or span or len(months) > MAX_MONTHS)
    return Times(months, ", ".join(phrase for phrase, _ in readings) if together else None, span)


def month_slots(text: str, today: date) -> list[str]:
    """Every month a question names, as YYYY-MM, in order and once each (past months preferred: payslips
    are history). "Did my pay go up in April compared to March?" names two, "Q1 2026" three; a time that
    cannot be read names none.
    """
    return read_times(text, today).months


def month_slot(text: str, today: date) -> str | None:
    """The month a question is about, as YYYY-MM: the first it names."""
    return next(iter(month_slots(text, today)), None)


def date_slot(text: str, today: date) -> str | None:
    """The day a question is about, as YYYY-MM-DD (coming days preferred: forecasts are ahead)."""
    for phrase in time_phrases(text):
        d = _parse(phrase, today, "future")
        if d is not None:
            return d.isoformat()
    return None


def warm() -> None:
    """Load dateparser's English data and the local time zone now, off the event loop: its first parse takes
    ~0.3 s, and its relative-date parser reads the zone from disk once (a blocking call on a served loop).
    """
    for phrase in ("the last day of the month", "last month", "august", "2 days ago"):
        _by_dateparser(phrase, date(2026, 1, 15), "past")

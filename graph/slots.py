"""Slot filling: months, days, cities and leave types read from the question, then the conversation,
then the caller's profile. Deterministic given `today`.

Regexes only find the phrases that name a time ("last month", "in October", "on Friday", "two
weeks ago", "the 3rd"); `dateparser`, anchored at the run's date, turns them into dates, and
`graph/periods.py` reads the periods ("Q1 2026", "the month before last", "since January"). A phrase that
reads as a time but resolves to nothing fills no month or day at all (`unread_time`): the question steps
aside rather than being answered for a default month. Every value is validated (a month is a real YYYY-MM,
a city comes from the domain's gazetteer or is a capitalized word of letters), so nothing a user types
reaches a tool unchecked.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

import dateparser
import numpy as np

from graph import periods
from tools.domain import (
    CITIES,
    CITY_PATTERN,
    LEAVE_DESCRIPTIONS,
    LEAVE_PATTERNS,
    LEAVE_PRIORITY,
    MONTH_NAMES,
    WEEKDAYS,
)

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
_MONTH_LEVEL = re.compile(  # a phrase naming a whole month, no day in it
    rf"^(?:(?:{_MONTHS})(?:\.|\b)(?:,? 20\d\d)?|(?:last|previous|past|this|current|next) month"
    rf"|(?:{_NUM}) months? ago|20\d\d-\d\d|\d{{1,2}}[/.-]20\d\d|20\d\d/\d{{1,2}})$", re.IGNORECASE)
_ISO = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_NUMERIC_MONTH = re.compile(r"^(?:(\d{1,2})[/.-](20\d\d)|(20\d\d)/(\d{1,2}))$")
_ORDINAL_DAY = re.compile(r"^(?:the )?(\d{1,2})(?:st|nd|rd|th)$", re.IGNORECASE)
_IN_PLACE = re.compile(r"\b(?:in|at|for|to)\s+([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
_NOT_PLACES = {w.title() for w in [*MONTH_NAMES, *WEEKDAYS, "today", "tomorrow", "the", "my", "this", "next",
                                   "last", "myhr", "spendwise", "brightconnect", "it", "hr", "me", "office",
                                   "brightmart", "q1", "q2", "q3", "q4"]}
Prefer = Literal["past", "future"]
MAX_MONTHS = 4  # a question naming more months than this gets them together, as a period (totals and each month)
# Words slots are read from, whose misspellings ("tomorow", "wednsday", "febuary", "berln") are spelled
# right before reading: a misspelt day must not silently become today.
_SPELLED = tuple(w for w in (*MONTH_NAMES, *WEEKDAYS, "tomorrow", "yesterday", "weekend", *(c.lower() for c in CITIES))
                 if len(w) >= 5)
_WORD = re.compile(r"[A-Za-z]{5,}")


def spell_entities(text: str) -> str:
    """The text with near-misspellings of months, weekdays, day words and cities spelled right.

    Only words of five letters or more that start with the same letter and are at least 85% alike
    (difflib's ratio) are changed, so ordinary words stay as they are ("match" is not "march").
    """
    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in _SPELLED:
            return word
        close = difflib.get_close_matches(low, _SPELLED, n=1, cutoff=0.85)
        if not close or close[0][0] != low[0]:
            return word
        return close[0].title() if word[0].isupper() else close[0]

    return _WORD.sub(fix, text)


@functools.lru_cache(maxsize=4096)
def _parse(phrase: str, today: date, prefer: Prefer) -> date | None:
    """One time phrase as a date, relative to `today` (None when it is not one). Memoized: the same phrases
    ("last month", "tomorrow") come back all day, and dateparser takes ~1 ms for each.
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
    phrase = re.sub(r"^(?:on|this) ", "", phrase)
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
    if _MONTH_LEVEL.match(phrase.strip()):
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


def city_slot(text: str) -> str | None:
    """A city named in the question: from the gazetteer, or a capitalized place after in/at/for."""
    m = CITY_PATTERN.search(text)
    if m:
        return next(c for c in CITIES if c.lower() == m.group(0).lower())
    for cand in _IN_PLACE.findall(text):
        if cand.split()[0] not in _NOT_PLACES:
            return cand
    return None


LEAVE_MIN_SIMILARITY = 0.4  # below this a question is about leave in general, not one type
LEAVE_MIN_MARGIN = 0.05  # and a type must stand out from the next one, or the question steps aside


def leave_type_slot(text: str) -> str | None:
    """The kind of leave a question names (the domain's priority decides between several)."""
    return next(iter(leave_types_named(text)), None)


def leave_types_named(text: str) -> list[str]:
    """Every leave type a question names by keyword, in the domain's priority order."""
    return [kind for kind in LEAVE_PRIORITY if LEAVE_PATTERNS[kind].search(text)]


async def settle_leave_type(text: str, slots: dict[str, Any],
                            embed: Callable[[list[str]], Awaitable[np.ndarray]]) -> None:
    """Set the leave-type slot from the question's meaning, unless the conversation set it and the question
    names none; a question naming several with none standing out keeps no slot (no template guesses one).
    """
    named = leave_types_named(text)
    if slots.get("sources", {}).get("leave_type") == "conversation" and not named:
        return
    if kind := await resolve_leave_type(text, embed, named):
        slots["leave_type"] = kind
        slots.setdefault("sources", {})["leave_type"] = "question"
    elif named:
        slots.pop("leave_type", None)
        slots.get("sources", {}).pop("leave_type", None)


async def resolve_leave_type(text: str, embed: Callable[[list[str]], Awaitable[np.ndarray]],
                             named: list[str] | None = None) -> str | None:
    """The leave type a question is about: the one it names, or, when it names none or several, the one
    whose description (`tools.domain.LEAVE_DESCRIPTIONS`) is closest in meaning; None when nothing is
    close enough ("how do I book time off" is about no particular type).
    """
    named = leave_types_named(text) if named is None else named
    if len(named) == 1:
        return named[0]
    pool = named or list(LEAVE_DESCRIPTIONS)
    vecs = await embed([text, *(LEAVE_DESCRIPTIONS[k] for k in pool)])
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims)
    best, margin = int(order[0]), float(sims[order[0]] - (sims[order[1]] if len(order) > 1 else 0.0))
    if margin < LEAVE_MIN_MARGIN:  # two types about as close: not sure which, so no slot (the question steps aside)
        return None
    return pool[best] if named or sims[best] >= LEAVE_MIN_SIMILARITY else None


# Words that point back at the previous turn's time or place ("what about my pay that month", "will it
# rain there"): an entity reference, resolved to the value the conversation already holds.
_BACK_TIME = re.compile(r"\b(?:that|the same|same) (?:month|day|week|period|time|date)\b|\bat that time\b"
                        r"|\bback then\b|\bthen\s*[?.!]*\s*$", re.IGNORECASE)
_BACK_PLACE = re.compile(r"\b(?:that|the same|same) (?:city|place|town)\b"
                         r"|(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bwill )\bthere\b"
                         r"(?!\s*(?:is|are|was|were|will|'s|be|any)\b)", re.IGNORECASE)


def refers_back(text: str) -> set[str]:
    """The slots a question points back to ("that month" -> month and date; "there" -> city)."""
    found = {"month", "date"} if _BACK_TIME.search(text) else set()
    return found | ({"city"} if _BACK_PLACE.search(text) else set())


def fill_slots(text: str, today: date, profile: dict, previous: dict | None = None) -> dict[str, Any]:
    """Every slot we can read, with where each came from (question, conversation or profile).

    `previous` holds the conversation's slots that this question may reuse: all of them for a
    follow-up ("and in March?"), only those it points back to for a new request ("my pay that month").
    """
    previous = previous or {}
    slots: dict[str, Any] = {"question": text.strip()[:500]}
    sources: dict[str, str] = {}
    spelled = spell_entities(text)
    times = read_times(spelled, today)
    if times.unread:  # a time nobody can read: no month or day is guessed for it, so the question steps aside
        slots["unread_time"] = times.unread
    elif len(times.months) > 1:  # each is asked about: once per month, or over the period together
        slots["months"] = times.months
        if times.period:
            slots["period"] = times.period
    if times.span:  # a week or a day: what monthly figures cannot single out
        slots["span"] = [d.isoformat() for d in times.span]
    timeless = bool(times.unread or times.period)  # no one month, and no day guessed
    for name, value in (("month", None if timeless else next(iter(times.months), None)),
                        ("date", None if times.unread else date_slot(spelled, today)),
                        ("city", city_slot(spelled)), ("leave_type", leave_type_slot(text))):
        if value is not None:
            slots[name], sources[name] = value, "question"
        elif name in previous and not (timeless and name in ("month", "date")):
            slots[name], sources[name] = previous[name], "conversation"
    defaults = {"month": f"{today.year}-{today.month:02d}", "date": today.isoformat(),
                "city": profile.get("city")}
    if timeless:
        defaults.pop("month")
        defaults.pop("date")
    for name, value in defaults.items():
        if name not in slots and value:
            slots[name], sources[name] = value, "default" if name != "city" else "profile"
    slots["sources"] = sources
    return slots


_TIME_KEYS = ("months", "period", "span", "unread_time")  # what a question's time phrases fill besides month and date


def clause_slots(clause: str, slots: dict[str, Any], today: date, profile: dict) -> dict[str, Any]:
    """The slots of one part of a compound request: what its own clause names first (its months, not the
    whole request's), then the request's.
    """
    own = fill_slots(clause, today, profile)
    said = own["sources"].get("month") == "question" or "period" in own or "unread_time" in own
    # A part that names its own time keeps only that; one that names none shares the request's month or period.
    shared = {k: v for k, v in slots.items()
              if k not in _TIME_KEYS or not said and (k != "months" or "period" in slots)}
    merged = {**shared, **{k: v for k, v in own.items() if own["sources"].get(k) == "question" or k in _TIME_KEYS}}
    for key, gone in (("month", "period" in own or "unread_time" in own), ("date", "unread_time" in own)):
        if gone:
            merged.pop(key, None)
    sources = {**slots.get("sources", {}), **{k: v for k, v in own["sources"].items() if v == "question"}}
    sources = {k: v for k, v in sources.items() if k in merged}
    if not said and sources.get("month") == "question" and not any(
            _MONTH_LEVEL.search(p) for p in time_phrases(slots["question"])):
        # The request's month came from another clause's day ("my salary and the weather tomorrow"): a day
        # there is not this part's month, which stays unsaid.
        merged["month"], sources["month"] = own["month"], "default"
        merged.pop("span", None)  # nor is that day what this part asks about
    return {**merged, "sources": sources, "question": slots["question"]}


def warm() -> None:
    """Load dateparser's English data now (its first parse takes ~0.3 s)."""
    _parse("last month", date(2026, 1, 15), "past")

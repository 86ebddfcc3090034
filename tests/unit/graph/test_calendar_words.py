"""`calendar_words.resolve`: the everyday time phrases get the very date dateparser gives them, over a sweep of
phrases and dates (leap days, month ends, every weekday) and random ones; odd cases are left to dateparser.
"""

from datetime import date, datetime, timedelta

import dateparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph import times
from graph.calendar_words import UNREAD, Prefer, resolve
from tools.domain import MONTH_NAMES, WEEKDAYS

MONTHS = [*MONTH_NAMES, *(m[:3] for m in MONTH_NAMES), "sept"]
PHRASES = [
    "today", "tonight", "yesterday", "tomorrow", "day after tomorrow",
    *(f"{rel}{day}" for day in WEEKDAYS for rel in ("", "next ", "last ")),
    *(f"{rel} {unit}" for rel in ("last", "next") for unit in ("week", "month", "year")),
    *(f"{n} {unit} ago" for n, unit in [("1", "day"), ("2", "days"), ("a", "day"), ("an", "week"), ("two", "weeks"),
                                         ("3", "months"), ("one", "month"), ("twelve", "months"), ("100", "days")]),
    *MONTHS, "dec.", "march 2025", "oct, 2024",
    *(f"{d} {m}" for d, m in [("3rd of", "may"), ("the 1st of", "feb"), ("15", "june"), ("29th of", "february"),
                               ("31st", "december"), ("the 30th", "sept"), ("2nd", "jan"), ("28th of", "february")]),
    "3rd of may 2025", "29th of february 2024", "july 4th", "dec. 24", "feb 29", "sept 30th", "jan 2",
]
# Every weekday, both ends of leap February, and the last days of months of every length.
TODAYS = [date(2024, 2, 22) + timedelta(days=k) for k in range(14)] + [
    date(2025, m, d) for m in (1, 3, 4, 12) for d in (1, 28, 30, 31) if not (m == 4 and d == 31)]


def by_dateparser(phrase: str, today: date, prefer: Prefer) -> date | None:
    parsed = dateparser.parse(phrase, languages=["en"], settings={
        "RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": prefer,
        "RETURN_AS_TIMEZONE_AWARE": False})
    return parsed.date() if parsed else None


def test_the_everyday_phrases_get_dateparsers_date_over_the_sweep() -> None:
    checked = 0
    for today in TODAYS:
        for phrase in PHRASES:
            for prefer in ("past", "future"):
                mine = resolve(phrase, today, prefer)  # type: ignore[arg-type]
                if mine is not UNREAD:
                    assert mine == by_dateparser(phrase, today, prefer), (phrase, today, prefer)  # type: ignore[arg-type]
                    checked += 1
    assert checked > 0.8 * len(TODAYS) * len(PHRASES) * 2  # the odd cases are few (here: 89%, month ends)


phrases = st.one_of(
    st.builds(lambda rel, day: f"{rel}{day}", st.sampled_from(["", "next ", "last "]), st.sampled_from(WEEKDAYS)),
    st.builds(lambda n, unit: f"{n} {unit}s ago", st.integers(1, 40), st.sampled_from(["day", "week", "month"])),
    st.builds(lambda d, of, m: f"{d}{of} {m}", st.integers(1, 31), st.sampled_from(["", "th", "th of"]),
              st.sampled_from(MONTHS)),
    st.builds(lambda m, d: f"{m} {d}", st.sampled_from(MONTHS), st.integers(1, 31)),
    st.builds(lambda m, y: f"{m}{y}", st.sampled_from(MONTHS), st.sampled_from(["", " 2023", ", 2027"])),
    st.sampled_from(["last month", "next month", "last year", "next year", "last week", "next week"]))


@settings(max_examples=150, deadline=None)
@given(phrases, st.dates(date(2000, 1, 1), date(2099, 12, 31)), st.sampled_from(["past", "future"]))
def test_any_everyday_phrase_on_any_day_gets_dateparsers_date(phrase: str, today: date, prefer: Prefer) -> None:
    mine = resolve(phrase, today, prefer)
    if mine is not UNREAD:
        assert mine == by_dateparser(phrase, today, prefer)


@pytest.mark.parametrize(("phrase", "today"), [
    ("31st of april", date(2026, 12, 3)),  # no such day
    ("29th of february", date(2026, 12, 3)),  # not in that year
    ("february", date(2024, 3, 31)),  # read on the 31st: dateparser clamps by rules of its own
    ("previous month", date(2026, 12, 3)), ("a couple of days ago", date(2026, 12, 3)), ("week", date(2026, 12, 3)),
])
def test_odd_cases_and_other_forms_are_left_to_dateparser(phrase: str, today: date) -> None:
    assert resolve(phrase, today, "past") is UNREAD


def test_a_question_naming_an_everyday_time_never_waits_for_dateparser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("dateparser called")

    monkeypatch.setattr(dateparser, "parse", refuse)
    times._parse.cache_clear()
    today = date(2026, 12, 3)
    assert times.month_slot("Do extra hours on a Sunday pay more than ones on a weekday?", today) == "2026-11"
    assert times.date_slot("what's the weather in Lisbon next friday", today) == "2026-12-04"
    assert times.month_slots("my pay on the 3rd of May compared to two months ago", today) == ["2026-05", "2026-10"]

"""Periods a question names ("Q1 2026", "the month before last", "over the summer", "since January"),
read as the months they cover, against the run's date. Deterministic given `today`.

A range never reaches past the current month: months still to come have no figures. Phrases that read as a
time but that nothing here resolves ("the last few months", "next quarter") are found by `DATEISH`, so the
question steps aside instead of being answered for a month it did not ask about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from tools.domain import MONTH_NAMES, MONTH_NUMBERS, NUMBER_WORDS

_MONTH = "|".join([*MONTH_NAMES, *(m[:3] for m in MONTH_NAMES if m != "may"), "sept"])
_M = rf"(?:{_MONTH})\b\.?"
_Y = r"20\d\d"
_COUNTS = {**NUMBER_WORDS, "a couple of": 2, "couple of": 2}
_N = "|".join([r"\d{1,2}", *_COUNTS])
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # the month each one starts
_SEASON = "spring|summer|autumn|fall|winter"
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_YEAR_OF = rf"(?:,? (?:of )?(?:(?P<{{0}}y>{_Y})|(?P<{{0}}rel>this|last) year|the year))?"

# Each alternative is one way of naming a period; `resolve` reads the group that matched.
PATTERN = (
    r"\b(?:"
    r"(?P<before_last>(?:the )?(?P<bl>day|week|month|year) before (?:last|yesterday))"
    rf"|(?P<quarter>(?:(?P<q0y>{_Y}) )?q(?P<qn>[1-4])(?:(?: of|,|/|-)? ?(?P<qy>{_Y}))?"
    rf"|(?:the )?(?P<qo>first|second|third|fourth|1st|2nd|3rd|4th) quarter{_YEAR_OF.format('qo')}"
    r"|(?:the )?(?P<qrel>this|last|previous|past|current) quarter)"
    rf"|(?P<half>(?:the )?(?P<ho>first|second) half{_YEAR_OF.format('ho')}|h(?P<hn>[12])(?: (?P<hny>{_Y}))?)"
    rf"|(?P<season>(?:(?P<srel>this|last|past|previous)|(?:over|during|in|for|through)(?: the)?|the) "
    rf"(?P<sname>{_SEASON})(?: (?:of )?(?P<sy>{_Y}))?|(?P<sname2>spring|summer|autumn) (?:of )?(?P<sy2>{_Y}))"
    rf"|(?P<last_n>(?:the )?(?:last|past|previous|prior) (?P<n>{_N}) (?P<unit>days|weeks|months))"
    r"|(?P<ytd>(?:this|the current|current) (?:calendar )?year(?:,? (?:so far|to date))?|so far this year"
    r"|(?:the )?year[- ]to[- ]date|ytd)"
    r"|(?P<prev_year>(?:the )?(?:last|previous) (?:calendar )?year|the year before)"
    r"|(?P<past_year>(?:the )?past year)"
    rf"|(?P<since>since (?:the (?:start|beginning) of (?:the |this )?year|(?P<sm>{_M})(?:,? (?P<smy>{_Y}))?"
    rf"|(?P<syo>{_Y})|last (?P<srl>month|quarter|year)))"
    rf"|(?P<range>between (?P<ra>{_M})(?:,? (?P<ray>{_Y}))? and (?P<rb>{_M})(?:,? (?P<rby>{_Y}))?"
    rf"|from (?P<fa>{_M})(?:,? (?P<fay>{_Y}))? ?(?:to|-|–|through|thru|till|until) ?(?P<fb>{_M})(?:,? (?P<fby>{_Y}))?"
    rf"|(?P<da>{_M})(?:,? (?P<day>{_Y}))? ?(?:-|–|through|thru|till|until) ?(?P<db>{_M})(?:,? (?P<dby>{_Y}))?)"
    rf"|(?P<year>(?<![\d/.-]){_Y}(?![\d/.-]?\d))"
    r")(?!\w)"
)
# What reads as a time and is left over once every phrase above and in graph/times.py has been read.
DATEISH = re.compile(
    r"\b(?:q[1-4]|quarters?|(?:the )?fortnights?(?: (?:before|after) (?:last|next)| ago)?|semesters?|ytd"
    r"|year[- ]to[- ]date"
    r"|(?:day|week|month|year)s? (?:before|after)|(?:before|after) (?:last|next)"
    rf"|{_SEASON.replace('|fall', '')}|(?:the|this|last|in|over|during) fall"
    rf"|(?:last|past|previous|prior|next|coming|recent|first) (?:few|several|many|couple(?: of)?|{_N}) "
    r"(?:days|weeks|months|years)"
    rf"|(?:few|several|{_N}|a|an) (?:days?|weeks?|months?|years?) (?:ago|back|earlier)"
    r"|(?:fiscal|financial|tax|academic) year|(?:start|beginning|end|middle) of (?:the )?(?:week|month|year)"
    rf"|since (?:the |last |this |i |we |joining|starting|{_Y}|{_M})|(?:from|between|until|till|through) (?:{_M})"
    rf"|week (?:of|\d))\b|(?<![\d/.-]){_Y}(?![\d/.-]?\d)", re.IGNORECASE)
MAX_PERIOD_MONTHS = 12  # a period longer than this steps aside (one call per month)


@dataclass(frozen=True)
class Period:
    """The months a time phrase covers, as YYYY-MM in order."""

    months: tuple[str, ...]
    span: tuple[date, date] | None = None  # a week or some days inside those months (monthly figures cannot split)
    several: bool = False  # the phrase names a range of months ("Q1"), not one month, a week or a day


def _ym(year: int, month: int) -> tuple[int, int]:
    """(year, month) with the month carried into the year: (2026, 0) is (2025, 12)."""
    return year + (month - 1) // 12, (month - 1) % 12 + 1


def _months(start: tuple[int, int], end: tuple[int, int], today: date) -> tuple[str, ...]:
    """Every month from start to end inclusive, none after today's month."""
    first, last = start[0] * 12 + start[1] - 1, min(end[0] * 12 + end[1], today.year * 12 + today.month) - 1
    return tuple(f"{i // 12}-{i % 12 + 1:02d}" for i in range(first, last + 1))


def _latest(month: int, today: date) -> int:
    """The year of the most recent `month` that has begun."""
    return today.year if month <= today.month else today.year - 1


def _month_number(word: str) -> int:
    return MONTH_NUMBERS[word.lower().rstrip(".")]


def _year(m: re.Match[str], prefix: str, today: date) -> int | None:
    """The year a phrase names for itself: "of 2025", "of last year", "of this year" (None when unsaid)."""
    if m.group(prefix + "y"):
        return int(m.group(prefix + "y"))
    return {"this": today.year, "last": today.year - 1}.get((m.group(prefix + "rel") or "").lower())


def week_of(day: date) -> tuple[date, date]:
    """Monday to Sunday of the week a day falls in."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def span_period(start: date, end: date, today: date) -> Period:
    """Some days: the months they touch (those still to come left out, unless that leaves none)."""
    months = _months((start.year, start.month), (end.year, end.month), today)
    return Period(months or (f"{start.year}-{start.month:02d}",), (start, end))


def resolve(m: re.Match[str], today: date) -> Period | None:
    """The months a matched period phrase covers; None when none of them has begun or it cannot be read."""
    cur = (today.year, today.month)
    g = m.group
    if g("before_last"):
        unit = g("bl").lower()
        if unit == "day":
            return span_period(today - timedelta(days=2), today - timedelta(days=2), today)
        if unit == "week":
            return span_period(*week_of(today - timedelta(days=14)), today)
        if unit == "month":
            y, mo = _ym(today.year, today.month - 2)
            return Period((f"{y}-{mo:02d}",))
        return Period(_months((today.year - 2, 1), (today.year - 2, 12), today), several=True)
    if g("quarter"):
        if g("qrel"):  # this quarter, or the one before it
            first = (today.month - 1) // 3 * 3 + 1 - (3 if g("qrel").lower() in ("last", "previous", "past") else 0)
            start = _ym(today.year, first)
            return _several(_months(start, _ym(start[0], start[1] + 2), today))
        n = int(g("qn")) if g("qn") else _ORDINALS[g("qo").lower()]
        given = g("qy") or g("q0y")
        year = int(given) if given else (_year(m, "qo", today) if g("qo") else None)
        year = year if year is not None else _latest(3 * n - 2, today)
        return _several(_months((year, 3 * n - 2), (year, 3 * n), today))
    if g("half"):
        n = int(g("hn")) if g("hn") else (1 if g("ho").lower() == "first" else 2)
        year = int(g("hny")) if g("hny") else (_year(m, "ho", today) if g("ho") else None)
        year = year if year is not None else _latest(6 * n - 5, today)
        return _several(_months((year, 6 * n - 5), (year, 6 * n), today))
    if g("season"):
        name = (g("sname") or g("sname2")).lower()
        begins, given = _SEASONS[name], g("sy") or g("sy2")
        if given:
            if name == "winter":  # "winter 2026": which December is meant differs between people
                return None
            year = int(given)
        else:
            year = _latest(begins, today) if begins != 12 else (today.year if today.month == 12 else today.year - 1)
            ended = _ym(year, begins + 2) < cur
            if (g("srel") or "").lower() in ("last", "past", "previous") and not ended:
                year -= 1
        return _several(_months((year, begins), _ym(year, begins + 2), today))
    if g("last_n"):
        raw = g("n").lower()
        n = _COUNTS.get(raw) or int(raw)
        unit = g("unit").lower()
        if unit == "months":
            return _several(_months(_ym(today.year, today.month - n), _ym(today.year, today.month - 1), today))
        days = n * (7 if unit == "weeks" else 1)
        return span_period(today - timedelta(days=days - 1), today, today)
    if g("ytd"):
        return _several(_months((today.year, 1), cur, today))
    if g("prev_year"):
        return _several(_months((today.year - 1, 1), (today.year - 1, 12), today))
    if g("past_year"):
        return _several(_months(_ym(today.year, today.month - 12), _ym(today.year, today.month - 1), today))
    if g("since"):
        if g("sm"):
            mo = _month_number(g("sm"))
            start = (int(g("smy")) if g("smy") else _latest(mo, today), mo)
        elif g("syo"):
            start = (int(g("syo")), 1)
        elif g("srl"):
            unit = g("srl").lower()
            start = {"month": _ym(today.year, today.month - 1), "year": (today.year - 1, 1),
                     "quarter": _ym(today.year, (today.month - 1) // 3 * 3 - 2)}[unit]
        else:
            start = (today.year, 1)
        return _several(_months(start, cur, today))
    if g("range"):
        a, ay, b, by = next((g(x), g(x + "y"), g(y), g(y + "y")) for x, y in (("ra", "rb"), ("fa", "fb"), ("da", "db"))
                            if g(x))
        ma, mb = _month_number(a), _month_number(b)
        if by:
            yb = int(by)
        elif ay:
            yb = int(ay) + (mb < ma)
        else:
            yb = _latest(mb, today)
        ya = int(ay) if ay else yb - (ma > mb)
        if (ya, ma) > (yb, mb):
            return None
        return _several(_months((ya, ma), (yb, mb), today))
    return _several(_months((int(g("year")), 1), (int(g("year")), 12), today))


def _several(months: tuple[str, ...]) -> Period | None:
    return Period(months, several=True) if months else None

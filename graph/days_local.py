"""Days read from a question written in one of the desk's other languages ("dopodomani", "12月10号", "am 10.12.",
"am Freitag", "明天"), and each language's calendar words (Babel's month and weekday names), for
`graph/times_local.py` and the city reader.

Day words come from each language's words file (`tools/messages/<lang>.words.yaml`), days named by day and month
from Babel's month names, the rest from dateparser's search in that language, anchored at the run's date. A phrase
dateparser finds is kept only when it holds a time word of the language or a figure: its search also reads "ma" or
"de" as dates.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, timedelta
from typing import Any

from graph.times import Prefer


def words_of(lang: str) -> dict[str, Any]:
    """A language's words file (`tools/messages/<lang>.words.yaml`): {} for a language without one."""
    from tools.i18n import words

    return words(lang)


def pairs(lang: str, key: str) -> list[tuple[str, int]]:
    """(pattern, offset) pairs of a language's words file: "months_relative", "days_relative" (days from today:
    dateparser misses "dopodomani" and "后天" in a sentence; words that also name a time of day, "Morgen",
    "mañana", are left to it), "weeks_relative" (a week relative to this one, Monday to Sunday: with a weekday
    beside it, that day of that week, "nächste Woche Mittwoch"; Chinese writes them into the day's own name,
    "下周三", read by its own pattern).
    """
    return [(str(pattern), int(offset)) for pattern, offset in words_of(lang).get(key) or ()]


def writes_spaces(lang: str) -> bool:
    """Whether the language writes spaces between words: its patterns then match whole words only."""
    from tools.i18n import spaced

    return spaced(lang)


def _locale(lang: str) -> str:
    from tools.i18n import locale_of

    return locale_of(lang)


@functools.lru_cache(maxsize=16)
def month_names(lang: str) -> dict[str, int]:
    """Every name Babel's locale gives each month (wide and abbreviated, in a sentence and standing alone)."""
    from babel import Locale

    loc = Locale.parse(_locale(lang))
    names: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for n, name in loc.months[context][width].items():
                names[str(name).lower().rstrip(".")] = int(n)
    names |= {str(k): int(v) for k, v in (words_of(lang).get("month_names_extra") or {}).items()}  # "Jänner"
    return {k: v for k, v in names.items() if len(k) >= 3}


def number_words(lang: str) -> dict[str, int]:
    """Small numbers as words ("zwei", "tres", "两"): months counted back, and days and months written in words."""
    return {str(k): int(v) for k, v in (words_of(lang).get("number_words") or {}).items()}


@functools.lru_cache(maxsize=16)
def number_pattern(lang: str) -> str:
    """A number in figures or in the language's number words, tens written with its `number_ten` ("二十五")."""
    words = "|".join(re.escape(w) for w in sorted(number_words(lang), key=len, reverse=True)) or "(?!)"
    ten = words_of(lang).get("number_ten")
    tens = rf"(?:{words})?{re.escape(str(ten))}(?:{words})?|" if ten else ""
    return rf"\d{{1,2}}|{tens}(?:{words})"


def number(text: str, lang: str) -> int:
    """The value of what `number_pattern` matched: "12", "zwei", "十二", "二十五"."""
    if text.isdigit():
        return int(text)
    text, words, ten = text.lower(), number_words(lang), words_of(lang).get("number_ten")
    if ten and str(ten) in text:
        tens, _, ones = text.rpartition(str(ten))
        return (words[tens] if tens else 1) * 10 + (words[ones] if ones else 0)
    return words[text]


@functools.lru_cache(maxsize=32)
def own_pattern(lang: str, key: str) -> re.Pattern[str] | None:
    """A pattern of the language's words file ("month_pattern", "day_month_pattern", "weekday_pattern": a date
    written as one run of words in the language's own order), its `{n}` a number: None where it has none.
    """
    pattern = words_of(lang).get(key)
    return re.compile(str(pattern).replace("{n}", number_pattern(lang)), re.IGNORECASE) if pattern else None


def _on_or_around(month: int, day: int, year: int | None, today: date, prefer: Prefer) -> date | None:
    """A day named without a year: the next one from today for a forecast, the last one up to today otherwise."""
    try:
        if year:
            return date(year, month, day)
        this = date(today.year, month, day)
    except ValueError:
        return None
    if prefer == "future" and this < today:
        return this.replace(year=today.year + 1)
    if prefer == "past" and this > today:
        return this.replace(year=today.year - 1)
    return this


@functools.lru_cache(maxsize=16)
def _day_month(lang: str) -> re.Pattern[str]:
    """A day of a month: "10 de dezembro", "le 9 décembre", "10. Dezember", "12月10号", "10.12.", "10/12"."""
    if own := own_pattern(lang, "day_month_pattern"):
        return own
    names = "|".join(re.escape(w) for w in sorted(month_names(lang), key=len, reverse=True))
    return re.compile(rf"\b(?P<d>[0-3]?\d)\.?\s*(?:de\s+|di\s+)?(?P<name>{names})\b\.?(?:\s+(?:de\s+)?(?P<y>20\d\d))?"
                      r"|\b(?P<d2>[0-3]?\d)\.(?P<m2>[01]?\d)(?:\.(?P<y2>20\d\d)\b|\.)"  # 10.12. (1.5 is no day)
                      # 10/12 after a word that names a day ("le 10/12"; "1/2 journée" is half a day), or with a year
                      r"|(?:\b(?:le|el|il|al|du|del|au|op|am|dia|dal|on)\s+)(?P<d3>[0-3]?\d)/(?P<m3>[01]?\d)\b(?![/\d])"
                      r"|\b(?P<d4>[0-3]?\d)/(?P<m4>[01]?\d)/(?P<y4>20\d\d)\b", re.IGNORECASE)


def _table_days(text: str, today: date, lang: str, prefer: Prefer) -> list[tuple[int, str, date]]:
    """(position, phrase, day) of the days a question names by a word of its language or by day and month."""
    low, found, taken = text.lower(), [], []
    for m in _day_month(lang).finditer(text):
        if "m" in m.re.groupindex:  # the language's own order, numbers in figures or words
            day = _on_or_around(number(m["m"], lang), number(m["d"], lang), int(m["y"]) if m["y"] else None, today,
                                prefer)
        elif m["name"]:
            day = _on_or_around(month_names(lang)[m["name"].lower()], int(m["d"]), int(m["y"]) if m["y"] else None,
                                today, prefer)
        else:
            d, mo, y = next((m[f"d{i}"], m[f"m{i}"], m[f"y{i}"] if i != 3 else None) for i in (2, 3, 4) if m[f"d{i}"])
            day = _on_or_around(int(mo), int(d), int(y) if y else None, today, prefer)
        if day is not None:
            found.append((m.start(), m.group(0), day))
            taken.append(m.span())
    found += _week_days(text, today, lang, taken, prefer)
    b = r"\b" if writes_spaces(lang) else ""
    for pattern, offset in pairs(lang, "days_relative"):
        for m in re.finditer(b + f"(?:{pattern})" + b, low):
            if not any(a <= m.start() < e for a, e in taken):
                found.append((m.start(), m.group(0), today + timedelta(days=offset)))
                taken.append(m.span())
    return sorted(found)


def _week_days(text: str, today: date, lang: str, taken: list[tuple[int, int]],
               prefer: Prefer) -> list[tuple[int, str, date]]:
    """(position, phrase, day) of a weekday of a week named relative to this one: "下周三", "nächste Woche Mittwoch";
    in Chinese also a weekday alone ("周三": the coming one, today included). A day of this week that has passed, asked
    for a forecast, is the coming one ("这周六" on a Sunday: a forecast for yesterday is no one's question). `taken`
    gets their spans.
    """
    monday = today - timedelta(days=today.weekday())

    def this_week(offset: int, wd: int) -> date:
        day = monday + timedelta(days=7 * offset + wd)
        return day + timedelta(days=7) if offset == 0 and prefer == "future" and day < today else day

    if own := own_pattern(lang, "weekday_pattern"):
        weeks, days, out = words_of(lang).get("weekday_weeks") or {}, words_of(lang)["weekday_days"], []
        for m in own.finditer(text):
            wd = int(days[m["d"].lower()])
            day = this_week(int(weeks[m["w"].lower()]), wd) if m["w"] else \
                today + timedelta(days=(wd - today.weekday()) % 7)
            out.append((m.start(), m.group(0), day))
            taken.append(m.span())
        return out
    low = text.lower()
    week = next(((wk, offset) for pattern, offset in pairs(lang, "weeks_relative")
                 if (wk := re.search(rf"\b(?:{pattern})\b", low))), None)
    named = next(((dn, wd) for name, wd in _weekday_index(lang).items()
                  if (dn := re.search(rf"\b{re.escape(name)}\b", low))), None)
    if week is None or named is None:
        return []
    (wm, offset), (dm, wd) = week, named
    start, end = min(wm.start(), dm.start()), max(wm.end(), dm.end())
    taken.append((start, end))
    return [(start, text[start:end], this_week(offset, wd))]


@functools.lru_cache(maxsize=16)
def _weekday_index(lang: str) -> dict[str, int]:
    """Each weekday's wide names (lower case, longest first) -> 0 for Monday ... 6 for Sunday."""
    from babel import Locale

    loc = Locale.parse(_locale(lang))
    names = {str(n).lower(): int(i) for ctx in ("format", "stand-alone") for i, n in loc.days[ctx]["wide"].items()}
    return dict(sorted(names.items(), key=lambda kv: -len(kv[0])))


@functools.lru_cache(maxsize=4096)
def days_named(text: str, today: date, lang: str, prefer: Prefer) -> tuple[tuple[str, date], ...]:
    """Day phrases in `text` in `lang`: the language's day words and day-month dates first ("dopodomani",
    "12月10号", "am 10.12."), else what dateparser finds ("am Freitag", "周五"), time words only.
    """
    if table := _table_days(text, today, lang, prefer):
        return tuple((phrase, day) for _, phrase, day in table)
    from dateparser.search import search_dates

    try:
        found = search_dates(text, languages=[lang], settings={
            "RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": prefer,
            "RETURN_AS_TIMEZONE_AWARE": False}) or []
    except Exception:  # noqa: BLE001 - dateparser's search raises on some inputs: nothing found
        return ()
    words = tuple(words_of(lang).get("time_words") or ())
    days = []
    for phrase, when in found:
        low = phrase.lower()
        if not writes_spaces(lang):  # no word boundaries: the language's longer time words, or its weekday words
            weekday = own_pattern(lang, "weekday_pattern")
            ok = any(w in low for w in words if len(w) > 1) or bool(weekday and weekday.search(low))
        else:
            tokens = set(re.findall(r"[^\W\d_]+(?:[-'][^\W\d_]+)?", low))
            dated = bool(re.search(r"\d", low)) and bool(tokens & set(month_names(lang)))  # "le 3 décembre"
            ok = bool(tokens & set(words)) or bool(tokens & set(_weekdays(lang))) or dated
        if ok and 2000 < when.year < 2100:
            days.append((phrase, when.date()))
    return tuple(days)


@functools.lru_cache(maxsize=16)
def _weekdays(lang: str) -> frozenset[str]:
    from babel import Locale

    loc = Locale.parse(_locale(lang))
    return frozenset(str(n).lower() for ctx in ("format", "stand-alone") for w in ("wide", "abbreviated")
                     for n in loc.days[ctx][w].values())


@functools.lru_cache(maxsize=16)
def calendar_words(lang: str) -> frozenset[str]:
    """The language's month and weekday names (lower case): a capitalized one after "a" or "en" is no place."""
    return frozenset(month_names(lang)) | _weekdays(lang)

"""Times read from a question written in one of the desk's other languages ("letzten Monat", "le mois dernier",
"上个月", "im Oktober", "明天", "am Freitag"), as `graph/times.py` reads English ones.

Month names come from Babel's locale data (every form: "Oktober", "Okt.", "Jänner" is dateparser's), relative
months from a small table per language (dateparser misses "el mes pasado" and "le mois dernier"), and days from
dateparser's search in that language, anchored at the run's date. A phrase is kept only when it holds a time word
of the language or a figure: dateparser's search also reads "ma" or "de" as dates.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime

from graph import periods
from graph.times import Prefer, Times

# Months relative to this one, per language (lower case).
RELATIVE_MONTHS: dict[str, tuple[tuple[str, int], ...]] = {
    "de": ((r"vorvorigen monat|vorletzten monat", -2), (r"(?:letzten|vorigen|vergangenen) monat|vormonat", -1),
           (r"(?:diesen|dieser|diesem|aktuellen|laufenden) monat", 0),
           (r"(?:nächsten|kommenden) monat", 1)),
    "fr": ((r"(?:le )?mois (?:dernier|passé|précédent)", -1), (r"(?:ce mois(?:-ci)?|mois en cours)", 0),
           (r"(?:le )?mois prochain", 1)),
    "es": ((r"(?:el )?mes (?:pasado|anterior)", -1), (r"(?:este|el presente) mes", 0),
           (r"(?:el )?(?:mes que viene|próximo mes|mes siguiente)", 1)),
    "it": ((r"(?:il )?mese (?:scorso|passato|precedente)", -1), (r"(?:questo|il corrente) mese", 0),
           (r"(?:il )?mese prossimo|prossimo mese", 1)),
    "nl": ((r"(?:vorige|afgelopen|verleden) maand", -1), (r"deze maand", 0), (r"volgende maand", 1)),
    "pt": ((r"(?:o )?mês (?:passado|anterior)|(?:o )?mes passado", -1), (r"(?:este|neste|deste) m[êe]s", 0),
           (r"(?:o )?próximo m[êe]s|(?:o )?m[êe]s que vem", 1)),
    "zh": ((r"上上个?月", -2), (r"上个?月|上一个月", -1), (r"这个月|本月|当月", 0), (r"下个?月|下一个月", 1)),
}
# "And the month before that?": a month relative to the one the conversation was about (every language).
BEFORE_THAT = re.compile(
    r"month before (?:that|it)|month prior to (?:that|it)|"
    r"monat davor|vormonat davor|mois d'avant|mois précédent|mes anterior|mes de antes|mese prima|"
    r"mese precedente|maand ervoor|maand daarvoor|mês anterior|mês antes|前一个月|再前一个月|之前一个月|再往前一个月",
    re.IGNORECASE)
AFTER_THAT = re.compile(r"month after (?:that|it)|monat danach|mois d'après|mes siguiente|mese dopo|maand erna|"
                        r"mês seguinte|后一个月|再后一个月", re.IGNORECASE)
# Words that make a phrase dateparser found a time (besides month and weekday names and figures).
TIME_WORDS: dict[str, tuple[str, ...]] = {
    "de": ("heute", "morgen", "übermorgen", "gestern", "vorgestern", "woche", "wochenende", "jahr", "monat"),
    "fr": ("aujourd'hui", "demain", "après-demain", "hier", "semaine", "week-end", "weekend", "année", "mois"),
    "es": ("hoy", "mañana", "pasado mañana", "ayer", "semana", "fin de semana", "año", "mes"),
    "it": ("oggi", "domani", "dopodomani", "ieri", "settimana", "weekend", "anno", "mese"),
    "nl": ("vandaag", "morgen", "overmorgen", "gisteren", "week", "weekend", "jaar", "maand"),
    "pt": ("hoje", "amanhã", "depois de amanhã", "ontem", "semana", "fim de semana", "ano", "mês"),
    "zh": ("今天", "明天", "后天", "昨天", "前天", "周", "星期", "礼拜", "年", "月", "号", "日"),
}
_ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10, "十一": 11,
              "十二": 12}
_ZH_MONTH = re.compile(r"(?:(20\d\d)\s*年\s*)?(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月"
                       r"(?!\s*\d{1,2}\s*[日号])")
_YEAR = re.compile(r"\b(20\d\d)\b")


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
    if lang == "de":
        names |= {"jänner": 1, "feber": 2}  # Austrian
    return {k: v for k, v in names.items() if len(k) >= 3}


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


def _months(text: str, today: date, lang: str) -> list[str]:
    low, this = text.lower(), f"{today.year}-{today.month:02d}"
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern, offset in RELATIVE_MONTHS.get(lang, ()):
        for m in re.finditer(pattern, low):
            if not any(a <= m.start() < b for a, b in taken):
                found.append((m.start(), _shift(this, offset)))
                taken.append(m.span())
    if lang == "zh":
        for m in _ZH_MONTH.finditer(text):
            if not any(a <= m.start() < b for a, b in taken):
                raw = m.group(2)
                n = int(raw) if raw.isdigit() else _ZH_DIGITS[raw]
                found.append((m.start(), _named_month(n, int(m.group(1)) if m.group(1) else None, today)))
    else:
        for m in _month_pattern(lang).finditer(text):
            year = int(m.group(2)) if m.group(2) else None
            found.append((m.start(), _named_month(month_names(lang)[m.group(1).lower()], year, today)))
    return list(dict.fromkeys(month for _, month in sorted(found)))


@functools.lru_cache(maxsize=4096)
def _days(text: str, today: date, lang: str, prefer: Prefer) -> tuple[tuple[str, date], ...]:
    """Day phrases dateparser finds in `text` in `lang` ("morgen", "am Freitag", "明天"), time words only."""
    from dateparser.search import search_dates

    try:
        found = search_dates(text, languages=[lang], settings={
            "RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": prefer,
            "RETURN_AS_TIMEZONE_AWARE": False}) or []
    except Exception:  # noqa: BLE001 - dateparser's search raises on some inputs: nothing found
        return ()
    words = TIME_WORDS.get(lang, ())
    days = []
    for phrase, when in found:
        low = phrase.lower()
        if lang == "zh":
            ok = any(w in low for w in words if len(w) > 1) or bool(re.search(r"[周星期礼拜][一二三四五六日天]", low))
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


def read_times(text: str, today: date, lang: str) -> Times:
    """What a question in `lang` says about time: the months it names (relative or by name), else the day it
    names as that day's month and span.
    """
    months = _months(text, today, lang)
    if months:
        return Times(months[:periods.MAX_PERIOD_MONTHS])
    days = _days(text, today, lang, "past")
    if days:
        d = days[0][1]
        return Times([f"{d.year}-{d.month:02d}"], span=(d, d))
    return Times([])


def date_slot(text: str, today: date, lang: str) -> str | None:
    """The day a question in `lang` is about, as YYYY-MM-DD (coming days preferred: forecasts are ahead)."""
    days = _days(text, today, lang, "future")
    return days[0][1].isoformat() if days else None


def relative_to(previous_month: str | None, text: str) -> str | None:
    """The month a follow-up means relative to the conversation's ("und der Monat davor?"): None when it says none."""
    if not previous_month:
        return None
    if BEFORE_THAT.search(text):
        return _shift(previous_month, -1)
    if AFTER_THAT.search(text):
        return _shift(previous_month, 1)
    return None


def warm(lang: str) -> None:
    """Load dateparser's and Babel's data for a language before the first question."""
    _days("morgen", date(2026, 1, 15), lang, "future")
    month_names(lang)
    _weekdays(lang)



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
from datetime import date, datetime, timedelta

from graph import periods
from graph.times import Prefer, Times

# Months relative to this one, per language (lower case).
RELATIVE_MONTHS: dict[str, tuple[tuple[str, int], ...]] = {
    "de": ((r"vorvorigen monat|vorletzten monat", -2), (r"(?:letzten|vorigen|vergangenen) monat|vormonat", -1),
           (r"(?:diesen|dieser|diesem|aktuellen|laufenden) monat", 0),
           (r"(?:nächsten|kommenden) monat", 1)),
    "fr": ((r"(?:le )?mois (?:dernier|passé|précédent)", -1), (r"(?:ce mois(?:-ci)?|mois en cours)", 0),
           (r"(?:le )?mois prochain", 1)),
    "es": ((r"(?:el )?mes antepasado", -2), (r"(?:el )?mes (?:pasado|anterior)", -1), (r"(?:este|el presente) mes", 0),
           (r"(?:el )?(?:mes que viene|próximo mes|mes siguiente)", 1)),
    "it": ((r"(?:il )?mese (?:scorso|passato|precedente)", -1), (r"(?:questo|il corrente) mese", 0),
           (r"(?:il )?mese prossimo|prossimo mese", 1)),
    "nl": ((r"(?:vorige|afgelopen|verleden) maand", -1), (r"deze maand", 0), (r"volgende maand", 1)),
    "pt": ((r"m[êe]s retrasado", -2), (r"(?:o )?mês (?:passado|anterior)|(?:o )?mes passado", -1),
           (r"(?:este|neste|deste) m[êe]s", 0),
           (r"(?:o )?próximo m[êe]s|(?:o )?m[êe]s que vem", 1)),
    "zh": ((r"上上个?月", -2), (r"上个?月|上一个月", -1), (r"这个月|本月|当月", 0), (r"下个?月|下一个月", 1)),
}
# Small numbers as words ("vor zwei Monaten", "hace tres meses", "两个月前"), for months counted back.
NUMBER_WORDS: dict[str, dict[str, int]] = {
    "de": {"einem": 1, "einen": 1, "ein": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6},
    "fr": {"un": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6},
    "es": {"un": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6},
    "it": {"un": 1, "uno": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6},
    "nl": {"een": 1, "één": 1, "twee": 2, "drie": 3, "vier": 4, "vijf": 5, "zes": 6},
    "pt": {"um": 1, "dois": 2, "duas": 2, "três": 3, "tres": 3, "quatro": 4, "cinco": 5, "seis": 6},
    "zh": {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6},
}
# Months counted back from this one; `{n}` is a figure or one of the language's number words.
MONTHS_AGO: dict[str, tuple[str, ...]] = {
    "de": (r"vor {n} monat(?:en)?",), "fr": (r"il y a {n} mois",), "es": (r"hace {n} mes(?:es)?",),
    "it": (r"{n} mes[ei] fa",), "nl": (r"{n} maand(?:en)? (?:geleden|terug)",),
    "pt": (r"há {n} m[eê]s(?:es)?", r"{n} m[eê]s(?:es)? atrás"), "zh": (r"{n}\s*个?月(?:以)?前",),
}
# Days relative to today, by the words the language has for them (dateparser misses "dopodomani" and "后天" in
# a sentence). Words that also name a time of day ("Morgen", "mañana") are left to dateparser.
RELATIVE_DAYS: dict[str, tuple[tuple[str, int], ...]] = {
    "de": ((r"überübermorgen", 3), (r"übermorgen", 2), (r"heute", 0)),
    "fr": ((r"après-demain|après demain", 2), (r"demain", 1), (r"aujourd'hui", 0)),
    "es": ((r"pasado mañana", 2), (r"hoy", 0)),
    "it": ((r"dopodomani", 2), (r"domani", 1), (r"oggi", 0)),
    "nl": ((r"overmorgen", 2), (r"morgen", 1), (r"vandaag", 0)),
    "pt": ((r"depois de amanhã", 2), (r"amanhã", 1), (r"hoje", 0)),
    "zh": ((r"大后天", 3), (r"后天", 2), (r"明天", 1), (r"今天", 0)),
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
_ZH_MONTH = re.compile(r"(?:(20\d\d)\s*年\s*)?(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月"  # not a day's month
                       r"(?!\s*(?:\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*[日号])")
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


@functools.lru_cache(maxsize=16)
def _months_ago(lang: str) -> list[re.Pattern[str]]:
    words = sorted(NUMBER_WORDS.get(lang, {}), key=len, reverse=True)
    n = r"(?P<n>\d{1,2}|" + "|".join(re.escape(w) for w in words) + ")"
    b = "" if lang == "zh" else r"\b"
    return [re.compile(b + p.format(n=n) + b) for p in MONTHS_AGO.get(lang, ())]


def _number(word: str, lang: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[lang][word]


def _months(text: str, today: date, lang: str) -> list[str]:
    low, this = text.lower(), f"{today.year}-{today.month:02d}"
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for ago in _months_ago(lang):
        for m in ago.finditer(low):
            found.append((m.start(), _shift(this, -_number(m.group("n"), lang))))
            taken.append(m.span())
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


def _zh_number(text: str) -> int:
    """1 to 39 in figures or Chinese numerals ("十", "十二", "二十五")."""
    if text.isdigit():
        return int(text)
    tens, _, ones = text.rpartition("十")
    if "十" not in text:
        return _ZH_DIGITS[text]
    return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)


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
    if lang == "zh":
        n = r"\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"
        return re.compile(rf"(?:(?P<y>20\d\d)\s*年\s*)?(?P<m>{n})\s*月\s*(?P<d>{n})\s*[日号]")
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
        if lang == "zh":
            day = _on_or_around(_zh_number(m["m"]), _zh_number(m["d"]), int(m["y"]) if m["y"] else None, today, prefer)
        elif m["name"]:
            day = _on_or_around(month_names(lang)[m["name"].lower()], int(m["d"]), int(m["y"]) if m["y"] else None,
                                today, prefer)
        else:
            d, mo, y = next((m[f"d{i}"], m[f"m{i}"], m[f"y{i}"] if i != 3 else None) for i in (2, 3, 4) if m[f"d{i}"])
            day = _on_or_around(int(mo), int(d), int(y) if y else None, today, prefer)
        if day is not None:
            found.append((m.start(), m.group(0), day))
            taken.append(m.span())
    b = "" if lang == "zh" else r"\b"
    for pattern, offset in RELATIVE_DAYS.get(lang, ()):
        for m in re.finditer(b + f"(?:{pattern})" + b, low):
            if not any(a <= m.start() < e for a, e in taken):
                found.append((m.start(), m.group(0), today + timedelta(days=offset)))
                taken.append(m.span())
    return sorted(found)


@functools.lru_cache(maxsize=4096)
def _days(text: str, today: date, lang: str, prefer: Prefer) -> tuple[tuple[str, date], ...]:
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


def calendar_words(lang: str) -> frozenset[str]:
    """The language's month and weekday names (lower case): a capitalized one after "a" or "en" is no place."""
    return frozenset(month_names(lang)) | _weekdays(lang)


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



"""Times read from a question written in one of the desk's other languages ("letzten Monat", "le mois dernier",
"上个月", "im Oktober", "明天", "am Freitag"), as `graph/times.py` reads English ones.

Month names come from Babel's locale data (every form: "Oktober", "Okt.", "Jänner" is dateparser's), relative
months and months counted back from small tables per language (dateparser misses "el mes pasado" and "le mois
dernier"); days are read by `graph/days_local.py`.
"""

from __future__ import annotations

import functools
import re
from datetime import date

from graph import periods
from graph.days_local import ZH_DIGITS, calendar_words, days_named, month_names
from graph.times import Times

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
# "And the month before that?": a month relative to the one the conversation was about (every language).
BEFORE_THAT = re.compile(
    r"month before (?:that|it)|month prior to (?:that|it)|"
    r"monat davor|vormonat davor|mois d'avant|mois précédent|mes anterior|mes de antes|mese prima|"
    r"mese precedente|maand ervoor|maand daarvoor|mês anterior|mês antes|前一个月|再前一个月|之前一个月|再往前一个月",
    re.IGNORECASE)
AFTER_THAT = re.compile(r"month after (?:that|it)|monat danach|mois d'après|mes siguiente|mese dopo|maand erna|"
                        r"mês seguinte|后一个月|再后一个月", re.IGNORECASE)
_ZH_MONTH = re.compile(r"(?:(20\d\d)\s*年\s*)?(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月"  # not a day's month
                       r"(?!\s*(?:\d{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*[日号])")


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
                n = int(raw) if raw.isdigit() else ZH_DIGITS[raw]
                found.append((m.start(), _named_month(n, int(m.group(1)) if m.group(1) else None, today)))
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
    if BEFORE_THAT.search(text):
        return _shift(previous_month, -1)
    if AFTER_THAT.search(text):
        return _shift(previous_month, 1)
    return None


def warm(lang: str) -> None:
    """Load dateparser's and Babel's data for a language before the first question."""
    days_named("morgen", date(2026, 1, 15), lang, "future")
    month_names(lang)
    calendar_words(lang)



"""How the intents' answers write amounts, months and days ("EUR 1,910.30", "March 2026", "2 December"; "1.910,30 €",
"März 2026", "2. Dezember" in German), in one place so every renderer and summary (`tools/intents/`) writes them
alike. The locale rules are Babel's (`tools/i18n.py`); the joining words come from the message catalogs.
"""

from __future__ import annotations

from datetime import date

from tools import i18n


def eur(x: float, lang: str = "en") -> str:
    """An amount as the templates write it."""
    return i18n.money(x, lang)


def first_day(month: str) -> date:
    """The first day of a YYYY-MM month."""
    y, m = map(int, month.split("-"))
    return date(y, m, 1)


def month_name(month: str, with_year: bool = True, lang: str = "en") -> str:
    """"2026-03" as "March 2026" (or "March", as people say it in a question)."""
    return i18n.month_text(first_day(month), lang, with_year)


def months_label(months: list[str], lang: str = "en") -> str:
    """"January to March 2026", "December 2025 to February 2026", or the months listed when not in a row."""
    firsts = [first_day(m) for m in months]
    if len(months) == 1:
        return month_name(months[0], lang=lang)
    index = [d.year * 12 + d.month for d in firsts]
    in_a_row = index == list(range(index[0], index[0] + len(index)))
    one_year = len({d.year for d in firsts}) == 1
    if in_a_row and len(months) > 2:
        if one_year:
            return i18n.say("months_range_one_year", lang, first=i18n.month_text(firsts[0], lang, False),
                            last=i18n.month_text(firsts[-1], lang, False), year=firsts[0].year)
        return i18n.say("months_range", lang, first=i18n.month_text(firsts[0], lang),
                        last=i18n.month_text(firsts[-1], lang))
    if one_year:
        return i18n.say("months_listed_one_year", lang, months=i18n.and_list(
            [i18n.month_text(d, lang, False) for d in firsts], lang), year=firsts[0].year)
    return i18n.and_list([i18n.month_text(d, lang) for d in firsts], lang)


def day_text(d: date, year: bool = True, lang: str = "en") -> str:
    """A day as "2 December 2026" (or "2 December")."""
    return i18n.day_text(d, lang, year)


def day_label(iso: str, lang: str = "en") -> str:
    """"2026-12-02" as "2 December"."""
    return day_text(date.fromisoformat(iso), False, lang)

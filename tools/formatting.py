"""How the intents' answers write amounts, months and days ("EUR 1,910.30", "March 2026", "2 December"), in one
place so every renderer and summary (`tools/intents/`) writes them alike.
"""

from __future__ import annotations

from datetime import date


def eur(x: float) -> str:
    """An amount as the templates write it."""
    return f"EUR {x:,.2f}"


def first_day(month: str) -> date:
    """The first day of a YYYY-MM month."""
    y, m = map(int, month.split("-"))
    return date(y, m, 1)


def month_name(month: str, with_year: bool = True) -> str:
    """"2026-03" as "March 2026" (or "March", as people say it in a question)."""
    return first_day(month).strftime("%B %Y" if with_year else "%B")


def months_label(months: list[str]) -> str:
    """"January to March 2026", "December 2025 to February 2026", or the months listed when not in a row."""
    firsts = [first_day(m) for m in months]
    if len(months) == 1:
        return month_name(months[0])
    index = [d.year * 12 + d.month for d in firsts]
    in_a_row = index == list(range(index[0], index[0] + len(index)))
    one_year = len({d.year for d in firsts}) == 1
    names = [d.strftime("%B") if one_year else d.strftime("%B %Y") for d in firsts]
    year = f" {firsts[0].year}" if one_year else ""
    if in_a_row and len(names) > 2:
        return f"{names[0]} to {names[-1]}{year}"
    return f"{', '.join(names[:-1])} and {names[-1]}{year}"


def day_text(d: date, year: bool = True) -> str:
    """A day as "2 December 2026" (or "2 December")."""
    return f"{d.day} {d.strftime('%B')}" + (f" {d.year}" if year else "")


def day_label(iso: str) -> str:
    """"2026-12-02" as "2 December"."""
    return day_text(date.fromisoformat(iso), False)

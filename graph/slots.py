"""Slot filling: months, dates, cities and leave types read from the question, the conversation
and the caller's profile. Pure functions, deterministic given `today`.

Every value produced is validated (a month is YYYY-MM with a real month, a city comes from a
gazetteer or a capitalized word of letters), so nothing a user types reaches a tool unchecked.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
CITIES = ["Amsterdam", "Berlin", "Paris", "Madrid", "Milan", "Lisbon", "Vienna", "Dublin", "London", "Rome",
          "Barcelona", "Munich", "Brussels", "Prague", "Warsaw", "Stockholm", "Copenhagen", "Oslo", "Zurich",
          "Athens", "Rotterdam", "Hamburg", "Lyon", "Porto", "Frankfurt", "Utrecht", "Seville", "Valencia",
          "Cork", "Salzburg", "Turin", "Naples", "Nice", "Marseille", "Cologne", "Antwerp", "Geneva"]
_CITY_RE = re.compile(r"\b(" + "|".join(CITIES) + r")\b", re.IGNORECASE)
_IN_PLACE_RE = re.compile(r"\b(?:in|at|for|to)\s+([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
_NOT_PLACES = {w.title() for w in [*MONTHS, *WEEKDAYS, "today", "tomorrow", "the", "my", "this", "next",
                                   "last", "myhr", "spendwise", "brightconnect", "it", "hr", "me", "office"]}
LEAVE_SYNONYMS = {
    "annual": ["annual", "vacation", "holiday leave", "holidays", "pto", "paid time off", "time off"],
    "sick": ["sick", "illness", "ill ", "sickness"],
    "maternity": ["maternity", "pregnan"],
    "paternity": ["paternity", "partner leave", "father"],
    "parental": ["parental"],
    "bereavement": ["bereavement", "compassionate", "funeral", "death in the family"],
    "study": ["study", "exam leave", "education leave"],
    "unpaid": ["unpaid"],
}


def month_slot(text: str, today: date) -> str | None:
    """The month a question is about, as YYYY-MM, or None when it names none."""
    low = text.lower()
    m = re.search(r"\b(20\d\d)-(0[1-9]|1[0-2])\b", low)
    if m:
        return f"{m.group(1)}-{m.group(2)}"
    if re.search(r"\b(last|previous|past) month\b", low):
        prev = today.replace(day=1) - timedelta(days=1)
        return f"{prev.year}-{prev.month:02d}"
    if re.search(r"\b(this|current) month\b|\bso far\b", low):
        return f"{today.year}-{today.month:02d}"
    for m in re.finditer(r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b(?:\s+(20\d\d))?", low):
        if m.group(1) == "may" and not m.group(2) and re.match(r"may (i|we|you|they|he|she)\b", low[m.start():]):
            continue  # the verb, not the month
        month = MONTHS[m.group(1)]
        year = int(m.group(2)) if m.group(2) else today.year - (month > today.month)
        return f"{year}-{month:02d}"
    return None


def date_slot(text: str, today: date) -> str | None:
    """The day a question is about, as YYYY-MM-DD, or None when it names none."""
    low = text.lower()
    m = re.search(r"\b(20\d\d-\d\d-\d\d)\b", low)
    if m:
        try:
            return date.fromisoformat(m.group(1)).isoformat()
        except ValueError:
            return None
    if "day after tomorrow" in low:
        return (today + timedelta(days=2)).isoformat()
    if "tomorrow" in low:
        return (today + timedelta(days=1)).isoformat()
    if re.search(r"\b(today|tonight|right now|now|this morning|this afternoon|this evening)\b", low):
        return today.isoformat()
    if "weekend" in low:
        return (today + timedelta(days=(5 - today.weekday()) % 7)).isoformat()
    for i, wd in enumerate(WEEKDAYS):
        if re.search(rf"\b{wd}\b", low):
            return (today + timedelta(days=(i - today.weekday()) % 7)).isoformat()
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS) + r")\b|\b(" + "|".join(MONTHS)
                  + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", low)
    if m:
        day, mon = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        try:
            d = date(today.year, MONTHS[mon], int(day))
        except ValueError:
            return None
        return (d if d >= today - timedelta(days=31) else d.replace(year=d.year + 1)).isoformat()
    return None


def city_slot(text: str) -> str | None:
    """A city named in the question: from the gazetteer, or a capitalized place after in/at/for."""
    m = _CITY_RE.search(text)
    if m:
        return m.group(1).title()
    for cand in _IN_PLACE_RE.findall(text):
        if cand.split()[0] not in _NOT_PLACES:
            return cand
    return None


def leave_type_slot(text: str) -> str | None:
    """The kind of leave a question is about."""
    low = f" {text.lower()} "
    for kind, words in LEAVE_SYNONYMS.items():
        if any(w in low for w in words):
            return kind
    return None


def fill_slots(text: str, today: date, profile: dict, previous: dict | None = None) -> dict[str, object]:
    """Every slot we can read, with where each came from (question, conversation or profile)."""
    previous = previous or {}
    slots: dict[str, object] = {"question": text.strip()[:500]}
    sources: dict[str, str] = {}
    for name, value in (("month", month_slot(text, today)), ("date", date_slot(text, today)),
                        ("city", city_slot(text)), ("leave_type", leave_type_slot(text))):
        if value is not None:
            slots[name], sources[name] = value, "question"
        elif name in previous:
            slots[name], sources[name] = previous[name], "conversation"
    defaults = {"month": f"{today.year}-{today.month:02d}", "date": today.isoformat(),
                "city": profile.get("city")}
    for name, value in defaults.items():
        if name not in slots and value:
            slots[name], sources[name] = value, "default" if name != "city" else "profile"
    slots["sources"] = sources
    return slots

"""Slot filling: months, days, cities and leave types read from the question, then the conversation,
then the caller's profile. Deterministic given `today`. Which leave type a question names is read by
`graph/leave_slots.py`.

Times are read by `graph/times.py` (regexes find the phrases, `dateparser` and `graph/periods.py` resolve
them against the run's date). A phrase that reads as a time but resolves to nothing fills no month or day
at all (`unread_time`): the question steps aside rather than being answered for a default month. Every
value is validated (a month is a real YYYY-MM, a city comes from the domain's gazetteer or is a
capitalized word of letters), so nothing a user types reaches a tool unchecked.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from datetime import date
from typing import Any

from graph import times_local
from graph.days_local import calendar_words, words_of
from graph.leave_slots import leave_type_slot
from graph.times import MONTH_LEVEL, Times, date_slot, read_times, time_phrases
from tools.company import current
from tools.domain import (
    CITIES,
    CITY_PATTERN,
    MONTH_NAMES,
    WEEKDAYS,
)
from tools.gazetteer import WORD, city_in, lookup, plain

_IN_PLACE = re.compile(r"\b(?:in|at|for|to)\s+([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
_NOT_PLACES = {w.title() for w in [*MONTH_NAMES, *WEEKDAYS, "today", "tomorrow", "the", "my", "this", "next",
                                   "last", "it", "hr", "me", "office", "q1", "q2", "q3", "q4"]}


def _not_place(word: str) -> bool:
    """A capitalized word after "in" / "at" that names no place: a month, a day, the company or its systems."""
    return word in _NOT_PLACES or word.lower() in current().own_words
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
        right = _spelled_right(word.lower())
        if right is None:
            return word
        return right.title() if word[0].isupper() else right

    return _WORD.sub(fix, text)


@functools.lru_cache(maxsize=8192)
def _spelled_right(low: str) -> str | None:
    """The entity word a lower-case word misspells (None: none, or it is one). Remembered per word: difflib's
    comparison with every entity word was half of a question's slot filling, and words recur across questions.
    """
    if low in _SPELLED:
        return None
    close = difflib.get_close_matches(low, _SPELLED, n=1, cutoff=0.85)
    return close[0] if close and close[0][0] == low[0] else None


@functools.cache
def _in_place_local() -> tuple[re.Pattern[str], frozenset[str]]:
    """A place after the words that say where in the desk's other languages ("à Lyon", "en Sevilla", "a Napoli", "em
    São Paulo", "naar Rotterdam"), capitalized mid-sentence: a name. The words, the small words inside names and
    the feasts that are no places come from each language's words file (`place_words`, `place_particles`,
    `not_places`); a language without `place_words` (German capitalizes every noun: "nach Hause") reads none.
    """
    from tools.i18n import in_every_language

    def every(key: str) -> list[str]:
        return sorted({str(w) for ws in in_every_language(key) for w in ws}, key=len, reverse=True)

    particles = "|".join(map(re.escape, every("place_particles")))
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, every('place_words')))})\s+"
                         rf"((?:[A-ZÀ-Þ][^\W\d_]+)(?:[ -](?:(?:{particles})\s)?[A-ZÀ-Þ][^\W\d_]+)?)")
    return pattern, frozenset(every("not_places"))


def city_slot(text: str, lang: str = "en") -> str | None:
    """A city named in the question, in the letters the weather tool takes: one of the tool's own, a larger city by
    any of its names in any language or script (the gazetteer: "München", "杭州", "Den Haag"), or else a capitalized
    place after a word that says where (in/at/for in English; à, en, a, em, naar... in the other languages), as
    written: the tool says it does not cover a place it does not know, and no one guesses the caller's city.
    """
    m = CITY_PATTERN.search(text)
    if m:
        return next(c for c in CITIES if c.lower() == m.group(0).lower())
    if named := city_in(text) or _named_city(text, lang):
        return _served(named)
    for cand in _IN_PLACE.findall(text):
        if not _not_place(cand.split()[0]):
            return cand
    if lang != "en" and words_of(lang).get("place_words"):
        pattern, not_places = _in_place_local()
        for cand in pattern.findall(text):
            first = cand.split()[0]
            if first not in not_places and first.lower() not in calendar_words(lang):
                return _unaccented(cand)
    return None


BIG_CITY = 1_000_000  # a name this city has is read even written in lower case ("wetter münchen")


def _named_city(text: str, lang: str) -> str | None:
    """A larger city named in words: one, two or three words the gazetteer knows ("Napoli", "Den Haag"), written
    with a capital (not as a sentence's first word, where any word has one), or a very large city's name of five
    letters or more however it is written ("münchen"). Months, days and the company's own words are never places.
    """
    words = list(WORD.finditer(text))
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            first = words[i].group(0)
            if _not_place(first.title()) or first.lower() in calendar_words(lang):
                continue
            span = text[words[i].start():words[i + n - 1].end()]
            if len(span) < 3 or not (hit := lookup(span)):
                continue
            starts = i == 0 or text[:words[i].start()].rstrip().endswith((".", "?", "!", ":"))
            if (first[0].isupper() and not starts) or (hit[1] >= BIG_CITY and len(span) >= 5):
                return hit[0]
    return None


def _served(name: str) -> str:
    """A city under the name the weather tool takes: its own spelling of the cities it serves, else unaccented."""
    return next((c for c in CITIES if plain(c) == plain(name)), _unaccented(name))


def _unaccented(name: str) -> str:
    """A place name in the letters the weather tool takes ("São Paulo" -> "Sao Paulo")."""
    plain = unicodedata.normalize("NFKD", name.replace("ß", "ss"))
    return "".join(ch for ch in plain if not unicodedata.combining(ch))


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


FORECASTS = frozenset({"weather", "weather_clothing"})


def reusable(previous: dict[str, Any], question: str, label: str, last_intents: list[str]) -> dict[str, Any]:
    """The conversation's last slots this question (read as `label`) may reuse: all of them for a follow-up ("and
    in March?"), only those it points back to for a new request ("my pay that month"). A forecast question right
    after a forecast (`last_intents`: "should I bring a raincoat then?", "moet ik dan een regenjas aan?") is about
    the same place and day, unless it names its own.
    """
    if label == "follow_up":
        return dict(previous)
    forecast = label in FORECASTS and bool(FORECASTS & set(last_intents))
    back = refers_back(question) | ({"city", "date"} if forecast else set())
    return {k: v for k, v in previous.items() if k in back}


def fill_slots(text: str, today: date, profile: dict, previous: dict | None = None, lang: str = "en") -> dict[str, Any]:
    """Every slot we can read, with where each came from (question, conversation or profile), and the language the
    answer is written in (`lang`: the question's, `graph/language.py`).

    `previous` holds the conversation's slots that this question may reuse: all of them for a
    follow-up ("and in March?"), only those it points back to for a new request ("my pay that month"). A month
    named relative to the conversation's ("and the month before that?", "und der Monat davor?") is read from it.
    """
    previous = previous or {}
    slots: dict[str, Any] = {"question": text.strip()[:500], "lang": lang}
    sources: dict[str, str] = {}
    english = lang == "en"
    spelled = spell_entities(text) if english else text  # English spellings only: "morgen" is no misspelled Monday
    times = read_times(spelled, today) if english else times_local.read_times(text, today, lang)
    if (before := times_local.relative_to(previous.get("month"), text)) is not None:
        times = Times([before])
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
                        ("date", None if times.unread else date_slot(spelled, today) if english
                         else times_local.date_slot(text, today, lang)),
                        ("city", city_slot(spelled, lang)), ("leave_type", leave_type_slot(text))):
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
    own = fill_slots(clause, today, profile, lang=slots.get("lang", "en"))
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
            MONTH_LEVEL.search(p) for p in time_phrases(slots["question"])):
        # The request's month came from another clause's day ("my salary and the weather tomorrow"): a day
        # there is not this part's month, which stays unsaid.
        merged["month"], sources["month"] = own["month"], "default"
        merged.pop("span", None)  # nor is that day what this part asks about
    return {**merged, "sources": sources, "question": slots["question"]}

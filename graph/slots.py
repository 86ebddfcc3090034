"""Slot filling: months, days, cities and leave types read from the question, then the conversation,
then the caller's profile. Deterministic given `today`.

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
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

import numpy as np

from graph import times_local
from graph.leave_model import NONE, LeaveTypeModel, settles
from graph.times import MONTH_LEVEL, Times, date_slot, read_times, time_phrases
from tools.domain import (
    CITIES,
    CITY_BY_LOCAL_NAME,
    CITY_PATTERN,
    LEAVE_DESCRIPTIONS,
    LEAVE_PATTERNS,
    LEAVE_PRIORITY,
    LOCAL_CITY_PATTERN,
    MONTH_NAMES,
    WEEKDAYS,
)

_IN_PLACE = re.compile(r"\b(?:in|at|for|to)\s+([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
_NOT_PLACES = {w.title() for w in [*MONTH_NAMES, *WEEKDAYS, "today", "tomorrow", "the", "my", "this", "next",
                                   "last", "myhr", "spendwise", "brightconnect", "it", "hr", "me", "office",
                                   "brightmart", "q1", "q2", "q3", "q4"]}
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


# A place after the words that say where in the desk's other languages ("à Lyon", "en Sevilla", "a Napoli", "em São
# Paulo", "naar Rotterdam"): capitalized mid-sentence, it is a name. German capitalizes every noun ("nach Hause"), so
# German keeps the English "in".
_IN_PLACE_LOCAL = re.compile(
    r"\b(?:à|a|au|aux|ad|en|em|no|na|in|per|para|pra|pro|sur|vers|verso|hacia|naar|te)\s+"
    r"((?:[A-ZÀ-Þ][^\W\d_]+)(?:[ -](?:(?:de|do|da|del|di|la|los|las|le)\s)?[A-ZÀ-Þ][^\W\d_]+)?)")
_NOT_PLACES_LOCAL = {"Natale", "Noël", "Navidad", "Natal", "Pasqua", "Pâques", "Pascua", "Páscoa", "Kerst", "Pasen",
                     "Capodanno", "Ferragosto", "Carnaval", "Carnevale", "Toussaint"}


def city_slot(text: str, lang: str = "en") -> str | None:
    """A city named in the question: from the gazetteer, or a capitalized place after a word that says where
    (in/at/for in English; à, en, a, em, naar... in the other languages), in the letters the weather tool takes.
    """
    m = CITY_PATTERN.search(text)
    if m:
        return next(c for c in CITIES if c.lower() == m.group(0).lower())
    if local := LOCAL_CITY_PATTERN.search(text):  # "München", "Milano", "北京": the tool's name for it
        return CITY_BY_LOCAL_NAME[local.group(0).lower()]
    for cand in _IN_PLACE.findall(text):
        if cand.split()[0] not in _NOT_PLACES:
            return cand
    if lang not in ("en", "de", "zh"):
        for cand in _IN_PLACE_LOCAL.findall(text):
            first = cand.split()[0]
            if first not in _NOT_PLACES_LOCAL and first.lower() not in times_local.calendar_words(lang):
                return _unaccented(cand)
    return None


def _unaccented(name: str) -> str:
    """A place name in the letters the weather tool takes ("São Paulo" -> "Sao Paulo")."""
    plain = unicodedata.normalize("NFKD", name.replace("ß", "ss"))
    return "".join(ch for ch in plain if not unicodedata.combining(ch))


LEAVE_MIN_SIMILARITY = 0.4  # below this a question is about leave in general, not one type
LEAVE_MIN_MARGIN = 0.05  # and a type must stand out from the next one, or the question steps aside


def leave_type_slot(text: str) -> str | None:
    """The kind of leave a question names (the domain's priority decides between several)."""
    return next(iter(leave_types_named(text)), None)


# The one giving birth is the caller's partner ("my wife is due in June", "my girlfriend is pregnant"): the birth
# words describe her, and the caller's own leave is partner (paternity) leave.
_PARTNER_BIRTH = re.compile(r"\b(?:my|our)\s+(?:wife|girlfriend|partner|fianc[eé]e?|spouse)(?:'s)?\b[^.?!]{0,40}?"
                            r"\b(?:due|pregnan\w*|expecting|giv(?:e|ing) birth|gave birth|having (?:a|our) baby)\b"
                            # the same in the desk's other languages: "meine Frau ist schwanger", "我老婆怀孕了"
                            r"|\b(?:meine|unsere)\s+(?:frau|ehefrau|freundin|partnerin|verlobte)\b[^.?!]{0,40}?"
                            r"\b(?:schwanger\w*|entbind\w*|bekommt ein|erwartet ein)"
                            r"|\b(?:ma|notre)\s+(?:femme|épouse|compagne|copine|conjointe|fiancée)\b[^.?!]{0,40}?"
                            r"\b(?:enceinte|accouch\w*|attend un bébé)"
                            r"|\b(?:mi|nuestra)\s+(?:mujer|esposa|pareja|novia)\b[^.?!]{0,40}?"
                            r"\b(?:embarazada|da a luz|dar a luz|sale de cuentas)"
                            r"|\b(?:mia|nostra)\s+(?:moglie|compagna|ragazza|fidanzata)\b[^.?!]{0,40}?"
                            r"\b(?:incinta|partori\w*|aspetta un)"
                            r"|\b(?:mijn|onze)\s+(?:vrouw|vriendin|partner|echtgenote)\b[^.?!]{0,40}?"
                            r"\b(?:zwanger|bevalt|bevallen|uitgerekend)"
                            r"|\b(?:minha|nossa)\s+(?:mulher|esposa|namorada|companheira|parceira)\b[^.?!]{0,40}?"
                            r"\b(?:grávida|gravida|dar à luz|vai ter (?:o|um) bebé|vai ter (?:o|um) bebê)"
                            r"|(?:老婆|妻子|爱人|太太|媳妇|女朋友)[^。？！?!]{0,20}?(?:怀孕|怀了|要生|生孩子|预产期)",
                            re.IGNORECASE)


def leave_types_named(text: str) -> list[str]:
    """Every leave type a question names by keyword, in the domain's priority order (a partner's pregnancy
    names the caller's partner leave, not maternity leave).
    """
    spans = {kind: [m.span() for m in LEAVE_PATTERNS[kind].finditer(text)] for kind in LEAVE_PRIORITY}
    found = [(b, kind) for kind, bs in spans.items() for b in bs]

    def within_longer(a: tuple[int, int], kind: str) -> bool:  # "产假" (maternity) inside "陪产假" (paternity)
        return any(k != kind and b[0] <= a[0] and a[1] <= b[1] and b[1] - b[0] > a[1] - a[0] for b, k in found)

    named = [kind for kind in LEAVE_PRIORITY if any(not within_longer(a, kind) for a in spans[kind])]
    if _PARTNER_BIRTH.search(text):
        named = list(dict.fromkeys("paternity" if kind == "maternity" else kind for kind in named)) or ["paternity"]
    return named


def leave_type_needs_meaning(text: str, sure: str | None = None) -> bool:
    """Whether settling the question's leave type embeds it with the shared encoder: it names no type by keyword,
    or several, and the router's leave-type classifier has not settled it (`sure`: `Decision.leave_type`).
    """
    named = leave_types_named(text)
    return len(named) != 1 and not settles(sure, named)


async def settle_leave_type(text: str, slots: dict[str, Any], embed: Callable[[list[str]], Awaitable[np.ndarray]],
                            sure: str | None = None, full: LeaveTypeModel | None = None) -> None:
    """Set the leave-type slot from the question's meaning, unless the conversation set it and the question
    names none; a question naming several with none standing out keeps no slot (no template guesses one).
    """
    named = leave_types_named(text)
    if slots.get("sources", {}).get("leave_type") == "conversation" and not named:
        return
    if kind := await resolve_leave_type(text, embed, named, sure, full):
        slots["leave_type"] = kind
        slots.setdefault("sources", {})["leave_type"] = "question"
    elif named:
        slots.pop("leave_type", None)
        slots.get("sources", {}).pop("leave_type", None)


async def resolve_leave_type(text: str, embed: Callable[[list[str]], Awaitable[np.ndarray]],
                             named: list[str] | None = None, sure: str | None = None,
                             full: LeaveTypeModel | None = None) -> str | None:
    """The leave type a question is about: the one it names.

    When it names none or several, the first of these that settles it (graph/leave_model.py), among the types named
    when there are several:

    - `sure`, what the router's classifier read from its own vector (`Decision.leave_type`);
    - the `full` classifier over the shared encoder's embedding of the question;
    - the type whose description (`tools.domain.LEAVE_DESCRIPTIONS`) is closest in meaning.

    None when it is about no particular type ("how do I book time off") or two types are about as close.
    """
    named = leave_types_named(text) if named is None else named
    if len(named) == 1:
        return named[0]
    if settles(sure, named):
        return None if sure == NONE else sure
    if full is not None and (kind := full.pick((await embed([text]))[0], named)) is not None:
        return None if kind == NONE else kind
    pool = described(named)
    return closest_description(pool, await embed([text, *(LEAVE_DESCRIPTIONS[k] for k in pool)]), bool(named))


def described(named: list[str]) -> list[str]:
    """The leave types whose descriptions a question naming `named` (none or several) is matched to."""
    return named or list(LEAVE_DESCRIPTIONS)


def closest_description(pool: list[str], vecs: np.ndarray, named: bool) -> str | None:
    """The type of `pool` whose description is closest to the question (`vecs`: the question's embedding, then the
    descriptions'), when it stands out from the next and, among all types (`named` False), is close enough.
    """
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims)
    best, margin = int(order[0]), float(sims[order[0]] - (sims[order[1]] if len(order) > 1 else 0.0))
    if margin < LEAVE_MIN_MARGIN:  # two types about as close: not sure which, so no slot (the question steps aside)
        return None
    return pool[best] if named or sims[best] >= LEAVE_MIN_SIMILARITY else None


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


def reusable(previous: dict[str, Any], question: str, follow_up: bool, same_forecast: bool = False) -> dict[str, Any]:
    """The conversation's last slots this question may reuse: all of them for a follow-up ("and in March?"),
    only those it points back to for a new request ("my pay that month"). A forecast question right after a
    forecast (`same_forecast`: "should I bring a raincoat then?", "moet ik dan een regenjas aan?") is about the
    same place and day, unless it names its own.
    """
    if follow_up:
        return dict(previous)
    back = refers_back(question) | ({"city", "date"} if same_forecast else set())
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

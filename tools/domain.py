"""The desk's domain vocabularies, in one place: leave types, places, months, weekdays, ids.

Everything else derives from these: the registry's argument types, slot extraction, the FAQ
entity check, the templates and the demo backend. Adding a leave type or a city is one edit here.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Literal, get_args

LeaveType = Literal["annual", "sick", "maternity", "paternity", "parental", "bereavement", "study", "unpaid"]
LEAVE_TYPES: tuple[str, ...] = get_args(LeaveType)


def _leave_words() -> dict[str, dict[str, tuple[str, ...]]]:
    """Each language's names of each leave type, from its words file (`tools/messages/<lang>.words.yaml`)."""
    from tools.i18n import LANGUAGES, words

    return {lang: {kind: tuple(spellings) for kind, spellings in (words(lang).get("leave_words") or {}).items()}
            for lang in LANGUAGES}


# How people name each leave type in English (the leave classifier's descriptions start from these) and in the
# desk's other languages (entities only: the router decides what a question asks; these say which leave it names).
_BY_LANGUAGE = _leave_words()
LEAVE_SYNONYMS: dict[str, tuple[str, ...]] = _BY_LANGUAGE["en"]
LOCAL_LEAVE_WORDS: dict[str, tuple[str, ...]] = {
    kind: tuple(w for lang, named in _BY_LANGUAGE.items() if lang != "en" for w in named.get(kind, ()))
    for kind in LEAVE_SYNONYMS}

# What each leave type is for, in plain words: a question that names no type, or several, is matched to
# these by meaning ("my five-year-old is ill, can I stay home" -> parental), not by keyword.
LEAVE_DESCRIPTIONS: dict[str, str] = {
    "annual": "annual leave: paid vacation and holiday days off work, PTO, yearly entitlement of days off",
    "sick": "sick leave: off work because I am ill or unwell, sick pay, doctor's note",
    "maternity": "maternity leave: for the mother, pregnant, giving birth, before and after her baby is born",
    "paternity": "paternity leave: for the father or the partner, a new dad when his baby is born",
    "parental": "parental leave: looking after and caring for a young child, school-age children",
    "bereavement": "bereavement leave: a close relative or family member died, compassionate leave, the funeral",
    "study": "study leave: exams, a course, a qualification or education",
    "unpaid": "unpaid leave: a longer break or sabbatical without salary, no pay",
}

# The FAQ entry that states each leave type's rules (the same facts as the leave_policy tool): what a question about
# them is answered with in a language the backend's English text is not written in.
LEAVE_FAQ_ENTRY: dict[str, str] = {
    "annual": "annual-leave-entitlement", "sick": "sick-pay", "maternity": "maternity-leave",
    "paternity": "paternity-leave", "parental": "parental-leave", "bereavement": "bereavement-leave",
    "study": "study-leave", "unpaid": "unpaid-leave"}

# Cities the weather tool serves, and the countries employees ask about (with their adjectives).
CITIES: tuple[str, ...] = (
    "Amsterdam", "Berlin", "Paris", "Madrid", "Milan", "Lisbon", "Vienna", "Dublin", "London", "Rome",
    "Barcelona", "Munich", "Brussels", "Prague", "Warsaw", "Stockholm", "Copenhagen", "Oslo", "Zurich", "Athens",
)
HOME_CITIES: tuple[str, ...] = CITIES[:8]  # where the demo company's employees are based
COUNTRIES: dict[str, tuple[str, ...]] = {
    "spain": ("spain", "spanish"), "germany": ("germany", "german"), "france": ("france", "french"),
    "netherlands": ("netherlands", "dutch", "holland"), "italy": ("italy", "italian"),
    "portugal": ("portugal", "portuguese"), "austria": ("austria", "austrian"), "ireland": ("ireland", "irish"),
    "belgium": ("belgium", "belgian"), "uk": ("uk", "britain", "british", "england"),
}

def city_name(city: str, lang: str = "en") -> str:
    """A city under the name a reader of `lang` knows it by ("Munich" -> "München" in German, "慕尼黑" in Chinese):
    the language's words file (`city_names`); reading a city from a question goes through the gazetteer.
    """
    from tools.i18n import words

    return str((words(lang).get("city_names") or {}).get(city, city))


MONTH_NAMES: tuple[str, ...] = ("january", "february", "march", "april", "may", "june", "july", "august",
                                "september", "october", "november", "december")
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Each month's number under every name a question gives it: in full, in three letters, and "sept".
MONTH_NUMBERS: dict[str, int] = {**{m: i for i, m in enumerate(MONTH_NAMES, 1)},
                                 **{m[:3]: i for i, m in enumerate(MONTH_NAMES, 1)}, "sept": 9}
NUMBER_WORDS: dict[str, int] = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

EMPLOYEE_ID = re.compile(r"\bE\d{4}\b", re.IGNORECASE)
EMPLOYEE_ID_PATTERN = r"^E\d{4}$"
MONTH_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

# The payroll calendar (docs/company-facts.md): pay on the 25th, or the working day before when it falls on
# a weekend; payslips in the HR portal three working days before payday.
PAYDAY = 25
PAYSLIP_WORKING_DAYS_BEFORE = 3


def payslip_day(year: int, month: int) -> date:
    """When a month's payslip appears in the HR portal (public holidays, which differ by country, not counted)."""
    day = date(year, month, PAYDAY)
    while day.weekday() >= 5:  # payday on a weekend: the Friday before
        day -= timedelta(days=1)
    for _ in range(PAYSLIP_WORKING_DAYS_BEFORE):
        day -= timedelta(days=1)
        while day.weekday() >= 5:
            day -= timedelta(days=1)
    return day


def latest_payslip_month(today: date) -> str:
    """The month of the newest payslip on `today`, as YYYY-MM: this month's once it is out, else last month's."""
    if today >= payslip_day(today.year, today.month):
        return f"{today.year}-{today.month:02d}"
    last = today.replace(day=1) - timedelta(days=1)
    return f"{last.year}-{last.month:02d}"


# People an employee's record does not name (the backend keeps id, name, role, department and city): a question
# about one of them is told so, and where to ask.
UNRECORDED_CONTACTS: dict[str, tuple[str, ...]] = {
    "manager": ("manager", "managers", "manger", "supervisor", "boss", "team lead*", "report to", "answer to",
                "reporting line", "listed under"),
    "HR contact": ("hr", "people partner", "hr advisor", "hr business partner", "hr representative"),
}


def word_pattern(spellings: tuple[str, ...] | list[str]) -> re.Pattern[str]:
    """One case-insensitive pattern of whole-word spellings; a trailing `*` matches any ending. Chinese spellings
    match anywhere (Chinese writes no spaces between words).
    """
    def one(s: str) -> str:
        body = re.escape(s[:-1]) + r"\w*" if s.endswith("*") else re.escape(s)
        return body if _CJK.search(s) else r"\b" + body + r"\b"

    return re.compile("|".join(one(s) for s in sorted(spellings, key=len, reverse=True)), re.IGNORECASE)


_CJK = re.compile(r"[\u3400-\u9fff]")
LEAVE_PATTERNS: dict[str, re.Pattern[str]] = {k: word_pattern((*v, *LOCAL_LEAVE_WORDS[k]))
                                              for k, v in LEAVE_SYNONYMS.items()}
# Which leave type wins when a question names several ("time off after my father died" is bereavement).
LEAVE_PRIORITY: tuple[str, ...] = ("bereavement", "maternity", "paternity", "parental", "study", "unpaid", "sick",
                                   "annual")
CITY_PATTERN = word_pattern([c.lower() for c in CITIES])
CONTACT_PATTERNS: dict[str, re.Pattern[str]] = {k: word_pattern(v) for k, v in UNRECORDED_CONTACTS.items()}
COUNTRY_PATTERNS: dict[str, re.Pattern[str]] = {k: word_pattern(v) for k, v in COUNTRIES.items()}

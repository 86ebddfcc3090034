"""Text a user reads, in the language the question was written in: message catalogs and locale formatting.

Every sentence the desk writes itself (template answers, refusals, errors, "not in the handbook", the chat's
labels) is a key of `tools/messages/en.yaml`, the English source, with the same key in each language's file
beside it (`tests/unit/tools/test_i18n.py` checks that every key and placeholder exists in every language).
Money, numbers, months and days are formatted by Babel for the reader's locale; English keeps the house style
its answers have always had ("EUR 1,910.30", "March 2026", "2 December").

Names of the company, its portals and contacts are placeholders (`{company}`, `{hr_portal}` ...) filled from the
company's folder (`tools/company.py`). A language is files, not code: its catalog here (`<lang>.yaml`), its words
file beside it (`<lang>.words.yaml`: what it is called, its Babel locale, the words questions name times, leave
and places with), its labelled questions (`data/router/i18n/<lang>/`) and, where the company has one, its FAQ
translation (the company folder's `faq/<lang>.yaml`). `LANGUAGES` is read from the catalogs present.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

CATALOGS = Path(__file__).with_name("messages")
# English first (the source every catalog translates), then every language with a catalog beside it.
LANGUAGES: tuple[str, ...] = ("en", *sorted(p.name.split(".")[0] for p in CATALOGS.glob("*.yaml")
                                            if p.name.count(".") == 1 and p.stem != "en"))


def supported(lang: str | None) -> str:
    """The language code itself when the desk speaks it (`de-AT` and `zh-CN` count as `de` and `zh`), else English."""
    code = (lang or "en").replace("_", "-").split("-")[0].lower()
    return code if code in LANGUAGES else "en"


def locale_of(lang: str) -> str:
    """Babel's locale for a language code (its words file's `locale`, where it is not the code: "zh_Hans_CN")."""
    return str((words(lang).get("language") or {}).get("locale") or lang)


def spaced(lang: str) -> bool:
    """Whether the language writes spaces between words (its words file's `language.spaces`; Chinese does not):
    word boundaries in its patterns, a space between its sentences, a clause of two words or more.
    """
    return bool((words(lang).get("language") or {}).get("spaces", True))


def english_name(lang: str) -> str:
    """What a language is called in English (the LLM is told to write it): its words file's `language.english`."""
    return str((words(lang).get("language") or {}).get("english") or lang)


@lru_cache(maxsize=len(LANGUAGES))
def catalog(lang: str) -> dict[str, str]:
    """A language's messages by key (an empty one for a language without a file: English speaks for it)."""
    path = CATALOGS / f"{lang}.yaml"
    return {str(k): str(v) for k, v in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items()} \
        if path.exists() else {}


@lru_cache(maxsize=len(LANGUAGES))
def words(lang: str) -> dict[str, Any]:
    """The words a language names times with (`<lang>.words.yaml` beside its catalog, read by
    `graph/times_local.py` and `graph/days_local.py`); {} for a language without the file.
    """
    path = CATALOGS / f"{lang}.words.yaml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}


def in_every_language(key: str) -> list[Any]:
    """One words-file key's value in each language that has it (English first): the readers that take every
    language's phrasing at once ("the month before that", a partner's pregnancy, the words before a place).
    """
    return [value for lang in LANGUAGES if (value := words(lang).get(key))]


def say(key: str, lang: str = "en", **values: Any) -> str:
    """The message `key` in `lang` (English where the language lacks it), its `{placeholders}` filled: the
    company's name, portals and contacts (`{company}`, `{hr_portal}` ...) from its folder (`tools/company.py`).
    """
    text = catalog(lang).get(key)
    if text is None:
        text = catalog("en")[key]  # a KeyError here is a key missing from the English source: a bug
    return fill(text, lang, values) if "{" in text else text


def fill(text: str, lang: str, values: dict[str, Any]) -> str:
    """A catalog sentence with its placeholders filled, each count's words in its plural form for `lang`."""
    from tools.company import current

    if ", plural," in text:
        text = _PLURAL.sub(lambda m: _plural_branch(m, lang, values), text)
    return text.format(**{**current().placeholders, **values})


def placeholders(text: str) -> set[str]:
    """The names a catalog sentence takes, plural counts among them."""
    import string

    plain = _PLURAL.sub(lambda m: "{" + m.group(1) + "}", text)
    return {name for _, name, _, _ in string.Formatter().parse(plain) if name}


# A count's words by the language's plural rules (CLDR, through Babel), in ICU MessageFormat's form:
# "{absent, plural, one {# Fehltag} other {# Fehltage}}"; `#` is the count as the caller formatted it.
_PLURAL = re.compile(r"\{(\w+), plural, ((?:\s*[=\w]+ \{[^{}]*\})+)\s*\}")
_BRANCH = re.compile(r"([=\w]+) \{([^{}]*)\}")


def _plural_branch(m: re.Match[str], lang: str, values: dict[str, Any]) -> str:
    """The branch of one plural placeholder that the count's value takes in `lang` (`other` when it has none)."""
    from babel import Locale
    from babel.numbers import NumberFormatError, parse_decimal

    shown = str(values[m.group(1)])
    branches = dict(_BRANCH.findall(m.group(2)))
    try:
        n = parse_decimal(shown, locale=locale_of(lang), strict=False)
    except NumberFormatError:
        return branches["other"].replace("#", shown)
    exact = branches.get(f"={n.normalize():f}")
    form = Locale.parse(locale_of(lang)).plural_form(n)
    return (exact or branches.get(form) or branches["other"]).replace("#", shown)


def money(x: float, lang: str = "en", currency: str = "EUR") -> str:
    """An amount: "EUR 1,910.30" in English, "1.910,30 €" in German, "€1,910.30" in Chinese."""
    if lang == "en":
        return f"{currency} {x:,.2f}"
    from babel.numbers import format_currency

    return format_currency(x, currency, locale=locale_of(lang))


_EUR = re.compile(r"\bEUR\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\b")


def amounts_in(text: str, lang: str) -> str:
    """A text the company wrote (an FAQ answer) with its amounts as the reader's locale writes money: "EUR 1,000" is
    one euro to a German or Dutch reader, "1.000,00 €" is not. English text stays as written.
    """
    if lang == "en":
        return text
    return _EUR.sub(lambda m: money(float(m[1].replace(",", "") + (m[2] or "")), lang), text)


def number(x: float, lang: str = "en") -> str:
    """A count or measure: "2.5" in English, "2,5" in German (whole numbers without decimals)."""
    if lang == "en":
        return f"{x:g}"
    from babel.numbers import format_decimal

    return format_decimal(round(x, 2), locale=locale_of(lang))


def month_text(d: date, lang: str = "en", with_year: bool = True) -> str:
    """A month: "March 2026" / "März 2026" / "2026年3月" (or the month alone: "March", "März", "三月")."""
    if lang == "en":
        return d.strftime("%B %Y" if with_year else "%B")
    from babel.dates import format_date, format_skeleton

    return format_skeleton("yMMMM", d, locale=locale_of(lang)) if with_year else \
        format_date(d, "LLLL", locale=locale_of(lang))


def day_text(d: date, lang: str = "en", with_year: bool = True) -> str:
    """A day: "2 December 2026" / "2. Dezember 2026" / "2026年12月2日" (or without the year)."""
    if lang == "en":
        return f"{d.day} {d.strftime('%B')}" + (f" {d.year}" if with_year else "")
    from babel.dates import format_skeleton

    return format_skeleton("yMMMMd" if with_year else "dMMMM", d, locale=locale_of(lang))


def and_list(items: list[str], lang: str = "en") -> str:
    """"a, b and c" in the reader's language ("a, b und c", "a、b和c")."""
    if lang == "en" or len(items) < 2:
        return f"{', '.join(items[:-1])} and {items[-1]}" if len(items) > 1 else "".join(items)
    from babel.lists import format_list

    return format_list(items, locale=locale_of(lang))


def spoken(lang: str = "en") -> str:
    """The languages the desk answers in, named in `lang` ("English, German, ... and Chinese"), read from the
    catalogs present: a language added as files is named in the refusal of the others at once.
    """
    from babel import Locale

    names = Locale.parse(locale_of(lang)).languages
    return and_list([names.get(code) or english_name(code) for code in LANGUAGES], lang)


def sentences(lang: str, *parts: str) -> str:
    """Sentences one after another, the empty ones left out: with a space between them where the language writes
    spaces (none in Chinese).
    """
    return (" " if spaced(lang) else "").join(p for p in parts if p)


def say_known(key: str, lang: str, default: str) -> str:
    """A message for a word a backend returns ("condition.rain"), or the word itself when no catalog knows it."""
    return catalog(lang).get(key) or catalog("en").get(key) or default

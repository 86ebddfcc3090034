"""The help desk's fixed replies: someone else's data, a question the handbook does not answer, small talk, an FAQ
entry's answer. Each in the asker's language (`tools/i18n.py`).

They name where to ask instead (HR through its portal, the IT service desk: the company's folder names them),
so the product never has to guess.
"""

from __future__ import annotations

from typing import Any

from tools.company import translated_answer, translations
from tools.domain import EMPLOYEE_ID
from tools.faq import FaqEntry
from tools.i18n import amounts_in, say, say_known, sentences
from tools.registry import INTENTS, is_personal


def _and(words: list[str], lang: str) -> str:
    return say("and_two", lang, first=", ".join(words[:-1]), last=words[-1]) if len(words) > 1 else "".join(words)


def desk_covers(lang: str = "en") -> str:
    """What the desk answers about, from each intent's phrase: "your own pay, attendance, leave and employee record,
    company policies and the handbook, and the weather (and what to wear) for your trips". An intent's phrase is
    the catalogs' `covers.<phrase>` where one is written (the phrase itself otherwise).
    """
    def phrase(s: Any) -> str:  # a deployment's own intent may bring a phrase no catalog has yet
        return say_known(f"covers.{s.covers}", lang, s.covers)

    own = [phrase(s) for s in INTENTS.values() if is_personal(s.name)]
    shared = [phrase(s) for s in INTENTS.values() if not is_personal(s.name)]
    phrases = list(dict.fromkeys([*([say("your_own", lang, things=_and(own, lang))] if own else []), *shared]))
    return say("and_last", lang, first=", ".join(phrases[:-1]), last=phrases[-1]) if len(phrases) > 1 else phrases[0]


def out_of_scope(lang: str = "en") -> str:
    """Said to small talk ("hi", "thanks!", "what can you do?") and to what is not a help-desk matter alike, so it
    reads as an answer to both: what the desk covers, and where to ask about anything else.
    """
    return say("out_of_scope", lang, covers=desk_covers(lang), hr=say("ask_hr", lang), it=say("ask_it", lang))


def unknown_employee(user: str, lang: str = "en") -> str:
    """The caller's id is not one the backend knows (a signed-in session always has a known one)."""
    return say("unknown_employee", lang, user=repr(user[:12]))


def refusal(question: str, user: str, lang: str = "en") -> str:
    """Why someone else's personal data is not shared, naming whose when the question gives an id."""
    who = next(iter(sorted({e.upper() for e in EMPLOYEE_ID.findall(question)} - {user})), None)
    return say("refusal", lang, who=who or say("another_employee", lang))


def not_in_handbook(results: list[Any], lang: str = "en") -> str:
    """The grounded reply when the handbook has no clear answer: say so, and where to ask instead."""
    kb = next((r for r in results if r["name"] == "kb_search" and r["ok"]), None)
    passages = ((kb or {}).get("data") or {}).get("passages") or []
    near = passages and float(passages[0].get("score", 0.0)) >= 0.45  # only a section that is at least on topic
    closest = say("closest_section", lang, title=passages[0]["title"]) if near else ""
    return sentences(lang, say("not_in_handbook", lang), closest,
                     say("ask_instead", lang, hr=say("ask_hr", lang), it=say("ask_it", lang)))


def faq_answer(entry: FaqEntry, lang: str = "en") -> str:
    """An FAQ entry's answer in the asker's language: its translation, or the English answer introduced as such."""
    if lang == "en":
        return entry.answer
    translated = translated_answer(entry.id, lang)  # its amounts as the reader's locale writes money
    return amounts_in(translated or sentences(lang, say("faq_in_english", lang), entry.answer), lang)


def closest_faq(entry: FaqEntry, lang: str = "en") -> str:
    """An FAQ entry the router finds likely but not sure: given as the closest answer, with the question it
    answers, so a near miss reads as a pointer rather than a claim, and where to ask if it is not the one.
    """
    translated = translations(lang).get(entry.id) if lang != "en" else None
    return say("closest_faq", lang, question=(translated or entry).question, answer=faq_answer(entry, lang),
               hr=say("ask_hr", lang), it=say("ask_it", lang))


def faq_reply(entry: FaqEntry, sure: bool, lang: str = "en") -> str:
    """An FAQ entry's answer as it is when the router is sure of it, else offered as the closest answer."""
    return faq_answer(entry, lang) if sure else closest_faq(entry, lang)

"""The help desk's fixed replies: someone else's data, a question the handbook does not answer, small talk.

They name where to ask instead (HR through MyHR, the IT service desk), so the product never has to guess.
"""

from __future__ import annotations

from typing import Any

from tools.domain import ASK_HR, ASK_IT, EMPLOYEE_ID
from tools.faq import FaqEntry
from tools.registry import INTENTS, is_personal


def _and(words: list[str]) -> str:
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)


def desk_covers() -> str:
    """What the desk answers about, from each intent's phrase: "your own pay, attendance, leave and employee record,
    company policies and the handbook, and the weather (and what to wear) for your trips".
    """
    own = [s.covers for s in INTENTS.values() if is_personal(s.name)]
    shared = [s.covers for s in INTENTS.values() if not is_personal(s.name)]
    phrases = list(dict.fromkeys([*([f"your own {_and(own)}"] if own else []), *shared]))
    return f"{', '.join(phrases[:-1])}, and {phrases[-1]}" if len(phrases) > 1 else phrases[0]


def out_of_scope() -> str:
    """Said to small talk ("hi", "thanks!", "what can you do?") and to what is not a help-desk matter alike, so it
    reads as an answer to both: what the desk covers, and where to ask about anything else.
    """
    return (f"I'm Brightmart's help desk. I answer questions about {desk_covers()}, and I can set out a draft of a "
            f"work message. For anything else about work, ask {ASK_HR} or {ASK_IT}.")


def unknown_employee(user: str) -> str:
    """The caller's id is not one the backend knows (a signed-in session always has a known one)."""
    return f"I don't know the employee id {user[:12]!r}; please sign in with your own id (E1001 to E1020 in the demo)."


def refusal(question: str, user: str) -> str:
    """Why someone else's personal data is not shared, naming whose when the question gives an id."""
    who = next(iter(sorted({e.upper() for e in EMPLOYEE_ID.findall(question)} - {user})), "another employee")
    return (f"I can only share your own salary, attendance and leave figures, not those of {who}. "
            "They can ask me themselves, or HR can help.")


def not_in_handbook(results: list[Any]) -> str:
    """The grounded reply when the handbook has no clear answer: say so, and where to ask instead."""
    kb = next((r for r in results if r["name"] == "kb_search" and r["ok"]), None)
    passages = ((kb or {}).get("data") or {}).get("passages") or []
    near = passages and float(passages[0].get("score", 0.0)) >= 0.45  # only a section that is at least on topic
    closest = f' The closest section of the handbook is "{passages[0]["title"]}".' if near else ""
    return (f"I couldn't find a clear answer to that in the Brightmart handbook, so I won't guess.{closest} "
            f"For HR questions ask {ASK_HR}; for IT problems contact {ASK_IT}.")


def closest_faq(entry: FaqEntry) -> str:
    """An FAQ entry the router finds likely but not sure: given as the closest answer, with the question it
    answers, so a near miss reads as a pointer rather than a claim, and where to ask if it is not the one.
    """
    return (f'The closest answer in our FAQ ("{entry.question}"): {entry.answer} If that does not cover your '
            f"question, ask {ASK_HR} or {ASK_IT}.")


def faq_reply(entry: FaqEntry, sure: bool) -> str:
    """An FAQ entry's answer as it is when the router is sure of it, else offered as the closest answer."""
    return entry.answer if sure else closest_faq(entry)

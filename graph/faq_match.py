"""FAQ early exit: accept the nearest FAQ entry only when it is both close and not a near miss.

Similarity alone cannot tell "How do I apply for leave?" from "How do I cancel leave?", so a
lexical guard compares the critical words of the question with those of the entry's phrasings:
negations, actions (apply vs cancel), entities (leave types, expense kinds, devices), numbers,
months and years, and personal markers ("left", "my salary"). Any critical word of the question
that the entry never uses, or a negation the entry never has, makes the shortcut step aside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tools.faq import FaqEntry

NEGATION = re.compile(r"\b(not|never|without|no longer|don't|doesn't|isn't|aren't|shouldn't)\b")
GROUPS: dict[str, list[str]] = {
    # canonical critical word -> spellings (whole words; a trailing * matches a prefix)
    "request": ["apply for", "request", "book", "ask for", "take leave", "take time off"],
    "cancel": ["cancel", "withdraw", "revoke", "undo", "retract", "delete"],
    "change": ["change", "modify", "edit", "amend", "reschedule", "move my"],
    "approve": ["approve", "reject", "decline", "sign off"],
    "annual": ["annual", "vacation", "holiday leave"],
    "sick": ["sick", "ill", "illness", "unwell", "doctor*"],
    "maternity": ["maternity", "pregnan*"],
    "paternity": ["paternity", "partner leave", "father"],
    "parental": ["parental"],
    "bereavement": ["bereavement", "funeral", "compassionate", "death"],
    "study": ["study", "exam"],
    "unpaid": ["unpaid"],
    "jury": ["jury", "court"],
    "wedding": ["wedding", "marriage", "marry"],
    "sabbatical": ["sabbatical"],
    "hotel": ["hotel", "accommodation", "lodging"],
    "meal": ["meal", "food", "lunch allowance", "dinner", "per diem"],
    "mileage": ["mileage", "per km", "kilomet*", "driving my"],
    "taxi": ["taxi", "uber", "cab"],
    "car": ["company car", "car lease"],
    "gym": ["gym", "fitness"],
    "dental": ["dental", "dentist"],
    "monitor": ["monitor", "screen"],
    "phone": ["phone", "mobile"],
    "kiosk": ["kiosk", "pin"],
    "manager": ["my team's", "team member's", "my direct report*", "as a manager", "my employees"],
    "personal": ["left", "remaining", "my salary", "my payslip for", "my attendance", "my balance",
                 "did i", "was i", "have i", "my pay for", "my next shift", "my probation end"],
    "weather": ["weather", "forecast", "rain", "temperature"],
    "add": ["add", "include", "enrol*", "enroll*"],
    "remove": ["remove", "opt out", "drop", "stop paying"],
    "keep": ["keep"],
    "trade": ["sell", "cash out", "buy", "purchase extra", "for cash"],
    "status": ["yet", "has my", "did my", "my last", "status of", "how much is in my", "my pot"],
    "commute": ["commute", "commuting"],
    "night": ["night"],
    "break": ["break", "breaks"],
    "publish": ["publish"],
    "customer": ["customer", "customers", "shoplift*", "theft", "stolen goods"],
    "volunteer": ["volunteer*", "charity"],
    "family": ["family", "relatives", "spouse", "children", "kids"],
    "brand": ["brand", "brands", "partner shops"],
    "raise": ["pay rise", "raise", "salary increase"],
    "ceo": ["ceo", "chief executive", "board"],
    **{c: [c] for c in ["spain", "germany", "france", "netherlands", "italy", "portugal", "austria", "ireland",
                        "belgium", "uk", "spanish", "german", "french", "dutch", "italian", "portuguese", "irish"]},
    **{city.lower(): [city.lower()] for city in ["Amsterdam", "Berlin", "Paris", "Madrid", "Milan", "Lisbon",
                                                 "Vienna", "Dublin", "London", "Rome", "Barcelona", "Munich"]},
}
_SPELLING = [(canon, re.compile(r"\b" + (re.escape(s[:-1]) if s.endswith("*") else re.escape(s) + r"\b")))
             for canon, spellings in GROUPS.items() for s in spellings]
ACTIONS = {"request", "cancel", "change", "approve", "manager", "personal", "status", "add", "remove",
           "keep", "trade", "publish", "!neg"}
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?")
MONTH_OR_DAY = re.compile(r"\b(january|february|march|april|june|july|august|september|october|november|"
                          r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|"
                          r"tomorrow|last year|next year|this year)s?\b")


@lru_cache(maxsize=4096)
def critical_words(text: str) -> frozenset[str]:
    """The words whose change changes the answer."""
    low = text.lower()
    words = {canon for canon, pat in _SPELLING if pat.search(low)}
    words |= {f"#{n}" for n in NUMBER.findall(low)}
    words |= {f"@{m}" for m in MONTH_OR_DAY.findall(low)}
    if NEGATION.search(low):
        words.add("!neg")
    return frozenset(words)


@dataclass(frozen=True)
class FaqDecision:
    """Whether to answer from the FAQ, and why (for the trace and the calibration report)."""

    entry: FaqEntry | None
    score: float
    accepted: bool
    reason: str


def guard(question: str, entry: FaqEntry) -> str | None:
    """None when the entry fits the question's critical words; otherwise the mismatch."""
    q = critical_words(question)
    allowed: set[str] = set()
    for text in entry.phrasings:
        allowed |= critical_words(text)
    answer_words = critical_words(entry.answer)
    # What the answer itself states (figures, dates, entities) may be asked about ("Is payday on the
    # 25th?"); actions, negations and personal markers must come from the phrasings.
    allowed |= answer_words - ACTIONS
    missing = sorted(q - allowed)
    return f"question mentions {', '.join(missing)} that the FAQ entry does not" if missing else None


def decide(question: str, candidates: list[tuple[FaqEntry, float]], threshold: float,
           margin: float = 0.03) -> FaqDecision:
    """Accept the best candidate when its similarity clears the threshold, no other entry is nearly as
    close (an ambiguous match steps aside), and the guard passes.
    """
    if not candidates:
        return FaqDecision(None, 0.0, False, "no FAQ entries indexed")
    entry, score = candidates[0]
    if score < threshold:
        return FaqDecision(entry, score, False, f"similarity {score:.3f} below threshold {threshold:.3f}")
    rival = next((s for e, s in candidates[1:] if e.id != entry.id), None)
    if rival is not None and score - rival < margin:
        return FaqDecision(entry, score, False, f"ambiguous: another entry scores {rival:.3f}")
    mismatch = guard(question, entry)
    if mismatch:
        return FaqDecision(entry, score, False, mismatch)
    return FaqDecision(entry, score, True, "match")

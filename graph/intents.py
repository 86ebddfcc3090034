"""Intent detection: which known request a question is, by patterns that are cheap and testable.

A question matching exactly one known intent takes that intent's template; several intents make a
compound request; none makes an unknown one. Compound and unknown requests go to the LLM planner.
Requests for another employee's personal data are recognized here and refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PERSONAL = {"salary", "attendance", "leave_balance"}
PATTERNS: dict[str, re.Pattern[str]] = {k: re.compile(v) for k, v in {
    "salary": r"\b(salary|salaries|payslips?|pay ?slips?|pay ?checks?|pay ?cheques?|wages?|net pay|gross pay|"
              r"take[- ]home|how much (did|do|will) i (get )?(paid|earn)|my (monthly )?pay\b|was i paid|"
              r"did i earn|my earnings|my bonus)",
    "attendance": r"\b(attendance|days? (i was )?(present|absent)|absences?|was i (late|absent)|late arrivals?|"
                  r"times? (was i|i was) late|overtime hours|hours? (did|have) i (work|worked)|"
                  r"days? (did|have) i (work|worked)|(days|hours) i worked|worked days|my overtime|missed days)",
    "leave_balance": r"\b(leave balance|(holiday|vacation|pto|sick( leave)?|annual leave) balance|"
                     r"(days?|leave|holidays?|vacation|pto)( days)? (do i have |have i got |i have )?(left|remaining)|"
                     r"remaining (annual )?(leave|days|holidays?|vacation)|how many (annual |sick |vacation |"
                     r"holiday |leave )*(leave )?days (do|have|can) i( still)? (have|got|take|left)|"
                     r"how much (annual )?(leave|holiday|vacation) (do|have) i|days off (do i have )?left|"
                     r"my leave)",
    "leave_policy": r"\b(maternity|paternity|parental|bereavement|compassionate|study|unpaid|sick|annual|"
                    r"partner) leave\b.*\b(policy|rules?|entitle\w*|how (long|many|much)|paid|pay|allowed|"
                    r"eligib\w*|get|work)|\b(policy|rules?) (on|for|about) \w+ leave|"
                    r"\b(how (long|many|much)|entitle\w*|rules?|policy)\b.{0,30}\b(maternity|paternity|parental|"
                    r"bereavement|compassionate|study|unpaid|sick|partner) leave\b",
    # Weather words used as adjectives ("a poem about a rainy Monday") are not a forecast request.
    "weather": r"\b(weather|forecast|temperature|degrees|how (cold|hot|warm) (is|will)|"
               r"(will|is|going to|gonna|does) it (be )?(rain|snow|sunny|windy|cold|hot|warm)\w*|"
               r"(rain|snow)(ing)? (in|tomorrow|today|tonight|this|on)|"
               r"(cold|hot|warm|chilly) (outside|out|tomorrow|today))\b",
    "clothing": r"\b(wear|jacket|coat|umbrella|clothes|clothing|outfit|layers|dress (for|warmly))\b",
    "policy_lookup": r"\b(policy|policies|handbook|procedure|guidelines?|what (are|is) the rules?|"
                     r"how do i|how can i|what is the process|where can i find|am i allowed|can i)\b",
}.items()}
_WEATHER_CONTEXT = re.compile(r"\b(weather|today|tomorrow|tonight|outside|this weekend|monday|tuesday|"
                              r"wednesday|thursday|friday|saturday|sunday|rain|cold|snow|sun|in [A-Z])", re.I)
_OTHER_PERSON = re.compile(
    r"\b(his|her|their|colleague'?s?|co-?worker'?s?|manager'?s|boss'?s|someone else'?s|other employees?'?s?|"
    r"team ?mates?'?s?|everyone'?s)\b[^.?!]{0,40}\b(salary|salaries|pay|payslips?|attendance|leave balance|"
    r"wages?|bonus)", re.I)
_NAMED_PERSON = re.compile(r"\b([A-Z][a-z]+)'s\s+(salary|pay|payslip|attendance|leave|wages?|bonus)\b")
_EMPLOYEE_ID = re.compile(r"\bE\d{4}\b", re.I)
_FOLLOW_UP = re.compile(r"^\s*(and|what about|how about|and what about|same for|also|ok,? and)\b", re.I)


@dataclass
class Detection:
    """What the router learned from the text."""

    intents: list[str] = field(default_factory=list)
    refusal: str | None = None
    follow_up: bool = False

    @property
    def label(self) -> str | None:
        """One string for the state: `salary`, `weather_clothing`, `salary+weather`, or None."""
        return "+".join(self.intents) or None


_TOOL_EVIDENCE = {
    "salary": ("salary",), "attendance": ("attendance",), "leave_balance": ("leave_balance",),
    "leave_policy": ("leave_policy", "leave_balance"), "weather": ("weather", "clothing"),
    "clothing_advice": ("clothing",),
}


def tool_evidence(tool: str, text: str) -> bool:
    """Whether the question gives any sign of needing a tool (kb_search always qualifies).

    A small model's plan often adds tools at random; a personal or weather tool the question does not
    hint at only adds latency, and personal data nobody asked for, to the answer.
    """
    if tool not in _TOOL_EVIDENCE:
        return True
    low = text.lower()
    return any(PATTERNS[p].search(low) for p in _TOOL_EVIDENCE[tool]) or (
        tool == "leave_policy" and " leave" in low)


def detect(text: str, user: str, previous_intent: str | None = None) -> Detection:
    """Intents of a question, or a refusal when it asks for someone else's personal data."""
    low = text.lower()
    found = [name for name, pat in PATTERNS.items() if pat.search(low)]
    personal_asked = [i for i in found if i in PERSONAL]
    others = {e.upper() for e in _EMPLOYEE_ID.findall(text)} - {user.upper()}
    named = [m for m in _NAMED_PERSON.findall(text) if m[0].lower() not in {"today", "tomorrow", "month"}]
    if (others and (personal_asked or re.search(r"salary|pay|attendance|leave|bonus|wage", low))) \
            or _OTHER_PERSON.search(text) or named:
        who = sorted(others)[0] if others else "another employee"
        return Detection(found, refusal=f"I can only share your own salary, attendance and leave figures, "
                                        f"not those of {who}. They can ask me themselves, or HR can help.")
    if "clothing" in found:
        found.remove("clothing")
        if "weather" in found or _WEATHER_CONTEXT.search(text):
            found = [i for i in found if i != "weather"] + ["weather_clothing"]
    if "leave_policy" in found and "leave_balance" in found:
        found.remove("leave_policy")
    if "policy_lookup" in found and len(found) > 1:
        found.remove("policy_lookup")  # a concrete intent wins over the generic look-up
    if not found and previous_intent and _FOLLOW_UP.search(text):
        return Detection(previous_intent.split("+"), follow_up=True)
    return Detection(found)

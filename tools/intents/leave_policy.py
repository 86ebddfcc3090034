"""The company's rules for one leave type ("how much paternity leave do I get?"): the `leave_policy` tool, the
intent, its answer and its fake. Which leave a question means is read by `graph/leave_slots.py` from `tools/domain.py`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools.company import translated_answer
from tools.domain import LEAVE_FAQ_ENTRY, LeaveType
from tools.i18n import amounts_in, say, sentences
from tools.specs import Fake, IntentSpec, tool

_LEAVE_TYPE = {"leave_type": "$leave_type"}


class LeavePolicyArgs(BaseModel):
    """Arguments of `leave_policy`."""

    leave_type: LeaveType


def render_leave_policy(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """One leave type's rules. The backend states them in English; in another language the answer is the translated
    FAQ entry that states the same facts (`tools/domain.py:LEAVE_FAQ_ENTRY`), or, with none translated, the backend's
    words introduced by a sentence in the asker's language.
    """
    p, lang = r["leave_policy"], slots.get("lang", "en")
    notes = f" {p['notes'][0].upper()}{p['notes'][1:]}." if p.get("notes") else ""
    english = (f"{p['leave_type'].title()} leave: {p['entitlement']}, {p['pay']}. "
               f"{p['notice'][0].upper()}{p['notice'][1:]}.{notes}")
    if lang == "en":
        return english
    entry = LEAVE_FAQ_ENTRY.get(p["leave_type"])
    translated = translated_answer(entry, lang) if entry else None
    return amounts_in(translated or sentences(lang, say("policy_in_english", lang), english), lang)


def fake_leave_policy(args: dict[str, Any]) -> dict[str, Any]:
    """The same rules for every leave type."""
    return {"leave_type": args.get("leave_type"), "entitlement": "5 days", "pay": "full pay", "notice": "ask",
            "notes": ""}


LEAVE_POLICY = tool("leave_policy", "Company rules for one type of leave: entitlement, pay, notice and notes.",
                    LeavePolicyArgs, "/leave/policy", {"entitlement"}, ttl_s=86400, slot_args=_LEAVE_TYPE)
INTENT = IntentSpec(
    "leave_policy", (("leave_policy", "leave_policy", _LEAVE_TYPE),), ("leave_type",),
    renderer=render_leave_policy, covers="company policies and the handbook",
    description="company rules for ONE leave type (annual, sick, maternity, paternity/partner, parental, "
                "bereavement/compassionate, study, unpaid): how many days or weeks employees get, whether it is "
                "paid, how much notice")

SPECS = (LEAVE_POLICY, INTENT)
FAKES: dict[str, Fake] = {"leave_policy": fake_leave_policy}

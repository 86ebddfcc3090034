"""The caller's own leave balance ("how many holiday days do I have left?"): the `leave_balance` tool, the intent,
its answer and its fake.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools.i18n import say
from tools.intents.shared import EMPLOYEE, MINE, employee_number
from tools.specs import Fake, IntentSpec, tool


class LeaveBalanceArgs(BaseModel):
    """Arguments of `leave_balance`."""

    employee: str = EMPLOYEE


def render_leave_balance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Leave balance."""
    b, lang = r["leave_balance"], slots.get("lang", "en")
    sick = say("sick_days_left", lang, left=b["sick_remaining"])
    if isinstance(b.get("sick_used"), int):  # "how many sick days have I used?" is answered, not left to sums
        sick = say("sick_days_left_of", lang, left=b["sick_remaining"], total=b["sick_used"] + b["sick_remaining"],
                   used=b["sick_used"])
    return say("leave_balance", lang, left=b["annual_remaining"], entitled=b["annual_entitled"],
               carried=b["carried_over"], taken=b["annual_taken"], pending=b["annual_pending"], sick=sick)


def fake_leave_balance(args: dict[str, Any]) -> dict[str, Any]:
    """A balance whose remaining days vary by employee."""
    return {"annual_entitled": 25, "annual_taken": 3, "annual_pending": 1, "carried_over": 2,
            "annual_remaining": employee_number(args) - 1000, "sick_used": 1, "sick_remaining": 11}


LEAVE_BALANCE = tool("leave_balance", "Leave balance of the calling employee: annual days entitled, taken, pending, "
                     "carried over and remaining; sick days used and remaining.", LeaveBalanceArgs, "/leave/balance",
                     {"annual_remaining"}, ttl_s=300, personal=True, slot_args=MINE)
INTENT = IntentSpec(
    "leave_balance", (("leave_balance", "leave_balance", MINE),),
    renderer=render_leave_balance, covers="leave",
    description="the caller's OWN leave balance: annual/vacation/PTO days left, taken, pending, carried over; sick "
                "days used or left")

SPECS = (LEAVE_BALANCE, INTENT)
FAKES: dict[str, Fake] = {"leave_balance": fake_leave_balance}

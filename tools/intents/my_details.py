"""What the company's records say about the caller ("what is my employee id?"): the `employee_details` tool, the
`my_details` intent, its answer and its fake. A manager or HR contact is not in the record; asked about, the reply
says so and where to ask.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools.domain import CONTACT_PATTERNS, city_name
from tools.i18n import and_list, say, sentences
from tools.intents.shared import EMPLOYEE, MINE
from tools.specs import Fake, IntentSpec, tool


class EmployeeArgs(BaseModel):
    """Arguments of `employee_details`."""

    employee: str = EMPLOYEE


def render_my_details(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """The caller's record; a manager or HR contact asked about is not in it, and the reply says so."""
    e, lang = r["employee_details"], slots.get("lang", "en")
    text = say("my_record", lang, id=e["id"], name=e["name"], role=e["role"], department=e["department"],
               city=city_name(e["city"], lang))
    missing = [say(f"contact.{who}", lang) for who, pattern in CONTACT_PATTERNS.items()
               if pattern.search(slots.get("question") or "")]
    if missing:
        text = sentences(lang, text, say("not_on_record" if len(missing) == 1 else "not_on_record_many", lang,
                                         who=and_list(missing, lang), hr=say("ask_hr", lang)))
    return text


def fake_employee_details(args: dict[str, Any]) -> dict[str, Any]:
    """The caller's record, named after their id."""
    return {"id": args.get("employee"), "name": f"Person {args.get('employee')}", "role": "Analyst",
            "department": "IT", "city": "Berlin"}


EMPLOYEE_DETAILS = tool("employee_details", "The calling employee's record: employee id, name, role, department and "
                        "the city they work in.", EmployeeArgs, "/employee/details", {"id", "name", "role"},
                        ttl_s=86400, personal=True, slot_args=MINE)
INTENT = IntentSpec(
    "my_details", (("employee_details", "employee_details", MINE),),
    renderer=render_my_details, covers="employee record",
    description="what the company's records say about the caller: their employee id, name, job title, department, "
                "work location; who their manager or HR contact is (not on record: the reply says so and where to "
                "ask)")

SPECS = (EMPLOYEE_DETAILS, INTENT)
FAKES: dict[str, Fake] = {"employee_details": fake_employee_details}

"""The caller's own attendance ("how many days was I late in March?"): the `attendance` tool, the intent, its
answer for a month and over a period, and its fake. The records are monthly, so a question about a week or a day
is answered with the month and told so.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel

from tools.formatting import day_label, day_text, first_day, month_name, months_label
from tools.intents.shared import EMPLOYEE, MONTH, MONTHLY, employee_number
from tools.specs import Fake, IntentSpec, tool


class AttendanceArgs(BaseModel):
    """Arguments of `attendance`."""

    employee: str = EMPLOYEE
    month: str = MONTH


def span_note(slots: dict[str, Any]) -> str:
    """For attendance asked about a week or a day: the records are monthly, and the reply says so."""
    if not slots.get("span"):
        return ""
    start, end = (date.fromisoformat(d) for d in slots["span"])
    if start == end:
        when = f"on {day_text(start)}"
    elif (start.year, start.month) == (end.year, end.month):
        when = f"in the week of {start.day}-{day_text(end)}" if (end - start).days == 6 else \
            f"between {start.day} and {day_text(end)}"
    else:
        when = f"between {day_text(start, start.year != end.year)} and {day_text(end)}"
    return f" Attendance is recorded by month, so these figures cannot show what happened {when}."


def render_attendance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Attendance figures for the month (the current one to date), and what monthly figures cannot tell."""
    a = r["attendance"]
    to_date = f" so far (to {day_label(a['through'])})" if a.get("through") else ""
    return (f"Your attendance for {month_name(slots['month'])}{to_date}: present {a['present_days']} of "
            f"{a['working_days']} working days, {a['absent_days']} absent, {a['late_arrivals']} late "
            f"arrivals, {a['overtime_hours']} overtime hours.{span_note(slots)}")


def summarize_attendance(slots: dict[str, Any], by_month: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Attendance over a period: the totals, then each month's figures (the current one to date)."""
    rows = {m: r["attendance"] for m, r in by_month.items()}

    def total(k: str) -> float:
        return sum(a[k] for a in rows.values())

    def one(m: str, a: dict[str, Any]) -> str:
        to_date = f" (to {day_label(a['through'])})" if a.get("through") else ""
        return (f"{first_day(m).strftime('%B')}{to_date} present {a['present_days']} of {a['working_days']}, "
                f"{a['absent_days']} absent, {a['late_arrivals']} late, {a['overtime_hours']} overtime hours")

    return (f"Your attendance for {months_label(list(rows))} ({len(rows)} months): present {total('present_days'):g} "
            f"of {total('working_days'):g} working days, {total('absent_days'):g} absent, {total('late_arrivals'):g} "
            f"late arrivals, {round(total('overtime_hours'), 1):g} overtime hours in total. Each month: "
            f"{'; '.join(one(m, a) for m, a in rows.items())}.{span_note(slots)}")


def fake_attendance(args: dict[str, Any]) -> dict[str, Any]:
    """A month's attendance whose late arrivals vary by employee."""
    return {"working_days": 21, "present_days": 20, "absent_days": 1, "late_arrivals": employee_number(args) % 5,
            "overtime_hours": 2.0}


ATTENDANCE = tool("attendance", "Attendance of the calling employee for one month: working days, days present, "
                  "absences, late arrivals and overtime hours.", AttendanceArgs, "/attendance",
                  {"present_days", "working_days"}, ttl_s=3600, personal=True, slot_args=MONTHLY)
INTENT = IntentSpec(
    "attendance", (("attendance", "attendance", MONTHLY),), ("month",),
    renderer=render_attendance, summary=summarize_attendance, covers="attendance",
    description="the caller's OWN attendance record for a month: days present or absent, days missed, late "
                "arrivals, overtime HOURS worked, days worked")

SPECS = (ATTENDANCE, INTENT)
FAKES: dict[str, Fake] = {"attendance": fake_attendance}

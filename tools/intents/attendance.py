"""The caller's own attendance ("how many days was I late in March?"): the `attendance` tool, the intent, its
answer for a month and over a period, and its fake. The records are monthly, so a question about a week or a day
is answered with the month and told so.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel

from tools.formatting import day_label, day_text, month_name, months_label
from tools.i18n import number, say, sentences
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
    lang = slots.get("lang", "en")
    start, end = (date.fromisoformat(d) for d in slots["span"])
    if start == end:
        when = say("on_day", lang, day=day_text(start, lang=lang))
    elif (start.year, start.month) == (end.year, end.month):
        when = say("in_week_of" if (end - start).days == 6 else "between_days_of_month", lang, start=start.day,
                   end=day_text(end, lang=lang))
    else:
        when = say("between_days", lang, start=day_text(start, start.year != end.year, lang),
                   end=day_text(end, lang=lang))
    return say("attendance_by_month", lang, when=when)


def _count(x: float, lang: str, whole: bool = False) -> str:
    """A figure as the record gives it ("2.0" in English, as the answers always said it; "2" / "2,5" elsewhere)."""
    if lang == "en":
        return f"{x:g}" if whole else str(x)
    return number(x, lang)


def render_attendance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Attendance figures for the month (the current one to date), and what monthly figures cannot tell."""
    a, lang = r["attendance"], slots.get("lang", "en")
    to_date = say("so_far_to", lang, day=day_label(a["through"], lang)) if a.get("through") else ""
    return sentences(lang, say("attendance_month", lang, month=month_name(slots["month"], lang=lang), to_date=to_date,
                               present=_count(a["present_days"], lang), working=_count(a["working_days"], lang),
                               absent=_count(a["absent_days"], lang), late=_count(a["late_arrivals"], lang),
                               overtime=_count(a["overtime_hours"], lang)), span_note(slots))


def summarize_attendance(slots: dict[str, Any], by_month: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Attendance over a period: the totals, then each month's figures (the current one to date)."""
    lang = slots.get("lang", "en")
    rows = {m: r["attendance"] for m, r in by_month.items()}

    def total(k: str) -> str:
        return _count(round(sum(a[k] for a in rows.values()), 1), lang, whole=True)

    def one(m: str, a: dict[str, Any]) -> str:
        to_date = say("to_day", lang, day=day_label(a["through"], lang)) if a.get("through") else ""
        return say("attendance_each_month", lang, month=month_name(m, False, lang), to_date=to_date,
                   present=_count(a["present_days"], lang), working=_count(a["working_days"], lang),
                   absent=_count(a["absent_days"], lang), late=_count(a["late_arrivals"], lang),
                   overtime=_count(a["overtime_hours"], lang))

    return sentences(lang, say("attendance_period", lang, months=months_label(list(rows), lang), count=len(rows),
                               present=total("present_days"), working=total("working_days"),
                               absent=total("absent_days"), late=total("late_arrivals"),
                               overtime=total("overtime_hours"),
                               each=say("list_separator", lang).join(one(m, a) for m, a in rows.items())),
                     span_note(slots))


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

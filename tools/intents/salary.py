"""The caller's own payslip ("what was my net pay in March?"): the `salary` tool, the intent, its answer for a
month and over a period, and its fake.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools.domain import payslip_day
from tools.formatting import day_text, eur, first_day, month_name, months_label
from tools.i18n import say, sentences
from tools.intents.shared import EMPLOYEE, MONTH, MONTHLY, employee_number
from tools.specs import Fake, IntentSpec, tool


class SalaryArgs(BaseModel):
    """Arguments of `salary`."""

    employee: str = EMPLOYEE
    month: str = MONTH


def not_out_note(slots: dict[str, Any]) -> str:
    """Months of a period whose payslip is not out yet, and when it will be."""
    late, lang = slots.get("not_out") or [], slots.get("lang", "en")
    if not late:
        return ""
    first = first_day(late[0])
    day = payslip_day(first.year, first.month)
    return (say("salary_not_out", lang, months=months_label(late, lang), day=day_text(day, False, lang))
            if len(late) == 1 else say("salary_not_out_many", lang, months=months_label(late, lang)))


def render_salary(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Payslip figures for the month."""
    s, lang = r["salary"], slots.get("lang", "en")
    extra = say("salary_bonus", lang, bonus=eur(s["bonus"], lang)) if s.get("bonus") else ""
    return sentences(lang, say("salary_month", lang, month=month_name(slots["month"], lang=lang),
                               gross=eur(s["gross"], lang), base=eur(s["base"], lang),
                               overtime=eur(s["overtime_pay"], lang), bonus=extra, tax=eur(s["tax"], lang),
                               pension=eur(s["pension"], lang), net=eur(s["net"], lang)), not_out_note(slots))


def summarize_salary(slots: dict[str, Any], by_month: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Payslips over a period ("How much bonus did I get in Q1 2026?"): each figure's total, then each month's net
    pay (and bonus, where one was paid), every month named so no one reads a total as covering months it does not.
    """
    lang = slots.get("lang", "en")
    slips = {m: r["salary"] for m, r in by_month.items()}
    total = {k: round(sum(s.get(k) or 0.0 for s in slips.values()), 2)
             for k in ("base", "overtime_pay", "bonus", "gross", "tax", "pension", "net")}
    bonus = total["bonus"] > 0
    each = say("list_separator", lang).join(
        say("salary_each_month", lang, month=month_name(m, False, lang), net=eur(s["net"], lang))
        + (say("salary_bonus", lang, bonus=eur(s.get("bonus") or 0.0, lang)) if bonus else "")
        for m, s in slips.items())
    return sentences(lang, say("salary_period", lang, months=months_label(list(slips), lang), count=len(slips),
                               gross=eur(total["gross"], lang), base=eur(total["base"], lang),
                               overtime=eur(total["overtime_pay"], lang), bonus=eur(total["bonus"], lang),
                               tax=eur(total["tax"], lang), pension=eur(total["pension"], lang),
                               net=eur(total["net"], lang), each=each), not_out_note(slots))


def fake_salary(args: dict[str, Any]) -> dict[str, Any]:
    """A payslip whose base pay is the employee's number."""
    n = employee_number(args)
    return {"base": n, "overtime_pay": 10.0, "bonus": 0.0, "gross": n + 10.0, "tax": 1.0, "pension": 2.0,
            "net": n + 7.0, "currency": "EUR"}


SALARY = tool("salary", "Payslip of the calling employee for one month: gross, overtime pay, bonus, tax, "
              "pension and net pay in EUR.", SalaryArgs, "/salary", {"net", "gross", "base"}, ttl_s=3600,
              personal=True, slot_args=MONTHLY)
INTENT = IntentSpec(
    "salary", (("salary", "salary", MONTHLY),), ("month",),
    unsaid_month="latest_payslip",  # "my salary" on 1 December: November's, December's is not out
    renderer=render_salary, summary=summarize_salary, covers="pay",
    description="the caller's OWN pay: payslip, net/gross, what they earned or were paid in a month, their overtime "
                "pay, their bonus on a payslip, tax or pension deducted from their pay")

SPECS = (SALARY, INTENT)
FAKES: dict[str, Fake] = {"salary": fake_salary}

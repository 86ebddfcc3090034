"""The caller's own payslip ("what was my net pay in March?"): the `salary` tool, the intent, its answer for a
month and over a period, and its fake.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools.domain import payslip_day
from tools.formatting import day_text, eur, first_day, month_name, months_label
from tools.intents.shared import EMPLOYEE, MONTH, MONTHLY, employee_number
from tools.specs import Fake, IntentSpec, tool


class SalaryArgs(BaseModel):
    """Arguments of `salary`."""

    employee: str = EMPLOYEE
    month: str = MONTH


def not_out_note(slots: dict[str, Any]) -> str:
    """Months of a period whose payslip is not out yet, and when it will be."""
    late = slots.get("not_out") or []
    if not late:
        return ""
    first = first_day(late[0])
    day = payslip_day(first.year, first.month)
    return (f" The payslip for {months_label(late)} is not out yet (it appears in MyHR on {day_text(day, False)})."
            if len(late) == 1 else f" The payslips for {months_label(late)} are not out yet.")


def render_salary(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Payslip figures for the month."""
    s = r["salary"]
    extra = f", bonus {eur(s['bonus'])}" if s.get("bonus") else ""
    return (f"Your payslip for {month_name(slots['month'])}: gross {eur(s['gross'])} "
            f"(base {eur(s['base'])}, overtime {eur(s['overtime_pay'])}{extra}), "
            f"tax {eur(s['tax'])}, pension {eur(s['pension'])}, net pay {eur(s['net'])}.{not_out_note(slots)}")


def summarize_salary(slots: dict[str, Any], by_month: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Payslips over a period ("How much bonus did I get in Q1 2026?"): each figure's total, then each month's net
    pay (and bonus, where one was paid), every month named so no one reads a total as covering months it does not.
    """
    slips = {m: r["salary"] for m, r in by_month.items()}
    total = {k: round(sum(s.get(k) or 0.0 for s in slips.values()), 2)
             for k in ("base", "overtime_pay", "bonus", "gross", "tax", "pension", "net")}
    bonus = total["bonus"] > 0
    each = "; ".join(f"{first_day(m).strftime('%B')} net {eur(s['net'])}"
                     + (f", bonus {eur(s.get('bonus') or 0.0)}" if bonus else "") for m, s in slips.items())
    return (f"Your payslips for {months_label(list(slips))} ({len(slips)} months): gross {eur(total['gross'])} "
            f"(base {eur(total['base'])}, overtime {eur(total['overtime_pay'])}, bonus {eur(total['bonus'])}), "
            f"tax {eur(total['tax'])}, pension {eur(total['pension'])}, net pay {eur(total['net'])} in total. "
            f"Each month: {each}.{not_out_note(slots)}")


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

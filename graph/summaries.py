"""Answers over several months ("How much bonus did I get in Q1 2026?"): each figure's total, then every
month's own, straight from the tool results. The months are always named, so no one reads a total as
covering months it does not.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from tools.domain import payslip_day

ByMonth = dict[str, dict[str, dict[str, Any]]]  # month -> call id -> result data


def eur(x: float) -> str:
    """An amount as the templates write it."""
    return f"EUR {x:,.2f}"


def _first(month: str) -> date:
    y, m = map(int, month.split("-"))
    return date(y, m, 1)


def month_name(month: str, with_year: bool = True) -> str:
    """"2026-03" as "March 2026" (or "March", as people say it in a question)."""
    return _first(month).strftime("%B %Y" if with_year else "%B")


def months_label(months: list[str]) -> str:
    """"January to March 2026", "December 2025 to February 2026", or the months listed when not in a row."""
    firsts = [_first(m) for m in months]
    if len(months) == 1:
        return month_name(months[0])
    index = [d.year * 12 + d.month for d in firsts]
    in_a_row = index == list(range(index[0], index[0] + len(index)))
    one_year = len({d.year for d in firsts}) == 1
    names = [d.strftime("%B") if one_year else d.strftime("%B %Y") for d in firsts]
    year = f" {firsts[0].year}" if one_year else ""
    if in_a_row and len(names) > 2:
        return f"{names[0]} to {names[-1]}{year}"
    return f"{', '.join(names[:-1])} and {names[-1]}{year}"


def _day(d: date, year: bool = True) -> str:
    return f"{d.day} {d.strftime('%B')}" + (f" {d.year}" if year else "")


def day_label(iso: str) -> str:
    """"2026-12-02" as "2 December"."""
    return _day(date.fromisoformat(iso), False)


def span_note(slots: dict[str, Any]) -> str:
    """For attendance asked about a week or a day: the records are monthly, and the reply says so."""
    if not slots.get("span"):
        return ""
    start, end = (date.fromisoformat(d) for d in slots["span"])
    if start == end:
        when = f"on {_day(start)}"
    elif (start.year, start.month) == (end.year, end.month):
        when = f"in the week of {start.day}-{_day(end)}" if (end - start).days == 6 else \
            f"between {start.day} and {_day(end)}"
    else:
        when = f"between {_day(start, start.year != end.year)} and {_day(end)}"
    return f" Attendance is recorded by month, so these figures cannot show what happened {when}."


def not_out_note(slots: dict[str, Any]) -> str:
    """Months of a period whose payslip is not out yet, and when it will be."""
    late = slots.get("not_out") or []
    if not late:
        return ""
    first = _first(late[0])
    day = payslip_day(first.year, first.month)
    return (f" The payslip for {months_label(late)} is not out yet (it appears in MyHR on {_day(day, False)})."
            if len(late) == 1 else f" The payslips for {months_label(late)} are not out yet.")


def summarize_salary(slots: dict[str, Any], by_month: ByMonth) -> str:
    """Payslips over a period: each figure's total, then each month's net pay (and bonus, where one was paid)."""
    slips = {m: r["salary"] for m, r in by_month.items()}
    total = {k: round(sum(s.get(k) or 0.0 for s in slips.values()), 2)
             for k in ("base", "overtime_pay", "bonus", "gross", "tax", "pension", "net")}
    bonus = total["bonus"] > 0
    each = "; ".join(f"{_first(m).strftime('%B')} net {eur(s['net'])}" + (f", bonus {eur(s.get('bonus') or 0.0)}"
                                                                          if bonus else "") for m, s in slips.items())
    return (f"Your payslips for {months_label(list(slips))} ({len(slips)} months): gross {eur(total['gross'])} "
            f"(base {eur(total['base'])}, overtime {eur(total['overtime_pay'])}, bonus {eur(total['bonus'])}), "
            f"tax {eur(total['tax'])}, pension {eur(total['pension'])}, net pay {eur(total['net'])} in total. "
            f"Each month: {each}.{not_out_note(slots)}")


def summarize_attendance(slots: dict[str, Any], by_month: ByMonth) -> str:
    """Attendance over a period: the totals, then each month's figures (the current one to date)."""
    rows = {m: r["attendance"] for m, r in by_month.items()}

    def total(k: str) -> float:
        return sum(a[k] for a in rows.values())

    def one(m: str, a: dict[str, Any]) -> str:
        to_date = f" (to {day_label(a['through'])})" if a.get("through") else ""
        return (f"{_first(m).strftime('%B')}{to_date} present {a['present_days']} of {a['working_days']}, "
                f"{a['absent_days']} absent, {a['late_arrivals']} late, {a['overtime_hours']} overtime hours")

    return (f"Your attendance for {months_label(list(rows))} ({len(rows)} months): present {total('present_days'):g} "
            f"of {total('working_days'):g} working days, {total('absent_days'):g} absent, {total('late_arrivals'):g} "
            f"late arrivals, {round(total('overtime_hours'), 1):g} overtime hours in total. Each month: "
            f"{'; '.join(one(m, a) for m, a in rows.items())}.{span_note(slots)}")


SUMMARIES = {"salary": summarize_salary, "attendance": summarize_attendance}

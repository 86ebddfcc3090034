"""The known intents' answers: one function per intent, writing the figures of its tool results into a
sentence, exactly as the backend gave them. An intent's entry (`tools/registry.py:INTENTS`) names its
renderer by key in `RENDERERS`; `graph/templates.py` calls it with the slots and the results by call id.
"""

from __future__ import annotations

from typing import Any

from graph.summaries import day_label, eur, month_name, not_out_note, span_note
from tools.domain import ASK_HR, CONTACT_PATTERNS
from tools.registry import Renderer


def render_salary(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Payslip figures for the month."""
    s = r["salary"]
    extra = f", bonus {eur(s['bonus'])}" if s.get("bonus") else ""
    return (f"Your payslip for {month_name(slots['month'])}: gross {eur(s['gross'])} "
            f"(base {eur(s['base'])}, overtime {eur(s['overtime_pay'])}{extra}), "
            f"tax {eur(s['tax'])}, pension {eur(s['pension'])}, net pay {eur(s['net'])}.{not_out_note(slots)}")


def render_attendance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Attendance figures for the month (the current one to date), and what monthly figures cannot tell."""
    a = r["attendance"]
    to_date = f" so far (to {day_label(a['through'])})" if a.get("through") else ""
    return (f"Your attendance for {month_name(slots['month'])}{to_date}: present {a['present_days']} of "
            f"{a['working_days']} working days, {a['absent_days']} absent, {a['late_arrivals']} late "
            f"arrivals, {a['overtime_hours']} overtime hours.{span_note(slots)}")


def render_leave_balance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Leave balance."""
    b = r["leave_balance"]
    sick = f"{b['sick_remaining']} paid sick days remaining"
    if isinstance(b.get("sick_used"), int):  # "how many sick days have I used?" is answered, not left to sums
        sick = f"{b['sick_remaining']} of {b['sick_used'] + b['sick_remaining']} paid sick days remaining " \
               f"({b['sick_used']} used)"
    return (f"You have {b['annual_remaining']} days of annual leave left ({b['annual_entitled']} entitled + "
            f"{b['carried_over']} carried over, {b['annual_taken']} taken, {b['annual_pending']} pending), "
            f"and {sick}.")


def render_leave_policy(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """One leave type's rules."""
    p = r["leave_policy"]
    notes = f" {p['notes'][0].upper()}{p['notes'][1:]}." if p.get("notes") else ""
    return (f"{p['leave_type'].title()} leave: {p['entitlement']}, {p['pay']}. "
            f"{p['notice'][0].upper()}{p['notice'][1:]}.{notes}")


def render_my_details(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """The caller's record; a manager or HR contact asked about is not in it, and the reply says so."""
    e = r["employee_details"]
    text = (f"Your record: employee id {e['id']}, {e['name']}, {e['role']} in {e['department']}, "
            f"based in {e['city']}.")
    missing = [who for who, pattern in CONTACT_PATTERNS.items() if pattern.search(slots.get("question") or "")]
    if missing:
        text += (f" Your {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the records the "
                 f"help desk reads: ask {ASK_HR}.")
    return text


def _weather_sentence(w: dict[str, Any]) -> str:
    return (f"The forecast for {w['city']} on {w['date']}: {w['temperature_c']}°C, {w['condition']}, "
            f"wind {w['wind_kmh']} km/h.")


def render_weather(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast."""
    return _weather_sentence(r["weather"])


def render_weather_clothing(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast and what to wear."""
    return f"{_weather_sentence(r['weather'])} {r['clothing_advice']['advice']}"


# The known intents' answers, by the key each intent's entry names (tools/registry.py:INTENTS, with its calls).
RENDERERS: dict[str, Renderer] = {f.__name__: f for f in (
    render_salary, render_attendance, render_leave_balance, render_my_details, render_leave_policy, render_weather,
    render_weather_clothing)}

"""Templated reasoning: for each known intent, which tools to call with which slots, and how to
write the answer from their results. No chain of thought, no LLM: the figures come straight from
the tool results, so they are exactly the backend's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graph.state import ToolCall, ToolResult

Renderer = Callable[[dict[str, Any], dict[str, dict[str, Any]]], str]


@dataclass(frozen=True)
class Template:
    """Tool calls with `$slot` and `@call.field` placeholders, the slots they need, and the answer."""

    calls: list[tuple[str, str, dict[str, str]]]  # (call id, tool, args)
    required: tuple[str, ...]
    render: Renderer | None  # None: the LLM writes the answer from the results


def _eur(x: float) -> str:
    return f"EUR {x:,.2f}"


def _month_name(month: str) -> str:
    from datetime import date

    y, m = map(int, month.split("-"))
    return date(y, m, 1).strftime("%B %Y")


def render_salary(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Payslip figures for the month."""
    s = r["salary"]
    extra = f", bonus {_eur(s['bonus'])}" if s.get("bonus") else ""
    return (f"Your payslip for {_month_name(slots['month'])}: gross {_eur(s['gross'])} "
            f"(base {_eur(s['base'])}, overtime {_eur(s['overtime_pay'])}{extra}), "
            f"tax {_eur(s['tax'])}, pension {_eur(s['pension'])}, net pay {_eur(s['net'])}.")


def render_attendance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Attendance figures for the month."""
    a = r["attendance"]
    return (f"Your attendance for {_month_name(slots['month'])}: present {a['present_days']} of "
            f"{a['working_days']} working days, {a['absent_days']} absent, {a['late_arrivals']} late "
            f"arrivals, {a['overtime_hours']} overtime hours.")


def render_leave_balance(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Leave balance."""
    b = r["leave_balance"]
    return (f"You have {b['annual_remaining']} days of annual leave left ({b['annual_entitled']} entitled + "
            f"{b['carried_over']} carried over, {b['annual_taken']} taken, {b['annual_pending']} pending), "
            f"and {b['sick_remaining']} of 12 paid sick days remaining.")


def render_leave_policy(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """One leave type's rules."""
    p = r["leave_policy"]
    notes = f" {p['notes'][0].upper()}{p['notes'][1:]}." if p.get("notes") else ""
    return (f"{p['leave_type'].title()} leave: {p['entitlement']}, {p['pay']}. "
            f"{p['notice'][0].upper()}{p['notice'][1:]}.{notes}")


def _weather_sentence(w: dict[str, Any]) -> str:
    return (f"The forecast for {w['city']} on {w['date']}: {w['temperature_c']}°C, {w['condition']}, "
            f"wind {w['wind_kmh']} km/h.")


def render_weather(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast."""
    return _weather_sentence(r["weather"])


def render_weather_clothing(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast and what to wear."""
    return f"{_weather_sentence(r['weather'])} {r['clothing_advice']['advice']}"


TEMPLATES: dict[str, Template] = {
    "salary": Template([("salary", "salary", {"employee": "$user", "month": "$month"})], ("month",), render_salary),
    "attendance": Template([("attendance", "attendance", {"employee": "$user", "month": "$month"})], ("month",),
                           render_attendance),
    "leave_balance": Template([("leave_balance", "leave_balance", {"employee": "$user"})], (), render_leave_balance),
    "leave_policy": Template([("leave_policy", "leave_policy", {"leave_type": "$leave_type"})], ("leave_type",),
                             render_leave_policy),
    "weather": Template([("weather", "weather", {"city": "$city", "date": "$date"})], ("city", "date"),
                        render_weather),
    "weather_clothing": Template([
        ("weather", "weather", {"city": "$city", "date": "$date"}),
        ("clothing_advice", "clothing_advice", {"temperature": "@weather.temperature_c",
                                                 "condition": "@weather.condition"}),
    ], ("city", "date"), render_weather_clothing),
    "policy_lookup": Template([("kb_search", "kb_search", {"query": "$question"})], ("question",), None),
}


def instantiate(intent: str, slots: dict[str, Any], user: str) -> list[ToolCall] | None:
    """The template's calls with slots filled, or None when a required slot is missing (step aside)."""
    tpl = TEMPLATES.get(intent)
    if tpl is None or any(not slots.get(s) for s in tpl.required):
        return None
    calls: list[ToolCall] = []
    for call_id, tool, args in tpl.calls:
        filled: dict[str, Any] = {}
        deps: list[str] = []
        for k, v in args.items():
            if v == "$user":
                filled[k] = user
            elif v.startswith("$"):
                filled[k] = slots[v[1:]]
            else:  # "@call.field": filled from another call's result when it arrives
                filled[k] = v
                deps.append(v[1:].split(".")[0])
        calls.append(ToolCall(id=call_id, name=tool, args=filled, depends_on=sorted(set(deps))))
    return calls


def render(intent: str | None, slots: dict[str, Any], results: list[ToolResult]) -> str | None:
    """The templated answer, or None when the intent has no renderer or a needed result is missing."""
    tpl = TEMPLATES.get(intent or "")
    if tpl is None or tpl.render is None:
        return None
    by_id = {r["id"]: r["data"] for r in results if r["ok"] and r["data"] is not None}
    if any(call_id not in by_id for call_id, _, _ in tpl.calls):
        return None
    return tpl.render(slots, by_id)


def render_partial(route: str, slots: dict[str, Any], results: list[ToolResult]) -> str | None:
    """When some tools failed on a template path: what could not be fetched, and the rest that could."""
    failed = [r for r in results if not r["ok"]]
    if not failed or route != "template":
        return None
    parts = [render(r["name"], slots, [{**r, "id": r["name"]}]) for r in results if r["ok"]]
    said = " ".join(p for p in parts if p)
    missing = "; ".join(f"{r['name'].replace('_', ' ')}: {r['error']}" for r in failed)
    return (said + " " if said else "") + f"I could not fetch everything ({missing}). Please try again shortly."


def compose(route: str, intent: str | None, slots: dict[str, Any], results: list[ToolResult]) -> str | None:
    """The templated answer: the intent's own, or one per part of a compound request (None: not templatable)."""
    if route == "template":
        return render(intent, slots, results) or render_partial(route, slots, results)
    intents = (intent or "").split("+")
    if not results or not all(i in TEMPLATES and TEMPLATES[i].render for i in intents):
        return None
    parts = [render(i, slots, results) for i in intents]
    return " ".join(p for p in parts if p) if all(parts) else None
